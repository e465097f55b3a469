//! `GatherV2` on the GPU: slices of `params` along `axis` picked by
//! `indices` (in GPU memory), with optional leading batch dimensions;
//! checked as the CPU kernel ([`gather_geometry_of`]).
//!
//! The indices are not checked: they are on the device, and reading them
//! back would stall the stream. As TensorFlow's GPU kernel does, an index
//! outside `[0, params.shape[axis])` gives zeros (the CPU kernel reports
//! InvalidArgument instead).

use opreg_op_logic::gather::gather_geometry_of;
use opreg_standard_ops::GatherV2;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};

use super::mover::{Mover, mover_sources};
use super::source::entry;

/// `GatherV2` for TF's GPU types, with int32 or int64 indices; `axis` on
/// the host.
#[kernel(
    op = GatherV2,
    device = GPU,
    Tparams = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64,
               int8, uint16, uint32, uint64, uint8],
    Tindices = [int32, int64],
    host_memory = ["axis"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct GatherV2Gpu {
    batch_dims: i64,
    index_type: DataType,
    mover: Mover,
}

impl BuildKernel for GatherV2Gpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let index_type: DataType = ctx.attr("Tindices")?;
        let entry = match index_type {
            DataType::DtInt32 => entry::GATHER_I32,
            DataType::DtInt64 => entry::GATHER_I64,
            other => {
                return Err(KernelError::unimplemented(format!(
                    "GatherV2 on GPU: {} indices",
                    other.type_name()
                )));
            }
        };
        Ok(Self {
            batch_dims: ctx.attr("batch_dims")?,
            index_type,
            mover: Mover::new(ctx, ctx.attr("Tparams")?, entry)?,
        })
    }
}

impl OpKernel for GatherV2Gpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let params = ctx.input(0)?.clone();
        let indices = ctx.input(1)?.clone();
        let index_max = match self.index_type {
            DataType::DtInt32 => i64::from(i32::MAX),
            _ => i64::MAX,
        };
        let g = gather_geometry_of(ctx, self.batch_dims, self.index_type, index_max)?;
        if g.out_shape.num_elements() == 0 {
            return self.mover.empty(ctx, g.out_shape);
        }
        if indices.dtype() != self.index_type || indices.num_elements() != g.batch * g.per_batch {
            return Err(KernelError::internal(
                "gather: indices do not match the plan",
            ));
        }
        self.mover.gather(ctx, &params, &indices, g)
    }
}
