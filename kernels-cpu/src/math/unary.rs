//! Element-wise unary kernels.

use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::standard_ops::Abs;
use registry_core::tensor::TensorElement;

use crate::numeric::Real;

/// `Abs` for real types.
#[kernel(op = Abs, device = CPU, T = [float, double, int8, int16, int32, int64, half, bfloat16])]
fn abs<T: Real + TensorElement>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let abs = |v: T| if v < T::ZERO { T::ZERO - v } else { v };
    if ctx.forward_input(0, 0)? {
        for v in ctx.output_mut(0)?.as_mut_slice::<T>()? {
            *v = abs(*v);
        }
        return Ok(());
    }
    let x = ctx.input(0)?.clone();
    let out = ctx.allocate_output(0, x.shape().clone())?;
    for (o, i) in out.as_mut_slice::<T>()?.iter_mut().zip(x.as_slice::<T>()?) {
        *o = abs(*i);
    }
    Ok(())
}
