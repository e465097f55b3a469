//! `Select` and `SelectV2` on the GPU.
//!
//! `Select` takes TF's v1 rules: a scalar condition picks `t` or `e` whole,
//! a vector condition over the first dimension of `t` picks rows, and
//! otherwise the condition has the shape of `t` and `e`. `SelectV2`
//! broadcasts the condition, `t` and `e` together. Both run one kernel: a
//! flat loop when all three have the output's element count, else an
//! indexed broadcasting loop (a v1 row condition is a broadcast of
//! `[rows, 1, ..., 1]`). A `t` or `e` of the output's shape is updated in
//! place when it can be forwarded. Shape errors have the CPU kernels' (TF's)
//! messages.

use opreg_op_logic::index::shape_of;
use opreg_op_logic::select::{SelectV1, broadcast_error, v1_mode, v1_mode_of};
use opreg_standard_ops::{Select, SelectV2};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::proto::DataType;

use super::broadcast::BroadcastPlan;
use super::source::select_source;
use super::ternary::TernaryFunctions;
use crate::sources_of_type;
use opreg_cuda::{GpuContext, GpuTensors};

/// The condition, `t` and `e` shapes to broadcast, after `Select`'s v1
/// checks ([`v1_mode`], TF's messages). A row condition becomes
/// `[rows, 1, ..., 1]`.
pub fn select_v1_shapes(
    cond: &[usize],
    t: &[usize],
    e: &[usize],
    node: &str,
    op: &str,
) -> Result<Vec<usize>, KernelError> {
    let mode = v1_mode(&shape_of(cond)?, &shape_of(t)?, &shape_of(e)?, node, op)?;
    Ok(v1_cond_dims(mode, cond, t))
}

/// The dimensions `Select`'s condition of dimensions `cond` broadcasts as,
/// in `mode`, against `t` of dimensions `t`.
fn v1_cond_dims(mode: SelectV1, cond: &[usize], t: &[usize]) -> Vec<usize> {
    match mode {
        SelectV1::Scalar => Vec::new(),
        SelectV1::Rows => {
            let mut rows = vec![1; t.len()];
            rows[0] = cond[0];
            rows
        }
        SelectV1::Elements => cond.to_vec(),
    }
}

/// The sources a registration of [`SelectGpu`] compiles.
pub fn select_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    sources_of_type(reg, "T", select_source)
}

/// `Select` (TF's v1 condition rules) and `SelectV2` (condition, `t` and
/// `e` broadcast together) on the GPU.
#[kernel(
    op = Select,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64, bool],
    sources = select_sources
)]
#[kernel(
    op = SelectV2,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64, bool],
    sources = select_sources
)]
pub struct SelectGpu {
    dtype: DataType,
    v2: bool,
    functions: TernaryFunctions,
}

impl std::fmt::Debug for SelectGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectGpu")
            .field("dtype", &self.dtype)
            .field("v2", &self.v2)
            .finish()
    }
}

impl BuildKernel for SelectGpu {
    /// Compiles (or finds cached) the select kernels for `T`.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        Ok(Self {
            dtype,
            v2: ctx.op() == "SelectV2",
            functions: TernaryFunctions::new(ctx.gpu()?, &select_source(dtype)?)?,
        })
    }
}

impl SelectGpu {
    fn plan(&self, ctx: &OpKernelContext<'_>) -> Result<BroadcastPlan<3>, KernelError> {
        ctx.gpu_input(0, DataType::DtBool)?;
        ctx.gpu_input(1, self.dtype)?;
        ctx.gpu_input(2, self.dtype)?;
        let (cond, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let error = |err| broadcast_error(err, cond.shape(), t.shape(), e.shape());
        if self.v2 {
            BroadcastPlan::new([cond.dims(), t.dims(), e.dims()]).map_err(error)
        } else {
            let c = v1_cond_dims(v1_mode_of(ctx)?, cond.dims(), t.dims());
            BroadcastPlan::new([&c, t.dims(), e.dims()]).map_err(error)
        }
    }
}

impl OpKernel for SelectGpu {
    /// `out = cond ? t : e`, broadcasting as the op does; a `t` or `e` of
    /// the output's shape is updated in place when it can be forwarded.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let plan = self.plan(ctx)?;
        let op = if self.v2 { "SelectV2" } else { "Select" };
        let dtypes = [DataType::DtBool, self.dtype, self.dtype];
        self.functions.run(ctx, &plan, dtypes, self.dtype, op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1(c: &[usize], t: &[usize], e: &[usize]) -> Result<Vec<usize>, String> {
        select_v1_shapes(c, t, e, "n", "Select").map_err(|e| e.to_string())
    }

    #[test]
    fn select_v1_rules() {
        assert_eq!(v1(&[], &[2, 3], &[2, 3]).unwrap(), Vec::<usize>::new());
        assert_eq!(v1(&[2], &[2, 3, 4], &[2, 3, 4]).unwrap(), vec![2, 1, 1]);
        assert_eq!(v1(&[3], &[3], &[3]).unwrap(), vec![3]);
        assert_eq!(v1(&[2, 3], &[2, 3], &[2, 3]).unwrap(), vec![2, 3]);
        // A row condition broadcasts over the rest of each row.
        let b = BroadcastPlan::new([&[2, 1, 1][..], &[2, 3, 4][..], &[2, 3, 4][..]]).unwrap();
        assert_eq!(b.dims(), &[2, 12]);
        assert_eq!(b.strides(0), &[1, 0]);
    }

    #[test]
    fn select_v1_errors_are_the_shared_checks() {
        let e = v1(&[2], &[3, 4], &[3, 4]).unwrap_err();
        assert_eq!(
            e,
            "Number of batches of 'then' must match size of 'cond', but saw: 3 vs. 2"
        );
    }
}
