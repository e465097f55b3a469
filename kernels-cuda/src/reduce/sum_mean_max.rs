//! The `Sum`, `Mean` and `Max` GPU kernels: one struct each (they read
//! `keep_dims` once and compile their source when built), sharing
//! [`Reduction`].

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::axes::read_axes;
use opreg_standard_ops::{Max, Mean, Sum};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorElement, element_size};

use super::axes::{Layout, ReductionPlan};
use super::launch::{ReduceFunctions, idx, reduce_into};
use super::source::{ReduceOp, entry, reduce_source};
use opreg_cuda::{GpuDevice, gpu_bytes, gpu_error, grid_for};

/// A compiled reduction of one op on one dtype.
pub(crate) struct Reduction {
    dev: Arc<GpuDevice>,
    dtype: DataType,
    keep_dims: bool,
    elem_size: usize,
    acc_size: usize,
    functions: ReduceFunctions,
    permute: CudaFunction,
}

impl std::fmt::Debug for Reduction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reduction")
            .field("dtype", &self.dtype)
            .field("keep_dims", &self.keep_dims)
            .finish()
    }
}

/// The accumulator size of `op` on `dtype` (see the source's numerics).
fn acc_size(op: ReduceOp, dtype: DataType) -> Option<usize> {
    Some(match (op, dtype) {
        (_, DataType::DtHalf | DataType::DtBfloat16) => 4,
        (ReduceOp::Mean, DataType::DtInt32) => 8,
        _ => element_size(dtype)?,
    })
}

impl Reduction {
    /// Compiles `op` for `dtype` and reads `keep_dims`.
    pub(crate) fn new(
        ctx: &OpKernelConstruction<'_>,
        op: ReduceOp,
        dtype: DataType,
    ) -> Result<Self, KernelError> {
        let keep_dims = ctx.attr::<bool>("keep_dims")?;
        let unsupported = || {
            KernelError::unimplemented(format!(
                "{} on GPU does not support dtype {}",
                op.name(),
                dtype.type_name()
            ))
        };
        let source = reduce_source(op, dtype).ok_or_else(unsupported)?;
        let elem_size = element_size(dtype).ok_or_else(unsupported)?;
        let acc_size = acc_size(op, dtype).ok_or_else(unsupported)?;
        let dev = GpuDevice::get()?;
        let functions = ReduceFunctions {
            serial: dev.function(&source, entry::SERIAL)?,
            serial_acc: dev.function(&source, entry::SERIAL_ACC)?,
            rows: dev.function(&source, entry::ROWS)?,
            rows_part: dev.function(&source, entry::ROWS_PART)?,
            cols: dev.function(&source, entry::COLS)?,
            cols_part: dev.function(&source, entry::COLS_PART)?,
        };
        let permute = dev.function(&source, entry::PERMUTE)?;
        Ok(Self {
            dev,
            dtype,
            keep_dims,
            elem_size,
            acc_size,
            functions,
            permute,
        })
    }

    /// Reduces input 0 over the axes in input 1 (TF's
    /// `ReductionOp::Compute`): validates the axes, shares the input when
    /// nothing is reduced, and otherwise reduces on the GPU.
    pub(crate) fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let axes = read_axes(ctx.input(1)?, "reduction_indices")?;
        let plan = ReductionPlan::new(input.dims(), &axes, self.keep_dims)?;
        let out = self.run(&input, &plan)?;
        ctx.set_output(0, out)
    }

    fn run(&self, input: &Tensor, plan: &ReductionPlan) -> Result<Tensor, KernelError> {
        let shape = plan.out_shape.clone();
        let n_out = shape.num_elements();
        let (outer, r, inner, permuted) = match &plan.layout {
            Layout::Identity => return Ok(input.reshape(shape)?),
            &Layout::Contiguous { outer, r, inner } => (outer, r, inner, None),
            Layout::Permuted {
                dims,
                steps,
                outer,
                r,
            } => (*outer, *r, 1, Some((dims, steps))),
        };
        if n_out == 0 {
            return self
                .dev
                .tensor(self.dtype, shape, self.dev.alloc_zeroed(0)?);
        }
        if outer * inner != n_out {
            return Err(KernelError::internal(format!(
                "reduction plan [{outer}, {r}, {inner}] for an output of shape {shape}"
            )));
        }
        let x = gpu_bytes(input, 0)?;
        // SAFETY: `reduce_into` queues kernels that write every one of the
        // `n_out` outputs before anything reads them.
        let mut y = unsafe { self.dev.alloc_uninit(n_out * self.elem_size)? };
        match permuted {
            None => reduce_into(
                &self.dev,
                &self.functions,
                x,
                &mut y,
                (outer, r, inner),
                self.elem_size,
                self.acc_size,
            )?,
            Some((dims, steps)) => {
                let n = input.num_elements();
                if x.len() != n * self.elem_size || n != outer * r {
                    return Err(KernelError::internal("reduction: permuted sizes"));
                }
                // SAFETY: `permute` writes all `n` elements first.
                let mut t = unsafe { self.dev.alloc_uninit(x.len())? };
                let n_i = idx(n);
                let mut l = self.dev.stream().launch_builder(&self.permute);
                l.arg(x).arg(&mut t).arg(&n_i).arg(dims).arg(steps);
                // SAFETY: `permute(const T*, T*, index_t, shape_arg,
                // shape_arg)` matches; `dims`/`steps` permute the input's
                // own (merged) dimensions, so every offset is inside `x`,
                // and `t` holds `n` elements.
                unsafe { l.launch(grid_for(n)) }
                    .map_err(|e| gpu_error("launching reduce permute", e))?;
                reduce_into(
                    &self.dev,
                    &self.functions,
                    &t,
                    &mut y,
                    (outer, r, 1),
                    self.elem_size,
                    self.acc_size,
                )?;
            }
        }
        self.dev.tensor(self.dtype, shape, y)
    }
}

/// `Sum` on the GPU: integers wrap; `half`/`bfloat16` accumulate in `f32`.
#[kernel(
    op = Sum,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["reduction_indices"]
)]
#[derive(Debug)]
pub struct SumGpu<T> {
    reduction: Reduction,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for SumGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            reduction: Reduction::new(ctx, ReduceOp::Sum, T::DTYPE)?,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for SumGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.reduction.compute(ctx)
    }
}

/// `Mean` on the GPU: the sum divided by the count in the compute type
/// (integers: int64 sum, truncating division); the mean of nothing is NaN
/// for floating-point types and 0 for integers.
#[kernel(
    op = Mean,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["reduction_indices"]
)]
#[derive(Debug)]
pub struct MeanGpu<T> {
    reduction: Reduction,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for MeanGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            reduction: Reduction::new(ctx, ReduceOp::Mean, T::DTYPE)?,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for MeanGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.reduction.compute(ctx)
    }
}

/// `Max` on the GPU: NaN propagates (as the CPU kernel); the maximum of
/// nothing is `-inf` (or the integer type's minimum).
#[kernel(
    op = Max,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["reduction_indices"]
)]
#[derive(Debug)]
pub struct MaxGpu<T> {
    reduction: Reduction,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for MaxGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            reduction: Reduction::new(ctx, ReduceOp::Max, T::DTYPE)?,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for MaxGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.reduction.compute(ctx)
    }
}
