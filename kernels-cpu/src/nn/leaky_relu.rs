//! `LeakyRelu`: `x > 0 ? x : alpha * x` (TF's `LeakyReluOp`; `alpha` may be
//! above 1 or negative, so it is a select, not a maximum).

use std::marker::PhantomData;

use opreg_standard_ops::LeakyRelu;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use crate::math::driver::unary;
use crate::math::special::SpecialFloat;
use crate::numeric::{Denormal, flushing_denormals};

/// `LeakyRelu` on the CPU, in place when the input can be forwarded.
#[kernel(op = LeakyRelu, device = CPU, T = [half, bfloat16, float, double])]
#[derive(Debug)]
pub struct LeakyReluKernel<T> {
    alpha: f32,
    _t: PhantomData<fn() -> T>,
}

impl<T: SpecialFloat + Denormal> BuildKernel for LeakyReluKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            alpha: ctx.attr("alpha")?,
            _t: PhantomData,
        })
    }
}

impl<T: SpecialFloat + Denormal> OpKernel for LeakyReluKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let alpha = self.alpha;
        if flushing_denormals() {
            unary(ctx, |x: T| x.flushed().tf_leaky_relu(alpha).flushed())
        } else {
            unary(ctx, |x: T| x.tf_leaky_relu(alpha))
        }
    }
}
