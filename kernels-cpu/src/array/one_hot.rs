//! `OneHot`: `output[p, d, s] = indices[p, s] == d ? on_value : off_value`,
//! with the one-hot dimension of size `depth` inserted at `axis`. An index
//! outside `[0, depth)` gives a row of `off_value` (as TF does).

use std::marker::PhantomData;

use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::OneHot;
use smallvec::SmallVec;

use super::elements::{ElementOp, run_on_elements};
use super::index::IndexElement;
use super::parallel::for_each_row_chunk;
use crate::util::index::{dim_i64, shape_of};

/// `OneHot` for every type TF's CPU kernel has; generic over the index type
/// only (the values are moved as bytes).
#[kernel(
    op = OneHot,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         string, uint16, uint32, uint64, uint8],
    TI = [uint8, int8, int32, int64],
    host_memory = ["depth"]
)]
struct OneHotKernel<TI> {
    axis: i64,
    index: PhantomData<fn() -> TI>,
}

impl<TI: IndexElement> BuildKernel for OneHotKernel<TI> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            axis: ctx.attr("axis")?,
            index: PhantomData,
        })
    }
}

/// The fill: inputs are `[on_value, off_value]`, one element each.
struct OneHotPlan<'a, I> {
    depth: usize,
    suffix: usize,
    indices: &'a [I],
}

impl<I: IndexElement> ElementOp for OneHotPlan<'_, I> {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let (Some(on), Some(off)) = (
            inputs.first().and_then(|v| v.first()),
            inputs.get(1).and_then(|v| v.first()),
        ) else {
            return Err(KernelError::internal("one_hot without on/off values"));
        };
        let (depth, suffix) = (self.depth, self.suffix);
        let block = depth * suffix;
        let depth_i = dim_i64(depth);
        for_each_row_chunk(out, block, |p0, chunk| {
            for (p, rows) in chunk.chunks_exact_mut(block).enumerate() {
                rows.fill(off.clone());
                let first = (p0 + p) * suffix;
                for (s, v) in self.indices[first..first + suffix].iter().enumerate() {
                    let v = v.to_i64();
                    if (0..depth_i).contains(&v) {
                        rows[v as usize * suffix + s] = on.clone();
                    }
                }
            }
        });
        Ok(())
    }
}

impl<TI: IndexElement> OpKernel for OneHotKernel<TI> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let indices = ctx.input(0)?;
        let depth = ctx.input(1)?;
        let on = ctx.input(2)?;
        let off = ctx.input(3)?;
        let i_rank = indices.shape().rank();
        let out_rank = dim_i64(i_rank + 1);
        registry_core::kernel_ensure!(
            self.axis == -1 || (0..out_rank).contains(&self.axis),
            "Expected axis to be -1 or between [0, {out_rank}).  But received: {}",
            self.axis
        );
        registry_core::kernel_ensure!(
            depth.shape().rank() == 0,
            "depth must be a scalar, but got: {}",
            depth.shape()
        );
        registry_core::kernel_ensure!(
            on.shape().rank() == 0,
            "on_value must be a scalar, but got: {}",
            on.shape()
        );
        registry_core::kernel_ensure!(
            off.shape().rank() == 0,
            "off_value must be a scalar, but got: {}",
            off.shape()
        );
        let axis = usize::try_from(self.axis).unwrap_or(i_rank);
        let depth_v = depth.as_slice::<i32>()?.first().copied().unwrap_or(0);
        registry_core::kernel_ensure!(depth_v >= 0, "depth must be non-negative, got: {depth_v}");
        let depth_n = usize::try_from(depth_v).unwrap_or(0);
        registry_core::kernel_ensure!(
            indices
                .num_elements()
                .checked_mul(depth_n)
                .is_some_and(|n| i64::try_from(n).is_ok()),
            "OneHot result would have shape {} + [{depth_v}], which exceeds 2**63 - 1 elements",
            indices.shape()
        );
        let mut out_dims: SmallVec<[usize; 8]> = SmallVec::from_slice(indices.dims());
        out_dims.insert(axis, depth_n);
        let out_shape = shape_of(&out_dims)?;
        let prefix: usize = indices.dims()[..axis].iter().product();
        let suffix = indices.num_elements().checked_div(prefix).unwrap_or(0);
        let indices = ctx.take_input(0)?;
        let on = ctx.take_input(2)?;
        let off = ctx.take_input(3)?;
        let out = ctx.allocate_output(0, out_shape)?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        let plan = OneHotPlan {
            depth: depth_n,
            suffix,
            indices: indices.as_slice::<TI>()?,
        };
        run_on_elements(&plan, &[&on, &off], out)
    }
}
