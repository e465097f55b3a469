//! The kernels that read or change single items: `TensorListGetItem`,
//! `TensorListSetItem`, `TensorListPushBack`, `TensorListPopBack`,
//! `TensorListLength`, `TensorListElementShape` and `TensorListResize`.

use opreg_standard_ops::{
    TensorListElementShape, TensorListGetItem, TensorListLength, TensorListPopBack,
    TensorListPushBack, TensorListResize, TensorListSetItem,
};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, partial_shape_string};

use super::{
    check_element_dtype, element_shape_from_input, input_list, known_shape, list_mut, merge,
    partial, scalar_i32, unique_handle,
};

/// `TensorListGetItem`: item `index` (shared, not copied), or zeros of the
/// element shape for an unset item (the shape from the list, the
/// `element_shape` input and the other items must then be fully known).
#[kernel(
    op = TensorListGetItem,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_get_item(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let list = input_list(&handle)?;
    check_element_dtype(ctx.output_type(0)?, list)?;
    let index = scalar_i32(ctx, 1, "index")?;
    let item = usize::try_from(index)
        .ok()
        .filter(|&i| i < list.len())
        .ok_or_else(|| {
            KernelError::invalid_argument(format!(
                "Trying to access element {index} in a list with {} elements.",
                list.len()
            ))
        })?;
    if let Some(t) = &list.items[item] {
        return ctx.set_output(0, t.clone());
    }
    let mut shape = element_shape_from_input(ctx, list, 2)?;
    if !shape.is_fully_defined() {
        for t in list.items.iter().flatten() {
            shape = merge(&shape, &partial(t))?;
        }
    }
    let Some(shape) = known_shape(&shape) else {
        return Err(KernelError::invalid_argument(format!(
            "Trying to read an uninitialized tensor but element_shape is not fully defined: {} \
             and no list element is set.",
            partial_shape_string(&shape)
        )));
    };
    // Zero-filled (empty strings, empty variants).
    ctx.allocate_output(0, shape)?;
    Ok(())
}

/// `TensorListSetItem`: the list with item `index` set to `item`; with
/// `resize_if_index_out_of_bounds` the list grows to hold `index`.
#[kernel(op = TensorListSetItem, device = CPU)]
struct TensorListSetItemKernel {
    element_dtype: DataType,
    resize_if_index_out_of_bounds: bool,
}

impl BuildKernel for TensorListSetItemKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            element_dtype: ctx.attr("element_dtype")?,
            resize_if_index_out_of_bounds: ctx.attr("resize_if_index_out_of_bounds")?,
        })
    }
}

impl OpKernel for TensorListSetItemKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let handle = ctx.take_input(0)?;
        let list = input_list(&handle)?;
        check_element_dtype(self.element_dtype, list)?;
        let index = scalar_i32(ctx, 1, "index")?;
        let len = list.len();
        let position = usize::try_from(index)
            .ok()
            .filter(|&i| i < len || self.resize_if_index_out_of_bounds)
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Trying to modify element {index} in a list with {len} elements."
                ))
            })?;
        let item = ctx.take_input(2)?;
        if !list.element_shape.is_compatible(&partial(&item)) {
            return Err(KernelError::invalid_argument(format!(
                "Tried to set a tensor with incompatible shape at a list index. Item element \
                 shape: {} list shape: {}",
                item.shape(),
                partial_shape_string(&list.element_shape)
            )));
        }
        let mut out = unique_handle(handle)?;
        let list = list_mut(&mut out)?;
        if position >= list.items.len() {
            list.items.resize(position + 1, None);
        }
        list.items[position] = Some(item);
        ctx.set_output(0, out)
    }
}

/// `TensorListPushBack`: the list with `tensor` appended.
#[kernel(op = TensorListPushBack, device = CPU)]
fn tensor_list_push_back(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let item = ctx.take_input(1)?;
    let list = input_list(&handle)?;
    if !list.element_shape.is_compatible(&partial(&item)) {
        return Err(KernelError::invalid_argument(format!(
            "Tried to append a tensor with incompatible shape to a list. Op element shape: {} \
             list shape: {}",
            item.shape(),
            partial_shape_string(&list.element_shape)
        )));
    }
    check_element_dtype(item.dtype(), list)?;
    if list.max_num_elements != -1 && list.len() as i64 >= list.max_num_elements {
        return Err(KernelError::invalid_argument(format!(
            "Tried to push item into a full list list size: {} max_num_elements: {}",
            list.len(),
            list.max_num_elements
        )));
    }
    let mut out = unique_handle(handle)?;
    list_mut(&mut out)?.items.push(Some(item));
    ctx.set_output(0, out)
}

/// `TensorListPopBack`: the list without its last item, and that item
/// (zeros of the element shape when unset).
#[kernel(
    op = TensorListPopBack,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_pop_back(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let list = input_list(&handle)?;
    check_element_dtype(ctx.output_type(1)?, list)?;
    let Some(last) = list.items.last() else {
        return Err(KernelError::invalid_argument(
            "Trying to pop from an empty list.",
        ));
    };
    match last {
        Some(t) => ctx.set_output(1, t.clone())?,
        None => {
            let shape = element_shape_from_input(ctx, list, 1)?;
            let Some(shape) = known_shape(&shape) else {
                return Err(KernelError::invalid_argument(format!(
                    "Trying to read an uninitialized tensor but element_shape is not fully \
                     defined.{}",
                    partial_shape_string(&shape)
                )));
            };
            ctx.allocate_output(1, shape)?;
        }
    }
    let mut out = unique_handle(handle)?;
    list_mut(&mut out)?.items.pop();
    ctx.set_output(0, out)
}

/// `TensorListLength`: the number of items (set or not).
#[kernel(op = TensorListLength, device = CPU)]
fn tensor_list_length(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let len = input_list(&handle)?.len();
    let len = i32::try_from(len).map_err(|_| {
        KernelError::invalid_argument(format!("the list's length {len} does not fit an int32"))
    })?;
    ctx.set_output(0, Tensor::scalar(len))
}

/// `TensorListElementShape`: the element shape as `shape_type` integers,
/// -1 for an unknown dimension, the scalar -1 for an unknown rank.
#[kernel(op = TensorListElementShape, device = CPU)]
fn tensor_list_element_shape(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let list = input_list(&handle)?;
    let out = match list.element_shape.dims() {
        None => Tensor::scalar(-1i64),
        Some(dims) => Tensor::from_vec(
            [dims.len()],
            dims.iter()
                .map(|d| d.value().unwrap_or(-1))
                .collect::<Vec<i64>>(),
        )?,
    };
    let out = match ctx.output_type(0)? {
        DataType::DtInt32 => {
            let values: Vec<i32> = out
                .as_slice::<i64>()?
                .iter()
                .map(|&v| i32::try_from(v).unwrap_or(i32::MAX))
                .collect();
            Tensor::from_vec(out.shape().clone(), values)?
        }
        _ => out,
    };
    ctx.set_output(0, out)
}

/// `TensorListResize`: the list cut to `size` items or grown with unset
/// ones.
#[kernel(op = TensorListResize, device = CPU)]
fn tensor_list_resize(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    input_list(&handle)?;
    let size_input = ctx.input(1)?;
    if !size_input.dims().is_empty() {
        return Err(KernelError::invalid_argument("size must be a scalar"));
    }
    let size = scalar_i32(ctx, 1, "size")?;
    let Ok(size) = usize::try_from(size) else {
        return Err(KernelError::invalid_argument(format!(
            "TensorListSlice expects size to be non-negative. Got: {size}"
        )));
    };
    let mut out = unique_handle(handle)?;
    let list = list_mut(&mut out)?;
    if size > list.items.len() {
        list.items
            .try_reserve(size - list.items.len())
            .map_err(|_| {
                KernelError::resource_exhausted(format!("cannot resize a list to {size} items"))
            })?;
    }
    list.items.resize(size, None);
    ctx.set_output(0, out)
}
