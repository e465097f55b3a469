//! `OneHot` on the GPU: `output[p, d, s] = indices[p, s] == d ? on_value :
//! off_value`, with the one-hot dimension of size `depth` (a host scalar)
//! inserted at `axis`. An index outside `[0, depth)` gives a row of
//! `off_value` (as TF does). `indices`, `on_value` and `off_value` are read
//! in GPU memory; the shapes are checked as the CPU kernel does
//! ([`one_hot_shape`]).

use opreg_op_logic::one_hot::{OneHotShape, one_hot_shape};
use opreg_standard_ops::OneHot;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};

use super::mover::{Mover, mover_sources};
use super::source::entry;

/// `OneHot` for TF's GPU types, with uint8, int32 or int64 indices; `depth`
/// on the host.
#[kernel(
    op = OneHot,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    TI = [uint8, int32, int64],
    host_memory = ["depth"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct OneHotGpu {
    axis: i64,
    mover: Mover,
}

impl BuildKernel for OneHotGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let entry = match ctx.attr("TI")? {
            DataType::DtUint8 => entry::ONE_HOT_U8,
            DataType::DtInt32 => entry::ONE_HOT_I32,
            DataType::DtInt64 => entry::ONE_HOT_I64,
            other => {
                return Err(KernelError::unimplemented(format!(
                    "OneHot on GPU: {} indices",
                    other.type_name()
                )));
            }
        };
        Ok(Self {
            axis: ctx.attr("axis")?,
            mover: Mover::new(ctx, ctx.attr("T")?, entry)?,
        })
    }
}

impl OpKernel for OneHotGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let indices = ctx.input(0)?.clone();
        let on = ctx.input(2)?.clone();
        let off = ctx.input(3)?.clone();
        let OneHotShape {
            out_shape,
            depth,
            suffix,
        } = one_hot_shape(
            indices.shape(),
            ctx.input(1)?,
            on.shape(),
            off.shape(),
            self.axis,
        )?;
        if out_shape.num_elements() == 0 {
            return self.mover.empty(ctx, out_shape);
        }
        self.mover
            .one_hot(ctx, &indices, &on, &off, depth, suffix, out_shape)
    }
}
