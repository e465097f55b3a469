//! The CPU kernel of `ZeroOut`.

use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use crate::ZeroOut;

/// Keeps the first element and zeros the rest: in place when the input's
/// buffer is not shared, else into a new (zero-filled) output.
#[kernel(op = ZeroOut, device = CPU)]
fn zero_out(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if ctx.forward_input(0, 0)? {
        let out = ctx.output_mut(0)?.as_mut_slice::<i32>()?;
        if let Some(rest) = out.get_mut(1..) {
            rest.fill(0);
        }
        return Ok(());
    }
    let (input, output) = ctx.input_and_new_output(0, 0)?;
    let first = input.as_slice::<i32>()?.first().copied();
    if let (Some(first), Some(out)) = (first, output.as_mut_slice::<i32>()?.first_mut()) {
        *out = first;
    }
    Ok(())
}
