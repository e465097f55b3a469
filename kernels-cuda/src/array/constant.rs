//! `Const`, `Identity` and `NoOp` on the GPU.

use registry_core::device::Device;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::standard_ops::{Const, Identity, NoOp};
use registry_core::tensor::Tensor;

use crate::gpu::GpuDevice;

/// `Const`: the `value` attr's tensor, uploaded once when the kernel is
/// built; every output shares that device buffer.
#[kernel(
    op = Const,
    device = GPU,
    dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64,
             int8, uint16, uint32, uint64, uint8]
)]
#[derive(Debug)]
pub struct ConstGpu {
    value: Tensor,
}

impl BuildKernel for ConstGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let value: Tensor = ctx.attr("value")?;
        let dtype: DataType = ctx.attr("dtype")?;
        if value.dtype() != dtype {
            return Err(KernelError::invalid_argument(format!(
                "Type mismatch between value ({}) and dtype ({})",
                value.dtype().type_name(),
                dtype.type_name()
            )));
        }
        let dev = GpuDevice::get()?;
        let value = dev.upload(&value)?;
        Ok(Self { value })
    }
}

impl OpKernel for ConstGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        ctx.set_output(0, self.value.clone())
    }
}

/// `Identity`: forwards its input (no copy), wherever it is.
#[kernel(
    op = Identity,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn identity_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.take_input(0)?;
    ctx.set_output(0, input)
}

/// `NoOp`: nothing to do.
#[kernel(op = NoOp, device = GPU)]
fn no_op_gpu(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}
