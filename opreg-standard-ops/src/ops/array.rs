//! Array ops (TF's `array_ops.cc`): constants and placeholders, identity,
//! reshaping, slicing, gathering, concatenation and padding.

use registry_core::op;

/// Concatenates tensors along one dimension.
///
/// The `N` tensors in `values` must have the same rank and agree in every
/// dimension but `axis`; the output holds them one after the other along
/// `axis`, which may be negative to count from the last dimension.
#[op(
    input = "values: N * T",
    input = "axis: Tidx",
    output = "output: T",
    attr = "N: int >= 2",
    attr = "T: type",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::concat_v2
)]
pub struct ConcatV2;

/// Broadcast an array for a compatible shape.
///
/// Broadcasting makes arrays of different shapes fit each other: starting
/// from the trailing dimensions, each dimension of `input` must equal the
/// one of `shape` or be 1 (repeated to that size); missing leading
/// dimensions are added. The output has shape `shape` and the values of
/// `input` repeated along the broadcast dimensions (materialized, unlike
/// the implicit broadcasting of element-wise ops).
#[op(
    input = "input: T",
    input = "shape: Tidx",
    output = "output: T",
    attr = "T: type",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::broadcast_to
)]
pub struct BroadcastTo;

/// Returns a constant tensor.
///
/// The output is the tensor given in the `value` attr, of type `dtype`.
#[op(output = "output: dtype", attr = "value: tensor", attr = "dtype: type", shape_fn = crate::shape::const_op)]
pub struct Const;

/// Inserts a dimension of 1 into a tensor's shape.
///
/// Given a tensor `input`, inserts a dimension of length 1 at the dimension
/// index `dim` of its shape (counted from the end when negative). The data
/// are unchanged.
#[op(
    input = "input: T",
    input = "dim: Tdim",
    output = "output: T",
    attr = "T: type",
    attr = "Tdim: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::expand_dims
)]
pub struct ExpandDims;

/// Creates a tensor filled with a scalar value.
///
/// The output has the shape given by the vector `dims` and every element
/// equal to the scalar `value` (of any type, strings included).
#[op(
    input = "dims: index_type",
    input = "value: T",
    output = "output: T",
    attr = "T: type",
    attr = "index_type: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::fill
)]
pub struct Fill;

/// Gather slices from `params` axis `axis` according to `indices`.
///
/// `indices` must be an integer tensor of any dimension; the output has the
/// shape of `params` with dimension `axis` replaced by the shape of
/// `indices` (after the first `batch_dims` batch dimensions).
#[op(
    input = "params: Tparams",
    input = "indices: Tindices",
    input = "axis: Taxis",
    output = "output: Tparams",
    attr = "batch_dims: int = 0",
    attr = "Tparams: type",
    attr = "Tindices: {int16, int32, int64}",
    attr = "Taxis: {int32, int64}",
    shape_fn = crate::shape::gather_v2
)]
pub struct GatherV2;

/// Gather slices from `params` into a Tensor with shape specified by `indices`.
///
/// `indices` is an integer tensor whose last dimension indexes into the
/// first dimensions of `params`: each index vector `indices[..., :]` of
/// length `K <= rank(params)` selects one element (`K == rank`) or one
/// slice (`K < rank`) of `params`. The output has shape
/// `indices.shape[:-1] + params.shape[K:]`. An index out of range is an
/// error on the CPU, unless `bad_indices_policy` is `IGNORE`, which leaves
/// zeros in the corresponding output.
#[op(
    input = "params: Tparams",
    input = "indices: Tindices",
    output = "output: Tparams",
    attr = "Tparams: type",
    attr = "Tindices: {int16, int32, int64}",
    attr = "bad_indices_policy: string = ''",
    shape_fn = crate::shape::gather_nd
)]
pub struct GatherNd;

/// Return a tensor with the same shape and contents as the input tensor or value.
///
/// The output is the input, unchanged.
#[op(input = "input: T", output = "output: T", attr = "T: type", shape_fn = registry_core::shape::common::unchanged_shape)]
pub struct Identity;

/// Returns a list of tensors with the same shapes and contents as the input tensors.
///
/// Each output is the corresponding input, unchanged. Useful to pass several
/// tensors through one node, for instance to override the gradient of a
/// group of tensors at once.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: list(type) >= 1",
    shape_fn = crate::shape::identity_n
)]
pub struct IdentityN;

/// Copy a tensor setting everything outside a central band in each innermost matrix to zero.
///
/// For each innermost matrix of `input`, element `(m, n)` is kept when
/// `(num_lower < 0 || m - n <= num_lower) && (num_upper < 0 || n - m <=
/// num_upper)` and set to zero otherwise: `num_lower` sub-diagonals and
/// `num_upper` super-diagonals are kept (all of them when negative).
#[op(
    input = "input: T",
    input = "num_lower: Tindex",
    input = "num_upper: Tindex",
    output = "band: T",
    attr = "T: type",
    attr = "Tindex: {int32, int64} = DT_INT64",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct MatrixBandPart;

/// Returns a one-hot tensor.
///
/// The locations given by `indices` take the value `on_value`, all other
/// locations take `off_value`. The new dimension of length `depth` is
/// inserted at `axis` (the last dimension when -1).
#[op(
    input = "indices: TI",
    input = "depth: int32",
    input = "on_value: T",
    input = "off_value: T",
    output = "output: T",
    attr = "axis: int = -1",
    attr = "T: type",
    attr = "TI: {uint8, int8, int32, int64} = DT_INT64",
    shape_fn = crate::shape::one_hot
)]
pub struct OneHot;

/// Returns a tensor of ones with the same shape and type as x.
///
/// Every element of the output is 1 of `x`'s type (`true` for booleans,
/// `1 + 0i` for complex numbers).
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, complex64, complex128, bool}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct OnesLike;

/// Packs a list of `N` rank-`R` tensors into one rank-`(R+1)` tensor.
///
/// All tensors in `values` must have the same shape and type; they are
/// stacked along a new dimension inserted at `axis`.
#[op(
    input = "values: N * T",
    output = "output: T",
    attr = "N: int >= 1",
    attr = "T: type",
    attr = "axis: int = 0",
    shape_fn = crate::shape::pack
)]
pub struct Pack;

/// Pads a tensor with zeros.
///
/// `paddings` is an integer tensor of shape [rank of `input`, 2]; for each
/// dimension it gives how many zeros to add before and after its contents.
#[op(
    input = "input: T",
    input = "paddings: Tpaddings",
    output = "output: T",
    attr = "T: type",
    attr = "Tpaddings: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::pad
)]
pub struct Pad;

/// A placeholder op for a value that will be fed into the computation.
///
/// Running a graph fails unless a value of type `dtype` (and, when `shape`
/// is fully defined, of that shape) is fed for this op's output.
#[op(
    output = "output: dtype",
    attr = "dtype: type",
    attr = "shape: shape = { unknown_rank: true }",
    shape_fn = crate::shape::placeholder
)]
pub struct Placeholder;

/// An identity op that triggers an error if a gradient is requested.
///
/// Forwards its input unchanged when run. Graph builders that compute
/// gradients refuse to differentiate through it, reporting `message`, so it
/// marks values whose gradient is not meant to be taken.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: type",
    attr = "message: string = ''",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct PreventGradient;

/// Returns the rank of a tensor.
///
/// The output is an int32 scalar: the number of dimensions of `input` (also
/// called its order, degree or ndims; not the rank of a matrix).
#[op(
    input = "input: T",
    output = "output: int32",
    attr = "T: type",
    shape_fn = registry_core::shape::common::scalar_shape
)]
pub struct Rank;

/// Reshapes a tensor.
///
/// Returns a tensor with the elements of `tensor` in the same order and the
/// shape given by `shape`; at most one entry of `shape` may be -1, in which
/// case its length is computed so that the element count is unchanged.
#[op(
    input = "tensor: T",
    input = "shape: Tshape",
    output = "output: T",
    attr = "T: type",
    attr = "Tshape: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reshape
)]
pub struct Reshape;

/// Reverses specific dimensions of a tensor.
///
/// Given a tensor and an int32/int64 tensor `axis` listing the dimensions
/// to reverse (negative: from the end; each at most once), the output is
/// the tensor with the elements along those dimensions in reverse order.
#[op(
    input = "tensor: T",
    input = "axis: Tidx",
    output = "output: T",
    attr = "Tidx: {int32, int64} = DT_INT32",
    attr = "T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, float, double, complex64, complex128, string}",
    shape_fn = crate::shape::reverse_v2
)]
pub struct ReverseV2;

/// Returns the shape of a tensor.
///
/// The output is the 1-D shape of `input`, as `out_type` integers. Its
/// full type (TF's type constructor) marks it a shape tensor.
#[op(
    input = "input: T",
    output = "output: out_type",
    attr = "T: type",
    attr = "out_type: {int32, int64} = DT_INT32",
    type_ctor = unary(TFT_SHAPE_TENSOR, "out_type"),
    shape_fn = crate::shape::shape_n
)]
pub struct Shape;

/// Returns shape of tensors.
///
/// Output `i` is the 1-D shape of input `i`, as `out_type` integers.
#[op(
    input = "input: N * T",
    output = "output: N * out_type",
    attr = "N: int >= 1",
    attr = "T: type",
    attr = "out_type: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::shape_n
)]
pub struct ShapeN;

/// Returns the size of a tensor.
///
/// The output is a scalar of type `out_type`: the number of elements of
/// `input`.
#[op(
    input = "input: T",
    output = "output: out_type",
    attr = "T: type",
    attr = "out_type: {int32, int64} = DT_INT32",
    shape_fn = registry_core::shape::common::scalar_shape
)]
pub struct Size;

/// Return a slice from 'input'.
///
/// The output is the part of `input` of size `size` that starts at the
/// offsets `begin`; a size of -1 takes every remaining element of that
/// dimension.
#[op(
    input = "input: T",
    input = "begin: Index",
    input = "size: Index",
    output = "output: T",
    attr = "T: type",
    attr = "Index: {int32,int64}",
    shape_fn = crate::shape::slice
)]
pub struct Slice;

/// Returns a copy of the input tensor.
///
/// The output holds the input's values in a buffer of its own, so later
/// in-place updates of the input do not show in it; when nothing else holds
/// the input's buffer, that buffer becomes the output without a copy.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: type",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Snapshot;

/// Splits a tensor into `num_split` tensors along one dimension.
///
/// The dimension `split_dim` (a scalar, negative: from the end) of `value`
/// must be divisible by `num_split`; output `i` holds its `i`-th part.
#[op(
    input = "split_dim: int32",
    input = "value: T",
    output = "output: num_split * T",
    attr = "num_split: int >= 1",
    attr = "T: type",
    shape_fn = crate::shape::split
)]
pub struct Split;

/// Splits a tensor into `num_split` tensors along one dimension.
///
/// Output `i` holds `size_splits[i]` consecutive slices of `value` along
/// `split_dim`; one size may be -1, which takes what the others leave.
#[op(
    input = "value: T",
    input = "size_splits: Tlen",
    input = "split_dim: int32",
    output = "output: num_split * T",
    attr = "num_split: int >= 1",
    attr = "T: type",
    attr = "Tlen: {int8, int32, int64} = DT_INT64",
    shape_fn = crate::shape::split_v
)]
pub struct SplitV;

/// Removes dimensions of size 1 from the shape of a tensor.
///
/// Without `squeeze_dims` every dimension of length 1 is removed; otherwise
/// only the listed ones, which must have length 1.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: type",
    attr = "squeeze_dims: list(int) >= 0 = []",
    shape_fn = crate::shape::squeeze
)]
pub struct Squeeze;

/// Stops gradient computation.
///
/// When run, the op outputs its input unchanged. When gradients are built,
/// it acts as a constant: nothing flows back through it, so its input does
/// not contribute to any gradient (as for an EM step, or for
/// contrastive-divergence training, where some values are held fixed).
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: type",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct StopGradient;

/// Return a strided slice from `input`.
///
/// The slice is given by `begin`, `end` and `strides` per dimension, as in
/// Python's extended slicing; the bit masks select full ranges, ellipses,
/// new axes and dimensions to drop.
#[op(
    input = "input: T",
    input = "begin: Index",
    input = "end: Index",
    input = "strides: Index",
    output = "output: T",
    attr = "T: type",
    attr = "Index: {int16, int32, int64}",
    attr = "begin_mask: int = 0",
    attr = "end_mask: int = 0",
    attr = "ellipsis_mask: int = 0",
    attr = "new_axis_mask: int = 0",
    attr = "shrink_axis_mask: int = 0",
    shape_fn = crate::shape::strided_slice
)]
pub struct StridedSlice;

/// Constructs a tensor by tiling a given tensor.
///
/// The output replicates `input` `multiples[i]` times along dimension `i`.
#[op(
    input = "input: T",
    input = "multiples: Tmultiples",
    output = "output: T",
    attr = "T: type",
    attr = "Tmultiples: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::tile
)]
pub struct Tile;

/// Shuffle dimensions of x according to a permutation.
///
/// Dimension `i` of the output is dimension `perm[i]` of `x`.
#[op(
    input = "x: T",
    input = "perm: Tperm",
    output = "y: T",
    attr = "T: type",
    attr = "Tperm: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::transpose
)]
pub struct Transpose;

/// Unpacks a given dimension of a rank-`R` tensor into `num` rank-`(R-1)` tensors.
///
/// Dimension `axis` (negative: from the end) of `value` must have size
/// `num`; output `i` is the slice `value[..., i, ...]` along it. The
/// opposite of `Pack`.
#[op(
    input = "value: T",
    output = "output: num * T",
    attr = "num: int >= 0",
    attr = "T: type",
    attr = "axis: int = 0",
    shape_fn = crate::shape::unpack
)]
pub struct Unpack;

/// Returns a tensor of zeros with the same shape and type as x.
///
/// Every element of the output is the zero of `x`'s type (`false` for
/// booleans, the empty string for strings).
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: type",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct ZerosLike;

/// Resize `images` to `size` using bilinear interpolation.
///
/// `images` is `[batch, height, width, channels]`; `size` holds the new
/// height and width. The output is `float` whatever the input type. With
/// `align_corners` the corner pixels of input and output are aligned; with
/// `half_pixel_centers` pixel centers are at half-integer positions.
#[op(
    input = "images: T",
    input = "size: int32",
    output = "resized_images: float",
    attr = "T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double, bfloat16}",
    attr = "align_corners: bool = false",
    attr = "half_pixel_centers: bool = false",
    shape_fn = crate::shape::resize
)]
pub struct ResizeBilinear;

/// Resize `images` to `size` using nearest neighbor interpolation.
///
/// `images` is `[batch, height, width, channels]`; `size` holds the new
/// height and width; each output pixel copies the input pixel nearest to it.
#[op(
    input = "images: T",
    input = "size: int32",
    output = "resized_images: T",
    attr = "T: {int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}",
    attr = "align_corners: bool = false",
    attr = "half_pixel_centers: bool = false",
    shape_fn = crate::shape::resize
)]
pub struct ResizeNearestNeighbor;

/// Pads a tensor.
///
/// `paddings` is an integer tensor of shape `[rank of input, 2]`; for each
/// dimension it gives how many values to add before and after its contents.
/// The values added are `constant_values`, a scalar of the input's type.
#[op(
    input = "input: T",
    input = "paddings: Tpaddings",
    input = "constant_values: T",
    output = "output: T",
    attr = "T: type",
    attr = "Tpaddings: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::pad
)]
pub struct PadV2;

/// Pads a tensor with mirrored values.
///
/// `paddings` is an integer tensor of shape `[rank of input, 2]`; for each
/// dimension it gives how many values to add before and after its contents.
/// The values added mirror the input at its borders: in `REFLECT` mode the
/// border itself is not repeated (each padding must be less than the
/// dimension), in `SYMMETRIC` mode it is (each padding at most the
/// dimension).
#[op(
    input = "input: T",
    input = "paddings: Tpaddings",
    output = "output: T",
    attr = "T: type",
    attr = "Tpaddings: {int32, int64} = DT_INT32",
    attr = "mode: {'REFLECT', 'SYMMETRIC'}",
    shape_fn = crate::shape::pad
)]
pub struct MirrorPad;

/// SpaceToBatch for N-D tensors of type T.
///
/// Divides the "spatial" dimensions `[1, ..., M]` of the input, zero padded
/// as `paddings` says, into a grid of blocks of shape `block_shape`, and
/// interleaves these blocks with the "batch" dimension (0): output batch
/// `b * prod(block_shape) + ...` holds one position within every block.
#[op(
    input = "input: T",
    input = "block_shape: Tblock_shape",
    input = "paddings: Tpaddings",
    output = "output: T",
    attr = "T: type",
    attr = "Tblock_shape: {int32, int64} = DT_INT32",
    attr = "Tpaddings: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::space_to_batch_nd
)]
pub struct SpaceToBatchND;

/// BatchToSpace for N-D tensors of type T.
///
/// Reshapes the "batch" dimension 0 into `M + 1` dimensions of shape
/// `block_shape + [batch]`, interleaves these blocks back into the grid of
/// the spatial dimensions `[1, ..., M]`, and crops the result as `crops`
/// says. The reverse of SpaceToBatchND.
#[op(
    input = "input: T",
    input = "block_shape: Tblock_shape",
    input = "crops: Tcrops",
    output = "output: T",
    attr = "T: type",
    attr = "Tblock_shape: {int32, int64} = DT_INT32",
    attr = "Tcrops: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::batch_to_space_nd
)]
pub struct BatchToSpaceND;

/// DepthToSpace for tensors of type T.
///
/// Rearranges data from depth into blocks of spatial data: each
/// `block_size * block_size` run of the depth dimension becomes a block of
/// `block_size x block_size` pixels. The output's height and width are the
/// input's times `block_size`, its depth the input's divided by
/// `block_size * block_size`.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: type",
    attr = "block_size: int >= 2",
    attr = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
    shape_fn = crate::shape::depth_to_space
)]
pub struct DepthToSpace;

/// SpaceToDepth for tensors of type T.
///
/// Rearranges blocks of spatial data into depth: each non-overlapping
/// `block_size x block_size` block of pixels becomes one pixel whose depth
/// holds the block's values. The input's height and width must be
/// divisible by `block_size`.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: type",
    attr = "block_size: int >= 2",
    attr = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
    shape_fn = crate::shape::space_to_depth
)]
pub struct SpaceToDepth;
