//! `ConcatV2` and `Pack` on the GPU. Both view every input as a
//! `[rows, cols_i]` matrix (`rows` = the product of the dimensions before
//! the axis) and the output as `[rows, Σ cols_i]`; each non-empty input is
//! copied into its columns by one launch of `concat_copy`. The checks and
//! the output's layout are `opreg_op_logic::concat`'s (TF's messages,
//! as on the CPU).

use opreg_op_logic::concat::{ConcatLayout, concat_layout, pack_layout};
use opreg_standard_ops::{ConcatV2, Pack};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::mover::{Mover, mover_sources};
use super::source::entry;

/// The first `n` inputs of a variadic node (cheap clones).
fn inputs(ctx: &OpKernelContext<'_>, n: usize) -> Result<Vec<Tensor>, KernelError> {
    (0..n).map(|i| ctx.input(i).cloned()).collect()
}

/// Output 0 as the concatenation of `values` (their `rows`-row matrices
/// side by side): a single input reshaped (the same buffer), else a new
/// tensor.
fn concat_values(
    ctx: &mut OpKernelContext<'_>,
    mover: &Mover,
    values: &[Tensor],
    layout: ConcatLayout,
) -> Result<(), KernelError> {
    let ConcatLayout { shape, rows } = layout;
    if let [single] = values {
        return ctx.set_output(0, single.reshape(shape)?);
    }
    if shape.num_elements() == 0 || rows == 0 {
        return mover.empty(ctx, shape);
    }
    let parts: SmallVec<[(&Tensor, usize); 8]> = values
        .iter()
        .map(|v| (v, v.num_elements() / rows))
        .collect();
    mover.concat(ctx, &parts, rows, shape)
}

/// `ConcatV2` for TF's GPU types; `axis` on the host.
#[kernel(
    op = ConcatV2,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["axis"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct ConcatV2Gpu {
    mover: Mover,
}

impl BuildKernel for ConcatV2Gpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx, ctx.attr("T")?, entry::CONCAT)?,
        })
    }
}

impl OpKernel for ConcatV2Gpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let n = ctx.num_inputs().saturating_sub(1);
        let values = inputs(ctx, n)?;
        let layout = concat_layout(ctx.input(n)?, &values)?;
        concat_values(ctx, &self.mover, &values, layout)
    }
}

/// `Pack` for TF's GPU types: stacks `N` tensors of one shape along a new
/// dimension `axis`.
#[kernel(
    op = Pack,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct PackGpu {
    axis: i64,
    mover: Mover,
}

impl BuildKernel for PackGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            axis: ctx.attr("axis")?,
            mover: Mover::new(ctx, ctx.attr("T")?, entry::CONCAT)?,
        })
    }
}

impl OpKernel for PackGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let values = inputs(ctx, ctx.num_inputs())?;
        let layout = pack_layout(self.axis, &values)?;
        concat_values(ctx, &self.mover, &values, layout)
    }
}
