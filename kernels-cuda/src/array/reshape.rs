//! `Reshape`, `ExpandDims` and `Squeeze` on the GPU: the output shares the
//! input's device buffer with a new shape (no copy, no launch). The shapes,
//! checks and messages are `opreg_op_logic::reshape`'s (TF's), as on
//! the CPU.

use opreg_op_logic::reshape::{expand_dims_shape, reshape_shape, squeeze_shape};
use opreg_standard_ops::{ExpandDims, Reshape, Squeeze};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

/// Sets output 0 to input 0 with `shape` (same buffer).
fn forward_reshaped(ctx: &mut OpKernelContext<'_>, shape: TensorShape) -> Result<(), KernelError> {
    let input = ctx.take_input(0)?;
    let output = input.reshape(shape)?;
    drop(input);
    ctx.set_output(0, output)
}

/// `Reshape`, with at most one `-1` in `shape` (inferred).
#[kernel(
    op = Reshape,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tshape = [int32, int64],
    host_memory = ["shape"]
)]
fn reshape_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = reshape_shape(ctx.input(0)?.shape(), ctx.input(1)?)?;
    forward_reshaped(ctx, shape)
}

/// `ExpandDims`: inserts a dimension of 1 at `dim` (`-1 - rank ..= rank`).
#[kernel(
    op = ExpandDims,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tdim = [int32, int64],
    host_memory = ["dim"]
)]
fn expand_dims_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = expand_dims_shape(ctx.input(0)?.shape(), ctx.input(1)?)?;
    forward_reshaped(ctx, shape)
}

/// `Squeeze`: removes the dimensions of size 1 (all, or those listed in
/// `squeeze_dims`, which must have size 1).
#[kernel(
    op = Squeeze,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
#[derive(Debug)]
pub struct SqueezeGpu {
    squeeze_dims: Vec<i32>,
}

impl BuildKernel for SqueezeGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            squeeze_dims: ctx.attr("squeeze_dims")?,
        })
    }
}

impl OpKernel for SqueezeGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let shape = squeeze_shape(ctx.input(0)?.dims(), &self.squeeze_dims)?;
        forward_reshaped(ctx, shape)
    }
}
