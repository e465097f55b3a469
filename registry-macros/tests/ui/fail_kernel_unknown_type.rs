// A misspelt type name gets a suggestion.
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = CPU, T = [flaot, double])]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
