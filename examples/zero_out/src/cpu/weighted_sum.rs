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
        // Every element is written by the first term's pass (the sum starts
        // at zero, as the arithmetic says), so the output is not zero-filled
        // first: one pass less over memory a host may hand out unfilled.
        let out = ctx
            .allocate_output_to_overwrite(0, shape)?
            .as_mut_slice::<T>()?;
        let mut terms = slices.iter().zip(&weights);
        match terms.next() {
            Some((x, &w)) => {
                for (o, &v) in out.iter_mut().zip(x.iter()) {
                    *o = T::mul_add(T::ZERO, w, v);
                }
            }
            None => out.fill(T::ZERO),
        }
        for (x, &w) in terms {
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
