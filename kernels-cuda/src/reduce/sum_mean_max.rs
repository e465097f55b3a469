//! `Sum`, `Mean` and `Max` on the GPU: one kernel type for the three
//! ([`ReductionGpu`], which reads `keep_dims` once and compiles its op's
//! source for its dtype when built).

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::axes::read_axes;
use opreg_standard_ops::{Max, Mean, Sum};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::element_size;

use super::axes::{Layout, ReductionPlan};
use super::launch::{ReduceFunctions, idx, reduce_into};
use super::source::{ReduceOp, entry, reduce_source};
use crate::sources_of_type;
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, gpu_input_ptr, gpu_ptr_mut, grid_for};

/// The reduction an op computes.
fn reduce_op(op: &str) -> Result<ReduceOp, KernelError> {
    match op {
        "Sum" => Ok(ReduceOp::Sum),
        "Mean" => Ok(ReduceOp::Mean),
        "Max" => Ok(ReduceOp::Max),
        other => Err(KernelError::internal(format!("{other} is not a reduction"))),
    }
}

/// The source of `op` on `dtype`, or why there is none.
pub(crate) fn source_of(op: ReduceOp, dtype: DataType) -> Result<KernelSource, KernelError> {
    reduce_source(op, dtype).ok_or_else(|| {
        KernelError::unimplemented(format!(
            "{} on GPU does not support dtype {}",
            op.name(),
            dtype.type_name()
        ))
    })
}

/// The sources a registration of [`ReductionGpu`] compiles.
pub fn reduce_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    let op = reduce_op(reg.op)?;
    sources_of_type(reg, "T", |dtype| source_of(op, dtype))
}

/// The accumulator size of `op` on `dtype` (see the source's numerics).
pub(crate) fn acc_size(op: ReduceOp, dtype: DataType) -> Option<usize> {
    Some(match (op, dtype) {
        (_, DataType::DtHalf | DataType::DtBfloat16) => 4,
        (ReduceOp::Mean, DataType::DtInt32) => 8,
        _ => element_size(dtype)?,
    })
}

/// `Sum` (integers wrap; `half`/`bfloat16` accumulate in `f32`), `Mean`
/// (the sum divided by the count in the compute type; integers: int64 sum,
/// truncating division; the mean of nothing is NaN for floating-point types
/// and 0 for integers) and `Max` (NaN propagates, as the CPU kernel; the
/// maximum of nothing is `-inf` or the integer type's minimum) on the GPU.
#[kernel(
    op = Sum,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["reduction_indices"],
    sources = reduce_sources
)]
#[kernel(
    op = Mean,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["reduction_indices"],
    sources = reduce_sources
)]
#[kernel(
    op = Max,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["reduction_indices"],
    sources = reduce_sources
)]
pub struct ReductionGpu {
    dtype: DataType,
    keep_dims: bool,
    acc_size: usize,
    functions: ReduceFunctions,
    permute: CudaFunction,
}

impl std::fmt::Debug for ReductionGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReductionGpu")
            .field("dtype", &self.dtype)
            .field("keep_dims", &self.keep_dims)
            .finish()
    }
}

impl BuildKernel for ReductionGpu {
    /// Compiles the op for `T` and reads `keep_dims`.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let op = reduce_op(ctx.op())?;
        let dtype = ctx.attr("T")?;
        let keep_dims = ctx.attr::<bool>("keep_dims")?;
        let source = source_of(op, dtype)?;
        let acc_size = acc_size(op, dtype).ok_or_else(|| {
            KernelError::unimplemented(format!(
                "{} on GPU does not support dtype {}",
                op.name(),
                dtype.type_name()
            ))
        })?;
        let gpu = ctx.gpu()?;
        Ok(Self {
            dtype,
            keep_dims,
            acc_size,
            functions: ReduceFunctions::new(gpu, &source)?,
            permute: gpu.function(&source, entry::PERMUTE)?,
        })
    }
}

impl OpKernel for ReductionGpu {
    /// Reduces input 0 over the axes in input 1 (TF's
    /// `ReductionOp::Compute`): validates the axes, shares the input when
    /// nothing is reduced, and otherwise reduces on the GPU.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let axes = read_axes(ctx.input(1)?, "reduction_indices")?;
        let plan = ReductionPlan::new(input.dims(), &axes, self.keep_dims)?;
        let shape = plan.out_shape.clone();
        let n_out = shape.num_elements();
        let (outer, r, inner, permuted) = match &plan.layout {
            Layout::Identity => return ctx.set_output(0, input.reshape(shape)?),
            &Layout::Contiguous { outer, r, inner } => (outer, r, inner, None),
            Layout::Permuted {
                dims,
                steps,
                outer,
                r,
            } => (*outer, *r, 1, Some((dims, steps))),
        };
        if n_out == 0 {
            ctx.allocate_output(0, shape)?;
            return Ok(());
        }
        let n = input.num_elements();
        if outer * inner != n_out
            || outer.checked_mul(r).and_then(|m| m.checked_mul(inner)) != Some(n)
        {
            return Err(KernelError::internal(format!(
                "reduction plan [{outer}, {r}, {inner}] for {n} elements into shape {shape}"
            )));
        }
        let x = gpu_input_ptr(&input, 0, self.dtype)?;
        // `reduce_into` queues kernels that write every one of the outputs.
        ctx.allocate_output(0, shape)?;
        let y = ctx.gpu_output(0)?;
        match permuted {
            None => reduce_into(ctx, &self.functions, x, y, (outer, r, inner), self.acc_size),
            Some((dims, steps)) => {
                // `permute` writes all `n` elements first.
                let mut t = ctx.allocate_temp(self.dtype, [n])?;
                let t_ptr = gpu_ptr_mut(&mut t)?;
                let n_i = idx(n);
                let mut l = ctx.gpu()?.stream().launch_builder(&self.permute);
                l.arg(&x).arg(&t_ptr).arg(&n_i).arg(dims).arg(steps);
                // SAFETY: `permute(const T*, T*, index_t, shape_arg,
                // shape_arg)` matches; `dims`/`steps` permute the input's
                // own (merged) dimensions, so every offset is inside `x`,
                // and `t` holds `n` elements.
                unsafe { l.launch(grid_for(n)) }
                    .map_err(|e| gpu_error("launching reduce permute", e))?;
                reduce_into(ctx, &self.functions, t_ptr, y, (outer, r, 1), self.acc_size)
            }
        }
    }
}
