//! The identities besides `Identity`: `StopGradient`, `PreventGradient` and
//! `IdentityN` forward their inputs (no copy); `Snapshot` forwards its input
//! when nothing else holds its buffer, and copies it otherwise (TF's
//! `SnapshotOp`).

use opreg_standard_ops::{IdentityN, PreventGradient, Snapshot, StopGradient};
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::elements::{ElementOp, run_on_elements};
use super::parallel::copy;

/// `StopGradient`: forwards its input (gradients are a graph-building
/// matter; running it is the identity). TF registers it for the CPU without
/// a type constraint.
#[kernel(op = StopGradient, device = CPU)]
fn stop_gradient(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `PreventGradient`: forwards its input; its `message` only matters to
/// gradient builders. TF registers it for the CPU without a type
/// constraint.
#[kernel(op = PreventGradient, device = CPU)]
fn prevent_gradient(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `IdentityN`: output `i` is input `i` (no copies). TF registers it for
/// every device (`DEVICE_DEFAULT`) without a type constraint.
#[kernel(op = IdentityN, device = CPU)]
fn identity_n(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// Copies the single input into the output.
struct CopyPlan;

impl ElementOp for CopyPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        match inputs {
            [src] if src.len() == out.len() => {
                copy(out, src);
                Ok(())
            }
            _ => Err(KernelError::internal("snapshot: input and output differ")),
        }
    }
}

/// `Snapshot` for the types TF's CPU kernel has (`TF_CALL_POD_TYPES`): the
/// input's buffer when nothing else shares it, else a copy.
#[kernel(
    op = Snapshot,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn snapshot(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = ctx.input(0)?.shape().clone();
    if ctx
        .forward_input_or_allocate_output(&[0], 0, shape)?
        .is_some()
    {
        return Ok(());
    }
    let input = ctx.take_input(0)?;
    let out = ctx.output_mut(0)?;
    run_on_elements(&CopyPlan, &[&input], out)
}
