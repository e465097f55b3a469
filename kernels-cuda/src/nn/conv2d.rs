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

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use cudarc::cudnn::{
    ConvBackwardData, ConvDescriptor, ConvForward, Cudnn, CudnnDataType, CudnnError,
    FilterDescriptor, TensorDescriptor, sys as cudnn_sys,
};
use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_op_logic::window::{DataFormat, Window};
use opreg_standard_ops::Conv2D;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorElement, TensorShape, element_size, f16};

use super::sources::{self, nn_sources};
use crate::gemm::{GemmElement, GemmPlan, run_gemm};
use opreg_cuda::{
    GpuContext, GpuDevice, GpuTensors, ShapeArg, gpu_error, gpu_ptr, gpu_ptr_mut, gpu_slice,
    gpu_slice_mut, grid_for,
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

/// A dimension as cuDNN's `int`, or an error naming it and op `op`.
pub(crate) fn c_int_of(op: &str, value: i64, what: &str) -> Result<i32, KernelError> {
    i32::try_from(value).map_err(|_| {
        KernelError::unimplemented(format!(
            "{op} on the GPU: {what} ({value}) exceeds cuDNN's int range"
        ))
    })
}

/// Dims as a tensor shape.
pub(crate) fn shape_of(dims: [i64; 4]) -> Result<TensorShape, KernelError> {
    let dims: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| KernelError::internal("a negative Conv2D dim")))
        .collect::<Result<_, _>>()?;
    Ok(TensorShape::new(&dims)?)
}

/// The layout kernels of the cuDNN convolutions ([`sources::conv_layout`]
/// for one dtype): gathers (transposes, crops) and zero padding on the GPU.
#[derive(Debug)]
pub(crate) struct ConvLayout {
    permute: CudaFunction,
    pad: CudaFunction,
    dtype: DataType,
    /// The op, for messages.
    op: &'static str,
}

impl ConvLayout {
    /// Compiles (or finds cached) the layout kernels for `dtype`.
    pub(crate) fn new(
        ctx: &OpKernelConstruction<'_>,
        dtype: DataType,
        op: &'static str,
    ) -> Result<Self, KernelError> {
        let gpu = ctx.gpu()?;
        let source = sources::conv_layout(dtype)?;
        Ok(Self {
            permute: gpu.function(&source, "permute")?,
            pad: gpu.function(&source, "pad")?,
            dtype,
            op,
        })
    }

    /// `src` gathered into a new temporary tensor of shape `dims`:
    /// row-major over `dims`, element `coord` read at `sum(coord[d] *
    /// strides[d])` of `src` (a transpose).
    pub(crate) fn permute(
        &self,
        ctx: &OpKernelContext<'_>,
        src: &Tensor,
        dims: [i64; 4],
        strides: [i64; 4],
        what: &str,
    ) -> Result<Tensor, KernelError> {
        let mut out = ctx.allocate_temp(self.dtype, shape_of(dims)?)?;
        self.gather_into(ctx, src, 0, dims, strides, &mut out, what)?;
        Ok(out)
    }

    /// Writes every element of `out` (of shape `dims`, row-major): element
    /// `coord` is `src`'s element `offset + sum(coord[d] * strides[d])` (a
    /// transpose, or a crop of a larger tensor: `offset` its first element).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gather_into(
        &self,
        ctx: &OpKernelContext<'_>,
        src: &Tensor,
        offset: i64,
        dims: [i64; 4],
        strides: [i64; 4],
        out: &mut Tensor,
        what: &str,
    ) -> Result<(), KernelError> {
        let n = dims.iter().product::<i64>();
        let rank4 = || KernelError::internal("rank 4 > MAX_RANK");
        let out_dims = ShapeArg::new(&dims).ok_or_else(rank4)?;
        let in_strides = ShapeArg::new(&strides).ok_or_else(rank4)?;
        if out.num_elements() as i64 != n || out.dtype() != self.dtype {
            return Err(KernelError::internal(format!(
                "{}: a {what} gather into a tensor of another shape or dtype",
                self.op
            )));
        }
        if n == 0 {
            return Ok(());
        }
        // The farthest element the gather reads, which must be in `src`.
        let last = offset
            + dims
                .iter()
                .zip(&strides)
                .map(|(&d, &s)| (d - 1) * s)
                .sum::<i64>();
        if offset < 0 || last >= src.num_elements() as i64 || src.dtype() != self.dtype {
            return Err(KernelError::internal(format!(
                "{}: a {what} gather outside its source",
                self.op
            )));
        }
        let size = element_size(self.dtype)
            .ok_or_else(|| KernelError::internal("a conv layout dtype without a size"))?;
        let x = gpu_ptr(src)? + (offset as u64) * size as u64;
        let y = gpu_ptr_mut(out)?;
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.permute);
        launch
            .arg(&x)
            .arg(&y)
            .arg(&n)
            .arg(&out_dims)
            .arg(&in_strides);
        // SAFETY: `permute(const T*, T*, index_t, shape_arg, shape_arg)`
        // matches these args; out holds n elements of T (checked above),
        // and every element read, at most `last` past the start of `src`,
        // is inside it (checked above: strides and dims are non-negative).
        unsafe { launch.launch(grid_for(n as usize)) }
            .map(|_| ())
            .map_err(|e| gpu_error(&format!("launching {}'s {what} transpose", self.op), e))
    }

    /// A zero-padded copy of the input (`in_dims` in layout `f`,
    /// `before`/`after` the extra padding per dimension); returns it with
    /// its dims.
    pub(crate) fn padded_input(
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
        let mut out = ctx.allocate_temp(self.dtype, shape_of(as_i64(out_dims))?)?;
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
            .map_err(|e| gpu_error(&format!("launching {}'s input padding", self.op), e))?;
        Ok((out, out_dims))
    }
}

/// A convolution's sizes as cuDNN takes them: dims in NCHW order (whatever
/// the layout), each checked against cuDNN's `int`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CudnnConvDims {
    /// The layout of `x` and `y` (and the filter's: KCRS or KRSC).
    layout: cudnn_sys::cudnnTensorFormat_t,
    /// The (padded) input: n, c, h, w.
    x: [i32; 4],
    /// The output: n, k, p, q.
    y: [i32; 4],
    /// The filter: k, c / groups, r, s.
    w: [i32; 4],
    /// cuDNN's symmetric padding of rows and columns.
    pad: [i32; 2],
    stride: [i32; 2],
    dilation: [i32; 2],
    groups: i32,
}

impl CudnnConvDims {
    /// The sizes of `g`'s convolution (in `groups` groups) of an input of
    /// `x_dims` in layout `f` (after the extra padding of `pads`, whose
    /// symmetric part cuDNN applies).
    pub(crate) fn new(
        op: &str,
        f: DataFormat,
        g: &ConvGeometry,
        groups: usize,
        pads: &CudnnPadding,
        x_dims: [usize; 4],
    ) -> Result<Self, KernelError> {
        let c_int = |v: i64, what: &str| c_int_of(op, v, what);
        let int = |v: usize, what: &str| c_int(v as i64, what);
        let x = [
            int(x_dims[0], "batch")?,
            int(x_dims[f.index('C')], "input depth")?,
            int(x_dims[f.index('H')], "padded input rows")?,
            int(x_dims[f.index('W')], "padded input cols")?,
        ];
        let image = x_dims[1..].iter().product::<usize>() as i64;
        c_int(image, "input elements per image")?;
        let y = [
            x[0],
            int(g.out_depth, "output depth")?,
            int(g.rows.out, "output rows")?,
            int(g.cols.out, "output cols")?,
        ];
        c_int(
            (g.out_depth * g.rows.out * g.cols.out) as i64,
            "output elements per image",
        )?;
        let w = [
            y[1],
            int(g.patch_depth, "filter depth")?,
            int(g.filter_rows, "filter rows")?,
            int(g.filter_cols, "filter cols")?,
        ];
        Ok(Self {
            layout: match f {
                DataFormat::Nhwc => cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC,
                DataFormat::Nchw => cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
            },
            x,
            y,
            w,
            pad: [
                c_int(pads.common[0], "row padding")?,
                c_int(pads.common[1], "column padding")?,
            ],
            stride: [
                c_int(g.stride_rows, "row stride")?,
                c_int(g.stride_cols, "column stride")?,
            ],
            dilation: [
                c_int(g.dilation_rows, "row dilation")?,
                c_int(g.dilation_cols, "column dilation")?,
            ],
            groups: c_int(groups as i64, "groups")?,
        })
    }

    /// The elements of the input, the filter and the output.
    fn lens(&self) -> [usize; 3] {
        let len = |d: [i32; 4]| d.iter().map(|&v| v as usize).product::<usize>();
        [len(self.x), len(self.w), len(self.y)]
    }
}

/// cuDNN's descriptors of one convolution: input, filter, output and the
/// convolution (with its math type and group count).
type Descriptors<T> = (
    TensorDescriptor<<T as ConvElement>::Data>,
    FilterDescriptor<<T as ConvElement>::Data>,
    TensorDescriptor<<T as ConvElement>::Data>,
    ConvDescriptor<<T as ConvElement>::Compute>,
);

/// Describes the convolution of `d` to cuDNN.
fn describe<T: ConvElement>(
    cudnn: &Arc<Cudnn>,
    op: &str,
    d: &CudnnConvDims,
) -> Result<Descriptors<T>, KernelError> {
    let cudnn_err =
        |what: &'static str| move |e: CudnnError| gpu_error(&format!("{what} ({op})"), e);
    let x_desc = cudnn
        .create_4d_tensor::<T::Data>(d.layout, d.x)
        .map_err(cudnn_err("describing a convolution's input to cuDNN"))?;
    let y_desc = cudnn
        .create_4d_tensor::<T::Data>(d.layout, d.y)
        .map_err(cudnn_err("describing a convolution's output to cuDNN"))?;
    let w_desc = cudnn
        .create_4d_filter::<T::Data>(d.layout, d.w)
        .map_err(cudnn_err("describing a convolution's filter to cuDNN"))?;
    let mut conv = cudnn
        .create_conv2d::<T::Compute>(
            d.pad,
            d.stride,
            d.dilation,
            cudnn_sys::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
        )
        .map_err(cudnn_err("describing a convolution to cuDNN"))?;
    conv.set_math_type(T::MATH)
        .map_err(cudnn_err("setting a convolution's cuDNN math type"))?;
    if d.groups > 1 {
        conv.set_group_count(d.groups)
            .map_err(cudnn_err("setting a convolution's cuDNN group count"))?;
    }
    Ok((x_desc, w_desc, y_desc, conv))
}

/// `bytes` of cuDNN scratch space (none for 0).
fn workspace(ctx: &OpKernelContext<'_>, bytes: usize) -> Result<Option<Tensor>, KernelError> {
    // cuDNN's scratch space: never read as tensor data.
    if bytes > 0 {
        Ok(Some(ctx.allocate_temp(DataType::DtUint8, [bytes])?))
    } else {
        Ok(None)
    }
}

/// Which cuDNN convolution to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConvDirection {
    /// `y = conv(x, w)` (`cudnnConvolutionForward`).
    Forward,
    /// `x = conv_backward_data(w, y)`: the gradient with respect to the
    /// input (`cudnnConvolutionBackwardData`).
    BackwardData,
}

/// What a cuDNN algorithm is chosen for: element type and sizes.
type AlgorithmKey = (DataType, CudnnConvDims);

/// Algorithms of one direction chosen so far, with their workspace sizes.
type AlgorithmCache<A> = LazyLock<Mutex<HashMap<AlgorithmKey, (A, usize)>>>;

/// The algorithm cuDNN's heuristics chose for each convolution run so far,
/// with its workspace size, one cache per direction. Asking
/// (`cudnnGetConvolution*Algorithm_v7`) costs about a millisecond of CPU
/// time per call in cuDNN 9 (a MobileNet's 1x1 convolutions took 1 to 3 ms
/// each on an H200 when every call asked), so it is asked once per
/// direction, type and shape, as TF's and PyTorch's algorithm caches do.
/// There is one GPU (device 0) per process.
static FORWARD_ALGORITHMS: AlgorithmCache<cudnn_sys::cudnnConvolutionFwdAlgo_t> =
    LazyLock::new(Mutex::default);
/// [`FORWARD_ALGORITHMS`] for backward-data convolutions.
static BACKWARD_DATA_ALGORITHMS: AlgorithmCache<cudnn_sys::cudnnConvolutionBwdDataAlgo_t> =
    LazyLock::new(Mutex::default);

/// The algorithm and workspace bytes `cache` holds for `key`, or
/// `choose`'s, then cached.
fn algorithm_for<A: Copy>(
    cache: &AlgorithmCache<A>,
    key: AlgorithmKey,
    choose: impl FnOnce() -> Result<(A, usize), KernelError>,
) -> Result<(A, usize), KernelError> {
    let lock = || cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&found) = lock().get(&key) {
        return Ok(found);
    }
    let chosen = choose()?;
    lock().insert(key, chosen);
    Ok(chosen)
}

/// Runs a cuDNN convolution of `d`'s sizes with the permuted filter `w`,
/// reading `src` and writing every element of `dst` (both in `d`'s
/// layout): forward reads the input and writes the output; backward data
/// reads the output's gradient and writes the input's.
pub(crate) fn run_cudnn_conv<T: ConvElement>(
    ctx: &OpKernelContext<'_>,
    op: &str,
    direction: ConvDirection,
    d: &CudnnConvDims,
    src: &Tensor,
    w: &Tensor,
    dst: &mut Tensor,
) -> Result<(), KernelError> {
    let [x_len, w_len, y_len] = d.lens();
    let (src_len, dst_len) = match direction {
        ConvDirection::Forward => (x_len, y_len),
        ConvDirection::BackwardData => (y_len, x_len),
    };
    let gpu: &GpuDevice = ctx.gpu()?;
    gpu.context()
        .bind_to_thread()
        .map_err(|e| gpu_error("binding the CUDA context", e))?;
    let too_small =
        || KernelError::internal(format!("{op}: a GPU buffer is smaller than its shape"));
    for (t, len) in [(src, src_len), (w, w_len), (&*dst, dst_len)] {
        if t.num_elements() != len || t.dtype() != T::DTYPE {
            return Err(too_small());
        }
    }
    let (src, w, dst) = (gpu_slice(src)?, gpu_slice(w)?, gpu_slice_mut(dst)?);
    gpu.with_cudnn(|cudnn| {
        // cudarc's cuDNN wrappers assert and unwrap in places; a panic
        // there becomes this kernel's error.
        catch_unwind(AssertUnwindSafe(|| {
            let cudnn_err =
                |what: &'static str| move |e: CudnnError| gpu_error(&format!("{what} ({op})"), e);
            let (x_desc, w_desc, y_desc, conv) = describe::<T>(cudnn, op, d)?;
            // SAFETY: the buffers hold T elements (src, w and dst of this
            // kernel's dtype, src_len, w_len and dst_len of them, checked
            // above), and `T::Data` is T's cuDNN element type of the same
            // size (f32, f64, or the half bits).
            let w_view = unsafe { w.transmute::<T::Data>(w_len) }.ok_or_else(too_small)?;
            // SAFETY: as for w.
            let src_view = unsafe { src.transmute::<T::Data>(src_len) }.ok_or_else(too_small)?;
            // SAFETY: as for w.
            let mut dst_view =
                unsafe { dst.transmute_mut::<T::Data>(dst_len) }.ok_or_else(too_small)?;
            match direction {
                ConvDirection::Forward => {
                    let op = ConvForward {
                        conv: &conv,
                        x: &x_desc,
                        w: &w_desc,
                        y: &y_desc,
                    };
                    let (algo, bytes) = algorithm_for(&FORWARD_ALGORITHMS, (T::DTYPE, *d), || {
                        let algo = op
                            .pick_algorithm()
                            .map_err(cudnn_err("choosing a cuDNN convolution algorithm"))?;
                        let bytes = op
                            .get_workspace_size(algo)
                            .map_err(cudnn_err("sizing a cuDNN convolution's workspace"))?;
                        Ok((algo, bytes))
                    })?;
                    let mut scratch = workspace(ctx, bytes)?;
                    let workspace = scratch.as_mut().map(gpu_slice_mut).transpose()?;
                    // SAFETY: the descriptors describe exactly these buffers
                    // (dims, layout, data type: src is x, dst is y), the
                    // workspace has the size cuDNN asked for, and everything
                    // is queued on the device's one stream, which the cuDNN
                    // handle uses; beta = 0, so y is only written.
                    unsafe {
                        op.launch(
                            algo,
                            workspace,
                            (T::ONE, T::ZERO),
                            &src_view,
                            &w_view,
                            &mut dst_view,
                        )
                    }
                    .map_err(cudnn_err("running a cuDNN convolution"))
                }
                ConvDirection::BackwardData => {
                    let op = ConvBackwardData {
                        conv: &conv,
                        dx: &x_desc,
                        w: &w_desc,
                        dy: &y_desc,
                    };
                    let (algo, bytes) =
                        algorithm_for(&BACKWARD_DATA_ALGORITHMS, (T::DTYPE, *d), || {
                            let algo = op
                                .pick_algorithm()
                                .map_err(cudnn_err("choosing a cuDNN backward-data algorithm"))?;
                            let bytes = op
                                .get_workspace_size(algo)
                                .map_err(cudnn_err("sizing a cuDNN backward-data workspace"))?;
                            Ok((algo, bytes))
                        })?;
                    let mut scratch = workspace(ctx, bytes)?;
                    let workspace = scratch.as_mut().map(gpu_slice_mut).transpose()?;
                    // SAFETY: as for the forward convolution (src is dy,
                    // dst is dx): the descriptors describe these buffers,
                    // the workspace has the size cuDNN asked for, all on the
                    // device's stream; beta = 0, so dx is only written.
                    unsafe {
                        op.launch(
                            algo,
                            workspace,
                            (T::ONE, T::ZERO),
                            &mut dst_view,
                            &w_view,
                            &src_view,
                        )
                    }
                    .map_err(cudnn_err("running a cuDNN backward-data convolution"))
                }
            }
        }))
        .unwrap_or_else(|payload| Err(KernelError::from_panic(&*payload)))
    })
}

/// The forward convolution of `input` (layout `format`, checked by `g`) by
/// the HWIO `filter` read as `hwio` (a depthwise filter is a grouped one
/// with one input channel per group), in `groups` groups, on cuDNN; the
/// output in `format`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_forward<T: ConvElement>(
    ctx: &OpKernelContext<'_>,
    layout: &ConvLayout,
    format: DataFormat,
    g: &ConvGeometry,
    groups: usize,
    input: &Tensor,
    filter: &Tensor,
    hwio: [usize; 4],
) -> Result<Tensor, KernelError> {
    let in_dims: [usize; 4] = input
        .dims()
        .try_into()
        .map_err(|_| KernelError::internal(format!("{} input is not 4-D", layout.op)))?;
    if filter.num_elements() != hwio.iter().product::<usize>() {
        return Err(KernelError::internal(format!(
            "{}: the filter does not have {hwio:?} elements",
            layout.op
        )));
    }
    let compute = compute_format(format, T::NHWC_NATIVE);
    // The input in the layout cuDNN computes in.
    let transposed = if compute != format {
        let (dims, strides) = nhwc_to_nchw(in_dims);
        let t = layout.permute(ctx, input, dims, strides, "input")?;
        Some((t, dims.map(|d| d as usize)))
    } else {
        None
    };
    let (x, x_dims) = match &transposed {
        Some((t, dims)) => (t, *dims),
        None => (input, in_dims),
    };
    let (w_dims, w_strides) = filter_permutation(compute, hwio);
    let w = layout.permute(ctx, filter, w_dims, w_strides, "filter")?;
    let pads = CudnnPadding::of(g);
    let padded = if pads.needs_copy() {
        Some(layout.padded_input(ctx, compute, x, x_dims, &pads)?)
    } else {
        None
    };
    let (x, x_dims) = match &padded {
        Some((t, dims)) => (t, *dims),
        None => (x, x_dims),
    };
    let dims = CudnnConvDims::new(layout.op, compute, g, groups, &pads, x_dims)?;
    // cuDNN's forward convolution (beta = 0) writes every element.
    let y_dims = g.out_shape(compute).map(|d| d as i64);
    let mut out = ctx.allocate_temp(T::DTYPE, shape_of(y_dims)?)?;
    run_cudnn_conv::<T>(
        ctx,
        layout.op,
        ConvDirection::Forward,
        &dims,
        x,
        &w,
        &mut out,
    )?;
    if compute != format {
        let (dims, strides) = nchw_to_nhwc(g.out_shape(compute));
        out = layout.permute(ctx, &out, dims, strides, "output")?;
    }
    Ok(out)
}

/// The matrix product a `Conv2D` is, where it is one, as TF's GPU kernel
/// finds them (and runs them on cuBLAS rather than cuDNN): NHWC, one group,
/// no dilation, no padding, and either a 1x1 filter at stride 1 (the
/// `[N*H*W, C]` input times the `[C, K]` filter) or a filter as large as
/// the input (the `[N, H*W*C]` input times the `[H*W*C, K]` filter: one
/// output pixel, whatever the strides).
pub(crate) fn conv_as_gemm(
    g: &ConvGeometry,
    format: DataFormat,
    groups: usize,
) -> Option<GemmPlan> {
    let unpadded = [g.rows, g.cols]
        .iter()
        .all(|w| w.pad_before == 0 && w.pad_after == 0);
    if format != DataFormat::Nhwc
        || groups != 1
        || g.dilation_rows != 1
        || g.dilation_cols != 1
        || !unpadded
    {
        return None;
    }
    let (m, k) =
        if g.filter_rows == 1 && g.filter_cols == 1 && g.stride_rows == 1 && g.stride_cols == 1 {
            (g.batch * g.in_rows * g.in_cols, g.in_depth)
        } else if g.filter_rows == g.in_rows && g.filter_cols == g.in_cols {
            (g.batch, g.in_rows * g.in_cols * g.in_depth)
        } else {
            return None;
        };
    let a = TensorShape::new([m, k]).ok()?;
    let b = TensorShape::new([k, g.out_depth]).ok()?;
    GemmPlan::new(&a, &b, false, false).ok()
}

/// `Conv2D` on the GPU through cuDNN (half, float, double), NHWC or NCHW,
/// with strides, dilations, VALID/SAME/EXPLICIT padding and grouped
/// convolution (input depth a multiple of the filter's). The convolutions
/// that are matrix products (`conv_as_gemm`: 1x1 filters, most of a
/// MobileNet's) are one cuBLAS call instead. Generic over the element type
/// for cuDNN's typed descriptors ([`ConvElement`]) and cuBLAS's scales
/// ([`GemmElement`]).
#[kernel(op = Conv2D, device = GPU, T = [half, float, double], sources = nn_sources)]
pub struct Conv2DGpu<T> {
    layout: ConvLayout,
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement + GemmElement> BuildKernel for Conv2DGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let params = Conv2DParams::from_attrs(ctx.attrs())?;
        Ok(Self {
            layout: ConvLayout::new(ctx, T::DTYPE, "Conv2D")?,
            params,
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement + GemmElement> OpKernel for Conv2DGpu<T> {
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
        if let Some(plan) = conv_as_gemm(&g, self.params.format, groups) {
            let (a, b) = (gpu_ptr(input)?, gpu_ptr(filter)?);
            ctx.allocate_output(0, out_shape)?;
            let c = ctx.gpu_output(0)?;
            // SAFETY: the input and filter are on the GPU (checked above)
            // with the node's dtype T (the executor checks it), and
            // `conv_as_gemm` read their row-major shapes as its [m, k] and
            // [k, n] matrices (NHWC input, HWIO filter); the output was just
            // allocated on the device with m * n elements of T, apart from
            // both.
            return unsafe { run_gemm::<T>(ctx.gpu()?, &plan, a, b, c, "Conv2D") };
        }
        let hwio: [usize; 4] = filter
            .dims()
            .try_into()
            .map_err(|_| KernelError::internal("Conv2D filter is not 4-D"))?;
        let out = conv_forward::<T>(
            ctx,
            &self.layout,
            self.params.format,
            &g,
            groups,
            input,
            filter,
            hwio,
        )?;
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
    fn products_are_found_as_tf_finds_them() {
        let geometry = |input: [usize; 4], filter: [usize; 4], strides, dilations, padding| {
            Conv2DParams::new(strides, dilations, padding, vec![], "NHWC")
                .unwrap()
                .geometry(&input, &filter)
                .unwrap()
        };
        let nhwc = DataFormat::Nhwc;
        // 1x1 at stride 1, SAME or VALID: [N*H*W, C] x [C, K].
        for padding in ["SAME", "VALID"] {
            let g = geometry(
                [2, 6, 5, 16],
                [1, 1, 16, 24],
                vec![1; 4],
                vec![1; 4],
                padding,
            );
            let p = conv_as_gemm(&g, nhwc, 1).unwrap();
            assert_eq!((p.m, p.k, p.n), (60, 16, 24));
            assert!(!p.transpose_first && !p.transpose_second);
        }
        // A filter as large as the input, VALID, any strides: [N, H*W*C] x [H*W*C, K].
        let g = geometry(
            [3, 4, 5, 2],
            [4, 5, 2, 7],
            vec![1, 2, 3, 1],
            vec![1; 4],
            "VALID",
        );
        let p = conv_as_gemm(&g, nhwc, 1).unwrap();
        assert_eq!((p.m, p.k, p.n), (3, 40, 7));
        // Not products: strided 1x1, padded whole-input filters, dilation,
        // groups, NCHW.
        let strided = geometry(
            [1, 6, 6, 4],
            [1, 1, 4, 8],
            vec![1, 2, 2, 1],
            vec![1; 4],
            "SAME",
        );
        assert!(conv_as_gemm(&strided, nhwc, 1).is_none());
        let padded = geometry([1, 3, 3, 4], [3, 3, 4, 8], vec![1; 4], vec![1; 4], "SAME");
        assert!(conv_as_gemm(&padded, nhwc, 1).is_none());
        let dilated = geometry(
            [1, 6, 6, 4],
            [1, 1, 4, 8],
            vec![1; 4],
            vec![1, 2, 2, 1],
            "SAME",
        );
        assert!(conv_as_gemm(&dilated, nhwc, 1).is_none());
        let one = geometry([1, 6, 6, 4], [1, 1, 4, 8], vec![1; 4], vec![1; 4], "VALID");
        assert!(conv_as_gemm(&one, nhwc, 2).is_none());
        assert!(conv_as_gemm(&one, DataFormat::Nchw, 1).is_none());
    }

    #[test]
    fn cudnn_ints_are_checked() {
        assert_eq!(c_int_of("Conv2D", 7, "x").unwrap(), 7);
        assert_eq!(
            c_int_of("Conv2D", 1 << 31, "groups")
                .unwrap_err()
                .to_string(),
            "Conv2D on the GPU: groups (2147483648) exceeds cuDNN's int range"
        );
    }
}
