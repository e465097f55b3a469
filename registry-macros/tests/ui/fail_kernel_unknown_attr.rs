// A constraint on an attr the op does not have.
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = CPU, T = [float], Tidx = [int32])]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
