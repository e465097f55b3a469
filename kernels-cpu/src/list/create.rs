//! The kernels that make a list: `EmptyTensorList`, `TensorListReserve`,
//! `TensorListFromTensor` and `TensorListSplit`.

use opreg_standard_ops::{
    EmptyTensorList, TensorListFromTensor, TensorListReserve, TensorListSplit,
};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorList, TensorShape, partial_shape_string};

use registry_core::shape::Shape;

use super::{shape_from_tensor, without_first_dim};

/// `EmptyTensorList`: an empty list of `element_dtype` items compatible
/// with `element_shape`, holding at most `max_num_elements` (-1: no limit).
#[kernel(op = EmptyTensorList, device = CPU)]
struct EmptyTensorListKernel {
    element_dtype: DataType,
}

impl BuildKernel for EmptyTensorListKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            element_dtype: ctx.attr("element_dtype")?,
        })
    }
}

impl OpKernel for EmptyTensorListKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        empty_tensor_list(ctx, self.element_dtype)
    }
}

fn empty_tensor_list(
    ctx: &mut OpKernelContext<'_>,
    element_dtype: DataType,
) -> Result<(), KernelError> {
    let max = ctx.input(1)?;
    let max_num_elements = match max.as_slice::<i32>()? {
        [v] if max.dims().is_empty() => *v,
        _ => {
            return Err(KernelError::invalid_argument(format!(
                "max_num_elements expected to be a scalar but got shape: {}",
                max.shape()
            )));
        }
    };
    let element_shape = shape_from_tensor(ctx.input(0)?)?;
    let mut list = TensorList::new(element_dtype, element_shape);
    list.max_num_elements = i64::from(max_num_elements);
    ctx.set_output(0, list.into_tensor())
}

/// `TensorListReserve`: a list of `num_elements` unset items.
#[kernel(op = TensorListReserve, device = CPU)]
struct TensorListReserveKernel {
    element_dtype: DataType,
}

impl BuildKernel for TensorListReserveKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            element_dtype: ctx.attr("element_dtype")?,
        })
    }
}

impl OpKernel for TensorListReserveKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        tensor_list_reserve(ctx, self.element_dtype)
    }
}

fn tensor_list_reserve(
    ctx: &mut OpKernelContext<'_>,
    element_dtype: DataType,
) -> Result<(), KernelError> {
    let element_shape = shape_from_tensor(ctx.input(0)?)?;
    let num = ctx.input(1)?;
    let num_elements = match num.as_slice::<i32>()? {
        [v] if num.dims().is_empty() => *v,
        _ => {
            return Err(KernelError::invalid_argument(format!(
                "The num_elements to reserve must be a tensor size 1, but got {}",
                num.shape()
            )));
        }
    };
    let Ok(n) = usize::try_from(num_elements) else {
        return Err(KernelError::invalid_argument(format!(
            "The num_elements to reserve must be a non negative number, but got {num_elements}"
        )));
    };
    let mut list = TensorList::new(element_dtype, element_shape);
    list.items.try_reserve_exact(n).map_err(|_| {
        KernelError::resource_exhausted(format!("cannot reserve a list of {n} items"))
    })?;
    list.items.resize(n, None);
    ctx.set_output(0, list.into_tensor())
}

/// Rows `start..end` of `t` (along the first dimension) as a new tensor.
fn rows(t: &Tensor, start: usize, end: usize) -> Result<Tensor, KernelError> {
    let mut dims = t.dims().to_vec();
    let per_row: usize = dims[1..].iter().product();
    dims[0] = end - start;
    let mut out = Tensor::zeros(t.dtype(), TensorShape::new(dims)?)?;
    out.copy_elements(0, t, start * per_row, (end - start) * per_row)?;
    Ok(out)
}

/// `TensorListFromTensor`: one item per row of `tensor`.
#[kernel(
    op = TensorListFromTensor,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_from_tensor(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape_input = ctx.input(1)?;
    if shape_input.dims().len() >= 2 {
        return Err(KernelError::invalid_argument(format!(
            "TensorListFromTensor: element_shape must be at most rank 1 but has the shape of {}",
            shape_input.shape()
        )));
    }
    let element_shape = shape_from_tensor(shape_input)?;
    let t = ctx.input(0)?;
    if t.dims().is_empty() {
        return Err(KernelError::invalid_argument(format!(
            "Tensor must be at least a vector, but saw shape: {}",
            t.shape()
        )));
    }
    let item_shape = without_first_dim(t.shape())?;
    if !element_shape.is_compatible(&Shape::from(&item_shape)) {
        return Err(KernelError::invalid_argument(format!(
            "Specified a list with shape {} from a tensor with shape {item_shape}",
            partial_shape_string(&element_shape)
        )));
    }
    let n = t.dims()[0];
    // TF indexes a list's items with int32; a longer list could not be
    // read (and an empty tensor may claim any number of rows).
    if i32::try_from(n).is_err() {
        return Err(KernelError::invalid_argument(format!(
            "TensorListFromTensor: a list holds at most {} items (they are indexed with int32), \
             but the tensor has {n} rows",
            i32::MAX
        )));
    }
    let mut list = TensorList::new(t.dtype(), element_shape);
    list.items
        .try_reserve_exact(n)
        .map_err(|_| KernelError::resource_exhausted(format!("cannot make a list of {n} items")))?;
    for i in 0..n {
        list.items
            .push(Some(rows(t, i, i + 1)?.reshape(&item_shape)?));
    }
    ctx.set_output(0, list.into_tensor())
}

/// `TensorListSplit`: items of `lengths[i]` rows of `tensor` each.
#[kernel(
    op = TensorListSplit,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_split(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let element_shape = shape_from_tensor(ctx.input(1)?)?;
    if element_shape.rank() == Some(0) {
        return Err(KernelError::invalid_argument(format!(
            "TensorListSplit requires element_shape to be at least of rank 1, but saw: {}",
            partial_shape_string(&element_shape)
        )));
    }
    let t = ctx.input(0)?;
    if t.dims().is_empty() {
        return Err(KernelError::invalid_argument(format!(
            "Tensor must be at least a vector, but saw shape: {}",
            t.shape()
        )));
    }
    let rest = Shape::from(&without_first_dim(t.shape())?);
    let element_rest = match element_shape.dims() {
        Some(dims) => Shape::new(dims[1..].iter().copied()),
        None => Shape::unknown(),
    };
    if !element_rest.is_compatible(&rest) {
        return Err(KernelError::invalid_argument(format!(
            "tensor shape {} is not compatible with element_shape {}",
            t.shape(),
            partial_shape_string(&element_shape)
        )));
    }
    let lengths = ctx.input(2)?;
    if lengths.dims().len() != 1 {
        return Err(KernelError::invalid_argument(format!(
            "Expected lengths to be a vector, received shape: {}",
            lengths.shape()
        )));
    }
    let total = t.dims()[0];
    let mut list = TensorList::new(t.dtype(), element_shape);
    let mut start = 0usize;
    let mut end = 0usize;
    for &length in lengths.as_slice::<i64>()? {
        let Ok(length) = usize::try_from(length) else {
            return Err(KernelError::invalid_argument(format!(
                "Invalid value in lengths: {length}"
            )));
        };
        end = start.saturating_add(length);
        if end > total {
            return Err(KernelError::invalid_argument(format!(
                "Attempting to slice [{start}, {end}] from tensor with length {total}"
            )));
        }
        list.items.push(Some(rows(t, start, end)?));
        start = end;
    }
    if end != total {
        return Err(KernelError::invalid_argument(format!(
            "Unused values in tensor. Length of tensor: {total} Values used: {end}"
        )));
    }
    ctx.set_output(0, list.into_tensor())
}
