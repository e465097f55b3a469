//! The CPU kernel of `WeightedSum`, for each of its types.

use std::marker::PhantomData;

use crate::WeightedSum;
use crate::weighted::{Weighted, WeightedInputs, weighted_inputs};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

/// `WeightedSum` for `T`: `normalize` is read once, when the node's kernel
/// is built.
#[kernel(op = WeightedSum, device = CPU, T = [float, double, int32])]
struct WeightedSumKernel<T> {
    normalize: bool,
    _type: PhantomData<fn() -> T>,
}

impl<T: Weighted> BuildKernel for WeightedSumKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            normalize: ctx.attr("normalize")?,
            _type: PhantomData,
        })
    }
}

impl<T: Weighted> OpKernel for WeightedSumKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let WeightedInputs {
            values,
            shape,
            weights,
            divisor,
        } = weighted_inputs::<T>(ctx, self.normalize)?;
        let slices: Vec<&[T]> = values
            .iter()
            .map(|v| v.as_slice::<T>())
            .collect::<Result<_, _>>()?;
        let out = ctx.allocate_output(0, shape)?.as_mut_slice::<T>()?;
        for (x, &w) in slices.iter().zip(&weights) {
            for (o, &v) in out.iter_mut().zip(x.iter()) {
                *o = T::mul_add(*o, w, v);
            }
        }
        if let Some(divisor) = divisor {
            for o in out.iter_mut() {
                *o = o.divide(divisor);
            }
        }
        Ok(())
    }
}
