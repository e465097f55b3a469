//! `Const`, `Identity` (and the identities `StopGradient`, `PreventGradient`
//! and `IdentityN`), `Snapshot` and `NoOp` on the GPU.

use std::sync::Arc;

use opreg_cuda::{GpuContext, gpu_error, gpu_slice, gpu_slice_mut};
use opreg_op_logic::constant::const_value;
use opreg_standard_ops::{
    Const, Identity, IdentityN, NoOp, PreventGradient, Snapshot, StopGradient,
};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataTypeExt;
use registry_core::tensor::{Tensor, element_size};

/// `Const`: the `value` attr's tensor, uploaded once when the kernel is
/// built; every output shares that device buffer. (`int32` is
/// `HostConstGpu`.)
#[kernel(
    op = Const,
    device = GPU,
    dtype = [bfloat16, bool, complex128, complex64, double, float, half, int16, int64, int8,
             uint16, uint32, uint64, uint8]
)]
#[derive(Debug)]
pub struct ConstGpu {
    value: Tensor,
}

impl BuildKernel for ConstGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let value = const_value(ctx.attrs())?;
        // In the memory of the device the kernel runs on.
        let value = ctx.device().upload(&value)?;
        Ok(Self { value })
    }
}

impl OpKernel for ConstGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        ctx.set_output(0, self.value.clone())
    }
}

/// `Const` of `int32` on the GPU device keeps its value in host memory, as
/// TensorFlow's (`HostMemory("output")`): `int32` tensors are mostly shapes,
/// axes, paddings and permutations, which their consumers read in host
/// memory, so a device copy would cost an upload and, on every run, a copy
/// back that waits for the stream. A consumer that wants it on the device
/// gets it uploaded by the executor. No GPU is needed to build or run it.
#[kernel(op = Const, device = GPU, dtype = [int32], host_memory = ["output"])]
#[derive(Debug)]
pub struct HostConstGpu {
    value: Tensor,
}

impl BuildKernel for HostConstGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            value: const_value(ctx.attrs())?,
        })
    }
}

impl OpKernel for HostConstGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        ctx.set_output(0, self.value.clone())
    }
}

/// `Identity`: forwards its input (no copy), wherever it is.
#[kernel(
    op = Identity,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn identity_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `StopGradient`: forwards its input (no copy), wherever it is; running
/// it is the identity (TF's GPU types: its `DEVICE_DEFAULT` registrations).
#[kernel(
    op = StopGradient,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn stop_gradient_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `PreventGradient`: forwards its input, as `StopGradient` (TF's GPU
/// types, which leave out `int32`).
#[kernel(
    op = PreventGradient,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int64, int8, uint16,
         uint32, uint64, uint8]
)]
fn prevent_gradient_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `IdentityN`: output `i` is input `i` (no copies), wherever each is. TF
/// registers it for every device without a type constraint.
#[kernel(op = IdentityN, device = GPU)]
fn identity_n_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `Snapshot` for TF's GPU types (`TF_CALL_POD_TYPES`), as TF's
/// `SnapshotOp` and the CPU kernel: the input's device buffer when nothing
/// else shares it (forwarded, no copy), else a device-to-device copy of its
/// bytes queued on the GPU's stream, so the output never aliases a buffer
/// another tensor holds.
#[kernel(
    op = Snapshot,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn snapshot_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if ctx.forward_input(0, 0)? {
        return Ok(());
    }
    let input = ctx.take_input(0)?;
    ctx.allocate_output(0, input.shape().clone())?;
    let bytes = element_size(input.dtype())
        .and_then(|size| size.checked_mul(input.num_elements()))
        .ok_or_else(|| {
            KernelError::internal(format!(
                "Snapshot: {} has no fixed-size elements",
                input.dtype().type_name()
            ))
        })?;
    if bytes == 0 {
        return Ok(());
    }
    let stream = Arc::clone(ctx.gpu()?.stream());
    // Both checked to be GPU memory (the output unshared) of `bytes` bytes:
    // the output was allocated with the input's shape and dtype.
    let src = gpu_slice(&input)?.slice(..bytes);
    let mut dst = gpu_slice_mut(ctx.output_mut(0)?)?.slice_mut(..bytes);
    stream
        .memcpy_dtod(&src, &mut dst)
        .map_err(|e| gpu_error("copying Snapshot's input", e))
}

/// `NoOp`: nothing to do.
#[kernel(op = NoOp, device = GPU)]
fn no_op_gpu(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use registry_core::create_op_kernel;
    use registry_core::node_def::NodeDefBuilder;
    use registry_core::proto::DataType;
    use registry_core::tensor::Tensor;

    /// The value never leaves the host, but kernels are built on a device.
    #[test]
    #[ignore = "needs a GPU"]
    fn int32_const_stays_in_host_memory() {
        let value = Tensor::from_vec([2, 3], vec![1i32, -1, 2, 3, 4, 5]).unwrap();
        let node = NodeDefBuilder::new("shape", "Const")
            .attr("dtype", DataType::DtInt32)
            .attr("value", value.to_proto())
            .finalize()
            .unwrap();
        let kernel = create_op_kernel("GPU", &node).unwrap();
        assert!(kernel.info().output_in_host_memory(0));
        let a = kernel.compute([]).unwrap().remove(0);
        let b = kernel.compute([]).unwrap().remove(0);
        assert!(a.is_on_host());
        assert_eq!(
            a.as_slice::<i32>().unwrap(),
            value.as_slice::<i32>().unwrap()
        );
        assert!(
            a.shares_buffer_with(&b),
            "outputs share the kernel's buffer"
        );

        // A value of another dtype than `dtype` is refused, as on the CPU.
        let mut bad = node.clone();
        bad.attr
            .insert("value".into(), Tensor::scalar(1.0f32).to_proto().into());
        let err = create_op_kernel("GPU", &bad).unwrap_err().to_string();
        assert!(
            err.contains("Type mismatch between value (float) and dtype (int32)"),
            "{err}"
        );
    }
}
