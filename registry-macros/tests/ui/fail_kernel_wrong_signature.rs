// A kernel function must be `fn(&mut OpKernelContext<'_>) -> Result<(), KernelError>`.
use registry_core::kernel::OpKernelContext;
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = CPU, T = [float])]
fn abs(_ctx: &OpKernelContext<'_>) -> bool {
    true
}

fn main() {}
