//! `Tile` on the GPU: output dimension `d` repeats the input's dimension
//! `d` `multiples[d]` times; each output element reads the input at its
//! index modulo the input's dimensions (`tile_copy`). The multiples are
//! checked as the CPU kernel does ([`tile_shape`]).

use opreg_op_logic::tile::{TileShape, tile_shape};
use opreg_standard_ops::Tile;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::mover::{Mover, mover_sources};
use super::plan::TilePlan;
use super::source::entry;

/// `Tile` for TF's GPU types; `multiples` on the host.
#[kernel(
    op = Tile,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tmultiples = [int32, int64],
    host_memory = ["multiples"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct TileGpu {
    mover: Mover,
}

impl BuildKernel for TileGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx, ctx.attr("T")?, entry::TILE)?,
        })
    }
}

impl OpKernel for TileGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let TileShape { reps, out_shape } = tile_shape(input.shape(), ctx.input(1)?)?;
        if out_shape.dims() == input.dims() {
            return ctx.set_output(0, input);
        }
        let plan = if out_shape.num_elements() == 0 {
            TilePlan::new(&[], &[])?
        } else {
            TilePlan::new(input.dims(), &reps)?
        };
        self.mover.tile(ctx, &input, &plan, out_shape)
    }
}
