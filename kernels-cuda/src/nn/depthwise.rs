//! `DepthwiseConv2dNative` on the GPU through cuDNN: a grouped convolution
//! with one group per input channel.
//!
//! The `[rows, cols, depth, multiplier]` filter, read as the HWIO filter
//! `[rows, cols, 1, depth * multiplier]` (the same elements in the same
//! order: output channel `c * multiplier + q` is filter element `(.., c,
//! q)`), is a grouped `Conv2D` filter with `depth` groups of one input
//! channel each; the convolution runs as `Conv2D`'s does
//! ([`conv_forward`]), NHWC or NCHW. The checks are TF's, shared with the
//! CPU kernel ([`Conv2DParams::depthwise_geometry`]).

use std::marker::PhantomData;

use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_standard_ops::DepthwiseConv2dNative;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use super::conv2d::{ConvElement, ConvLayout, conv_forward};
use super::sources::nn_sources;
use opreg_cuda::{GpuContext, gpu_ptr};

/// The grouped convolution a depthwise one is: `g` (as
/// [`Conv2DParams::depthwise_geometry`] gives it) with one input channel
/// per group, the group count (the input depth) and the filter read as
/// HWIO.
///
/// ```
/// use kernels_cuda::nn::depthwise_as_grouped;
/// use opreg_op_logic::conv::Conv2DParams;
/// use registry_core::tensor::TensorShape;
///
/// let p = Conv2DParams::new(vec![1; 4], vec![1; 4], "VALID", vec![], "NHWC").unwrap();
/// let input = TensorShape::new([2, 5, 5, 3]).unwrap();
/// let filter = TensorShape::new([3, 2, 3, 4]).unwrap();
/// let (g, m) = p.depthwise_geometry(&input, &filter).unwrap();
/// let (grouped, groups, hwio) = depthwise_as_grouped(&g, m);
/// assert_eq!((grouped.patch_depth, grouped.out_depth, groups), (1, 12, 3));
/// assert_eq!(hwio, [3, 2, 1, 12]);
/// ```
pub fn depthwise_as_grouped(
    g: &ConvGeometry,
    multiplier: usize,
) -> (ConvGeometry, usize, [usize; 4]) {
    let grouped = ConvGeometry {
        patch_depth: 1,
        ..*g
    };
    let hwio = [g.filter_rows, g.filter_cols, 1, g.in_depth * multiplier];
    (grouped, g.in_depth, hwio)
}

/// `DepthwiseConv2dNative` on the GPU through cuDNN (half, float, double;
/// TF's GPU kernel also has bfloat16), NHWC or NCHW, VALID, SAME or
/// EXPLICIT padding, with TF's checks (equal row and column strides, no
/// dilation).
#[kernel(op = DepthwiseConv2dNative, device = GPU, T = [half, float, double], sources = nn_sources)]
pub struct DepthwiseConv2dNativeGpu<T> {
    layout: ConvLayout,
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement> BuildKernel for DepthwiseConv2dNativeGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let params = Conv2DParams::from_attrs(ctx.attrs())?;
        Ok(Self {
            layout: ConvLayout::new(ctx, T::DTYPE, "DepthwiseConv2dNative")?,
            params,
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement> OpKernel for DepthwiseConv2dNativeGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (input, filter) = (ctx.input(0)?, ctx.input(1)?);
        gpu_ptr(input)?;
        gpu_ptr(filter)?;
        let (g, multiplier) = self
            .params
            .depthwise_geometry(input.shape(), filter.shape())?;
        let out_shape = TensorShape::new(g.out_shape(self.params.format))?;
        if out_shape.num_elements() == 0 || input.num_elements() == 0 {
            // Nothing to compute, or only padding: zeros.
            let out = ctx.gpu()?.zeros(T::DTYPE, out_shape)?;
            return ctx.set_output(0, out);
        }
        let (grouped, groups, hwio) = depthwise_as_grouped(&g, multiplier);
        // Conv2D's launch checks of the grouped convolution (a non-empty
        // filter; the output depth a multiple of the groups, by
        // construction).
        let checked = self.params.check_launch(&grouped, filter.num_elements())?;
        if checked != groups {
            return Err(KernelError::internal(
                "DepthwiseConv2dNative: the grouped convolution's groups disagree",
            ));
        }
        let out = conv_forward::<T>(
            ctx,
            &self.layout,
            self.params.format,
            &grouped,
            groups,
            input,
            filter,
            hwio,
        )?;
        ctx.set_output(0, out)
    }
}
