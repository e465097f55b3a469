//! `FusedBatchNormV3` on the GPU: NVRTC kernels for the per-channel batch
//! moments (two passes summed in `double`, as the CPU kernel) and the
//! normalisation, with the CPU kernel's attrs, shape checks
//! ([`BatchNormAttrs`]) and outputs.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use opreg_op_logic::batch_norm::{BatchNormAttrs, Blocks, bessel_adjust};
use opreg_standard_ops::FusedBatchNormV3;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorElement, TensorShape};

use super::softmax::row_blocks;
use super::sources;
use opreg_cuda::{GpuDevice, gpu_bytes, gpu_error, grid_for};

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
#[kernel(op = FusedBatchNormV3, device = GPU, T = [float, half, bfloat16], U = [float])]
pub struct FusedBatchNormV3Gpu<T> {
    dev: Arc<GpuDevice>,
    moments: CudaFunction,
    normalize: CudaFunction,
    attrs: BatchNormAttrs,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for FusedBatchNormV3Gpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let attrs = BatchNormAttrs::from_attrs(ctx)?;
        let dev = GpuDevice::get()?;
        let source = sources::batch_norm(T::DTYPE)?;
        let moments = dev.function(&source, "bn_moments")?;
        let normalize = dev.function(&source, "bn_normalize")?;
        Ok(Self {
            dev,
            moments,
            normalize,
            attrs,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> FusedBatchNormV3Gpu<T> {
    /// `channels` f32 values, not initialised.
    ///
    /// # Safety
    /// As [`GpuDevice::alloc_uninit`]: a kernel must write all of them.
    unsafe fn floats(&self, channels: usize) -> Result<CudaSlice<u8>, KernelError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.dev.alloc_uninit(channels * 4) }
    }

    /// A `[channels]` f32 tensor over `bytes`.
    fn moments_tensor(
        &self,
        shape: &TensorShape,
        bytes: CudaSlice<u8>,
    ) -> Result<Tensor, KernelError> {
        self.dev.tensor(DataType::DtFloat, shape.clone(), bytes)
    }

    /// Runs the normalisation of `x` into a new `T` buffer.
    #[allow(clippy::too_many_arguments)]
    fn normalize(
        &self,
        x: &CudaSlice<u8>,
        n: usize,
        blocks: Blocks,
        mean: &CudaSlice<u8>,
        var: &CudaSlice<u8>,
        scale: &CudaSlice<u8>,
        offset: &CudaSlice<u8>,
    ) -> Result<CudaSlice<u8>, KernelError> {
        // SAFETY: the kernel writes all n elements before anything reads
        // them (the caller only calls this for n > 0).
        let mut y = unsafe { self.dev.alloc_uninit(x.len())? };
        let (count, channels, inner) = (n as i64, blocks.channels as i64, blocks.inner as i64);
        let epsilon = self.attrs.epsilon;
        let mut launch = self.dev.stream().launch_builder(&self.normalize);
        launch
            .arg(x)
            .arg(&mut y)
            .arg(&count)
            .arg(&channels)
            .arg(&inner)
            .arg(mean)
            .arg(var)
            .arg(scale)
            .arg(offset)
            .arg(&epsilon);
        // SAFETY: `bn_normalize(const T*, T*, index_t, index_t, index_t,
        // const float* x4, float)` matches these args; x and y hold n = outer
        // * channels * inner elements of T and the four vectors `channels`
        // floats each (checked against x's channel count).
        unsafe { launch.launch(grid_for(n)) }
            .map_err(|e| gpu_error("launching FusedBatchNormV3", e))?;
        Ok(y)
    }
}

impl<T: TensorElement> OpKernel for FusedBatchNormV3Gpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let inputs: Vec<Tensor> = (0..5)
            .map(|i| ctx.input(i).cloned())
            .collect::<Result<_, _>>()?;
        let [x, scale, offset, mean, variance] = &inputs[..] else {
            return Err(KernelError::internal("FusedBatchNormV3 has 5 inputs"));
        };
        let blocks = self.attrs.check_inputs(ctx)?;
        let [x_bytes, scale_bytes, offset_bytes, mean_bytes, var_bytes] = [
            gpu_bytes(x, 0)?,
            gpu_bytes(scale, 1)?,
            gpu_bytes(offset, 2)?,
            gpu_bytes(mean, 3)?,
            gpu_bytes(variance, 4)?,
        ];
        let c = blocks.channels;
        let moments_shape = scale.shape().clone();
        let n = x.num_elements();
        let reserve_3 = self.dev.alloc_zeroed(4)?;
        if n == 0 {
            let nan: Vec<u8> = std::iter::repeat_n(f32::NAN.to_le_bytes(), c)
                .flatten()
                .collect();
            for i in 1..3 {
                let bytes = self.dev.upload_bytes(&nan)?;
                ctx.set_output(i, self.moments_tensor(&moments_shape, bytes)?)?;
            }
            for i in 3..5 {
                let bytes = self.dev.alloc_zeroed(c * 4)?;
                ctx.set_output(i, self.moments_tensor(&moments_shape, bytes)?)?;
            }
            // SAFETY: an empty buffer has no bytes to write.
            let y = unsafe { self.dev.alloc_uninit(0)? };
            ctx.set_output(0, self.dev.tensor(T::DTYPE, x.shape().clone(), y)?)?;
            return ctx.set_output(
                5,
                self.dev
                    .tensor(DataType::DtFloat, TensorShape::scalar(), reserve_3)?,
            );
        }
        if !self.attrs.is_training {
            let y = self.normalize(
                x_bytes,
                n,
                blocks,
                mean_bytes,
                var_bytes,
                scale_bytes,
                offset_bytes,
            )?;
            ctx.set_output(0, self.dev.tensor(T::DTYPE, x.shape().clone(), y)?)?;
            // The inputs are immutable: the outputs may share their memory.
            ctx.set_output(1, mean.clone())?;
            ctx.set_output(2, variance.clone())?;
            for i in 3..5 {
                let bytes = self.dev.alloc_zeroed(c * 4)?;
                ctx.set_output(i, self.moments_tensor(&moments_shape, bytes)?)?;
            }
            return ctx.set_output(
                5,
                self.dev
                    .tensor(DataType::DtFloat, TensorShape::scalar(), reserve_3)?,
            );
        }
        // SAFETY: bn_moments writes element c of all four for every channel
        // c < channels (each block's thread 0), before anything reads them.
        let (mut batch_mean, mut batch_var, mut saved_mean, mut saved_var) = unsafe {
            (
                self.floats(c)?,
                self.floats(c)?,
                self.floats(c)?,
                self.floats(c)?,
            )
        };
        let rest = blocks.outer * blocks.inner;
        // n > 0 implies channels > 0 and rest > 0.
        let (outer, channels, inner) = (blocks.outer as i64, c as i64, blocks.inner as i64);
        let factor = self.attrs.exponential_avg_factor;
        let adjust = bessel_adjust(rest);
        let blend = i32::from(factor != 1.0);
        let mut launch = self.dev.stream().launch_builder(&self.moments);
        launch
            .arg(x_bytes)
            .arg(&outer)
            .arg(&channels)
            .arg(&inner)
            .arg(mean_bytes)
            .arg(var_bytes)
            .arg(&factor)
            .arg(&adjust)
            .arg(&blend)
            .arg(&mut batch_mean)
            .arg(&mut batch_var)
            .arg(&mut saved_mean)
            .arg(&mut saved_var);
        // SAFETY: `bn_moments(const T*, index_t x3, const float* x2, float,
        // float, int, float* x4)` matches these args; x holds outer *
        // channels * inner elements of T; the four outputs hold `channels`
        // floats; old mean/variance are read only when `blend`, and then
        // hold `channels` floats (checked above).
        unsafe { launch.launch(row_blocks(c)) }
            .map_err(|e| gpu_error("launching FusedBatchNormV3", e))?;
        let y = self.normalize(
            x_bytes,
            n,
            blocks,
            &saved_mean,
            &saved_var,
            scale_bytes,
            offset_bytes,
        )?;
        ctx.set_output(0, self.dev.tensor(T::DTYPE, x.shape().clone(), y)?)?;
        for (i, bytes) in [
            (1, batch_mean),
            (2, batch_var),
            (3, saved_mean),
            (4, saved_var),
        ] {
            ctx.set_output(i, self.moments_tensor(&moments_shape, bytes)?)?;
        }
        ctx.set_output(
            5,
            self.dev
                .tensor(DataType::DtFloat, TensorShape::scalar(), reserve_3)?,
        )
    }
}
