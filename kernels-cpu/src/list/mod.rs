//! TensorList kernels (TF's `list_kernels.h` and `list_kernels.cc`): lists
//! of tensors held in scalar `DT_VARIANT` handles
//! ([`TensorList`]), with TF 2.21's
//! checks and messages.
//!
//! - `create`: `EmptyTensorList`, `TensorListReserve`,
//!   `TensorListFromTensor`, `TensorListSplit`.
//! - `items`: `TensorListGetItem`, `TensorListSetItem`,
//!   `TensorListPushBack`, `TensorListPopBack`, `TensorListLength`,
//!   `TensorListElementShape`, `TensorListResize`.
//! - `stack`: `TensorListStack`, `TensorListConcatV2`, `TensorListGather`,
//!   `TensorListScatterIntoExistingList`.
//!
//! Items move as whole tensors (shared, never copied) or element ranges
//! ([`Tensor::copy_elements`]), so each kernel is written once and
//! registered for every element type TF's CPU kernels have
//! (`TF_CALL_POD_STRING_TYPES`, the quantized types and variants). Ops that
//! update a list do so in place when nothing else holds the input handle
//! or its list, and on a shallow copy (items shared) otherwise.

mod create;
mod items;
mod stack;

use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::shape::{Dim, Shape};
use registry_core::tensor::{Tensor, TensorList, TensorShape, partial_shape_string};

/// TF's `DataTypeString`: `float`, `int32`, ...
fn dtype_name(dtype: DataType) -> &'static str {
    dtype.type_name()
}

/// TF's `TensorShapeFromTensor`: an element shape from a shape tensor (a
/// vector of sizes, -1 unknown, or the scalar -1 for an unknown rank).
pub(crate) fn shape_from_tensor(t: &Tensor) -> Result<Shape, KernelError> {
    if !matches!(t.dtype(), DataType::DtInt32 | DataType::DtInt64) {
        return Err(KernelError::invalid_argument(format!(
            "Expected an int32 or int64 shape tensor; found {}",
            dtype_name(t.dtype())
        )));
    }
    let values = t.int_values()?;
    if t.dims().is_empty() {
        return if values == [-1] {
            Ok(Shape::unknown())
        } else {
            Err(KernelError::invalid_argument(
                "The only valid scalar shape tensor is the fully unknown shape specified as -1.",
            ))
        };
    }
    if t.dims().len() > 1 {
        return Err(KernelError::invalid_argument(format!(
            "Shape must be at most rank 1 but is rank {}",
            t.dims().len()
        )));
    }
    let mut dims = Vec::with_capacity(values.len());
    for v in values {
        if v < -1 {
            return Err(KernelError::invalid_argument(format!(
                "Dimension {v} must be >= -1"
            )));
        }
        dims.push(Dim::new(v));
    }
    Ok(Shape::new(dims))
}

/// TF's `PartialTensorShape::MergeWith`, with its messages.
pub(crate) fn merge(a: &Shape, b: &Shape) -> Result<Shape, KernelError> {
    if let (Some(x), Some(y)) = (a.dims(), b.dims()) {
        if x.len() != y.len() {
            return Err(KernelError::invalid_argument(format!(
                "PartialTensorShape: Incompatible ranks during merge: {} vs. {}",
                x.len(),
                y.len()
            )));
        }
        if !a.is_compatible(b) {
            return Err(KernelError::invalid_argument(format!(
                "PartialTensorShape: Incompatible shapes during merge: {} vs. {}",
                partial_shape_string(a),
                partial_shape_string(b)
            )));
        }
    }
    a.merge(b)
        .map_err(|e| KernelError::invalid_argument(e.to_string()))
}

/// TF's `GetElementShapeFromInput`: the shape tensor of input `index`
/// merged with the list's element shape.
pub(crate) fn element_shape_from_input(
    ctx: &OpKernelContext<'_>,
    list: &TensorList,
    index: usize,
) -> Result<Shape, KernelError> {
    let input = shape_from_tensor(ctx.input(index)?)?;
    merge(&input, &list.element_shape)
}

/// TF's `GetInputList`: the list a handle holds, or its error.
pub(crate) fn input_list(handle: &Tensor) -> Result<&TensorList, KernelError> {
    if handle.dtype() == DataType::DtVariant && !handle.dims().is_empty() {
        return Err(KernelError::invalid_argument(format!(
            "Input list must be a scalar saw: {}",
            handle.shape()
        )));
    }
    TensorList::from_tensor(handle).map_err(|e| {
        KernelError::invalid_argument(format!("Input handle is not a list. Saw: '{e}'"))
    })
}

/// The check every reading op makes: the op's `element_dtype` is the
/// list's.
pub(crate) fn check_element_dtype(
    op_dtype: DataType,
    list: &TensorList,
) -> Result<(), KernelError> {
    if op_dtype == list.element_dtype {
        return Ok(());
    }
    Err(KernelError::invalid_argument(format!(
        "Invalid data types; op elements {} but list elements {}",
        dtype_name(op_dtype),
        dtype_name(list.element_dtype)
    )))
}

/// The handle to update: `handle` itself when neither it nor its list is
/// shared (TF's `ForwardInputOrCreateNewList` forwarding), else a new
/// handle holding a shallow copy of the list. Call after `input_list`
/// accepted `handle`.
pub(crate) fn unique_handle(mut handle: Tensor) -> Result<Tensor, KernelError> {
    if TensorList::from_tensor_mut(&mut handle).is_ok() {
        return Ok(handle);
    }
    Ok(input_list(&handle)?.clone().into_tensor())
}

/// The list of a handle made by [`unique_handle`], for writing.
pub(crate) fn list_mut(handle: &mut Tensor) -> Result<&mut TensorList, KernelError> {
    TensorList::from_tensor_mut(handle)
        .map_err(|e| KernelError::internal(format!("a unique list handle was expected: {e}")))
}

/// A scalar `int32` input (`index`, `size`, `num_elements`).
pub(crate) fn scalar_i32(
    ctx: &OpKernelContext<'_>,
    index: usize,
    name: &str,
) -> Result<i32, KernelError> {
    let t = ctx.input(index)?;
    match t.as_slice::<i32>()? {
        [v] if t.dims().is_empty() => Ok(*v),
        _ => Err(KernelError::invalid_argument(format!(
            "{name} must be a scalar, but got shape: {}",
            t.shape()
        ))),
    }
}

/// The dims of a fully defined shape, as a tensor shape; `None` when
/// not fully defined (TF's `AsTensorShape`).
pub(crate) fn known_shape(shape: &Shape) -> Option<TensorShape> {
    let dims = shape.to_known_dims()?;
    TensorShape::new(dims.iter().map(|&d| d as usize).collect::<Vec<_>>()).ok()
}

/// The shape of `t` as a partial shape.
pub(crate) fn partial(t: &Tensor) -> Shape {
    Shape::from(t.shape())
}

/// `t` without its first dimension.
pub(crate) fn without_first_dim(shape: &TensorShape) -> Result<TensorShape, KernelError> {
    Ok(TensorShape::new(shape.dims().get(1..).unwrap_or_default())?)
}
