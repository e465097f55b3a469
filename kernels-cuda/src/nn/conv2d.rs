//! `Conv2D` on the GPU through cuDNN (`cudnnConvolutionForward`), NHWC and
//! NCHW, with TF's validation and output geometry
//! (`opreg_op_logic::conv`, as on the CPU).
//!
//! The HWIO filter is permuted by an NVRTC kernel into the layout cuDNN
//! reads for the data format (KCRS for NCHW, KRSC for NHWC). cuDNN pads
//! symmetrically only, so the asymmetric part of SAME or EXPLICIT padding
//! is applied to a copy of the input first (an NVRTC pad kernel), as TF's
//! GPU kernel does.

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::cudnn::{ConvForward, CudnnDataType, CudnnError, sys as cudnn_sys};
use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_op_logic::window::{DataFormat, Window};
use opreg_standard_ops::Conv2D;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorElement, TensorShape, f16};

use super::sources::{self, nn_sources};
use opreg_cuda::{
    GpuContext, GpuDevice, ShapeArg, gpu_error, gpu_ptr, gpu_ptr_mut, gpu_slice, gpu_slice_mut,
    grid_for,
};

/// cuDNN's `CUDNN_DATA_HALF` elements (IEEE half bits), with `float`
/// scaling parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct CudnnHalf(pub u16);

impl CudnnDataType for CudnnHalf {
    const DATA_TYPE: cudnn_sys::cudnnDataType_t = cudnn_sys::cudnnDataType_t::CUDNN_DATA_HALF;
    type Scalar = f32;
    fn into_scaling_parameter(self) -> f32 {
        f16::from_bits(self.0).to_f32()
    }
}

/// An element type Conv2D runs through cuDNN: its data type, the
/// convolution's compute type (`float` for half, as TF's default
/// `TF_FP16_CONV_USE_FP32_COMPUTE`) and the math mode.
pub trait ConvElement: TensorElement {
    /// The type of `x`, `w` and `y`.
    type Data: CudnnDataType;
    /// The accumulation type of the convolution descriptor.
    type Compute: CudnnDataType;
    /// `alpha = 1`.
    const ONE: Self::Data;
    /// `beta = 0`.
    const ZERO: Self::Data;
    /// Float runs without TF32 (`CUDNN_FMA_MATH`) so results match the CPU
    /// kernel to float precision; half may use tensor cores.
    const MATH: cudnn_sys::cudnnMathType_t;
    /// Whether NHWC convolutions run in NHWC (half, for tensor cores); the
    /// other types run in NCHW between two transposes, as TF's GPU kernel
    /// does.
    const NHWC_NATIVE: bool;
}

impl ConvElement for f32 {
    type Data = f32;
    type Compute = f32;
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
    const MATH: cudnn_sys::cudnnMathType_t = cudnn_sys::cudnnMathType_t::CUDNN_FMA_MATH;
    const NHWC_NATIVE: bool = false;
}

impl ConvElement for f64 {
    type Data = f64;
    type Compute = f64;
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;
    const MATH: cudnn_sys::cudnnMathType_t = cudnn_sys::cudnnMathType_t::CUDNN_DEFAULT_MATH;
    const NHWC_NATIVE: bool = false;
}

impl ConvElement for f16 {
    type Data = CudnnHalf;
    type Compute = f32;
    const ONE: CudnnHalf = CudnnHalf(0x3c00);
    const ZERO: CudnnHalf = CudnnHalf(0);
    const MATH: cudnn_sys::cudnnMathType_t = cudnn_sys::cudnnMathType_t::CUDNN_TENSOR_OP_MATH;
    const NHWC_NATIVE: bool = true;
}

/// How cuDNN runs a geometry: the symmetric padding it applies, and the
/// extra padding (before, after) per spatial dimension applied to a copy of
/// the input first (TF's `PadInput` of the asymmetric part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CudnnPadding {
    /// cuDNN's padding of rows and columns (both sides).
    pub(crate) common: [i64; 2],
    /// Extra rows, columns before the input.
    pub(crate) extra_before: [i64; 2],
    /// Extra rows, columns after the input.
    pub(crate) extra_after: [i64; 2],
}

impl CudnnPadding {
    /// Splits a geometry's padding.
    pub(crate) fn of(g: &ConvGeometry) -> Self {
        let split = |w: &Window| {
            let common = w.pad_before.min(w.pad_after);
            (common, w.pad_before - common, w.pad_after - common)
        };
        let (rc, rb, ra) = split(&g.rows);
        let (cc, cb, ca) = split(&g.cols);
        Self {
            common: [rc, cc],
            extra_before: [rb, cb],
            extra_after: [ra, ca],
        }
    }

    /// Whether the input needs a padded copy.
    pub(crate) fn needs_copy(&self) -> bool {
        self.extra_before != [0, 0] || self.extra_after != [0, 0]
    }
}

/// The HWIO filter `[fh, fw, ci, co]` permuted for cuDNN: the output dims
/// (KCRS for NCHW, KRSC for NHWC) and, for each, its stride in the HWIO
/// source.
pub(crate) fn filter_permutation(format: DataFormat, hwio: [usize; 4]) -> ([i64; 4], [i64; 4]) {
    let [fh, fw, ci, co] = hwio.map(|d| d as i64);
    let (sh, sw, si, so) = (fw * ci * co, ci * co, co, 1);
    match format {
        DataFormat::Nchw => ([co, ci, fh, fw], [so, si, sh, sw]),
        DataFormat::Nhwc => ([co, fh, fw, ci], [so, sh, sw, si]),
    }
}

/// The layout cuDNN computes in for data in `format`.
pub(crate) fn compute_format(format: DataFormat, nhwc_native: bool) -> DataFormat {
    if nhwc_native {
        format
    } else {
        DataFormat::Nchw
    }
}

/// NHWC `dims` transposed to NCHW: the output dims and, for each, its
/// stride in the NHWC source.
pub(crate) fn nhwc_to_nchw(dims: [usize; 4]) -> ([i64; 4], [i64; 4]) {
    let [n, h, w, c] = dims.map(|d| d as i64);
    ([n, c, h, w], [h * w * c, 1, w * c, c])
}

/// NCHW `dims` transposed to NHWC: the output dims and, for each, its
/// stride in the NCHW source.
pub(crate) fn nchw_to_nhwc(dims: [usize; 4]) -> ([i64; 4], [i64; 4]) {
    let [n, c, h, w] = dims.map(|d| d as i64);
    ([n, h, w, c], [c * h * w, w, 1, h * w])
}

/// A dimension as cuDNN's `int`, or an error naming it.
fn c_int(value: i64, what: &str) -> Result<i32, KernelError> {
    i32::try_from(value).map_err(|_| {
        KernelError::unimplemented(format!(
            "Conv2D on the GPU: {what} ({value}) exceeds cuDNN's int range"
        ))
    })
}

/// `Conv2D` on the GPU through cuDNN (half, float, double), NHWC or NCHW,
/// with strides, dilations, VALID/SAME/EXPLICIT padding and grouped
/// convolution (input depth a multiple of the filter's). Generic over the
/// element type for cuDNN's typed descriptors ([`ConvElement`]).
#[kernel(op = Conv2D, device = GPU, T = [half, float, double], sources = nn_sources)]
pub struct Conv2DGpu<T> {
    permute: CudaFunction,
    pad: CudaFunction,
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement> BuildKernel for Conv2DGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let params = Conv2DParams::from_attrs(ctx.attrs())?;
        let gpu = ctx.gpu()?;
        let source = sources::conv_layout(T::DTYPE)?;
        Ok(Self {
            permute: gpu.function(&source, "permute")?,
            pad: gpu.function(&source, "pad")?,
            params,
            _t: PhantomData,
        })
    }
}

/// Dims as a tensor shape.
fn shape_of(dims: [i64; 4]) -> Result<TensorShape, KernelError> {
    let dims: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| KernelError::internal("a negative Conv2D dim")))
        .collect::<Result<_, _>>()?;
    Ok(TensorShape::new(&dims)?)
}

impl<T: ConvElement> Conv2DGpu<T> {
    /// `src` gathered into a new temporary tensor of shape `dims`:
    /// row-major over `dims`, element `coord` read at `sum(coord[d] *
    /// strides[d])` of `src` (a transpose).
    fn permute(
        &self,
        ctx: &OpKernelContext<'_>,
        src: &Tensor,
        dims: [i64; 4],
        strides: [i64; 4],
        what: &str,
    ) -> Result<Tensor, KernelError> {
        let n = dims.iter().product::<i64>();
        let rank4 = || KernelError::internal("rank 4 > MAX_RANK");
        let out_dims = ShapeArg::new(&dims).ok_or_else(rank4)?;
        let in_strides = ShapeArg::new(&strides).ok_or_else(rank4)?;
        // The permute kernel writes all n elements.
        let mut out = ctx.allocate_temp(T::DTYPE, shape_of(dims)?)?;
        if n == 0 {
            return Ok(out);
        }
        let (x, y) = (gpu_ptr(src)?, gpu_ptr_mut(&mut out)?);
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.permute);
        launch
            .arg(&x)
            .arg(&y)
            .arg(&n)
            .arg(&out_dims)
            .arg(&in_strides);
        // SAFETY: `permute(const T*, T*, index_t, shape_arg, shape_arg)`
        // matches these args; out holds n elements of T, and the callers'
        // strides map every coordinate inside `dims` to an element of `src`
        // (a permutation of its dims).
        unsafe { launch.launch(grid_for(n as usize)) }
            .map_err(|e| gpu_error(&format!("launching Conv2D's {what} transpose"), e))?;
        Ok(out)
    }

    /// A zero-padded copy of the input (`in_dims` in layout `f`,
    /// `before`/`after` the extra padding per dimension); returns it with
    /// its dims.
    fn padded_input(
        &self,
        ctx: &OpKernelContext<'_>,
        f: DataFormat,
        input: &Tensor,
        in_dims: [usize; 4],
        pads: &CudnnPadding,
    ) -> Result<(Tensor, [usize; 4]), KernelError> {
        let (h, w) = (f.index('H'), f.index('W'));
        let mut out_dims = in_dims;
        let mut before = [0i64; 4];
        for (k, d) in [h, w].into_iter().enumerate() {
            let extra = usize::try_from(pads.extra_before[k] + pads.extra_after[k])
                .map_err(|_| KernelError::internal("negative Conv2D padding"))?;
            out_dims[d] += extra;
            before[d] = pads.extra_before[k];
        }
        let n: usize = out_dims.iter().product();
        let as_i64 = |d: [usize; 4]| d.map(|v| v as i64);
        let rank4 = || KernelError::internal("rank 4 > MAX_RANK");
        let out_arg = ShapeArg::new(&as_i64(out_dims)).ok_or_else(rank4)?;
        let in_arg = ShapeArg::new(&as_i64(in_dims)).ok_or_else(rank4)?;
        let before_arg = ShapeArg::new(&before).ok_or_else(rank4)?;
        // The pad kernel writes all n elements (input values or zeros).
        let mut out = ctx.allocate_temp(T::DTYPE, shape_of(as_i64(out_dims))?)?;
        let (x, y) = (gpu_ptr(input)?, gpu_ptr_mut(&mut out)?);
        let count = n as i64;
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.pad);
        launch
            .arg(&x)
            .arg(&y)
            .arg(&count)
            .arg(&out_arg)
            .arg(&in_arg)
            .arg(&before_arg);
        // SAFETY: `pad(const T*, T*, index_t, shape_arg, shape_arg,
        // shape_arg)` matches these args; out holds n elements of T, and the
        // kernel reads the input only at coordinates inside `in_dims`.
        unsafe { launch.launch(grid_for(n)) }
            .map_err(|e| gpu_error("launching Conv2D's input padding", e))?;
        Ok((out, out_dims))
    }

    /// Runs cuDNN's forward convolution of `x` (dims `x_dims` in layout
    /// `f`) with the permuted filter `w` into `y` (layout `f`).
    #[allow(clippy::too_many_arguments)]
    fn convolve(
        &self,
        ctx: &OpKernelContext<'_>,
        f: DataFormat,
        g: &ConvGeometry,
        groups: usize,
        pads: &CudnnPadding,
        x: &Tensor,
        x_dims: [usize; 4],
        w: &Tensor,
        y: &mut Tensor,
    ) -> Result<(), KernelError> {
        let int = |v: usize, what: &str| c_int(v as i64, what);
        let x_nchw = [
            int(x_dims[0], "batch")?,
            int(x_dims[f.index('C')], "input depth")?,
            int(x_dims[f.index('H')], "padded input rows")?,
            int(x_dims[f.index('W')], "padded input cols")?,
        ];
        let image = x_dims[1..].iter().product::<usize>() as i64;
        c_int(image, "input elements per image")?;
        let y_nchw = [
            x_nchw[0],
            int(g.out_depth, "output depth")?,
            int(g.rows.out, "output rows")?,
            int(g.cols.out, "output cols")?,
        ];
        c_int(
            (g.out_depth * g.rows.out * g.cols.out) as i64,
            "output elements per image",
        )?;
        let w_kcrs = [
            y_nchw[1],
            int(g.patch_depth, "filter depth")?,
            int(g.filter_rows, "filter rows")?,
            int(g.filter_cols, "filter cols")?,
        ];
        let pad = [
            c_int(pads.common[0], "row padding")?,
            c_int(pads.common[1], "column padding")?,
        ];
        let stride = [
            c_int(g.stride_rows, "row stride")?,
            c_int(g.stride_cols, "column stride")?,
        ];
        let dilation = [
            c_int(g.dilation_rows, "row dilation")?,
            c_int(g.dilation_cols, "column dilation")?,
        ];
        let groups = c_int(groups as i64, "groups")?;
        let x_len = x_dims.iter().product::<usize>();
        let w_len = w_kcrs.iter().map(|&d| d as usize).product::<usize>();
        let y_len = y_nchw.iter().map(|&d| d as usize).product::<usize>();
        let layout = match f {
            DataFormat::Nhwc => cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC,
            DataFormat::Nchw => cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
        };
        let gpu: &GpuDevice = ctx.gpu()?;
        gpu.context()
            .bind_to_thread()
            .map_err(|e| gpu_error("binding the CUDA context", e))?;
        let (x, w, y) = (gpu_slice(x)?, gpu_slice(w)?, gpu_slice_mut(y)?);
        gpu.with_cudnn(|cudnn| {
            // cudarc's cuDNN wrappers assert and unwrap in places; a panic
            // there becomes this kernel's error.
            catch_unwind(AssertUnwindSafe(|| {
                let cudnn_err = |what: &'static str| move |e: CudnnError| gpu_error(what, e);
                let x_desc = cudnn
                    .create_4d_tensor::<T::Data>(layout, x_nchw)
                    .map_err(cudnn_err("describing Conv2D's input to cuDNN"))?;
                let y_desc = cudnn
                    .create_4d_tensor::<T::Data>(layout, y_nchw)
                    .map_err(cudnn_err("describing Conv2D's output to cuDNN"))?;
                let w_desc = cudnn
                    .create_4d_filter::<T::Data>(layout, w_kcrs)
                    .map_err(cudnn_err("describing Conv2D's filter to cuDNN"))?;
                let mut conv = cudnn
                    .create_conv2d::<T::Compute>(
                        pad,
                        stride,
                        dilation,
                        cudnn_sys::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
                    )
                    .map_err(cudnn_err("describing Conv2D to cuDNN"))?;
                conv.set_math_type(T::MATH)
                    .map_err(cudnn_err("setting Conv2D's cuDNN math type"))?;
                if groups > 1 {
                    conv.set_group_count(groups)
                        .map_err(cudnn_err("setting Conv2D's cuDNN group count"))?;
                }
                let op = ConvForward {
                    conv: &conv,
                    x: &x_desc,
                    w: &w_desc,
                    y: &y_desc,
                };
                let algo = op
                    .pick_algorithm()
                    .map_err(cudnn_err("choosing Conv2D's cuDNN algorithm"))?;
                let workspace_bytes = op
                    .get_workspace_size(algo)
                    .map_err(cudnn_err("sizing Conv2D's cuDNN workspace"))?;
                // cuDNN's scratch space: never read as tensor data.
                let mut scratch = if workspace_bytes > 0 {
                    Some(ctx.allocate_temp(DataType::DtUint8, [workspace_bytes])?)
                } else {
                    None
                };
                let workspace = scratch.as_mut().map(gpu_slice_mut).transpose()?;
                let too_small =
                    || KernelError::internal("Conv2D: a GPU buffer is smaller than its shape");
                // SAFETY: the buffers hold T elements (x and w of this
                // kernel's dtype, y allocated for y_len of them), and
                // `T::Data` is T's cuDNN element type of the same size
                // (f32, f64, or the half bits).
                let x_view = unsafe { x.transmute::<T::Data>(x_len) }.ok_or_else(too_small)?;
                // SAFETY: as for x.
                let w_view = unsafe { w.transmute::<T::Data>(w_len) }.ok_or_else(too_small)?;
                // SAFETY: as for x.
                let mut y_view =
                    unsafe { y.transmute_mut::<T::Data>(y_len) }.ok_or_else(too_small)?;
                // SAFETY: the descriptors describe exactly these buffers
                // (dims, layout, data type), the workspace has the size
                // cuDNN asked for, and everything is queued on the device's
                // one stream, which the cuDNN handle uses.
                unsafe {
                    op.launch(
                        algo,
                        workspace,
                        (T::ONE, T::ZERO),
                        &x_view,
                        &w_view,
                        &mut y_view,
                    )
                }
                .map_err(cudnn_err("running Conv2D with cuDNN"))
            }))
            .unwrap_or_else(|payload| Err(KernelError::from_panic(&*payload)))
        })
    }
}

impl<T: ConvElement> OpKernel for Conv2DGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (input, filter) = (ctx.input(0)?, ctx.input(1)?);
        gpu_ptr(input)?;
        gpu_ptr(filter)?;
        let g = self.params.geometry(input.dims(), filter.dims())?;
        let out_shape = TensorShape::new(g.out_shape(self.params.format))?;
        if out_shape.num_elements() == 0 || input.num_elements() == 0 {
            // Nothing to compute, or only padding: zeros.
            let out = ctx.gpu()?.zeros(T::DTYPE, out_shape)?;
            return ctx.set_output(0, out);
        }
        let groups = self.params.check_launch(&g, filter.num_elements())?;
        let in_dims: [usize; 4] = input
            .dims()
            .try_into()
            .map_err(|_| KernelError::internal("Conv2D input is not 4-D"))?;
        let hwio: [usize; 4] = filter
            .dims()
            .try_into()
            .map_err(|_| KernelError::internal("Conv2D filter is not 4-D"))?;
        let format = self.params.format;
        let compute = compute_format(format, T::NHWC_NATIVE);
        // The input in the layout cuDNN computes in.
        let transposed = if compute != format {
            let (dims, strides) = nhwc_to_nchw(in_dims);
            let t = self.permute(ctx, input, dims, strides, "input")?;
            Some((t, dims.map(|d| d as usize)))
        } else {
            None
        };
        let (x, x_dims) = match &transposed {
            Some((t, dims)) => (t, *dims),
            None => (input, in_dims),
        };
        let (w_dims, w_strides) = filter_permutation(compute, hwio);
        let w = self.permute(ctx, filter, w_dims, w_strides, "filter")?;
        let pads = CudnnPadding::of(&g);
        let padded = if pads.needs_copy() {
            Some(self.padded_input(ctx, compute, x, x_dims, &pads)?)
        } else {
            None
        };
        let (x, x_dims) = match &padded {
            Some((t, dims)) => (t, *dims),
            None => (x, x_dims),
        };
        // cuDNN's forward convolution (beta = 0) writes every element.
        let y_dims = g.out_shape(compute).map(|d| d as i64);
        let mut out = ctx.allocate_temp(T::DTYPE, shape_of(y_dims)?)?;
        self.convolve(ctx, compute, &g, groups, &pads, x, x_dims, &w, &mut out)?;
        if compute != format {
            let (dims, strides) = nchw_to_nhwc(g.out_shape(compute));
            out = self.permute(ctx, &out, dims, strides, "output")?;
        }
        ctx.set_output(0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_padding_splits_into_symmetric_and_extra() {
        let a = Conv2DParams::new(vec![1; 4], vec![1; 4], "SAME", vec![], "NHWC").unwrap();
        // Window 4 over 5: 3 in total, 1 before and 2 after.
        let g = a.geometry(&[1, 5, 5, 2], &[4, 3, 2, 7]).unwrap();
        assert_eq!((g.rows.out, g.cols.out), (5, 5));
        let p = CudnnPadding::of(&g);
        assert_eq!(p.common, [1, 1]);
        assert_eq!(p.extra_before, [0, 0]);
        assert_eq!(p.extra_after, [1, 0]);
        assert!(p.needs_copy());
        assert_eq!(g.out_shape(DataFormat::Nhwc), [1, 5, 5, 7]);
        // Odd windows pad symmetrically: no copy.
        let g = a.geometry(&[1, 5, 5, 2], &[3, 3, 2, 7]).unwrap();
        assert!(!CudnnPadding::of(&g).needs_copy());
    }

    #[test]
    fn explicit_padding_and_nchw() {
        let explicit = vec![0, 0, 0, 0, 2, 1, 0, 3];
        let a = Conv2DParams::new(
            vec![1, 1, 2, 1],
            vec![1, 1, 1, 2],
            "EXPLICIT",
            explicit,
            "NCHW",
        )
        .unwrap();
        let g = a.geometry(&[2, 4, 6, 5], &[3, 2, 4, 8]).unwrap();
        // Rows: (6 + 3 - 3) / 2 + 1 = 4; cols: dilated window 3, (5 + 3 - 3) + 1 = 6.
        assert_eq!((g.rows.out, g.cols.out), (4, 6));
        let p = CudnnPadding::of(&g);
        assert_eq!(p.common, [1, 0]);
        assert_eq!(p.extra_before, [1, 0]);
        assert_eq!(p.extra_after, [0, 3]);
        assert_eq!(g.out_shape(DataFormat::Nchw), [2, 8, 4, 6]);
    }

    #[test]
    fn filter_permutations_gather_hwio() {
        // HWIO [2, 3, 4, 5]: element (h, w, i, o) at ((h * 3 + w) * 4 + i) * 5 + o.
        let (dims, strides) = filter_permutation(DataFormat::Nchw, [2, 3, 4, 5]);
        assert_eq!(dims, [5, 4, 2, 3]);
        assert_eq!(strides, [1, 5, 60, 20]);
        let (dims, strides) = filter_permutation(DataFormat::Nhwc, [2, 3, 4, 5]);
        assert_eq!(dims, [5, 2, 3, 4]);
        assert_eq!(strides, [1, 60, 20, 5]);
    }

    #[test]
    fn layout_transposes() {
        // NHWC [2, 3, 4, 5]: (n, h, w, c) at ((n * 3 + h) * 4 + w) * 5 + c.
        assert_eq!(nhwc_to_nchw([2, 3, 4, 5]), ([2, 5, 3, 4], [60, 1, 20, 5]));
        // NCHW [2, 5, 3, 4]: (n, c, h, w) at ((n * 5 + c) * 3 + h) * 4 + w.
        assert_eq!(nchw_to_nhwc([2, 5, 3, 4]), ([2, 3, 4, 5], [60, 4, 1, 12]));
        assert_eq!(compute_format(DataFormat::Nhwc, false), DataFormat::Nchw);
        assert_eq!(compute_format(DataFormat::Nhwc, true), DataFormat::Nhwc);
        assert_eq!(compute_format(DataFormat::Nchw, true), DataFormat::Nchw);
    }

    #[test]
    fn cudnn_ints_are_checked() {
        assert_eq!(c_int(7, "x").unwrap(), 7);
        assert_eq!(
            c_int(1 << 31, "groups").unwrap_err().to_string(),
            "Conv2D on the GPU: groups (2147483648) exceeds cuDNN's int range"
        );
    }
}
