//! `Softmax` and `LogSoftmax` over the last dimension on the GPU: an NVRTC
//! kernel with one block per row (as TF's own GPU kernel, not cuDNN, so the
//! numerics are the CPU kernel's: `float` arithmetic for half types, NaN
//! propagated).

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use opreg_standard_ops::{LogSoftmax, Softmax};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;

use super::sources::{self, REDUCE_BLOCK, nn_sources};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error};

/// The most blocks a row-per-block launch uses (rows beyond are
/// grid-strided).
pub(crate) const MAX_ROW_BLOCKS: usize = 1 << 16;

/// A launch of one [`REDUCE_BLOCK`]-thread block per row (at most
/// [`MAX_ROW_BLOCKS`]; at least one).
pub(crate) fn row_blocks(rows: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (rows.clamp(1, MAX_ROW_BLOCKS) as u32, 1, 1),
        block_dim: (REDUCE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `Softmax` and `LogSoftmax` on the GPU (half, bfloat16, float, double):
/// for each row of the last dimension `exp(x - max(x)) * (1 / sum(exp(x -
/// max(x))))`, or `(x - max(x)) - log(sum(exp(x - max(x))))`.
#[kernel(
    op = Softmax,
    device = GPU,
    T = [half, bfloat16, float, double],
    sources = nn_sources
)]
#[kernel(
    op = LogSoftmax,
    device = GPU,
    T = [half, bfloat16, float, double],
    sources = nn_sources
)]
#[derive(Debug)]
pub struct SoftmaxGpu {
    func: CudaFunction,
    dtype: DataType,
    /// `Softmax` or `LogSoftmax`.
    op: &'static str,
}

impl BuildKernel for SoftmaxGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        let op = if ctx.op() == "LogSoftmax" {
            "LogSoftmax"
        } else {
            "Softmax"
        };
        let func = ctx
            .gpu()?
            .function(&sources::source_of(op, dtype)?, "softmax")?;
        Ok(Self { func, dtype, op })
    }
}

impl OpKernel for SoftmaxGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.gpu_input(0, self.dtype)?;
        let shape = ctx.input(0)?.shape().clone();
        registry_core::kernel_ensure!(
            shape.rank() >= 1,
            "logits must have >= 1 dimension, got {}",
            shape
        );
        let classes = shape.dims().last().copied().unwrap_or(0);
        let n = shape.num_elements();
        // The kernel writes every element (each row is written by its
        // block).
        ctx.allocate_output(0, shape)?;
        if n > 0 {
            let out = ctx.gpu_output(0)?;
            // n > 0 implies classes > 0.
            let rows = n / classes;
            let (rows_arg, classes_arg) = (rows as i64, classes as i64);
            let mut launch = ctx.gpu()?.stream().launch_builder(&self.func);
            launch.arg(&x).arg(&out).arg(&rows_arg).arg(&classes_arg);
            // SAFETY: `softmax(const T*, T*, index_t, index_t)` matches these
            // args; both buffers hold rows * classes elements of T, and the
            // block size is the REDUCE_BLOCK the source assumes.
            unsafe { launch.launch(row_blocks(rows)) }
                .map_err(|e| gpu_error(&format!("launching {}", self.op), e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_launches_are_bounded() {
        assert_eq!(row_blocks(0).grid_dim.0, 1);
        assert_eq!(row_blocks(10).grid_dim.0, 10);
        assert_eq!(row_blocks(1 << 30).grid_dim.0, MAX_ROW_BLOCKS as u32);
        assert_eq!(row_blocks(3).block_dim.0, REDUCE_BLOCK);
    }
}
