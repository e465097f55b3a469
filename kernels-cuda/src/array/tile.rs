//! `Tile` on the GPU: output dimension `d` repeats the input's dimension
//! `d` `multiples[d]` times; each output element reads the input at its
//! index modulo the input's dimensions (`tile_copy`).

use kernels_cpu::util::index::{Dims, int_values, is_vector, shape_of, to_dim};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::Tile;
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::mover::Mover;
use super::plan::TilePlan;
use super::source::entry;
use crate::gpu::gpu_bytes;

/// `Tile` for TF's GPU types; `multiples` on the host.
#[kernel(
    op = Tile,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tmultiples = [int32, int64],
    host_memory = ["multiples"]
)]
#[derive(Debug)]
pub struct TileGpu {
    mover: Mover,
}

impl BuildKernel for TileGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx.attr("T")?, entry::TILE)?,
        })
    }
}

/// The repetitions and output dimensions of a `Tile` (TF's checks).
pub(crate) fn tile_dims(
    in_dims: &[usize],
    multiples: &Tensor,
) -> Result<(Dims, Dims), KernelError> {
    registry_core::kernel_ensure!(
        is_vector(multiples.shape()),
        "Expected multiples to be 1-D, but got shape {}",
        multiples.shape()
    );
    let rank = in_dims.len();
    registry_core::kernel_ensure!(
        rank == multiples.num_elements(),
        "Expected multiples argument to be a vector of length {rank} but got length {}",
        multiples.num_elements()
    );
    let mults = int_values(multiples)?;
    let mut out_dims: Dims = SmallVec::with_capacity(rank);
    let mut reps: Dims = SmallVec::with_capacity(rank);
    for (i, (&m, &d)) in mults.iter().zip(in_dims).enumerate() {
        let rep = to_dim(m).ok_or_else(|| {
            KernelError::invalid_argument(format!("Expected multiples[{i}] >= 0, but got {m}"))
        })?;
        let out = d
            .checked_mul(rep)
            .filter(|&o| i64::try_from(o).is_ok())
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Encountered overflow when multiplying {d} with {m}"
                ))
            })?;
        reps.push(rep);
        out_dims.push(out);
    }
    Ok((reps, out_dims))
}

impl OpKernel for TileGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let (reps, out_dims) = tile_dims(input.dims(), ctx.input(1)?)?;
        let out_shape = shape_of(&out_dims)?;
        if out_shape.dims() == input.dims() {
            return ctx.set_output(0, input);
        }
        let plan = if out_shape.num_elements() == 0 {
            TilePlan::new(&[], &[])?
        } else {
            TilePlan::new(input.dims(), &reps)?
        };
        let out = self.mover.tile(gpu_bytes(&input, 0)?, &plan, out_shape)?;
        ctx.set_output(0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples_are_checked_as_tf_does() {
        let m = Tensor::from_vec([2], vec![2i32, 3]).unwrap();
        let (reps, out) = tile_dims(&[4, 5], &m).unwrap();
        assert_eq!((&reps[..], &out[..]), (&[2, 3][..], &[8, 15][..]));
        let m = Tensor::from_vec([1], vec![-1i64]).unwrap();
        assert_eq!(
            tile_dims(&[4], &m).unwrap_err().to_string(),
            "Expected multiples[0] >= 0, but got -1"
        );
        assert!(tile_dims(&[4, 5], &m).is_err());
    }
}
