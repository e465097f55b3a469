//! `Reshape`, `ExpandDims` and `Squeeze`: the output shares the input's
//! buffer with a new shape (no copy); the shapes and their checks are
//! [`opreg_op_logic::reshape`]'s.

use opreg_standard_ops::{ExpandDims, Reshape, Squeeze};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use opreg_op_logic::reshape::{expand_dims_shape, reshape_shape, squeeze_shape};

/// Sets output 0 to input 0 with `shape` (same buffer).
fn forward_reshaped(ctx: &mut OpKernelContext<'_>, shape: TensorShape) -> Result<(), KernelError> {
    let input = ctx.take_input(0)?;
    let output = input.reshape(shape)?;
    drop(input);
    ctx.set_output(0, output)
}

/// `Reshape`, with at most one `-1` in `shape` (inferred).
#[kernel(op = Reshape, device = CPU, Tshape = [int32, int64], host_memory = ["shape"])]
fn reshape(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = reshape_shape(ctx.input(0)?.shape(), ctx.input(1)?)?;
    forward_reshaped(ctx, shape)
}

/// `ExpandDims`: inserts a dimension of 1 at `dim` (`-1 - rank ..= rank`).
#[kernel(op = ExpandDims, device = CPU, Tdim = [int32, int64], host_memory = ["dim"])]
fn expand_dims(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = expand_dims_shape(ctx.input(0)?.shape(), ctx.input(1)?)?;
    forward_reshaped(ctx, shape)
}

/// `Squeeze`: removes the dimensions of size 1 (all, or those listed in
/// `squeeze_dims`, which must have size 1).
#[kernel(op = Squeeze, device = CPU)]
struct SqueezeKernel {
    squeeze_dims: Vec<i32>,
}

impl BuildKernel for SqueezeKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            squeeze_dims: ctx.attr("squeeze_dims")?,
        })
    }
}

impl OpKernel for SqueezeKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let shape = squeeze_shape(ctx.input(0)?.dims(), &self.squeeze_dims)?;
        forward_reshaped(ctx, shape)
    }
}
