//! `Conv3D`: validation and output geometry are
//! [`opreg_op_logic::volume`]'s (TF's `Conv3DOp` and its CPU launcher's
//! limits); the arithmetic is [`super::im2col`]'s, as for `Conv2D`.

use std::marker::PhantomData;

use opreg_op_logic::volume::Conv3DParams;
use opreg_standard_ops::Conv3D;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::direct_conv::ConvElement;
use super::im2col::{Filter, conv_ndhwc};

/// `Conv3D` on the CPU (NDHWC, undilated, ungrouped, as TensorFlow's CPU
/// kernel): volume patches multiplied by the filter with the `gemm` crate.
#[kernel(op = Conv3D, device = CPU, T = [half, bfloat16, float, double])]
#[derive(Debug)]
pub struct Conv3DKernel<T> {
    params: Conv3DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement> BuildKernel for Conv3DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Conv3DParams::from_attrs(ctx.attrs())?,
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement> OpKernel for Conv3DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let filter = ctx.input(1)?.clone();
        let geo = self.params.geometry(input.dims(), filter.dims())?;
        let out = ctx.allocate_output(0, geo.out_shape(self.params.format))?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        self.params.check_cpu_launch(&geo)?;
        conv_ndhwc(
            &geo,
            input.as_slice::<T>()?,
            Filter::from(filter.as_slice::<T>()?),
            out.as_mut_slice::<T>()?,
            None,
        )
    }
}
