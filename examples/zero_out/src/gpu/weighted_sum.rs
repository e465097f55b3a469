//! The GPU kernel of `WeightedSum`: `sum = 0`, then one `sum += w * x`
//! launch per value (the weights are a host-memory arg, read on the host
//! and passed by value), then a division when `normalize` is set.

use std::marker::PhantomData;

use cudarc::driver::{CudaFunction, DeviceRepr, PushKernelArg};
use opreg_cuda::{GpuContext, GpuTensors, cuda_type, gpu_error, gpu_input_ptr, grid_for};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext, constraint_types,
};
use registry_core::proto::{DataType, DataTypeExt};

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

/// The source of `dtype`, or why there is none.
fn source_of(dtype: DataType) -> Result<KernelSource, KernelError> {
    weighted_sum_source(dtype).ok_or_else(|| {
        KernelError::unimplemented(format!(
            "WeightedSum has no GPU kernel for {}",
            dtype.type_name()
        ))
    })
}

fn weighted_sum_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    constraint_types(reg, "T")
        .unwrap_or(&[])
        .iter()
        .map(|&dtype| source_of(dtype))
        .collect()
}

/// `WeightedSum` on the GPU for `T`, with `weights` in host memory (read on
/// the host and passed to the kernel by value, as `T`).
#[kernel(
    op = WeightedSum,
    device = GPU,
    T = [float, double, int32],
    host_memory = ["weights"],
    sources = weighted_sum_sources
)]
struct WeightedSumGpu<T> {
    normalize: bool,
    axpy: CudaFunction,
    divide: CudaFunction,
    _type: PhantomData<fn() -> T>,
}

impl<T: Weighted + DeviceRepr> BuildKernel for WeightedSumGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let source = source_of(T::DTYPE)?;
        let gpu = ctx.gpu()?;
        Ok(Self {
            normalize: ctx.attr("normalize")?,
            axpy: gpu.function(&source, "axpy")?,
            divide: gpu.function(&source, "divide")?,
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
        let inputs: Vec<u64> = values
            .iter()
            .enumerate()
            .map(|(index, value)| gpu_input_ptr(value, index, T::DTYPE))
            .collect::<Result<_, _>>()?;
        // Zeroed: the launches below accumulate into it.
        let gpu = ctx.gpu()?;
        let zeros = gpu.zeros(T::DTYPE, shape)?;
        ctx.set_output(0, zeros)?;
        let out = ctx.gpu_output(0)?;
        let stream = ctx.gpu()?.stream();
        if n > 0 {
            let count = n as i64;
            for (x, weight) in inputs.iter().zip(&weights) {
                let mut launch = stream.launch_builder(&self.axpy);
                launch.arg(x).arg(&out).arg(weight).arg(&count);
                // SAFETY: `axpy(const T*, T*, T, index_t)` takes these
                // arguments; `x` and `out` hold `n` elements of `T`
                // (`weighted_inputs` checked every value's shape).
                unsafe { launch.launch(grid_for(n)) }
                    .map_err(|e| gpu_error("launching WeightedSum", e))?;
            }
            if let Some(divisor) = divisor {
                let mut launch = stream.launch_builder(&self.divide);
                launch.arg(&out).arg(&divisor).arg(&count);
                // SAFETY: `divide(T*, T, index_t)` takes these arguments;
                // `out` holds `n` elements of `T`.
                unsafe { launch.launch(grid_for(n)) }
                    .map_err(|e| gpu_error("launching WeightedSum", e))?;
            }
        }
        Ok(())
    }
}
