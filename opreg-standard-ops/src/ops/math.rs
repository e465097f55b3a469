//! Element-wise arithmetic, casts, matrix multiplication and ranges (TF's
//! `math_ops.cc`).

use registry_core::op;

/// Computes the absolute value of a tensor.
///
/// Given a tensor `x`, returns a tensor of the same shape and type holding
/// the absolute value of each element of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, int16, int32, int64}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Abs;

/// Returns x + y element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape. Unlike the older
/// `Add`, it does not accept strings.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, int64, complex64, complex128}",
    commutative,
    aggregate,
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct AddV2;

/// Casts x of type SrcT to y of type DstT.
///
/// With `Truncate` set, a float cast to a narrower float type truncates the
/// mantissa instead of rounding to nearest.
#[op(
    input = "x: SrcT",
    output = "y: DstT",
    attr = "SrcT: type",
    attr = "DstT: type",
    attr = "Truncate: bool = false",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Cast;

/// Computes exponential of x element-wise.
///
/// Returns e raised to the power of each element of `x`; complex inputs use
/// the complex exponential.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Exp;

/// Returns element-wise largest integer not greater than x.
///
/// The result keeps the floating-point type of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Floor;

/// Returns x // y element-wise.
///
/// Division rounded toward negative infinity. Supports broadcasting of `x`
/// and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct FloorDiv;

/// Returns element-wise remainder of division.
///
/// The remainder of the division rounded toward negative infinity, so the
/// result has the sign of `y`: `floor(x / y) * y + floormod(x, y) = x`.
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, float, double}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct FloorMod;

/// Computes natural logarithm of x element-wise.
///
/// Returns the logarithm to base e of each element of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Log;

/// Multiply the matrix "a" by the matrix "b".
///
/// The inputs must be two-dimensional matrices and the inner dimension of
/// "a" (after being transposed if `transpose_a` is true) must match the outer
/// dimension of "b" (after being transposed if `transpose_b` is true).
#[op(
    input = "a: T",
    input = "b: T",
    output = "product: T",
    attr = "transpose_a: bool = false",
    attr = "transpose_b: bool = false",
    attr = "T: {bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128}",
    attr = "grad_a: bool = false",
    attr = "grad_b: bool = false",
    shape_fn = crate::shape::matmul
)]
pub struct MatMul;

/// Multiplies two matrices, then applies the ops of `fused_ops`.
///
/// `fused_ops` is `[BiasAdd]` or `[BiasAdd, <activation>]`, `args` their
/// arguments (the bias). Internal to TensorFlow, with TensorFlow's
/// definition.
#[op(
    name = "_FusedMatMul",
    input = "a: T",
    input = "b: T",
    input = "args: num_args * T",
    output = "product: T",
    attr = "transpose_a: bool = false",
    attr = "transpose_b: bool = false",
    attr = "T: {bfloat16, half, float}",
    attr = "num_args: int >= 0",
    attr = "fused_ops: list(string) = []",
    attr = "epsilon: float = 1e-04",
    attr = "leakyrelu_alpha: float = 0.2",
    shape_fn = crate::shape::matmul
)]
pub struct FusedMatMul;

/// Returns the max of x and y (i.e. x > y ? x : y) element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Maximum;

/// Returns the min of x and y (i.e. x < y ? x : y) element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Minimum;

/// Returns x * y element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}",
    commutative,
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Mul;

/// Computes numerical negative value element-wise.
///
/// Returns a tensor of the same shape and type with each element of `x`
/// negated (y = -x).
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Neg;

/// Computes the power of one value to another.
///
/// Given a tensor `x` and a tensor `y`, computes x raised to the power y for
/// corresponding elements, broadcasting `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, float, half, double, int8, int16, int32, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Pow;

/// Creates a sequence of numbers.
///
/// The sequence starts at `start` and extends by increments of `delta` up
/// to but not including `limit` (from above when `delta` is negative). The
/// three inputs are scalars of one type.
#[op(
    input = "start: Tidx",
    input = "limit: Tidx",
    input = "delta: Tidx",
    output = "output: Tidx",
    attr = "Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64} = DT_INT32",
    shape_fn = crate::shape::range
)]
pub struct Range;

/// Returns x / y element-wise for real types.
///
/// If `x` and `y` are reals, this returns the floating-point division.
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct RealDiv;

/// Computes reciprocal of square root of x element-wise.
///
/// Returns 1 / sqrt(x) for each element of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Rsqrt;

/// Computes sigmoid of `x` element-wise.
///
/// Returns 1 / (1 + exp(-x)) for each element of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Sigmoid;

/// Computes square root of x element-wise.
///
/// Returns the principal square root of each element of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Sqrt;

/// Computes square of x element-wise.
///
/// Returns x * x for each element of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Square;

/// Returns conj(x - y)(x - y) element-wise.
///
/// The squared difference of `x` and `y`, broadcast to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}",
    commutative,
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct SquaredDifference;

/// Returns x - y element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, complex128, uint32, uint64}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Sub;

/// Computes hyperbolic tangent of `x` element-wise.
///
/// Returns tanh(x) for each element of `x`, in the range [-1, 1] for reals.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Tanh;

/// Multiplies slices of two tensors in batches.
///
/// Each matrix of `x` (its last two dimensions) is multiplied by the matching
/// matrix of `y`, after taking its adjoint when `adj_x` (`adj_y`) is true.
/// The batch dimensions (all but the last two) broadcast against each other
/// as in NumPy.
#[op(
    input = "x: T",
    input = "y: T",
    output = "output: T",
    attr = "T: {bfloat16, half, float, double, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128}",
    attr = "adj_x: bool = false",
    attr = "adj_y: bool = false",
    attr = "grad_x: bool = false",
    attr = "grad_y: bool = false",
    shape_fn = crate::shape::batch_matmul_v2
)]
pub struct BatchMatMulV2;

/// Multiplies slices of two tensors in batches, with types of their own.
///
/// As `BatchMatMulV2`, but `x` has type `Ta`, `y` type `Tb` and the output
/// type `Tout`: the inputs are cast to `Tout` before they are multiplied.
#[op(
    input = "x: Ta",
    input = "y: Tb",
    output = "output: Tout",
    attr = "Ta: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, complex128}",
    attr = "Tb: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, complex128}",
    attr = "Tout: {bfloat16, half, float, double, int16, int32, int64, complex64, complex128}",
    attr = "adj_x: bool = false",
    attr = "adj_y: bool = false",
    attr = "grad_x: bool = false",
    attr = "grad_y: bool = false",
    shape_fn = crate::shape::batch_matmul_v2
)]
pub struct BatchMatMulV3;

/// Returns element-wise smallest integer not less than x.
///
/// The result keeps the floating-point type of `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Ceil;

/// Clips tensor values to a specified min and max.
///
/// Each element of `t` below `clip_value_min` becomes `clip_value_min` and each
/// above `clip_value_max` becomes `clip_value_max`. The bounds are scalars or
/// have the shape of `t`.
#[op(
    input = "t: T",
    input = "clip_value_min: T",
    input = "clip_value_max: T",
    output = "output: T",
    attr = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct ClipByValue;

/// Computes cos of x element-wise.
///
/// The cosine of each element of `x`, in radians.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Cos;

/// Computes the cumulative sum of the tensor `x` along `axis`.
///
/// With `exclusive` each element excludes itself (the first is 0); with
/// `reverse` the sums run from the end of the axis to its start.
#[op(
    input = "x: T",
    input = "axis: Tidx",
    output = "out: T",
    attr = "exclusive: bool = false",
    attr = "reverse: bool = false",
    attr = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Cumsum;

/// Tensor contraction according to Einstein summation convention.
///
/// `equation` names each input's dimensions with letters (`ij,jk->ik` is a
/// matrix product); letters that appear in the inputs but not in the output
/// are summed over, and `...` stands for broadcast batch dimensions.
#[op(
    input = "inputs: N * T",
    output = "output: T",
    attr = "equation: string",
    attr = "N: int >= 1",
    attr = "T: type",
    shape_fn = crate::shape::einsum
)]
pub struct Einsum;

/// Computes the Gauss error function of `x` element-wise.
///
/// `erf(x) = 2 / sqrt(pi) * integral from 0 to x of exp(-t^2) dt`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Erf;

/// Computes the complementary error function of `x` element-wise.
///
/// `erfc(x) = 1 - erf(x)`, computed without the cancellation of that
/// difference for large `x`.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Erfc;

/// Computes `exp(x) - 1` element-wise.
///
/// Precise for `x` near zero, where `exp(x) - 1` would cancel.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Expm1;

/// Computes natural logarithm of (1 + x) element-wise.
///
/// Precise for `x` near zero, where `log(1 + x)` would lose digits.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Log1p;

/// Computes the reciprocal of x element-wise.
///
/// I.e., `1 / x` (integer division for integer types).
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Reciprocal;

/// Rounds the values of a tensor to the nearest integer, element-wise.
///
/// Rounds half to even (banker's rounding); integers are unchanged.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Round;

/// Returns an element-wise indication of the sign of a number.
///
/// -1 if `x < 0`, 0 if `x == 0`, 1 if `x > 0`; NaN stays NaN and complex
/// numbers give `x / |x|` (0 for 0).
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Sign;

/// Computes sine of x element-wise.
///
/// The sine of each element of `x`, in radians.
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {bfloat16, half, float, double, complex64, complex128}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Sin;
