//! The launches of the element-wise kernels of three operands
//! ([`ternary_source`](super::source) sources: `Select`, `SelectV2`,
//! `ClipByValue`): a flat loop when the three operands have the output's
//! element count, else an indexed broadcasting loop over the merged
//! dimensions of a [`BroadcastPlan`]. An operand of the output's shape and
//! dtype is updated in place when it can be forwarded.

use cudarc::driver::{CudaFunction, PushKernelArg};
use registry_core::kernel::{KernelError, KernelSource, OpKernelContext};
use registry_core::proto::DataType;
use registry_core::tensor::Tensor;

use super::broadcast::{BroadcastPlan, GpuBroadcast, by_index_width};
use super::io::flat_launch;
use super::source::{ternary_entry, vector_width};
use opreg_cuda::{GpuContext, GpuDevice, GpuTensors, gpu_error, grid_for};

/// The compiled entries of one ternary source.
pub(crate) struct TernaryFunctions {
    same: CudaFunction,
    bcast32: CudaFunction,
    bcast64: CudaFunction,
}

impl std::fmt::Debug for TernaryFunctions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TernaryFunctions").finish_non_exhaustive()
    }
}

impl TernaryFunctions {
    /// The entries of `source` (a ternary source), compiled (or found
    /// cached) for `gpu`.
    pub(crate) fn new(gpu: &GpuDevice, source: &KernelSource) -> Result<Self, KernelError> {
        let function = |entry: &str| gpu.function(source, entry);
        Ok(Self {
            same: function(ternary_entry::SAME)?,
            bcast32: function(ternary_entry::BCAST32)?,
            bcast64: function(ternary_entry::BCAST64)?,
        })
    }

    /// Output 0 (of `out_dtype` and `plan`'s output shape) as the source's
    /// function of inputs 0, 1 and 2 (of `dtypes`, checked to be in GPU
    /// memory), broadcast by `plan`, which must be the plan of the three
    /// inputs' shapes. `what` names the op in errors.
    pub(crate) fn run(
        &self,
        ctx: &mut OpKernelContext<'_>,
        plan: &BroadcastPlan<3>,
        dtypes: [DataType; 3],
        out_dtype: DataType,
        what: &str,
    ) -> Result<(), KernelError> {
        for (i, &dtype) in dtypes.iter().enumerate() {
            ctx.gpu_input(i, dtype)?;
        }
        let n = plan.out_len();
        let bcast = if plan.all_identity() {
            None
        } else {
            let shapes = {
                let dims = |i: usize| ctx.input(i).map(|t: &Tensor| t.shape().to_string());
                format!("{}, {} and {}", dims(0)?, dims(1)?, dims(2)?)
            };
            Some(plan.shape_args(&shapes)?)
        };
        let candidates: Vec<usize> = (0..3)
            .filter(|&i| plan.is_identity(i) && dtypes[i] == out_dtype)
            .collect();
        let forwarded =
            ctx.forward_input_or_allocate_output(&candidates, 0, plan.out_shape().clone())?;
        if n == 0 {
            return Ok(());
        }
        let out = ctx.gpu_output(0)?;
        let a = ctx.gpu_operand(0, dtypes[0], forwarded, out)?;
        let b = ctx.gpu_operand(1, dtypes[1], forwarded, out)?;
        let c = ctx.gpu_operand(2, dtypes[2], forwarded, out)?;
        let len = n as i64;
        let stream = ctx.gpu()?.stream();
        let launched = match bcast {
            None => {
                let mut launch = stream.launch_builder(&self.same);
                launch.arg(&a).arg(&b).arg(&c).arg(&out).arg(&len);
                let widths = [dtypes[0], dtypes[1], dtypes[2], out_dtype];
                let cfg = flat_launch(n, vector_width(&widths));
                // SAFETY: `ternary_same(const TA* a, const TB* b, const TC*
                // c, TO* out, index_t n)` takes these arguments, of the
                // checked dtypes; every buffer holds n elements; out may be
                // an operand, each element of which is read before being
                // written, by the same thread.
                unsafe { launch.launch(cfg) }
            }
            Some((dims, [sa, sb, sc])) => {
                let func = by_index_width(n, &self.bcast32, &self.bcast64);
                let mut launch = stream.launch_builder(func);
                launch
                    .arg(&a)
                    .arg(&b)
                    .arg(&c)
                    .arg(&out)
                    .arg(&len)
                    .arg(&dims)
                    .arg(&sa)
                    .arg(&sb)
                    .arg(&sc);
                // SAFETY: the broadcast entries take `(a, b, c, out, n,
                // dims, sa, sb, sc)` as passed; the strides address only
                // elements of each operand over dims whose product is n; out
                // holds n elements and may be an operand of the output's
                // shape, whose element i only output element i reads.
                unsafe { launch.launch(grid_for(n)) }
            }
        };
        launched.map_err(|err| gpu_error(&format!("launching {what}"), err))?;
        Ok(())
    }
}
