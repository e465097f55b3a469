//! `Conv2DBackpropInput` (Keras' `Conv2DTranspose`) on the GPU through
//! cuDNN (`cudnnConvolutionBackwardData`), NHWC and NCHW.
//!
//! The checks are TF's, shared with the CPU kernel
//! ([`Conv2DParams::backprop_input_geometry`]); `input_sizes` is a
//! host-memory `int32` tensor. As for `Conv2D`, the filter is permuted into
//! cuDNN's layout and types other than half compute in NCHW between
//! transposes. cuDNN pads symmetrically only, so the asymmetric part of the
//! padding is handled as `Conv2D` handles it, in reverse: cuDNN computes
//! the gradient of the padded input, and the input's part of it is then
//! cropped out (in the same gather as the transpose back, when there is
//! one).

use std::marker::PhantomData;

use opreg_op_logic::conv::Conv2DParams;
use opreg_op_logic::window::DataFormat;
use opreg_standard_ops::Conv2DBackpropInput;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use super::conv2d::{
    ConvDirection, ConvElement, ConvLayout, CudnnConvDims, CudnnPadding, compute_format,
    filter_permutation, nhwc_to_nchw, run_cudnn_conv, shape_of,
};
use super::sources::nn_sources;
use opreg_cuda::{GpuContext, gpu_ptr};

/// The input's gradient as cuDNN computes it: dims in layout `compute` of
/// the input (`input`, in layout `format`) with `extra_before` and
/// `extra_after` rows and columns of padding. Returns those padded dims
/// and the gather that reads the input's part of them in layout `format`:
/// its dims, its strides in the padded tensor and its first element.
///
/// ```
/// use kernels_cuda::nn::backprop_input_crop;
/// use opreg_op_logic::window::DataFormat;
///
/// // NHWC [1, 3, 3, 2] computed as NCHW with one extra row after: the
/// // padded NCHW gradient is [1, 2, 4, 3]; the crop transposes it back.
/// let (padded, dims, strides, offset) =
///     backprop_input_crop(DataFormat::Nhwc, DataFormat::Nchw, [1, 3, 3, 2], [0, 0], [1, 0]);
/// assert_eq!(padded, [1, 2, 4, 3]);
/// assert_eq!((dims, strides, offset), ([1, 3, 3, 2], [24, 3, 1, 12], 0));
/// ```
pub fn backprop_input_crop(
    format: DataFormat,
    compute: DataFormat,
    input: [usize; 4],
    extra_before: [i64; 2],
    extra_after: [i64; 2],
) -> ([usize; 4], [i64; 4], [i64; 4], i64) {
    let at = |c: char| input[format.index(c)];
    let grow = |k: usize| (extra_before[k] + extra_after[k]).max(0) as usize;
    let padded = compute.shape(at('N'), at('H') + grow(0), at('W') + grow(1), at('C'));
    // Row-major strides of the padded tensor, per dimension of `compute`.
    let mut padded_strides = [0i64; 4];
    let mut acc = 1i64;
    for d in (0..4).rev() {
        padded_strides[d] = acc;
        acc *= padded[d] as i64;
    }
    let stride = |c: char| padded_strides[compute.index(c)];
    let mut strides = [0i64; 4];
    for c in ['N', 'H', 'W', 'C'] {
        strides[format.index(c)] = stride(c);
    }
    let offset = extra_before[0] * stride('H') + extra_before[1] * stride('W');
    (padded, input.map(|d| d as i64), strides, offset)
}

/// `Conv2DBackpropInput` on the GPU through cuDNN (half, float, double),
/// NHWC or NCHW, with strides, dilations and VALID/SAME/EXPLICIT padding;
/// `input_sizes` (4 sizes, or the 2 spatial ones) stays in host memory.
/// An empty output, `out_backprop` or filter gives zeros.
#[kernel(
    op = Conv2DBackpropInput,
    device = GPU,
    T = [half, float, double],
    host_memory = ["input_sizes"],
    sources = nn_sources
)]
pub struct Conv2DBackpropInputGpu<T> {
    layout: ConvLayout,
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement> BuildKernel for Conv2DBackpropInputGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let params = Conv2DParams::from_attrs(ctx.attrs())?;
        Ok(Self {
            layout: ConvLayout::new(ctx, T::DTYPE, "Conv2DBackpropInput")?,
            params,
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement> OpKernel for Conv2DBackpropInputGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        const OP: &str = "Conv2DBackpropInput";
        let (sizes, filter, dy) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        gpu_ptr(filter)?;
        gpu_ptr(dy)?;
        let (input, g) = self
            .params
            .backprop_input_geometry(sizes, filter.shape(), dy.shape())?;
        let out_shape = TensorShape::new(input)?;
        if out_shape.num_elements() == 0 || dy.num_elements() == 0 || filter.num_elements() == 0 {
            // Nothing to compute, or nothing flows back: zeros.
            let out = ctx.gpu()?.zeros(T::DTYPE, out_shape)?;
            return ctx.set_output(0, out);
        }
        let hwio: [usize; 4] = filter
            .dims()
            .try_into()
            .map_err(|_| KernelError::internal("Conv2DBackpropInput filter is not 4-D"))?;
        let dy_dims: [usize; 4] = dy
            .dims()
            .try_into()
            .map_err(|_| KernelError::internal("Conv2DBackpropInput out_backprop is not 4-D"))?;
        let format = self.params.format;
        let compute = compute_format(format, T::NHWC_NATIVE);
        // out_backprop in the layout cuDNN computes in.
        let transposed = if compute != format {
            let (dims, strides) = nhwc_to_nchw(dy_dims);
            Some(
                self.layout
                    .permute(ctx, dy, dims, strides, "out_backprop")?,
            )
        } else {
            None
        };
        let dy = transposed.as_ref().unwrap_or(dy);
        let (w_dims, w_strides) = filter_permutation(compute, hwio);
        let w = self
            .layout
            .permute(ctx, filter, w_dims, w_strides, "filter")?;
        let pads = CudnnPadding::of(&g);
        let (padded, crop_dims, crop_strides, offset) =
            backprop_input_crop(format, compute, input, pads.extra_before, pads.extra_after);
        let dims = CudnnConvDims::new(OP, compute, &g, 1, &pads, padded)?;
        // cuDNN's backward data (beta = 0) writes every element.
        let mut dx = ctx.allocate_temp(T::DTYPE, shape_of(padded.map(|d| d as i64))?)?;
        run_cudnn_conv::<T>(ctx, OP, ConvDirection::BackwardData, &dims, dy, &w, &mut dx)?;
        let out = if compute != format || pads.needs_copy() {
            // The gather writes every element of the output.
            let mut out = ctx.allocate_temp(T::DTYPE, out_shape)?;
            self.layout.gather_into(
                ctx,
                &dx,
                offset,
                crop_dims,
                crop_strides,
                &mut out,
                "input gradient",
            )?;
            out
        } else {
            dx
        };
        ctx.set_output(0, out)
    }
}
