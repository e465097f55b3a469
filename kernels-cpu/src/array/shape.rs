//! `Shape`, `ShapeN`, `Size` and `Rank`: small integer outputs in host
//! memory, computed from the inputs' shapes only (their values are never
//! read). The int32 range checks are [`opreg_op_logic::shape_of`]'s.

use opreg_standard_ops::{Rank, Shape, ShapeN, Size};
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::DataType;
use registry_core::tensor::Tensor;

use opreg_op_logic::shape_of::{shape_values, size_value};

/// An integer tensor of `shape` holding `values`, as output `index`'s
/// dtype (int32 or int64; the values were checked to fit).
fn int_output(
    ctx: &OpKernelContext<'_>,
    index: usize,
    shape: &[usize],
    values: &[i64],
) -> Result<Tensor, KernelError> {
    Ok(match ctx.output_type(index)? {
        DataType::DtInt32 => {
            let values: Vec<i32> = values.iter().map(|&v| v as i32).collect();
            Tensor::from_vec(shape, values)?
        }
        _ => Tensor::from_slice(shape, values)?,
    })
}

/// `Shape`: the shape of the input.
#[kernel(op = Shape, device = CPU, out_type = [int32, int64], host_memory = ["output"])]
fn shape(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let int32 = ctx.output_type(0)? == DataType::DtInt32;
    let values = shape_values(ctx.input(0)?.shape(), int32, None)?;
    let out = int_output(ctx, 0, &[values.len()], &values)?;
    ctx.set_output(0, out)
}

/// `ShapeN`: output `i` is the shape of input `i`.
#[kernel(op = ShapeN, device = CPU, out_type = [int32, int64], host_memory = ["output"])]
fn shape_n(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let int32 = ctx.output_type(0)? == DataType::DtInt32;
    for i in 0..ctx.num_inputs() {
        let values = shape_values(ctx.input(i)?.shape(), int32, Some(i))?;
        let out = int_output(ctx, i, &[values.len()], &values)?;
        ctx.set_output(i, out)?;
    }
    Ok(())
}

/// `Size`: the number of elements of the input.
#[kernel(op = Size, device = CPU, out_type = [int32, int64], host_memory = ["output"])]
fn size(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let int32 = ctx.output_type(0)? == DataType::DtInt32;
    let size = size_value(ctx.input(0)?.shape(), int32)?;
    let out = int_output(ctx, 0, &[], &[size])?;
    ctx.set_output(0, out)
}

/// `Rank`: the number of dimensions of the input, as an int32 scalar.
#[kernel(op = Rank, device = CPU, host_memory = ["output"])]
fn rank(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let rank = ctx.input(0)?.shape().rank();
    let rank = i32::try_from(rank).map_err(|_| KernelError::internal("rank over i32::MAX"))?;
    ctx.set_output(0, Tensor::scalar(rank))
}
