// The op path does not exist: rustc's own "cannot find" error, at the path.
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops as standard_ops;

#[kernel(op = standard_ops::Absolute, device = CPU, T = [float])]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
