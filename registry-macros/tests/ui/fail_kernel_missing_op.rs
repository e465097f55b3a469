// `op` is required.
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

#[kernel(device = CPU, T = [float])]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
