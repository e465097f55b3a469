//! Shape functions of the TensorList ops (TF's `list_ops.cc`). A list
//! handle is a scalar. Element shapes come from the `element_shape` inputs
//! (TF's `MakeShapeFromShapeTensorTreatScalarAsUnknownShape`: a vector of
//! sizes, -1 for an unknown one, or the scalar -1 for an unknown rank).
//! TF also propagates the element shape through the handles' shape-and-type
//! data, which opreg's inference does not carry: outputs read from a handle
//! are what the `element_shape` inputs say, or unknown.

use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// The element shape given by input `index` (TF's
/// `MakeShapeFromShapeTensorTreatScalarAsUnknownShape`): a vector of sizes
/// (-1 unknown), or a scalar, which must be -1 (an unknown rank).
fn element_shape_input(c: &InferenceContext<'_>, index: usize) -> Result<Shape, ShapeError> {
    let input = c.input_with_rank_at_most(index, 1)?;
    match input.rank() {
        Some(0) => match c.input_scalar_int(index)? {
            None | Some(-1) => Ok(Shape::unknown()),
            Some(v) => Err(c.input_error(
                index,
                ShapeError::invalid_argument(format!(
                    "Input tensor must be rank 1, or if its rank 0 it must have value -1 \
                     (saw: {v})"
                )),
            )),
        },
        Some(_) => c.make_shape_from_shape_tensor(index),
        None => Ok(Shape::unknown()),
    }
}

/// The ops that make or update a list (`EmptyTensorList`,
/// `TensorListReserve`, `TensorListFromTensor`, `TensorListSetItem`,
/// `TensorListPushBack`): a scalar handle; an `element_shape` input must be
/// a valid element shape.
pub fn list_handle(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    if let Some(range) = c.input_range("element_shape") {
        element_shape_input(c, range.start)?;
    }
    c.set_output(0, Shape::scalar())
}

/// `TensorListLength`: a scalar.
pub fn list_length(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.set_output(0, Shape::scalar())
}

/// `TensorListResize`: a scalar handle; `size` must be a scalar.
pub fn list_resize(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.input_with_rank(1, 0)?;
    c.set_output(0, Shape::scalar())
}

/// `TensorListSplit`: a scalar handle; `lengths` must be a vector.
pub fn list_split(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    element_shape_input(c, 1)?;
    c.input_with_rank(2, 1)?;
    c.set_output(0, Shape::scalar())
}

/// `TensorListScatterIntoExistingList`: a scalar handle; `indices` must be
/// a vector.
pub fn list_scatter_into_existing_list(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.input_with_rank_at_least(1, 1)?;
    c.input_with_rank(2, 1)?;
    c.set_output(0, Shape::scalar())
}

/// `TensorListGetItem`: the `element_shape` input's shape.
pub fn list_get_item(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let element = element_shape_input(c, 2)?;
    c.set_output(0, element)
}

/// `TensorListPopBack`: a scalar handle and an item of unknown shape (TF
/// reads it from the handle's data only).
pub fn list_pop_back(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.set_output(0, Shape::scalar())?;
    c.set_output(1, Shape::unknown())
}

/// `TensorListStack`: `[num_elements] + element_shape` (the leading
/// dimension unknown when `num_elements` is -1; all unknown when the
/// element rank is).
pub fn list_stack(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let element = element_shape_input(c, 1)?;
    let num_elements: i64 = c.attr_or("num_elements", -1)?;
    let leading = if num_elements == -1 {
        Dim::UNKNOWN
    } else {
        Dim::new(num_elements)
    };
    c.set_output(0, Shape::vector(leading).concatenate(&element))
}

/// `TensorListConcatV2`: `[?] + element_shape[1:]` (unknown when the
/// element rank is) and a vector of lengths.
pub fn list_concat_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let element = element_shape_input(c, 1)?;
    let out = match element.dims() {
        None => Shape::unknown(),
        Some(dims) => {
            Shape::vector(Dim::UNKNOWN).concatenate(&Shape::new(dims.iter().skip(1).copied()))
        }
    };
    c.set_output(0, out)?;
    c.set_output(1, Shape::vector(Dim::UNKNOWN))
}

/// `TensorListGather`: `indices.shape + element_shape`.
pub fn list_gather(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let element = element_shape_input(c, 2)?;
    let indices = c.input(1)?.clone();
    c.set_output(0, indices.concatenate(&element))
}

/// `TensorListElementShape`: unknown (TF knows it only from the handle's
/// data: a vector, or the scalar -1 for an unknown rank).
pub fn list_element_shape(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.set_output(0, Shape::unknown())
}
