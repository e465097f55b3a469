// A kernel struct cannot borrow: it is built once per node and kept.
use registry_core::kernel::{BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = CPU, T = [float])]
pub struct AbsKernel<'a> {
    name: &'a str,
}

impl BuildKernel for AbsKernel<'static> {
    fn build(_ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self { name: "abs" })
    }
}

impl OpKernel for AbsKernel<'static> {
    fn compute(&self, _ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let _ = self.name;
        Ok(())
    }
}

fn main() {}
