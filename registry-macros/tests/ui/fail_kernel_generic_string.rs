// A generic kernel cannot be instantiated with `string` (no Rust element
// type); a non-generic kernel can register it.
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Identity;

#[kernel(op = Identity, device = CPU, T = [float, string, qint8])]
fn identity<T>(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
