//! The `Sum`, `Mean` and `Max` kernels: one struct each (they read
//! `keep_dims` once), sharing [`compute_reduction`].

use std::marker::PhantomData;

use opreg_standard_ops::{Max, Mean, Sum};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorElement;

use super::axes::ReductionPlan;
use super::engine::{self, Reducer};
use super::reducers::{MaxElement, MaxReducer, MeanReducer, SumElement, SumReducer};
use opreg_op_logic::axes::read_axes;

/// Runs a reduction of input 0 over the axes in input 1 (TF's
/// `ReductionOp::Compute`): validates the axes, shares the input when
/// nothing is reduced, fills the identity when the input is empty, and
/// otherwise reduces.
pub(crate) fn compute_reduction<R>(
    ctx: &mut OpKernelContext<'_>,
    keep_dims: bool,
    r: R,
) -> Result<(), KernelError>
where
    R: Reducer,
    R::In: TensorElement,
    R::Out: TensorElement,
{
    let input = ctx.input(0)?.clone();
    let axes = read_axes(ctx.input(1)?, "reduction_indices")?;
    let plan = ReductionPlan::new(input.dims(), &axes, keep_dims)?;
    if plan.is_identity() {
        // Nothing to reduce: the output shares the input's buffer.
        return ctx.set_output(0, input.reshape(plan.out_shape)?);
    }
    let x = input.as_slice::<R::In>()?;
    let out = ctx.allocate_output(0, &plan.out_shape)?;
    let out = out.as_mut_slice::<R::Out>()?;
    if out.is_empty() {
        return Ok(());
    }
    if x.is_empty() {
        out.fill(r.finish(r.init(), 0));
        return Ok(());
    }
    engine::reduce(r, &plan, x, out);
    Ok(())
}

/// Reads `keep_dims`.
fn keep_dims(ctx: &OpKernelConstruction<'_>) -> Result<bool, KernelError> {
    ctx.attr::<bool>("keep_dims")
}

/// `Sum`: integers wrap; `half`/`bfloat16` accumulate in `f32`.
#[kernel(
    op = Sum,
    device = CPU,
    T = [realnumbertype, complex64, complex128],
    Tidx = [int32, int64]
)]
#[derive(Debug)]
pub struct SumKernel<T> {
    keep_dims: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: SumElement> BuildKernel for SumKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            keep_dims: keep_dims(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: SumElement> OpKernel for SumKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute_reduction(ctx, self.keep_dims, SumReducer::<T>::new())
    }
}

/// `Mean`: integers divide with integer division; the mean of an empty
/// reduction is NaN for floating-point types and 0 otherwise.
#[kernel(
    op = Mean,
    device = CPU,
    T = [realnumbertype, complex64, complex128],
    Tidx = [int32, int64]
)]
#[derive(Debug)]
pub struct MeanKernel<T> {
    keep_dims: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: SumElement> BuildKernel for MeanKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            keep_dims: keep_dims(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: SumElement> OpKernel for MeanKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute_reduction(ctx, self.keep_dims, MeanReducer::<T>::new())
    }
}

/// `Max`: NaN propagates; the maximum of an empty reduction is `-inf` (or
/// the integer type's `MIN`).
#[kernel(
    op = Max,
    device = CPU,
    T = realnumbertype,
    Tidx = [int32, int64]
)]
#[derive(Debug)]
pub struct MaxKernel<T> {
    keep_dims: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: MaxElement> BuildKernel for MaxKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            keep_dims: keep_dims(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: MaxElement> OpKernel for MaxKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute_reduction(ctx, self.keep_dims, MaxReducer::<T>::new())
    }
}
