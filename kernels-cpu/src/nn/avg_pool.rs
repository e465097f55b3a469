//! `AvgPool` and `AvgPool3D`: the mean of each window over the elements inside the input
//! (padding is not counted, as TF's `SpatialAvgPool`). NHWC, as TF's CPU
//! kernels; each window's channels are one contiguous, vectorisable sum;
//! output rows run in parallel. `half`/`bfloat16` sums are rounded to the
//! type after every addition, as TF's are.

use std::marker::PhantomData;

use opreg_op_logic::pool::{Pool2DParams, PoolWindows};
use opreg_op_logic::volume::{Pool3DParams, VolumeFormat, VolumeGeometry};
use opreg_op_logic::window::DataFormat;
use opreg_standard_ops::{AvgPool, AvgPool3D};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::max_pool::cpu_volume_format;
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
        avg_pool_ndhwc(
            &g.volume(),
            input.as_slice::<T>()?,
            out.as_mut_slice::<T>()?,
        )
    }
}

/// Averages NDHWC `input` into NDHWC `out` by `g`'s windows (a 2-D pooling
/// is the volume of its [`opreg_op_logic::pool::PoolGeometry::volume`]).
fn avg_pool_ndhwc<T: WideFloat>(
    g: &VolumeGeometry,
    input: &[T],
    out: &mut [T],
) -> Result<(), KernelError> {
    let [planes, rows, cols] = g.axes;
    let depth = g.out_depth;
    let row_len = cols.out.out * depth;
    let out_len = [g.batch, planes.out.out, rows.out.out, row_len]
        .iter()
        .product::<usize>();
    let in_len = [g.batch, planes.input, rows.input, cols.input, depth]
        .iter()
        .product::<usize>();
    if out.len() != out_len || input.len() != in_len {
        return Err(KernelError::internal(
            "average pooling buffers of the wrong size",
        ));
    }
    if row_len == 0 {
        return Ok(());
    }
    let row = |index: usize, out_row: &mut [T]| {
        let oh = index % rows.out.out;
        let od = (index / rows.out.out) % planes.out.out;
        let n = index / (rows.out.out * planes.out.out);
        let mut acc = vec![T::Acc::default(); depth];
        // The (plane, row) pairs of the window inside the input, in order.
        let lines: Vec<usize> = (0..planes.window)
            .filter_map(|k| planes.tap(od, k))
            .flat_map(|id| {
                (0..rows.window)
                    .filter_map(move |k| rows.tap(oh, k))
                    .map(move |ih| (n * planes.input + id) * rows.input + ih)
            })
            .collect();
        for (ow, o) in out_row.chunks_exact_mut(depth).enumerate() {
            acc.fill(T::Acc::default());
            let mut count = 0usize;
            for &line in &lines {
                for k in 0..cols.window {
                    let Some(iw) = cols.tap(ow, k) else {
                        continue;
                    };
                    count += 1;
                    let pixel = (line * cols.input + iw) * depth;
                    // Rounded to T after every addition, as TF's
                    // `SpatialAvgPool` and `CuboidAvgPooling` sum in T (free
                    // for float/double).
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

/// `AvgPool3D` on the CPU (NDHWC, as TensorFlow's CPU kernel): the mean of
/// each window over the elements inside the input.
#[kernel(op = AvgPool3D, device = CPU, T = [bfloat16, float])]
#[derive(Debug)]
pub struct AvgPool3DKernel<T> {
    params: Pool3DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: WideFloat> BuildKernel for AvgPool3DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Pool3DParams::from_attrs(ctx.attrs(), cpu_volume_format(ctx)?)?,
            _t: PhantomData,
        })
    }
}

impl<T: WideFloat> OpKernel for AvgPool3DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let geo = self.params.geometry(input.dims())?;
        let out = ctx.allocate_output(0, geo.out_shape(VolumeFormat::Ndhwc))?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        avg_pool_ndhwc(&geo, input.as_slice::<T>()?, out.as_mut_slice::<T>()?)
    }
}
