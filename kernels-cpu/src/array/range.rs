//! `Range`: `start, start + delta, ...` up to `limit` (excluded). The
//! checks, the size and each element (`start + T(i) * delta` in the type,
//! as TF's kernel computes it, not a running sum) are
//! [`opreg_op_logic::range`]'s; large outputs are filled in parallel.

use opreg_standard_ops::Range;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::Tensor;

use super::parallel::for_each_row_chunk;
use opreg_op_logic::range::{RangeElement, kernel_size};

/// The single value of `name` (a scalar, or a vector of one element as TF
/// still accepts).
fn scalar<T: RangeElement>(t: &Tensor, name: &str) -> Result<T, KernelError> {
    let dims = t.dims();
    let one = dims.is_empty() || (dims.len() == 1 && dims[0] == 1);
    registry_core::kernel_ensure!(one, "{name} must be a scalar, not shape {}", t.shape());
    t.as_slice::<T>()?
        .first()
        .copied()
        .ok_or_else(|| KernelError::internal(format!("{name} has no element")))
}

/// `Range` for the types TF's CPU kernel has.
#[kernel(
    op = Range,
    device = CPU,
    Tidx = [bfloat16, half, float, double, int32, int64],
    host_memory = ["start", "limit", "delta"]
)]
fn range<Tidx: RangeElement>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let start: Tidx = scalar(ctx.input(0)?, "start")?;
    let limit: Tidx = scalar(ctx.input(1)?, "limit")?;
    let delta: Tidx = scalar(ctx.input(2)?, "delta")?;
    let size = kernel_size(start, limit, delta)?;
    let out = ctx.allocate_output(0, [size])?;
    for_each_row_chunk(out.as_mut_slice::<Tidx>()?, 1, |first, chunk| {
        for (i, v) in chunk.iter_mut().enumerate() {
            *v = Tidx::element(start, delta, first + i);
        }
    });
    Ok(())
}
