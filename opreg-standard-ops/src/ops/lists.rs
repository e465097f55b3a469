//! TensorList ops (TF's `list_ops.cc`): lists of tensors held in scalar
//! `DT_VARIANT` handles, as Keras recurrent layers and `tf.while_loop`s
//! with TensorArrays use them. The handle-producing ops carry TF's type
//! constructor `UnaryTensorContainer(TFT_ARRAY, "element_dtype")`.

use registry_core::op;

/// Creates and returns an empty tensor list.
///
/// All list elements must be tensors of dtype `element_dtype` and shape
/// compatible with `element_shape`. `handle` is an empty list;
/// `max_num_elements` is the most elements it may hold (-1 for no limit).
#[op(
    input = "element_shape: shape_type",
    input = "max_num_elements: int32",
    output = "handle: variant",
    attr = "element_dtype: type",
    attr = "shape_type: {int32, int64}",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_handle
)]
pub struct EmptyTensorList;

/// List of the given size with empty elements.
///
/// `element_shape` is the shape of the future elements of the list and
/// `num_elements` the number of elements to reserve; the items stay unset
/// until written.
#[op(
    input = "element_shape: shape_type",
    input = "num_elements: int32",
    output = "handle: variant",
    attr = "element_dtype: type",
    attr = "shape_type: {int32, int64}",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_handle
)]
pub struct TensorListReserve;

/// Creates a TensorList which, when stacked, has the value of `tensor`.
///
/// Each element of the list is a slice of `tensor` along its first
/// dimension; `element_shape` must be compatible with the slices' shape.
#[op(
    input = "tensor: element_dtype",
    input = "element_shape: shape_type",
    output = "output_handle: variant",
    attr = "element_dtype: type",
    attr = "shape_type: {int32, int64}",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_handle
)]
pub struct TensorListFromTensor;

/// Returns the item in the list with the given index.
///
/// An unset item reads as zeros of the element shape, which must then be
/// fully known (from the list, the `element_shape` input or the other
/// items).
#[op(
    input = "input_handle: variant",
    input = "index: int32",
    input = "element_shape: Tshape",
    output = "item: element_dtype",
    attr = "element_dtype: type",
    attr = "Tshape: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::list_get_item
)]
pub struct TensorListGetItem;

/// Sets the index-th position of the list to contain the given tensor.
///
/// With `resize_if_index_out_of_bounds` the list grows to hold `index`;
/// otherwise an index out of bounds is an error.
#[op(
    input = "input_handle: variant",
    input = "index: int32",
    input = "item: element_dtype",
    output = "output_handle: variant",
    attr = "element_dtype: type",
    attr = "resize_if_index_out_of_bounds: bool = false",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_handle
)]
pub struct TensorListSetItem;

/// Stacks all tensors in the list.
///
/// Requires that all tensors have the same shape. `num_elements`, when not
/// -1, is the number of elements the list must have; unset items stack as
/// zeros when the element shape is fully known.
#[op(
    input = "input_handle: variant",
    input = "element_shape: int32",
    output = "tensor: element_dtype",
    attr = "element_dtype: type",
    attr = "num_elements: int = -1",
    shape_fn = crate::shape::list_stack
)]
pub struct TensorListStack;

/// Returns the number of tensors in the input tensor list.
///
/// `length` is a scalar `int32`; unset items count.
#[op(
    input = "input_handle: variant",
    output = "length: int32",
    shape_fn = crate::shape::list_length
)]
pub struct TensorListLength;

/// Returns a list with `tensor` appended to the elements of `input_handle`.
///
/// The passed-in `Tensor` becomes the last element. `tensor` must have the list's element dtype and a shape compatible with
/// its element shape.
#[op(
    input = "input_handle: variant",
    input = "tensor: element_dtype",
    output = "output_handle: variant",
    attr = "element_dtype: type",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_handle
)]
pub struct TensorListPushBack;

/// Returns the last element of the input list and the list without it.
///
/// Fails if the list is empty. An unset last element reads as zeros of
/// `element_shape`, which must then be fully known.
#[op(
    input = "input_handle: variant",
    input = "element_shape: int32",
    output = "output_handle: variant",
    output = "tensor: element_dtype",
    attr = "element_dtype: type",
    shape_fn = crate::shape::list_pop_back
)]
pub struct TensorListPopBack;

/// The shape of the elements of the given list, as a tensor.
///
/// Unknown dimensions are -1; an unknown rank is the scalar -1.
#[op(
    input = "input_handle: variant",
    output = "element_shape: shape_type",
    attr = "shape_type: {int32, int64}",
    shape_fn = crate::shape::list_element_shape
)]
pub struct TensorListElementShape;

/// Concats all tensors in the list along the 0th dimension.
///
/// Requires that all tensors have the same shape except the first
/// dimension. `leading_dims` gives the first dimension of unset items;
/// `lengths` is each item's first dimension.
#[op(
    input = "input_handle: variant",
    input = "element_shape: shape_type",
    input = "leading_dims: int64",
    output = "tensor: element_dtype",
    output = "lengths: int64",
    attr = "element_dtype: type",
    attr = "shape_type: {int32, int64}",
    shape_fn = crate::shape::list_concat_v2
)]
pub struct TensorListConcatV2;

/// Splits a tensor into a list.
///
/// `list[i]` corresponds to `lengths[i]` tensors from the input tensor. The
/// tensor must have rank at least 1 and contain exactly `sum(lengths)`
/// elements along its first dimension.
#[op(
    input = "tensor: element_dtype",
    input = "element_shape: shape_type",
    input = "lengths: int64",
    output = "output_handle: variant",
    attr = "element_dtype: type",
    attr = "shape_type: {int32, int64}",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_split
)]
pub struct TensorListSplit;

/// Resizes the list.
///
/// Items past the new size are dropped; new items are unset.
#[op(
    input = "input_handle: variant",
    input = "size: int32",
    output = "output_handle: variant",
    shape_fn = crate::shape::list_resize
)]
pub struct TensorListResize;

/// Creates a Tensor by indexing into the TensorList.
///
/// Each row in the produced Tensor corresponds to the element in the
/// TensorList specified by the given index (see `tf.gather`).
#[op(
    input = "input_handle: variant",
    input = "indices: int32",
    input = "element_shape: int32",
    output = "values: element_dtype",
    attr = "element_dtype: type",
    shape_fn = crate::shape::list_gather
)]
pub struct TensorListGather;

/// Scatters tensor at indices in an input list.
///
/// Each member of the TensorList corresponds to one row of the input
/// tensor, specified by the given index (see `tf.gather`); the list grows
/// to hold the largest index.
#[op(
    input = "input_handle: variant",
    input = "tensor: element_dtype",
    input = "indices: int32",
    output = "output_handle: variant",
    attr = "element_dtype: type",
    type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype"),
    shape_fn = crate::shape::list_scatter_into_existing_list
)]
pub struct TensorListScatterIntoExistingList;
