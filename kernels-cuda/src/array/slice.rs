//! `Slice` on the GPU: the block of `size` elements starting at `begin`
//! (`size[i] = -1` takes the rest of dimension `i`), validated as TF's
//! `SharedSliceValidation` does and copied with the strided copy.

use kernels_cpu::util::index::{Dims, Ints, dim_i64, int_values, is_vector, shape_of, strides};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::Slice;
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::mover::Mover;
use super::plan::StridedPlan;
use super::source::entry;
use crate::gpu::gpu_bytes;

/// `Slice` for TF's GPU types; `begin` and `size` on the host.
#[kernel(
    op = Slice,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["begin", "size"]
)]
#[derive(Debug)]
pub struct SliceGpu {
    mover: Mover,
}

impl BuildKernel for SliceGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx.attr("T")?, entry::STRIDED)?,
        })
    }
}

/// A validated slice: its first element per dimension and its sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SliceBox {
    /// The first index per dimension.
    pub(crate) begin: Ints,
    /// The output's dimensions.
    pub(crate) sizes: Dims,
    /// The slice is the whole input.
    pub(crate) identity: bool,
}

/// Validates `begin` and `size` against `dims` (TF's messages).
pub(crate) fn slice_box(
    dims: &[usize],
    begin_t: &Tensor,
    size_t: &Tensor,
) -> Result<SliceBox, KernelError> {
    let rank = dims.len();
    registry_core::kernel_ensure!(
        is_vector(begin_t.shape())
            && is_vector(size_t.shape())
            && begin_t.num_elements() == rank
            && size_t.num_elements() == rank,
        "Expected begin and size arguments to be 1-D tensors of size {rank}, but got shapes {} \
         and {} instead.",
        begin_t.shape(),
        size_t.shape()
    );
    let begin = int_values(begin_t)?;
    let mut size = int_values(size_t)?;
    let mut identity = true;
    let mut sizes: Dims = SmallVec::with_capacity(rank);
    for i in 0..rank {
        let dim = dim_i64(dims[i]);
        let b = begin[i];
        if size[i] == -1 {
            size[i] = dim.saturating_sub(b);
        }
        let s = size[i];
        if dim == 0 {
            registry_core::kernel_ensure!(
                b == 0 && s == 0,
                "Expected begin[{i}] == 0 (got {b}) and size[{i}] == 0 (got {s}) when \
                 input.dim_size({i}) == 0"
            );
        } else {
            registry_core::kernel_ensure!(
                0 <= b && b <= dim,
                "Expected begin[{i}] in [0, {dim}], but got {b}"
            );
            registry_core::kernel_ensure!(
                0 <= s && b.saturating_add(s) <= dim,
                "Expected size[{i}] in [0, {}], but got {s}",
                dim - b
            );
        }
        identity &= b == 0 && s == dim;
        // In [0, dim] by the checks above.
        sizes.push(usize::try_from(s).unwrap_or(0));
    }
    Ok(SliceBox {
        begin,
        sizes,
        identity,
    })
}

impl OpKernel for SliceGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let b = slice_box(input.dims(), ctx.input(1)?, ctx.input(2)?)?;
        let out_shape = shape_of(&b.sizes)?;
        if b.identity {
            return ctx.set_output(0, input);
        }
        let steps: SmallVec<[i64; 8]> = strides(input.dims()).iter().map(|&s| dim_i64(s)).collect();
        let base = if out_shape.num_elements() == 0 {
            0
        } else {
            b.begin
                .iter()
                .zip(&steps)
                .try_fold(0i64, |acc, (&b, &s)| b.checked_mul(s)?.checked_add(acc))
                .ok_or_else(|| KernelError::internal("slice offset overflows"))?
        };
        let plan = StridedPlan::new("Slice", input.num_elements(), base, &b.sizes, &steps)?;
        let out = self
            .mover
            .strided(gpu_bytes(&input, 0)?, &plan, out_shape)?;
        ctx.set_output(0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[i32]) -> Tensor {
        Tensor::from_vec([x.len()], x.to_vec()).unwrap()
    }

    #[test]
    fn slices_are_validated_as_tf_does() {
        let b = slice_box(&[4, 5], &v(&[1, 2]), &v(&[-1, 2])).unwrap();
        assert_eq!(
            (&b.begin[..], &b.sizes[..], b.identity),
            (&[1, 2][..], &[3, 2][..], false)
        );
        assert!(
            slice_box(&[4, 5], &v(&[0, 0]), &v(&[4, -1]))
                .unwrap()
                .identity
        );
        assert_eq!(
            slice_box(&[4], &v(&[5]), &v(&[0])).unwrap_err().to_string(),
            "Expected begin[0] in [0, 4], but got 5"
        );
        assert_eq!(
            slice_box(&[4], &v(&[1]), &v(&[4])).unwrap_err().to_string(),
            "Expected size[0] in [0, 3], but got 4"
        );
        assert!(slice_box(&[4], &v(&[1, 2]), &v(&[1])).is_err());
        assert!(slice_box(&[0], &v(&[0]), &v(&[0])).is_ok());
    }
}
