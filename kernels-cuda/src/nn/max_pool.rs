//! `MaxPool` on the GPU: an NVRTC kernel with TF's GPU semantics (windows
//! start from the lowest finite value, NaN never wins), for NHWC and NCHW.
//!
//! TF's own GPU kernel (not cuDNN) runs NHWC max pooling; cuDNN starts
//! windows from `-inf`, so this kernel keeps TF's answers for both formats.

use cudarc::driver::{CudaFunction, DeviceRepr, PushKernelArg};
use opreg_op_logic::pool::{Pool2DParams, PoolWindows};
use opreg_op_logic::window::DataFormat;
use opreg_standard_ops::MaxPool;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::TensorShape;

use super::sources::{self, nn_sources};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};

/// The kernel's `struct pool_geometry` (see
/// [`sources::max_pool`](super::sources::max_pool)), passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolGeometryArg {
    /// Images.
    pub batch: i64,
    /// Input height.
    pub in_rows: i64,
    /// Input width.
    pub in_cols: i64,
    /// Channels.
    pub depth: i64,
    /// Output height.
    pub out_rows: i64,
    /// Output width.
    pub out_cols: i64,
    /// Window height.
    pub window_rows: i64,
    /// Window width.
    pub window_cols: i64,
    /// Vertical stride.
    pub stride_rows: i64,
    /// Horizontal stride.
    pub stride_cols: i64,
    /// Padding above the input.
    pub pad_top: i64,
    /// Padding left of the input.
    pub pad_left: i64,
    /// 1 for NCHW, 0 for NHWC.
    pub nchw: i64,
}

// SAFETY: `PoolGeometryArg` is `repr(C)` plain data (13 `i64`s, no
// padding), laid out exactly as the source's `struct pool_geometry`.
unsafe impl DeviceRepr for PoolGeometryArg {}

/// The output shape and kernel geometry of `MaxPool` with `params` for an
/// input of `dims`.
pub(crate) fn pool_geometry(
    params: &Pool2DParams,
    dims: &[usize],
) -> Result<(TensorShape, PoolGeometryArg), KernelError> {
    let g = match params.windows(dims)? {
        PoolWindows::Spatial(g) => g,
        PoolWindows::Depthwise(_) => {
            return Err(KernelError::unimplemented(
                "Depthwise max pooling is currently only implemented for CPU devices.",
            ));
        }
    };
    let shape = TensorShape::new(g.out_shape(params.format))?;
    let geo = PoolGeometryArg {
        batch: g.batch as i64,
        in_rows: g.in_rows as i64,
        in_cols: g.in_cols as i64,
        depth: g.depth as i64,
        out_rows: g.rows.out as i64,
        out_cols: g.cols.out as i64,
        window_rows: g.window_rows as i64,
        window_cols: g.window_cols as i64,
        stride_rows: g.stride_rows,
        stride_cols: g.stride_cols,
        pad_top: g.rows.pad_before,
        pad_left: g.cols.pad_before,
        nchw: i64::from(params.format == DataFormat::Nchw),
    };
    Ok((shape, geo))
}

/// `MaxPool` on the GPU (half, bfloat16, float, double): spatial windows
/// (`ksize`/`strides` on H and W, VALID/SAME/EXPLICIT padding) in NHWC or
/// NCHW. Depthwise pooling is CPU-only, as in TensorFlow.
#[kernel(
    op = MaxPool,
    device = GPU,
    T = [half, bfloat16, float, double],
    sources = nn_sources
)]
#[derive(Debug)]
pub struct MaxPoolGpu {
    func: CudaFunction,
    dtype: DataType,
    params: Pool2DParams,
}

impl BuildKernel for MaxPoolGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let format = DataFormat::parse(ctx.attr::<&str>("data_format")?)?;
        let params = Pool2DParams::from_attrs(ctx.attrs(), format)?;
        let dtype = ctx.attr("T")?;
        let func = ctx
            .gpu()?
            .function(&sources::max_pool(dtype)?, "max_pool")?;
        Ok(Self {
            func,
            dtype,
            params,
        })
    }
}

impl OpKernel for MaxPoolGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.gpu_input(0, self.dtype)?;
        let (shape, geo) = pool_geometry(&self.params, ctx.input(0)?.dims())?;
        let n = shape.num_elements();
        // The kernel writes all n output elements.
        ctx.allocate_output(0, shape)?;
        if n > 0 {
            let out = ctx.gpu_output(0)?;
            let count = n as i64;
            let mut launch = ctx.gpu()?.stream().launch_builder(&self.func);
            launch.arg(&x).arg(&out).arg(&count).arg(&geo);
            // SAFETY: `max_pool(const T*, T*, index_t, pool_geometry)`
            // matches these args; out holds n elements of T; every input
            // index the kernel forms is clipped to the input's dims, which
            // `geo` takes from the input tensor.
            unsafe { launch.launch(grid_for(n)) }.map_err(|e| gpu_error("launching MaxPool", e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(format: DataFormat, ksize: [i64; 4], strides: [i64; 4]) -> Pool2DParams {
        Pool2DParams::new(format, ksize.to_vec(), strides.to_vec(), "SAME", Vec::new()).unwrap()
    }

    #[test]
    fn nhwc_and_nchw_kernel_geometry() {
        let p = params(DataFormat::Nhwc, [1, 2, 2, 1], [1, 2, 2, 1]);
        let (shape, geo) = pool_geometry(&p, &[2, 5, 4, 3]).unwrap();
        assert_eq!(shape.dims(), &[2, 3, 2, 3]);
        assert_eq!((geo.pad_top, geo.pad_left, geo.nchw), (0, 0, 0));
        let p = params(DataFormat::Nchw, [1, 1, 3, 3], [1, 1, 1, 1]);
        let (shape, geo) = pool_geometry(&p, &[2, 3, 5, 4]).unwrap();
        assert_eq!(shape.dims(), &[2, 3, 5, 4]);
        assert_eq!(
            (geo.depth, geo.in_rows, geo.in_cols, geo.nchw),
            (3, 5, 4, 1)
        );
        assert_eq!((geo.pad_top, geo.pad_left), (1, 1));
    }

    #[test]
    fn depthwise_pooling_is_cpu_only() {
        let p = params(DataFormat::Nhwc, [1, 1, 1, 2], [1, 1, 1, 2]);
        let e = pool_geometry(&p, &[1, 2, 2, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Depthwise max pooling is currently only implemented for CPU devices."
        );
    }
}
