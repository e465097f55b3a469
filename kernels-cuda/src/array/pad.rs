//! `Pad` on the GPU with zeros (TF's `T()`: 0, `false`): each output element
//! is the input element it covers, or zero bytes outside the input's box
//! (`pad_copy`).

use kernels_cpu::util::index::{Dims, int_values, shape_of, to_dim};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::Pad;
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::mover::Mover;
use super::plan::{PadDim, PadPlan};
use super::source::entry;
use crate::gpu::gpu_bytes;

/// `Pad` for TF's GPU types; `paddings` on the host.
#[kernel(
    op = Pad,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tpaddings = [int32, int64],
    host_memory = ["paddings"]
)]
#[derive(Debug)]
pub struct PadGpu {
    mover: Mover,
}

impl BuildKernel for PadGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx.attr("T")?, entry::PAD)?,
        })
    }
}

/// The padding of each dimension of an input of `in_dims` (TF's checks).
pub(crate) fn pad_dims(
    in_dims: &[usize],
    paddings: &Tensor,
) -> Result<SmallVec<[PadDim; 8]>, KernelError> {
    let pshape = paddings.shape();
    registry_core::kernel_ensure!(
        pshape.rank() == 2 && pshape.dims()[1] == 2,
        "paddings must be a matrix with 2 columns: {pshape}"
    );
    let rank = in_dims.len();
    registry_core::kernel_ensure!(
        rank == pshape.dims()[0],
        "The first dimension of paddings must be the rank of inputs{pshape} {}",
        shape_of(in_dims)?
    );
    let values = int_values(paddings)?;
    let mut dims: SmallVec<[PadDim; 8]> = SmallVec::with_capacity(rank);
    for (d, (pair, &size)) in values.chunks_exact(2).zip(in_dims).enumerate() {
        let (before, after) = (pair[0], pair[1]);
        let (Some(b), Some(a)) = (to_dim(before), to_dim(after)) else {
            return Err(KernelError::invalid_argument(format!(
                "Paddings must be non-negative: {before} {after}"
            )));
        };
        let out = b
            .checked_add(size)
            .and_then(|n| n.checked_add(a))
            .filter(|&n| i64::try_from(n).is_ok())
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Encountered overflow when padding dimension {d} of size {size} with \
                     {before} and {after}"
                ))
            })?;
        dims.push(PadDim {
            size,
            before: b,
            out,
        });
    }
    Ok(dims)
}

impl OpKernel for PadGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let dims = pad_dims(input.dims(), ctx.input(1)?)?;
        let out_dims: Dims = dims.iter().map(|d| d.out).collect();
        let out_shape = shape_of(&out_dims)?;
        if out_shape.num_elements() == input.num_elements() {
            // No padding (or nothing at all): share the input.
            return ctx.set_output(0, input.reshape(out_shape)?);
        }
        // An empty input pads to all zeros: every index is outside its box.
        let plan = PadPlan::new(&dims)?;
        let out = self.mover.pad(gpu_bytes(&input, 0)?, &plan, out_shape)?;
        ctx.set_output(0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paddings_are_checked_as_tf_does() {
        let p = Tensor::from_vec([2, 2], vec![1i32, 2, 0, 0]).unwrap();
        let d = pad_dims(&[3, 4], &p).unwrap();
        assert_eq!((d[0].out, d[1].out), (6, 4));
        let p = Tensor::from_vec([1, 2], vec![-1i64, 0]).unwrap();
        assert_eq!(
            pad_dims(&[3], &p).unwrap_err().to_string(),
            "Paddings must be non-negative: -1 0"
        );
        let p = Tensor::from_vec([1, 3], vec![0i32, 0, 0]).unwrap();
        assert_eq!(
            pad_dims(&[3], &p).unwrap_err().to_string(),
            "paddings must be a matrix with 2 columns: [1,3]"
        );
    }
}
