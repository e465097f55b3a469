//! `GatherV2` on the GPU: slices of `params` along `axis` picked by
//! `indices` (in GPU memory), with optional leading batch dimensions;
//! checked as the CPU kernel ([`gather_geometry_of`]).
//!
//! The indices are not checked: they are on the device, and reading them
//! back would stall the stream. As TensorFlow's GPU kernel does, an index
//! outside `[0, params.shape[axis])` gives zeros (the CPU kernel reports
//! InvalidArgument instead).

use std::marker::PhantomData;

use opreg_op_logic::gather::gather_geometry_of;
use opreg_standard_ops::GatherV2;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::TensorElement;

use super::mover::Mover;
use super::source::entry;
use opreg_cuda::gpu_bytes;

/// `GatherV2` for TF's GPU types, with int32 or int64 indices; `axis` on
/// the host.
#[kernel(
    op = GatherV2,
    device = GPU,
    Tparams = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64,
               int8, uint16, uint32, uint64, uint8],
    Tindices = [int32, int64],
    host_memory = ["axis"]
)]
#[derive(Debug)]
pub struct GatherV2Gpu<Tindices> {
    batch_dims: i64,
    mover: Mover,
    index: PhantomData<fn() -> Tindices>,
}

impl<Tindices: TensorElement> BuildKernel for GatherV2Gpu<Tindices> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let entry = match Tindices::DTYPE {
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
            mover: Mover::new(ctx.attr("Tparams")?, entry)?,
            index: PhantomData,
        })
    }
}

impl<Tindices: TensorElement> OpKernel for GatherV2Gpu<Tindices> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let params = ctx.input(0)?.clone();
        let indices = ctx.input(1)?.clone();
        let index_max = match Tindices::DTYPE {
            DataType::DtInt32 => i64::from(i32::MAX),
            _ => i64::MAX,
        };
        let g = gather_geometry_of(ctx, self.batch_dims, Tindices::DTYPE, index_max)?;
        if g.out_shape.num_elements() == 0 {
            let out = self.mover.empty(g.out_shape)?;
            return ctx.set_output(0, out);
        }
        let index_bytes = gpu_bytes(&indices, 1)?;
        if index_bytes.len() != indices.num_elements() * std::mem::size_of::<Tindices>() {
            return Err(KernelError::internal("gather: indices buffer size"));
        }
        let out = self.mover.gather(gpu_bytes(&params, 0)?, index_bytes, g)?;
        ctx.set_output(0, out)
    }
}
