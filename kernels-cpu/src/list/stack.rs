//! The kernels that move many items at once: `TensorListStack`,
//! `TensorListConcatV2`, `TensorListGather` and
//! `TensorListScatterIntoExistingList`. Outputs start zero-filled, so an
//! unset item is simply not copied.

use opreg_standard_ops::{
    TensorListConcatV2, TensorListGather, TensorListScatterIntoExistingList, TensorListStack,
};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::shape::{Dim, Shape};
use registry_core::tensor::{Tensor, TensorList, TensorShape, partial_shape_string};

use super::{
    check_element_dtype, element_shape_from_input, input_list, known_shape, list_mut, merge,
    partial, unique_handle,
};

/// Copies `item` (which must have `per` elements) to `out` at element
/// `start`.
fn copy_item(out: &mut Tensor, start: usize, item: &Tensor, per: usize) -> Result<(), KernelError> {
    if item.num_elements() != per {
        return Err(KernelError::invalid_argument(format!(
            "a list item of shape {} does not have the {per} elements of the element shape",
            item.shape()
        )));
    }
    out.copy_elements(start, item, 0, per)?;
    Ok(())
}

/// `[n] + element`.
fn with_leading(n: usize, element: &TensorShape) -> Result<TensorShape, KernelError> {
    let mut dims = vec![n];
    dims.extend_from_slice(element.dims());
    Ok(TensorShape::new(dims)?)
}

/// `TensorListStack`: the items stacked along a new first dimension;
/// unset items are zeros of the element shape, which must then be fully
/// known (from the list, the `element_shape` input or the set items).
#[kernel(
    op = TensorListStack,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
struct TensorListStackKernel {
    num_elements: i64,
}

impl BuildKernel for TensorListStackKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            num_elements: ctx.attr("num_elements")?,
        })
    }
}

impl OpKernel for TensorListStackKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let handle = ctx.take_input(0)?;
        let list = input_list(&handle)?;
        check_element_dtype(ctx.output_type(0)?, list)?;
        if self.num_elements != -1 && list.len() as i64 != self.num_elements {
            return Err(KernelError::invalid_argument(format!(
                "Operation expected a list with {} elements but got a list with {} elements.",
                self.num_elements,
                list.len()
            )));
        }
        let mut shape = element_shape_from_input(ctx, list, 1)?;
        if !shape.is_fully_defined() && list.is_empty() {
            return Err(KernelError::invalid_argument(format!(
                "Tried to stack elements of an empty list with non-fully-defined element_shape: {}",
                partial_shape_string(&shape)
            )));
        }
        if !list.element_shape.is_fully_defined() {
            for t in list.items.iter().flatten() {
                shape = merge(&shape, &partial(t))?;
            }
        }
        let Some(element) = known_shape(&shape) else {
            return Err(KernelError::invalid_argument(format!(
                "Tried to stack list which only contains uninitialized tensors and has a \
                 non-fully-defined element_shape: {}",
                partial_shape_string(&shape)
            )));
        };
        let per = element.num_elements();
        let out = ctx.allocate_output(0, with_leading(list.len(), &element)?)?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        for (i, item) in list.items.iter().enumerate() {
            if let Some(t) = item {
                copy_item(out, i * per, t, per)?;
            }
        }
        Ok(())
    }
}

/// `TensorListGather`: items `indices` stacked (unset ones as zeros).
#[kernel(
    op = TensorListGather,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_gather(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let list = input_list(&handle)?;
    check_element_dtype(ctx.output_type(0)?, list)?;
    let indices = ctx.input(1)?.as_slice::<i32>()?.to_vec();
    let mut shape = element_shape_from_input(ctx, list, 2)?;
    if !shape.is_fully_defined() && indices.is_empty() {
        return Err(KernelError::invalid_argument(format!(
            "Tried to gather 0-elements from a list with non-fully-defined shape: {}",
            partial_shape_string(&shape)
        )));
    }
    // Every index is checked, whatever the list's shape (TF checks only
    // where it reads the items' shapes, and reads out of bounds otherwise).
    let mut positions = Vec::with_capacity(indices.len());
    for &i in &indices {
        let position = usize::try_from(i)
            .ok()
            .filter(|&p| p < list.len())
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Trying to gather element {i} in a list with {} elements.",
                    list.len()
                ))
            })?;
        positions.push(position);
    }
    if !list.element_shape.is_fully_defined() {
        for &p in &positions {
            if let Some(t) = &list.items[p] {
                shape = merge(&shape, &partial(t))?;
            }
        }
    }
    let Some(element) = known_shape(&shape) else {
        return Err(KernelError::invalid_argument(format!(
            "Tried to gather uninitialized tensors from a list with non-fully-defined \
             element_shape: {}",
            partial_shape_string(&shape)
        )));
    };
    let per = element.num_elements();
    let mut dims = ctx.input(1)?.dims().to_vec();
    dims.extend_from_slice(element.dims());
    let out = ctx.allocate_output(0, TensorShape::new(dims)?)?;
    if out.num_elements() == 0 {
        return Ok(());
    }
    for (k, &p) in positions.iter().enumerate() {
        if let Some(t) = &list.items[p] {
            copy_item(out, k * per, t, per)?;
        }
    }
    Ok(())
}

/// The leading dimensions TensorListConcatV2 gives each item: set items'
/// own, else `leading_dims[i]` or the inferred common `first_dim`.
fn concat_lengths(
    list: &TensorList,
    first_dim: Option<usize>,
    leading_dims: &[i64],
) -> Result<Vec<usize>, KernelError> {
    let mut lengths = Vec::with_capacity(list.len());
    for (i, item) in list.items.iter().enumerate() {
        let dim = match item {
            Some(t) => t.dims().first().copied().unwrap_or(0),
            None => match (leading_dims.get(i), first_dim) {
                (None, Some(d)) => d,
                (Some(&d), _) => usize::try_from(d).map_err(|_| {
                    KernelError::invalid_argument(format!("leading_dims[{i}] = {d} is negative"))
                })?,
                (None, None) => {
                    return Err(KernelError::invalid_argument(format!(
                        "List contains uninitialized tensor at index {i} but leading_dims has \
                         only {} elements.",
                        leading_dims.len()
                    )));
                }
            },
        };
        lengths.push(dim);
    }
    Ok(lengths)
}

/// `TensorListConcatV2`: the items concatenated along their first
/// dimension, and each item's length; unset items are zeros of
/// `leading_dims[i]` (or the items' common first dimension) rows.
#[kernel(
    op = TensorListConcatV2,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_concat_v2(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let list = input_list(&handle)?;
    check_element_dtype(ctx.output_type(0)?, list)?;
    let element_shape = element_shape_from_input(ctx, list, 1)?;
    if element_shape.rank() == Some(0) {
        return Err(KernelError::invalid_argument(
            "Concat requires elements to be at least vectors, found scalars instead.",
        ));
    }
    let mut first_dim = element_shape.dim(0).ok().and_then(Dim::value);
    let mut rest = match element_shape.dims() {
        Some(dims) => Shape::new(dims[1..].iter().copied()),
        None => Shape::unknown(),
    };
    if list.is_empty() && !rest.is_fully_defined() {
        return Err(KernelError::invalid_argument(format!(
            "All except the first dimension must be fully defined when concating an empty \
             tensor list. element_shape: {}",
            partial_shape_string(&rest)
        )));
    }
    if !list.element_shape.is_fully_defined() {
        let mut check_dim = first_dim.is_none();
        let mut inferred = first_dim;
        for (i, item) in list.items.iter().enumerate() {
            let Some(t) = item else { continue };
            let Some(&lead) = t.dims().first() else {
                return Err(KernelError::invalid_argument(format!(
                    "Concat saw a scalar shape at index {i} but requires at least vectors."
                )));
            };
            rest = merge(
                &rest,
                &Shape::from_dims(&t.dims()[1..].iter().map(|&d| d as i64).collect::<Vec<_>>()),
            )?;
            if let Some(expected) = first_dim
                && expected != lead as i64
            {
                return Err(KernelError::invalid_argument(format!(
                    "First entry of element_shape input does not match the first dim of list \
                     element at index: {i} Expected: {expected} Actual: {lead}"
                )));
            }
            if check_dim {
                match inferred {
                    None => inferred = Some(lead as i64),
                    Some(d) if d != lead as i64 => {
                        inferred = None;
                        check_dim = false;
                    }
                    Some(_) => {}
                }
            }
        }
        first_dim = inferred;
    }
    let Some(rest) = known_shape(&rest) else {
        return Err(KernelError::invalid_argument(format!(
            "Trying to concat list with only uninitialized tensors but \
             element_shape_except_first_dim is not fully defined: {}",
            partial_shape_string(&rest)
        )));
    };
    let leading_dims = ctx.input(2)?.as_slice::<i64>()?.to_vec();
    let first_dim = first_dim.and_then(|d| usize::try_from(d).ok());
    let lengths = concat_lengths(list, first_dim, &leading_dims)?;
    let total = lengths
        .iter()
        .try_fold(0usize, |sum, &d| sum.checked_add(d))
        .ok_or_else(|| KernelError::invalid_argument("the concatenated length overflows"))?;
    let lengths_out = Tensor::from_vec(
        [lengths.len()],
        lengths.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
    )?;
    let per_row = rest.num_elements();
    let out = ctx.allocate_output(0, with_leading(total, &rest)?)?;
    if out.num_elements() > 0 {
        let mut row = 0usize;
        for (item, &len) in list.items.iter().zip(&lengths) {
            if let Some(t) = item {
                copy_item(out, row * per_row, t, len * per_row)?;
            }
            row += len;
        }
    }
    ctx.set_output(1, lengths_out)
}

/// `TensorListScatterIntoExistingList`: the list with item `indices[i]`
/// set to row `i` of `tensor`, grown to hold the largest index.
#[kernel(
    op = TensorListScatterIntoExistingList,
    device = CPU,
    element_dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32,
        int64, int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64,
        uint8, variant]
)]
fn tensor_list_scatter_into_existing_list(
    ctx: &mut OpKernelContext<'_>,
) -> Result<(), KernelError> {
    let handle = ctx.take_input(0)?;
    let list = input_list(&handle)?;
    let tensor = ctx.input(1)?;
    let indices = ctx.input(2)?;
    if tensor.dtype() != list.element_dtype {
        return Err(KernelError::invalid_argument(format!(
            "Invalid data types; input tensor type: {} list element_type: {}",
            super::dtype_name(tensor.dtype()),
            super::dtype_name(list.element_dtype)
        )));
    }
    if tensor.dims().is_empty() {
        return Err(KernelError::invalid_argument(format!(
            "Tensor must be at least a vector, but saw shape: {}",
            tensor.shape()
        )));
    }
    if indices.dims().len() != 1 {
        return Err(KernelError::invalid_argument(format!(
            "Expected indices to be a vector, but received shape: {}",
            indices.shape()
        )));
    }
    if indices.num_elements() != tensor.dims()[0] {
        return Err(KernelError::invalid_argument(format!(
            "Expected len(indices) == tensor.shape[0], but saw: {} vs. {}",
            indices.num_elements(),
            tensor.dims()[0]
        )));
    }
    let mut positions = Vec::with_capacity(indices.num_elements());
    for &i in indices.as_slice::<i32>()? {
        // TF reads out of bounds for a negative index; refuse it.
        let p = usize::try_from(i).map_err(|_| {
            KernelError::invalid_argument(format!(
                "Trying to scatter to element {i}: indices must be non-negative"
            ))
        })?;
        positions.push(p);
    }
    let item_shape = super::without_first_dim(tensor.shape())?;
    let per = item_shape.num_elements();
    let mut items = Vec::with_capacity(positions.len());
    for k in 0..positions.len() {
        let mut item = Tensor::zeros(tensor.dtype(), item_shape.clone())?;
        item.copy_elements(0, tensor, k * per, per)?;
        items.push(item);
    }
    let mut out = unique_handle(handle)?;
    let list = list_mut(&mut out)?;
    if let Some(&max) = positions.iter().max()
        && max >= list.items.len()
    {
        list.items.resize(max + 1, None);
    }
    for (p, item) in positions.into_iter().zip(items) {
        list.items[p] = Some(item);
    }
    ctx.set_output(0, out)
}
