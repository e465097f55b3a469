//! `AvgPool`: the mean of each window over the elements inside the input
//! (padding is not counted, as TF's `SpatialAvgPool`). NHWC, as TF's CPU
//! kernel; each window's channels are one contiguous, vectorisable sum;
//! output rows run in parallel. `half`/`bfloat16` sums are rounded to the
//! type after every addition, as TF's are.

use std::marker::PhantomData;

use opreg_op_logic::pool::{Pool2DParams, PoolGeometry, PoolWindows};
use opreg_op_logic::window::{DataFormat, tap};
use opreg_standard_ops::AvgPool;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::softmax::WideFloat;

/// Output elements below this count are computed on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 14;

/// `AvgPool` on the CPU.
#[kernel(op = AvgPool, device = CPU, T = [half, bfloat16, float, double])]
#[derive(Debug)]
pub struct AvgPoolKernel<T> {
    params: Pool2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: WideFloat> BuildKernel for AvgPoolKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let format = DataFormat::parse(&ctx.attr::<String>("data_format")?)?;
        registry_core::kernel_ensure!(
            format == DataFormat::Nhwc,
            "Default AvgPoolingOp only supports NHWC on device type CPU"
        );
        Ok(Self {
            params: Pool2DParams::from_attrs(ctx.attrs(), format)?,
            _t: PhantomData,
        })
    }
}

impl<T: WideFloat> OpKernel for AvgPoolKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        registry_core::kernel_ensure!(input.shape().rank() == 4, "tensor_in must be 4-dimensional");
        let g = match self.params.windows(input.dims())? {
            PoolWindows::Spatial(g) => g,
            PoolWindows::Depthwise(_) => {
                return Err(KernelError::unimplemented(
                    "Non-spatial pooling is not yet supported. Volunteers? :)",
                ));
            }
        };
        let out = ctx.allocate_output(0, g.out_shape(DataFormat::Nhwc))?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        avg_pool_nhwc(&g, input.as_slice::<T>()?, out.as_mut_slice::<T>()?)
    }
}

/// Averages NHWC `input` into NHWC `out` by `g`'s windows.
fn avg_pool_nhwc<T: WideFloat>(
    g: &PoolGeometry,
    input: &[T],
    out: &mut [T],
) -> Result<(), KernelError> {
    let depth = g.depth;
    let row_len = g.cols.out * depth;
    if out.len() != g.batch * g.rows.out * row_len
        || input.len() != g.batch * g.in_rows * g.in_cols * depth
    {
        return Err(KernelError::internal("AvgPool buffers of the wrong size"));
    }
    let row = |index: usize, out_row: &mut [T]| {
        let (n, oh) = (index / g.rows.out, index % g.rows.out);
        let mut acc = vec![T::Acc::default(); depth];
        let rows: Vec<usize> = (0..g.window_rows)
            .filter_map(|k| tap(oh, k, g.stride_rows, 1, g.rows.pad_before, g.in_rows))
            .collect();
        for (ow, o) in out_row.chunks_exact_mut(depth).enumerate() {
            acc.fill(T::Acc::default());
            let mut count = 0usize;
            for &ih in &rows {
                for k in 0..g.window_cols {
                    let Some(iw) = tap(ow, k, g.stride_cols, 1, g.cols.pad_before, g.in_cols)
                    else {
                        continue;
                    };
                    count += 1;
                    let pixel = ((n * g.in_rows + ih) * g.in_cols + iw) * depth;
                    // Rounded to T after every addition, as TF's
                    // `SpatialAvgPool` sums in T (free for float/double).
                    for (a, &v) in acc.iter_mut().zip(&input[pixel..pixel + depth]) {
                        *a = T::narrow(*a + v.widen()).widen();
                    }
                }
            }
            let scale = T::widen_count(count.max(1));
            for (o, &a) in o.iter_mut().zip(&acc) {
                *o = T::narrow(a / scale);
            }
        }
    };
    if out.len() < PARALLEL_ELEMENTS {
        out.chunks_exact_mut(row_len)
            .enumerate()
            .for_each(|(i, r)| row(i, r));
    } else {
        out.par_chunks_exact_mut(row_len)
            .enumerate()
            .for_each(|(i, r)| row(i, r));
    }
    Ok(())
}
