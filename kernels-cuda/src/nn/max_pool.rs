//! `MaxPool` on the GPU: an NVRTC kernel with TF's GPU semantics (windows
//! start from the lowest finite value, NaN never wins), for NHWC and NCHW.
//!
//! TF's own GPU kernel (not cuDNN) runs NHWC max pooling; cuDNN starts
//! windows from `-inf`, so this kernel keeps TF's answers for both formats.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, DeviceRepr, PushKernelArg};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::MaxPool;
use registry_core::tensor::{TensorElement, TensorShape};

use super::sources;
use super::window::{DataFormat, Padding, check_valid_padding, windowed_output};
use crate::gpu::{GpuDevice, GpuKernelIo, gpu_error, grid_for};

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

/// `MaxPool`'s validated attrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PoolAttrs {
    ksize: [i64; 4],
    strides: [i64; 4],
    padding: Padding,
    explicit_paddings: Vec<i64>,
    format: DataFormat,
}

impl PoolAttrs {
    /// Checks the attrs as TF's `MaxPoolingNoMaskOp<GPUDevice>` does.
    pub(crate) fn new(
        format: &str,
        ksize: Vec<i64>,
        strides: Vec<i64>,
        padding: &str,
        explicit_paddings: Vec<i64>,
    ) -> Result<Self, KernelError> {
        let format = DataFormat::parse(format)?;
        let ksize: [i64; 4] = ksize.try_into().map_err(|_| {
            KernelError::invalid_argument("Sliding window ksize field must specify 4 dimensions")
        })?;
        for (i, &k) in ksize.iter().enumerate() {
            registry_core::kernel_ensure!(
                k > 0,
                "Sliding window ksize for dimension {i} was zero."
            );
        }
        let strides: [i64; 4] = strides.try_into().map_err(|_| {
            KernelError::invalid_argument("Sliding window stride field must specify 4 dimensions")
        })?;
        let padding = Padding::parse(padding)?;
        let explicit_paddings = if padding == Padding::Explicit {
            check_valid_padding(padding, &explicit_paddings, format)?;
            explicit_paddings
        } else {
            Vec::new()
        };
        if ksize[0] != 1 || strides[0] != 1 {
            return Err(KernelError::unimplemented(
                "Pooling is not yet supported on the batch dimension.",
            ));
        }
        Ok(Self {
            ksize,
            strides,
            padding,
            explicit_paddings,
            format,
        })
    }

    /// The output shape and kernel geometry for an input of `dims`.
    pub(crate) fn geometry(
        &self,
        dims: &[usize],
    ) -> Result<(TensorShape, PoolGeometryArg), KernelError> {
        let &[_, _, _, _] = dims else {
            return Err(KernelError::invalid_argument(format!(
                "tensor_in_shape must have 2 spatial dimensions. {} 0",
                dims.len()
            )));
        };
        let f = self.format;
        let window = |d: char| usize::try_from(self.ksize[f.index(d)]).unwrap_or(usize::MAX);
        let (window_rows, window_cols, depth_window) = (window('H'), window('W'), window('C'));
        if depth_window != 1 && (window_rows != 1 || window_cols != 1) {
            return Err(KernelError::unimplemented(
                "MaxPooling supports exactly one of pooling across depth or pooling across \
                 width/height.",
            ));
        }
        if depth_window > 1 {
            return Err(KernelError::unimplemented(
                "Depthwise max pooling is currently only implemented for CPU devices.",
            ));
        }
        let explicit = |d: char| {
            let i = 2 * f.index(d);
            match self.explicit_paddings.get(i..i + 2) {
                Some(&[before, after]) => (before, after),
                _ => (0, 0),
            }
        };
        let (batch, in_rows, in_cols, depth) = (
            dims[0],
            dims[f.index('H')],
            dims[f.index('W')],
            dims[f.index('C')],
        );
        let (stride_rows, stride_cols) = (self.strides[f.index('H')], self.strides[f.index('W')]);
        let rows = windowed_output(
            in_rows,
            window_rows,
            1,
            stride_rows,
            self.padding,
            explicit('H'),
        )?;
        let cols = windowed_output(
            in_cols,
            window_cols,
            1,
            stride_cols,
            self.padding,
            explicit('W'),
        )?;
        let shape = TensorShape::new(f.shape(batch, rows.out, cols.out, depth))?;
        let geo = PoolGeometryArg {
            batch: batch as i64,
            in_rows: in_rows as i64,
            in_cols: in_cols as i64,
            depth: depth as i64,
            out_rows: rows.out as i64,
            out_cols: cols.out as i64,
            window_rows: window_rows as i64,
            window_cols: window_cols as i64,
            stride_rows,
            stride_cols,
            pad_top: rows.pad_before,
            pad_left: cols.pad_before,
            nchw: i64::from(f == DataFormat::Nchw),
        };
        Ok((shape, geo))
    }
}

/// `MaxPool` on the GPU (half, bfloat16, float, double): spatial windows
/// (`ksize`/`strides` on H and W, VALID/SAME/EXPLICIT padding) in NHWC or
/// NCHW. Depthwise pooling is CPU-only, as in TensorFlow.
#[kernel(op = MaxPool, device = GPU, T = [half, bfloat16, float, double])]
pub struct MaxPoolGpu<T> {
    dev: Arc<GpuDevice>,
    func: CudaFunction,
    attrs: PoolAttrs,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for MaxPoolGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let padding: String = ctx.attr("padding")?;
        let explicit = if padding == "EXPLICIT" {
            ctx.attr("explicit_paddings")?
        } else {
            Vec::new()
        };
        let attrs = PoolAttrs::new(
            &ctx.attr::<String>("data_format")?,
            ctx.attr("ksize")?,
            ctx.attr("strides")?,
            &padding,
            explicit,
        )?;
        let dev = GpuDevice::get()?;
        let func = dev.function(&sources::max_pool(T::DTYPE)?, "max_pool")?;
        Ok(Self {
            dev,
            func,
            attrs,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for MaxPoolGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (x, x_bytes) = ctx.gpu_input(0)?;
        let (shape, geo) = self.attrs.geometry(x.dims())?;
        let n = shape.num_elements();
        let bytes = n * std::mem::size_of::<T>();
        // SAFETY: the kernel writes all n output elements before anything
        // reads them; for n = 0 there is nothing to write.
        let mut out = unsafe { self.dev.alloc_uninit(bytes)? };
        if n > 0 {
            let count = n as i64;
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch.arg(x_bytes).arg(&mut out).arg(&count).arg(&geo);
            // SAFETY: `max_pool(const T*, T*, index_t, pool_geometry)`
            // matches these args; out holds n elements of T; every input
            // index the kernel forms is clipped to the input's dims, which
            // `geo` takes from the input tensor.
            unsafe { launch.launch(grid_for(n)) }.map_err(|e| gpu_error("launching MaxPool", e))?;
        }
        ctx.set_output(0, self.dev.tensor(T::DTYPE, shape, out)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(format: &str, ksize: [i64; 4], strides: [i64; 4], padding: &str) -> PoolAttrs {
        PoolAttrs::new(
            format,
            ksize.to_vec(),
            strides.to_vec(),
            padding,
            Vec::new(),
        )
        .unwrap()
    }

    #[test]
    fn nhwc_and_nchw_geometry() {
        let a = attrs("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], "SAME");
        let (shape, geo) = a.geometry(&[2, 5, 4, 3]).unwrap();
        assert_eq!(shape.dims(), &[2, 3, 2, 3]);
        assert_eq!((geo.pad_top, geo.pad_left, geo.nchw), (0, 0, 0));
        let a = attrs("NCHW", [1, 1, 3, 3], [1, 1, 1, 1], "SAME");
        let (shape, geo) = a.geometry(&[2, 3, 5, 4]).unwrap();
        assert_eq!(shape.dims(), &[2, 3, 5, 4]);
        assert_eq!(
            (geo.depth, geo.in_rows, geo.in_cols, geo.nchw),
            (3, 5, 4, 1)
        );
        assert_eq!((geo.pad_top, geo.pad_left), (1, 1));
        let a = PoolAttrs::new(
            "NHWC",
            vec![1, 2, 2, 1],
            vec![1, 1, 1, 1],
            "EXPLICIT",
            vec![0, 0, 1, 2, 0, 1, 0, 0],
        )
        .unwrap();
        let (shape, geo) = a.geometry(&[1, 3, 3, 1]).unwrap();
        assert_eq!(shape.dims(), &[1, 5, 3, 1]);
        assert_eq!((geo.pad_top, geo.pad_left), (1, 0));
    }

    #[test]
    fn tf_errors() {
        let e = PoolAttrs::new("NHWC", vec![1, 2, 2], vec![1; 4], "VALID", vec![]).unwrap_err();
        assert!(e.to_string().contains("ksize field must specify 4"), "{e}");
        let e = PoolAttrs::new("NHWC", vec![1, 0, 2, 1], vec![1; 4], "VALID", vec![]).unwrap_err();
        assert!(e.to_string().contains("dimension 1 was zero"), "{e}");
        let e = PoolAttrs::new("NHWC", vec![2, 1, 1, 1], vec![1; 4], "VALID", vec![]).unwrap_err();
        assert!(e.to_string().contains("batch dimension"), "{e}");
        let a = attrs("NHWC", [1, 1, 1, 2], [1, 1, 1, 2], "VALID");
        let e = a.geometry(&[1, 2, 2, 4]).unwrap_err();
        assert!(e.to_string().contains("only implemented for CPU"), "{e}");
        let e = a.geometry(&[1, 2, 2]).unwrap_err();
        assert!(e.to_string().contains("2 spatial dimensions"), "{e}");
        let a = attrs("NHWC", [1, 3, 3, 1], [1, 1, 1, 1], "VALID");
        let e = a.geometry(&[1, 1, 1, 1]).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
    }
}
