//! `OneHot`: `output[p, d, s] = indices[p, s] == d ? on_value : off_value`,
//! with the one-hot dimension of size `depth` inserted at `axis`. An index
//! outside `[0, depth)` gives a row of `off_value` (as TF does).

use std::marker::PhantomData;

use opreg_standard_ops::OneHot;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::elements::{ElementOp, run_on_elements};
use super::index::IndexElement;
use super::parallel::for_each_row_chunk;
use opreg_op_logic::index::dim_i64;
use opreg_op_logic::one_hot::one_hot_shape;

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
        let s = one_hot_shape(
            ctx.input(0)?.shape(),
            ctx.input(1)?,
            ctx.input(2)?.shape(),
            ctx.input(3)?.shape(),
            self.axis,
        )?;
        let indices = ctx.take_input(0)?;
        let on = ctx.take_input(2)?;
        let off = ctx.take_input(3)?;
        let out = ctx.allocate_output(0, s.out_shape)?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        let plan = OneHotPlan {
            depth: s.depth,
            suffix: s.suffix,
            indices: indices.as_slice::<TI>()?,
        };
        run_on_elements(&plan, &[&on, &off], out)
    }
}
