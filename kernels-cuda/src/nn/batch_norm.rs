//! `FusedBatchNormV3` on the GPU: NVRTC kernels for the per-channel batch
//! moments (two passes summed in `double`, as the CPU kernel) and the
//! normalisation, with the CPU kernel's attrs, shape checks
//! ([`BatchNormAttrs`]) and outputs.

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::batch_norm::{BatchNormAttrs, Blocks, bessel_adjust};
use opreg_standard_ops::FusedBatchNormV3;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorShape};

use super::softmax::row_blocks;
use super::sources::{self, nn_sources};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};

/// `FusedBatchNormV3` on the GPU, `T` in {float, half, bfloat16} with
/// `U = float`; 4-D or 5-D `x` in any of the op's data formats. Outputs as
/// the CPU kernel:
///
/// - inference: `y` from `mean`/`variance`, which `batch_mean` and
///   `batch_variance` echo; the reserve spaces are zeros;
/// - training: the batch moments (mean and biased variance, `y` uses
///   them); `batch_mean`/`batch_variance` are the running moments (the
///   variance Bessel-corrected, blended with `mean`/`variance` when
///   `exponential_avg_factor != 1`); `reserve_space_1`/`_2` hold the batch
///   mean and biased variance;
/// - `reserve_space_3` is a scalar 0; an empty `x` gives NaN moments.
#[kernel(
    op = FusedBatchNormV3,
    device = GPU,
    T = [float, half, bfloat16],
    U = [float],
    sources = nn_sources
)]
#[derive(Debug)]
pub struct FusedBatchNormV3Gpu {
    moments: CudaFunction,
    normalize: CudaFunction,
    dtype: DataType,
    attrs: BatchNormAttrs,
}

impl BuildKernel for FusedBatchNormV3Gpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let attrs = BatchNormAttrs::from_attrs(ctx.attrs())?;
        let dtype = ctx.attr("T")?;
        let source = sources::batch_norm(dtype)?;
        let gpu = ctx.gpu()?;
        Ok(Self {
            moments: gpu.function(&source, "bn_moments")?,
            normalize: gpu.function(&source, "bn_normalize")?,
            dtype,
            attrs,
        })
    }
}

/// The device addresses of the five inputs.
struct Inputs {
    x: u64,
    scale: u64,
    offset: u64,
    mean: u64,
    variance: u64,
}

impl FusedBatchNormV3Gpu {
    /// Allocates output 0 (`y`, of `x`'s shape) and normalises `x` into it
    /// with the per-channel `mean` and `var` (device addresses of
    /// `channels` floats).
    fn normalize(
        &self,
        ctx: &mut OpKernelContext<'_>,
        inputs: &Inputs,
        blocks: Blocks,
        mean: u64,
        var: u64,
    ) -> Result<(), KernelError> {
        let shape = ctx.input(0)?.shape().clone();
        let n = shape.num_elements();
        // The kernel writes all n elements.
        ctx.allocate_output(0, shape)?;
        let y = ctx.gpu_output(0)?;
        let (count, channels, inner) = (n as i64, blocks.channels as i64, blocks.inner as i64);
        let epsilon = self.attrs.epsilon;
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.normalize);
        launch
            .arg(&inputs.x)
            .arg(&y)
            .arg(&count)
            .arg(&channels)
            .arg(&inner)
            .arg(&mean)
            .arg(&var)
            .arg(&inputs.scale)
            .arg(&inputs.offset)
            .arg(&epsilon);
        // SAFETY: `bn_normalize(const T*, T*, index_t, index_t, index_t,
        // const float* x4, float)` matches these args; x and y hold n = outer
        // * channels * inner elements of T and the four vectors `channels`
        // floats each (checked against x's channel count).
        unsafe { launch.launch(grid_for(n)) }
            .map_err(|e| gpu_error("launching FusedBatchNormV3", e))?;
        Ok(())
    }
}

impl OpKernel for FusedBatchNormV3Gpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let blocks = self.attrs.check_inputs(ctx)?;
        let inputs = Inputs {
            x: ctx.gpu_input(0, self.dtype)?,
            scale: ctx.gpu_input(1, DataType::DtFloat)?,
            offset: ctx.gpu_input(2, DataType::DtFloat)?,
            mean: ctx.gpu_input(3, DataType::DtFloat)?,
            variance: ctx.gpu_input(4, DataType::DtFloat)?,
        };
        let c = blocks.channels;
        let moments_shape = ctx.input(1)?.shape().clone();
        let n = ctx.input(0)?.num_elements();
        let gpu = ctx.gpu()?;
        if n == 0 {
            let nan = Tensor::from_vec(moments_shape.clone(), vec![f32::NAN; c])?;
            let nan = registry_core::device::Device::upload(gpu, &nan)?;
            let shape = ctx.input(0)?.shape().clone();
            let zeros = (
                gpu.zeros(DataType::DtFloat, moments_shape.clone())?,
                gpu.zeros(DataType::DtFloat, moments_shape.clone())?,
                gpu.zeros(DataType::DtFloat, TensorShape::scalar())?,
            );
            ctx.allocate_output(0, shape)?;
            ctx.set_output(1, nan.clone())?;
            ctx.set_output(2, nan)?;
            ctx.set_output(3, zeros.0)?;
            ctx.set_output(4, zeros.1)?;
            return ctx.set_output(5, zeros.2);
        }
        if !self.attrs.is_training {
            let reserves = (
                gpu.zeros(DataType::DtFloat, moments_shape.clone())?,
                gpu.zeros(DataType::DtFloat, moments_shape.clone())?,
                gpu.zeros(DataType::DtFloat, TensorShape::scalar())?,
            );
            self.normalize(ctx, &inputs, blocks, inputs.mean, inputs.variance)?;
            // The inputs are immutable: the outputs may share their memory.
            let (mean, variance) = (ctx.input(3)?.clone(), ctx.input(4)?.clone());
            ctx.set_output(1, mean)?;
            ctx.set_output(2, variance)?;
            ctx.set_output(3, reserves.0)?;
            ctx.set_output(4, reserves.1)?;
            return ctx.set_output(5, reserves.2);
        }
        let reserve_3 = gpu.zeros(DataType::DtFloat, TensorShape::scalar())?;
        // bn_moments writes element c of all four for every channel c <
        // channels (each block's thread 0).
        let mut moments = [0u64; 4];
        for (i, address) in (1..5).zip(&mut moments) {
            ctx.allocate_output(i, moments_shape.clone())?;
            *address = ctx.gpu_output(i)?;
        }
        let [batch_mean, batch_var, saved_mean, saved_var] = moments;
        let rest = blocks.outer * blocks.inner;
        // n > 0 implies channels > 0 and rest > 0.
        let (outer, channels, inner) = (blocks.outer as i64, c as i64, blocks.inner as i64);
        let factor = self.attrs.exponential_avg_factor;
        let adjust = bessel_adjust(rest);
        let blend = i32::from(factor != 1.0);
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.moments);
        launch
            .arg(&inputs.x)
            .arg(&outer)
            .arg(&channels)
            .arg(&inner)
            .arg(&inputs.mean)
            .arg(&inputs.variance)
            .arg(&factor)
            .arg(&adjust)
            .arg(&blend)
            .arg(&batch_mean)
            .arg(&batch_var)
            .arg(&saved_mean)
            .arg(&saved_var);
        // SAFETY: `bn_moments(const T*, index_t x3, const float* x2, float,
        // float, int, float* x4)` matches these args; x holds outer *
        // channels * inner elements of T; the four outputs hold `channels`
        // floats; old mean/variance are read only when `blend`, and then
        // hold `channels` floats (checked above).
        unsafe { launch.launch(row_blocks(c)) }
            .map_err(|e| gpu_error("launching FusedBatchNormV3", e))?;
        self.normalize(ctx, &inputs, blocks, saved_mean, saved_var)?;
        ctx.set_output(5, reserve_3)
    }
}
