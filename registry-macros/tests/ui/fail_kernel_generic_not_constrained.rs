// A generic parameter with no constraint of the same name.
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = CPU, T = [float])]
fn abs<T, U>(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
