//! `GatherNd`: output row `i` is the slice of `params` at the index vector
//! `indices[i]`. Every index vector is checked (and its offset computed)
//! before anything is copied; the checks, the geometry and the messages
//! are [`opreg_op_logic::gather_nd`]'s.
//!
//! With several bad index vectors, the last one is reported, as TF's CPU
//! kernel does when it runs on one thread (it keeps the last one it saw).

use std::marker::PhantomData;

use opreg_standard_ops::GatherNd;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::elements::{ElementOp, run_on_elements};
use super::index::IndexElement;
use super::parallel::copy;
use super::rows::{RowGather, Tables};
use opreg_op_logic::gather_nd::{
    BadIndices, GatherNdGeometry, bad_index_message, gather_nd_geometry,
};

/// `GatherNd` for every params type TF's CPU kernel has (but variants and
/// resources); generic over the index type only.
#[kernel(
    op = GatherNd,
    device = CPU,
    Tparams = [bfloat16, bool, complex128, complex64, double, float, float8_e4m3fn, float8_e5m2,
               half, int16, int32, int64, int8, qint32, qint8, quint8, string, uint16, uint32,
               uint64, uint8],
    Tindices = [int16, int32, int64]
)]
struct GatherNdKernel<Tindices> {
    policy: BadIndices,
    index: PhantomData<fn() -> Tindices>,
}

impl<Tindices: IndexElement> BuildKernel for GatherNdKernel<Tindices> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let policy: &str = ctx.attr("bad_indices_policy")?;
        Ok(Self {
            policy: BadIndices::parse(policy)?,
            index: PhantomData,
        })
    }
}

/// Copies `params[offsets[i] .. + slice]` into output row `i` (rows without
/// an offset, bad indices ignored, stay zero): a [`RowGather`] over one
/// table, the offsets.
struct GatherNdPlan {
    gather: RowGather,
    slice: usize,
}

impl ElementOp for GatherNdPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let params = inputs
            .first()
            .ok_or_else(|| KernelError::internal("gather_nd without params"))?;
        self.gather.run(out, |at, row| {
            if let Some(at) = at {
                copy(row, &params[at..at + self.slice]);
            }
        })
    }
}

impl<Tindices: IndexElement> GatherNdKernel<Tindices> {
    /// The params offset of each index vector (`None` for a bad one under
    /// `IGNORE`), or TF's error for the last bad one.
    fn offsets(
        &self,
        ctx: &OpKernelContext<'_>,
        g: &GatherNdGeometry,
    ) -> Result<Vec<Option<usize>>, KernelError> {
        let indices = ctx.input(1)?;
        let values = indices.as_slice::<Tindices>()?;
        let mut offsets = Vec::with_capacity(g.n);
        let mut last_bad = None;
        for row in 0..g.n {
            let index = &values[row * g.k..(row + 1) * g.k];
            let mut offset = 0usize;
            let mut ok = true;
            for ((&v, &limit), &stride) in index.iter().zip(&g.limits).zip(&g.strides) {
                match usize::try_from(v.to_i64()).ok().filter(|&v| v < limit) {
                    Some(v) => offset += v * stride,
                    None => ok = false,
                }
            }
            if !ok {
                last_bad = Some(row);
            }
            offsets.push(ok.then_some(offset));
        }
        if let (Some(row), BadIndices::Error) = (last_bad, self.policy) {
            let index: Vec<i64> = values[row * g.k..(row + 1) * g.k]
                .iter()
                .map(|v| v.to_i64())
                .collect();
            return Err(KernelError::invalid_argument(bad_index_message(
                indices.shape(),
                row,
                &index,
                ctx.input(0)?.shape(),
                ctx.node_name(),
            )));
        }
        Ok(offsets)
    }
}

impl<Tindices: IndexElement> OpKernel for GatherNdKernel<Tindices> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let g = gather_nd_geometry(
            ctx.input(0)?.shape(),
            ctx.input(1)?.shape(),
            Tindices::DTYPE,
            Tindices::MAX,
        )?;
        let offsets = if g.n > 0 {
            self.offsets(ctx, &g)?
        } else {
            Vec::new()
        };
        let params = ctx.take_input(0)?;
        let out = ctx.allocate_output(0, g.out_shape.clone())?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        let tables: Tables = std::iter::once(offsets).collect();
        let plan = GatherNdPlan {
            gather: RowGather::new(tables, g.slice, g.slice, params.num_elements())?,
            slice: g.slice,
        };
        run_on_elements(&plan, &[&params], out)
    }
}
