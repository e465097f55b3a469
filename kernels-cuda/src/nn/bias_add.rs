//! `BiasAdd` on the GPU: an NVRTC kernel adding the per-channel bias.

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::window::DataFormat;
use opreg_standard_ops::BiasAdd;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::TensorShape;

use super::sources::{self, nn_sources};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};

/// `BiasAdd` on the GPU (TF's GPU types: half, bfloat16, float, double,
/// int32): `value + bias` along the channel dimension (the last for NHWC,
/// dimension 1 for NCHW); integers wrap, half floats add in `float`.
#[kernel(
    op = BiasAdd,
    device = GPU,
    T = [half, bfloat16, float, double, int32],
    sources = nn_sources
)]
#[derive(Debug)]
pub struct BiasAddGpu {
    func: CudaFunction,
    dtype: DataType,
    format: DataFormat,
}

impl BuildKernel for BiasAddGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let format = DataFormat::parse(ctx.attr::<&str>("data_format")?)?;
        let dtype = ctx.attr("T")?;
        let func = ctx
            .gpu()?
            .function(&sources::bias_add(dtype)?, "bias_add")?;
        Ok(Self {
            func,
            dtype,
            format,
        })
    }
}

/// `value` seen as `[outer, channels, inner]` for a bias of `bias` shape:
/// returns `(channels, inner)` (for NCHW `[2, 3, 4]`: `(3, 4)`), or TF's
/// error.
pub(crate) fn bias_layout(
    value: &TensorShape,
    bias: &TensorShape,
    format: DataFormat,
) -> Result<(usize, usize), KernelError> {
    registry_core::kernel_ensure!(
        value.rank() >= 2,
        "Input tensor must be at least 2D: {value}"
    );
    registry_core::kernel_ensure!(bias.rank() == 1, "Biases must be 1D: {bias}");
    let dims = value.dims();
    let channel_dim = match format {
        DataFormat::Nchw => 1,
        DataFormat::Nhwc => dims.len() - 1,
    };
    let channels = dims[channel_dim];
    registry_core::kernel_ensure!(
        bias.dims()[0] == channels,
        "Must provide as many biases as the last dimension of the input tensor: {bias} vs. {value}"
    );
    Ok((channels, dims[channel_dim + 1..].iter().product()))
}

impl OpKernel for BiasAddGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let value = ctx.gpu_input(0, self.dtype)?;
        let bias = ctx.gpu_input(1, self.dtype)?;
        let shape = ctx.input(0)?.shape().clone();
        let (channels, inner) = bias_layout(&shape, ctx.input(1)?.shape(), self.format)?;
        let n = shape.num_elements();
        // The kernel writes all n elements.
        ctx.allocate_output(0, shape)?;
        if n > 0 {
            let out = ctx.gpu_output(0)?;
            // n > 0 implies channels > 0 and inner > 0.
            let (count, channels, inner) = (n as i64, channels as i64, inner as i64);
            let mut launch = ctx.gpu()?.stream().launch_builder(&self.func);
            launch
                .arg(&value)
                .arg(&bias)
                .arg(&out)
                .arg(&count)
                .arg(&channels)
                .arg(&inner);
            // SAFETY: `bias_add(const T*, const T*, T*, index_t, index_t,
            // index_t)` matches these args; value and out hold n elements
            // of T, bias `channels`, and every index `(i / inner) %
            // channels` is below `channels`.
            unsafe { launch.launch(grid_for(n)) }.map_err(|e| gpu_error("launching BiasAdd", e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn layouts_and_errors() {
        let nhwc = bias_layout(&shape(&[2, 3, 4]), &shape(&[4]), DataFormat::Nhwc).unwrap();
        assert_eq!(nhwc, (4, 1));
        let nchw = bias_layout(&shape(&[2, 3, 4, 5]), &shape(&[3]), DataFormat::Nchw).unwrap();
        assert_eq!(nchw, (3, 20));
        let e = bias_layout(&shape(&[3]), &shape(&[3]), DataFormat::Nhwc).unwrap_err();
        assert!(
            e.to_string().contains("Input tensor must be at least 2D"),
            "{e}"
        );
        let e = bias_layout(&shape(&[2, 3]), &shape(&[1, 3]), DataFormat::Nhwc).unwrap_err();
        assert!(e.to_string().contains("Biases must be 1D"), "{e}");
        let e = bias_layout(&shape(&[2, 3]), &shape(&[2]), DataFormat::Nhwc).unwrap_err();
        assert!(e.to_string().contains("Must provide as many biases"), "{e}");
    }
}
