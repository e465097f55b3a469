// `device` is required.
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, T = [float])]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
