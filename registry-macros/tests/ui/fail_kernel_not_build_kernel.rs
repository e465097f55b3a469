// A kernel struct must implement BuildKernel (and OpKernel).
use registry_core::kernel::{KernelError, OpKernel, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = CPU, T = [float])]
pub struct AbsKernel;

impl OpKernel for AbsKernel {
    fn compute(&self, _ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        Ok(())
    }
}

fn main() {}
