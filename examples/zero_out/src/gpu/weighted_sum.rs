//! The GPU kernel of `WeightedSum`: `sum = 0`, then one `sum += w * x`
//! launch per value (the weights are a host-memory arg, read on the host
//! and passed by value), then a division when `normalize` is set.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, DeviceRepr, PushKernelArg};
use opreg_cuda::{GpuDevice, KernelSource, cuda_type, gpu_bytes, gpu_error, grid_for};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;

use crate::WeightedSum;
use crate::weighted::{Weighted, WeightedInputs, weighted_inputs};

/// The dtypes `WeightedSum` has GPU kernels for (all it allows).
pub(crate) const TYPES: [DataType; 3] = [DataType::DtFloat, DataType::DtDouble, DataType::DtInt32];

/// The CUDA C of `WeightedSum` for `dtype` (`None` for a dtype without a
/// GPU kernel): `axpy` adds `w * x` to `y`, `divide` divides `y` by `d`.
/// Integers wrap on overflow (computed as unsigned) and divide toward zero,
/// as the CPU kernel does.
pub fn weighted_sum_source(dtype: DataType) -> Option<KernelSource> {
    let t = cuda_type(dtype).filter(|_| TYPES.contains(&dtype))?;
    let (axpy, divide) = if dtype == DataType::DtInt32 {
        (
            "y[i] = (i32)((u32)y[i] + (u32)w * (u32)x[i]);",
            // i32::MIN / -1 wraps to i32::MIN, as `wrapping_div`.
            "y[i] = (d == -1) ? (i32)(0u - (u32)y[i]) : y[i] / d;",
        )
    } else {
        ("y[i] = y[i] + w * x[i];", "y[i] = y[i] / d;")
    };
    Some(KernelSource::new(
        format!("zero_out/WeightedSum/{t}"),
        format!(
            r#"
extern "C" __global__ void axpy(const {t}* x, {t}* y, {t} w, index_t n) {{
    GRID_STRIDE(i, n) {{ {axpy} }}
}}
extern "C" __global__ void divide({t}* y, {t} d, index_t n) {{
    GRID_STRIDE(i, n) {{ {divide} }}
}}
"#
        ),
        ["axpy", "divide"],
    ))
}

/// `WeightedSum` on the GPU for `T`, with `weights` in host memory.
#[kernel(op = WeightedSum, device = GPU, T = [float, double, int32], host_memory = ["weights"])]
struct WeightedSumGpu<T> {
    normalize: bool,
    device: Arc<GpuDevice>,
    axpy: CudaFunction,
    divide: CudaFunction,
    _type: PhantomData<fn() -> T>,
}

impl<T: Weighted + DeviceRepr> BuildKernel for WeightedSumGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let device = GpuDevice::get()?;
        let source = weighted_sum_source(T::DTYPE).ok_or_else(|| {
            KernelError::unimplemented(format!("WeightedSum has no GPU kernel for {:?}", T::DTYPE))
        })?;
        Ok(Self {
            normalize: ctx.attr("normalize")?,
            axpy: device.function(&source, "axpy")?,
            divide: device.function(&source, "divide")?,
            device,
            _type: PhantomData,
        })
    }
}

impl<T: Weighted + DeviceRepr> OpKernel for WeightedSumGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let WeightedInputs {
            values,
            shape,
            weights,
            divisor,
        } = weighted_inputs::<T>(ctx, self.normalize)?;
        let n = shape.num_elements();
        let bytes = n * std::mem::size_of::<T>();
        // Zeroed: the launches below accumulate into it.
        let mut out = self.device.alloc_zeroed(bytes)?;
        if n > 0 {
            let count = n as i64;
            for (index, (value, weight)) in values.iter().zip(&weights).enumerate() {
                let x = gpu_bytes(value, index)?;
                let mut launch = self.device.stream().launch_builder(&self.axpy);
                launch.arg(x).arg(&mut out).arg(weight).arg(&count);
                // SAFETY: `axpy(const T*, T*, T, index_t)` takes these
                // arguments; `x` and `out` hold `n` elements of `T`
                // (`weighted_inputs` checked every value's shape).
                unsafe { launch.launch(grid_for(n)) }
                    .map_err(|e| gpu_error("launching WeightedSum", e))?;
            }
            if let Some(divisor) = divisor {
                let mut launch = self.device.stream().launch_builder(&self.divide);
                launch.arg(&mut out).arg(&divisor).arg(&count);
                // SAFETY: `divide(T*, T, index_t)` takes these arguments;
                // `out` holds `n` elements of `T`.
                unsafe { launch.launch(grid_for(n)) }
                    .map_err(|e| gpu_error("launching WeightedSum", e))?;
            }
        }
        let output = self.device.tensor(T::DTYPE, shape, out)?;
        ctx.set_output(0, output)
    }
}
