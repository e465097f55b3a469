// `op` names a type that is not an #[op] struct: it implements no `Op`, and
// has no kernel-check macro beside it (the one #[op] emits).
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

pub struct NotAnOp;

#[kernel(op = NotAnOp, device = CPU, T = [float])]
fn k(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
