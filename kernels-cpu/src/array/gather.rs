//! `GatherV2`: slices of `params` along `axis` picked by `indices`, with
//! optional leading batch dimensions shared by `params` and `indices`
//! (checked by [`gather_geometry_of`]). Every index is checked before anything
//! is copied.

use std::marker::PhantomData;

use opreg_standard_ops::GatherV2;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use super::elements::{ElementOp, run_on_elements};
use super::index::IndexElement;
use super::parallel::{copy, for_each_row_chunk};
use opreg_op_logic::gather::gather_geometry_of;
use opreg_op_logic::index::dim_i64;

/// `GatherV2` for every params type TF's CPU kernel has; generic over the
/// index type only (the elements are moved as bytes).
#[kernel(
    op = GatherV2,
    device = CPU,
    Tparams = [bfloat16, bool, complex128, float8_e4m3fn, float8_e5m2, complex64, double, float, half, int16, int32, int64,
               int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64, uint8],
    Tindices = [int16, int32, int64],
    host_memory = ["axis"]
)]
struct GatherV2Kernel<Tindices> {
    batch_dims: i64,
    index: PhantomData<fn() -> Tindices>,
}

impl<Tindices: IndexElement> BuildKernel for GatherV2Kernel<Tindices> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            batch_dims: ctx.attr("batch_dims")?,
            index: PhantomData,
        })
    }
}

/// `out[b, o, n, :] = params[b, o, indices[b, n], :]`.
struct GatherPlan<'a, I> {
    outer: usize,
    gather_dim: usize,
    /// Indices per batch.
    per_batch: usize,
    inner: usize,
    indices: &'a [I],
}

impl<I: IndexElement> ElementOp for GatherPlan<'_, I> {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let params = inputs
            .first()
            .ok_or_else(|| KernelError::internal("gather without params"))?;
        let (outer, per_batch, inner) = (self.outer, self.per_batch, self.inner);
        if out.is_empty() || per_batch == 0 || outer == 0 {
            return Ok(());
        }
        for_each_row_chunk(out, inner, |row0, chunk| {
            // Row r of the output is (b, o, n) in [batch, outer, per_batch].
            let mut n = row0 % per_batch;
            let mut o = (row0 / per_batch) % outer;
            let mut b = row0 / per_batch / outer;
            for row in chunk.chunks_exact_mut(inner) {
                // Checked to be in [0, gather_dim) by the kernel.
                let i = self.indices[b * per_batch + n].to_i64() as usize;
                let at = ((b * outer + o) * self.gather_dim + i) * inner;
                if inner == 1 {
                    row[0] = params[at].clone();
                } else {
                    // Long slices are copied in parallel pieces.
                    copy(row, &params[at..at + inner]);
                }
                n += 1;
                if n == per_batch {
                    n = 0;
                    o += 1;
                    if o == outer {
                        o = 0;
                        b += 1;
                    }
                }
            }
        });
        Ok(())
    }
}

impl<Tindices: IndexElement> OpKernel for GatherV2Kernel<Tindices> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let g = gather_geometry_of(ctx, self.batch_dims, Tindices::DTYPE, Tindices::MAX)?;
        let indices = ctx.input(1)?;
        let check = g.out_shape.num_elements() > 0;
        if check {
            check_indices(indices.as_slice::<Tindices>()?, indices.shape(), g.limit)?;
        }
        let params = ctx.take_input(0)?;
        let indices = ctx.take_input(1)?;
        let out = ctx.allocate_output(0, g.out_shape)?;
        if !check {
            return Ok(());
        }
        let plan = GatherPlan {
            outer: g.outer,
            gather_dim: g.limit,
            per_batch: g.per_batch,
            inner: g.inner,
            indices: indices.as_slice::<Tindices>()?,
        };
        run_on_elements(&plan, &[&params], out)
    }
}

/// The first index outside `[0, limit)`, as TF reports it.
fn check_indices<I: IndexElement>(
    indices: &[I],
    shape: &TensorShape,
    limit: usize,
) -> Result<(), KernelError> {
    let limit_i = dim_i64(limit);
    let Some(bad) = indices
        .iter()
        .position(|&v| !(0..limit_i).contains(&v.to_i64()))
    else {
        return Ok(());
    };
    Err(KernelError::invalid_argument(format!(
        "indices{} = {} is not in [0, {limit})",
        slice_debug_string(shape, bad),
        indices[bad].to_i64()
    )))
}

/// TF's `SliceDebugString`: flat index `flat` of `shape` as `[i,j,...]`
/// (empty for a scalar).
fn slice_debug_string(shape: &TensorShape, flat: usize) -> String {
    let dims = shape.dims();
    if dims.is_empty() {
        return String::new();
    }
    let mut idx = vec![0usize; dims.len()];
    let mut left = flat;
    for (d, &size) in dims.iter().enumerate().rev() {
        let size = size.max(1);
        idx[d] = left % size;
        left /= size;
    }
    let parts: Vec<String> = idx.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}
