//! `AvgPool` on the GPU through cuDNN (`cudnnPoolingForward` with
//! `CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING`: each window's mean over
//! the elements inside the input, TF's semantics), NHWC and NCHW.
//!
//! The checks and the output geometry are `MaxPool`'s and the CPU
//! kernel's ([`Pool2DParams`]). As TF's cuDNN pooling does, cuDNN gets the
//! padding before the input on both sides and TF's output size: SAME's
//! extra row or column after the input only moves windows past its end,
//! where they are clipped.

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::cudnn::{CudnnError, PoolingForward, sys as cudnn_sys};
use opreg_op_logic::pool::{Pool2DParams, PoolGeometry, PoolWindows};
use opreg_op_logic::window::DataFormat;
use opreg_standard_ops::AvgPool;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use super::conv2d::{ConvElement, c_int_of};
use opreg_cuda::{GpuContext, GpuDevice, gpu_error, gpu_ptr, gpu_slice, gpu_slice_mut};

/// A pooling's sizes as cuDNN takes them, each checked against its `int`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudnnPoolDims {
    /// The input: n, c, h, w (NCHW order whatever the layout).
    pub x: [i32; 4],
    /// The output: n, c, h, w.
    pub y: [i32; 4],
    /// Window rows, columns.
    pub window: [i32; 2],
    /// Padding above and left of the input (cuDNN pads both sides alike).
    pub pad: [i32; 2],
    /// Vertical, horizontal stride.
    pub stride: [i32; 2],
}

impl CudnnPoolDims {
    /// The sizes of `g`'s pooling.
    ///
    /// ```
    /// use kernels_cuda::nn::CudnnPoolDims;
    /// use opreg_op_logic::pool::{Pool2DParams, PoolWindows};
    /// use opreg_op_logic::window::DataFormat;
    ///
    /// let p = Pool2DParams::new(DataFormat::Nhwc, vec![1, 2, 2, 1], vec![1, 2, 2, 1], "SAME", vec![])
    ///     .unwrap();
    /// let PoolWindows::Spatial(g) = p.windows(&[2, 5, 4, 3]).unwrap() else { panic!() };
    /// let d = CudnnPoolDims::new(&g).unwrap();
    /// assert_eq!((d.x, d.y), ([2, 3, 5, 4], [2, 3, 3, 2]));
    /// assert_eq!((d.window, d.pad, d.stride), ([2, 2], [0, 0], [2, 2]));
    /// ```
    pub fn new(g: &PoolGeometry) -> Result<Self, KernelError> {
        let int = |v: usize, what: &str| c_int_of("AvgPool", v as i64, what);
        let x = [
            int(g.batch, "batch")?,
            int(g.depth, "depth")?,
            int(g.in_rows, "input rows")?,
            int(g.in_cols, "input cols")?,
        ];
        c_int_of(
            "AvgPool",
            (g.depth * g.in_rows * g.in_cols) as i64,
            "input elements per image",
        )?;
        let y = [
            x[0],
            x[1],
            int(g.rows.out, "output rows")?,
            int(g.cols.out, "output cols")?,
        ];
        Ok(Self {
            x,
            y,
            window: [
                int(g.window_rows, "window rows")?,
                int(g.window_cols, "window cols")?,
            ],
            pad: [
                c_int_of("AvgPool", g.rows.pad_before, "row padding")?,
                c_int_of("AvgPool", g.cols.pad_before, "column padding")?,
            ],
            stride: [
                c_int_of("AvgPool", g.stride_rows, "row stride")?,
                c_int_of("AvgPool", g.stride_cols, "column stride")?,
            ],
        })
    }
}

/// `AvgPool` on the GPU through cuDNN (half, float, double; TF's GPU
/// kernel also has bfloat16): spatial windows (`ksize`/`strides` on H and
/// W, VALID or SAME padding) in NHWC or NCHW, padding not counted. Pooling
/// across depth is CPU-only, as in TensorFlow.
#[kernel(op = AvgPool, device = GPU, T = [half, float, double])]
pub struct AvgPoolGpu<T> {
    params: Pool2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement> BuildKernel for AvgPoolGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let format = DataFormat::parse(ctx.attr::<&str>("data_format")?)?;
        let params = Pool2DParams::from_attrs(ctx.attrs(), format)?;
        ctx.gpu()?;
        Ok(Self {
            params,
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement> OpKernel for AvgPoolGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?;
        gpu_ptr(input)?;
        registry_core::kernel_ensure!(input.shape().rank() == 4, "tensor_in must be 4-dimensional");
        let g = match self.params.windows(input.dims())? {
            PoolWindows::Spatial(g) => g,
            PoolWindows::Depthwise(_) => {
                return Err(KernelError::unimplemented(
                    "Non-spatial pooling is not yet supported. Volunteers? :)",
                ));
            }
        };
        let out_shape = TensorShape::new(g.out_shape(self.params.format))?;
        if out_shape.num_elements() == 0 || input.num_elements() == 0 {
            // Nothing to average: zeros (TF's empty windows average to 0).
            let out = ctx.gpu()?.zeros(T::DTYPE, out_shape)?;
            return ctx.set_output(0, out);
        }
        let d = CudnnPoolDims::new(&g)?;
        let layout = match self.params.format {
            DataFormat::Nhwc => cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC,
            DataFormat::Nchw => cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
        };
        let (x_len, y_len) = (input.num_elements(), out_shape.num_elements());
        // cuDNN's pooling (beta = 0) writes every output element.
        let mut out = ctx.allocate_temp(T::DTYPE, out_shape)?;
        let gpu: &GpuDevice = ctx.gpu()?;
        gpu.context()
            .bind_to_thread()
            .map_err(|e| gpu_error("binding the CUDA context", e))?;
        let (x, y) = (gpu_slice(input)?, gpu_slice_mut(&mut out)?);
        gpu.with_cudnn(|cudnn| {
            // cudarc's cuDNN wrappers assert and unwrap in places; a panic
            // there becomes this kernel's error.
            catch_unwind(AssertUnwindSafe(|| {
                let cudnn_err = |what: &'static str| move |e: CudnnError| gpu_error(what, e);
                let x_desc = cudnn
                    .create_4d_tensor::<T::Data>(layout, d.x)
                    .map_err(cudnn_err("describing AvgPool's input to cuDNN"))?;
                let y_desc = cudnn
                    .create_4d_tensor::<T::Data>(layout, d.y)
                    .map_err(cudnn_err("describing AvgPool's output to cuDNN"))?;
                let pooling = cudnn
                    .create_poolingnd::<T::Compute>(
                        &d.window,
                        &d.pad,
                        &d.stride,
                        cudnn_sys::cudnnPoolingMode_t::CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                        cudnn_sys::cudnnNanPropagation_t::CUDNN_PROPAGATE_NAN,
                    )
                    .map_err(cudnn_err("describing AvgPool to cuDNN"))?;
                let too_small =
                    || KernelError::internal("AvgPool: a GPU buffer is smaller than its shape");
                // SAFETY: the buffers hold T elements (the input of this
                // kernel's dtype, x_len of them; the output allocated for
                // y_len), and `T::Data` is T's cuDNN element type of the
                // same size (f32, f64, or the half bits).
                let x_view = unsafe { x.transmute::<T::Data>(x_len) }.ok_or_else(too_small)?;
                // SAFETY: as for x.
                let mut y_view =
                    unsafe { y.transmute_mut::<T::Data>(y_len) }.ok_or_else(too_small)?;
                let op = PoolingForward {
                    pooling: &pooling,
                    x: &x_desc,
                    y: &y_desc,
                };
                // SAFETY: the descriptors describe exactly these buffers
                // (dims, layout, data type); every window cuDNN reads is
                // clipped to the input; all is queued on the device's one
                // stream, which the cuDNN handle uses; beta = 0, so the
                // output is only written.
                unsafe { op.launch((T::ONE, T::ZERO), &x_view, &mut y_view) }
                    .map_err(cudnn_err("running AvgPool with cuDNN"))
            }))
            .unwrap_or_else(|payload| Err(KernelError::from_panic(&*payload)))
        })?;
        ctx.set_output(0, out)
    }
}
