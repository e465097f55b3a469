// A type set whose types the op does not all allow: Abs has no unsigned
// integers, so each is reported, on the set's name.
use opreg_standard_ops::Abs;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

#[kernel(op = Abs, device = CPU, T = realnumbertype)]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
