//! `Conv2D`: validation and output geometry are [`opreg_op_logic::conv`]'s
//! (TF's `InitConv2DParameters`, `ComputeConv2DDimension` and the
//! launcher's checks); the arithmetic is in [`super::im2col`] (and
//! [`super::direct_conv`] for narrow convolutions).

use std::marker::PhantomData;

use opreg_standard_ops::Conv2D;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::Tensor;

use super::direct_conv::ConvElement;
use super::gemm::{ConstantRhs, MatRef};
use super::im2col::{Filter, conv_ndhwc};
use super::{RowEpilogue, zeros_then};
use opreg_op_logic::conv::Conv2DParams;
use opreg_op_logic::window::DataFormat;

/// `Conv2D` on the CPU (NHWC only, as TensorFlow's CPU kernel): im2col
/// patches multiplied by the filter with the `gemm` crate (`int32` with a
/// wrapping integer loop). Grouped convolution (input depth a multiple of
/// the filter's input depth) runs one product per group; 1×1 stride-1
/// convolutions multiply the input directly. With 16 output channels or
/// fewer, `float`, `half` and `bfloat16` use a direct vectorised kernel
/// instead (on x86-64 with AVX2 and FMA). A constant `float` filter is
/// packed once, before the first run, where the product has a packed form.
#[kernel(op = Conv2D, device = CPU, T = [half, bfloat16, float, double, int32])]
#[derive(Debug)]
pub struct Conv2DKernel<T> {
    params: Conv2DParams,
    filter: ConstantRhs,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement> BuildKernel for Conv2DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Conv2DParams::from_attrs(ctx.attrs())?,
            filter: ConstantRhs::default(),
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement> OpKernel for Conv2DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        conv2d::<T>(&self.params, &self.filter, ctx, None).map(drop)
    }

    fn prepare_constant_input(&self, index: usize, value: &Tensor) {
        offer_filter::<T>(&self.filter, index, value);
    }
}

/// Packs a constant filter (input 1, HWIO) once, as the matrix of its
/// `H·W·I` rows by `O` columns that the im2col products multiply by.
pub(super) fn offer_filter<T: ConvElement>(filter: &ConstantRhs, index: usize, value: &Tensor) {
    if index != 1 {
        return;
    }
    filter.offer::<T>(value, |f, elements| match *f.dims() {
        [h, w, i, o] => MatRef::row_major(elements, h * w * i, o),
        _ => Err(KernelError::invalid_argument(
            "filter must be 4-dimensional",
        )),
    });
}

/// `Conv2D` of inputs 0 and 1 into output 0 (also `_FusedConv2D`'s
/// contraction, with its `epilogue` run on each block of output pixels as
/// soon as it is computed); returns the output's channel count.
pub(super) fn conv2d<T: ConvElement>(
    params: &Conv2DParams,
    constant_filter: &ConstantRhs,
    ctx: &mut OpKernelContext<'_>,
    epilogue: Option<RowEpilogue<'_, T>>,
) -> Result<usize, KernelError> {
    let input = ctx.input(0)?.clone();
    let filter = ctx.input(1)?.clone();
    let geo = params.geometry(input.dims(), filter.dims())?;
    let out = ctx.allocate_output_to_overwrite(0, geo.out_shape(params.format))?;
    if out.num_elements() == 0 || input.num_elements() == 0 {
        // Nothing to compute, or only padding.
        zeros_then(out.as_mut_slice::<T>()?, epilogue);
        return Ok(geo.out_depth);
    }
    if params.format != DataFormat::Nhwc {
        return Err(KernelError::unimplemented(format!(
            "The Conv2D op currently only supports the NHWC tensor format on the CPU. \
             The op was given the format: {}",
            params.format.name()
        )));
    }
    params.check_launch(&geo, filter.num_elements())?;
    conv_ndhwc(
        &geo.volume(),
        input.as_slice::<T>()?,
        Filter {
            elements: filter.as_slice::<T>()?,
            packed: constant_filter.packed_for(&filter),
        },
        out.as_mut_slice::<T>()?,
        epilogue,
    )?;
    Ok(geo.out_depth)
}
