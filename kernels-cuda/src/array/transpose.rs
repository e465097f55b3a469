//! `Transpose` on the GPU: validates `perm` (TF's messages), shares the
//! input when the permutation keeps the element order, and otherwise runs
//! the strided copy.

use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::Transpose;
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, int_values, is_vector, shape_of, strides};
use super::mover::Mover;
use super::plan::StridedPlan;
use super::source::entry;
use crate::gpu::gpu_bytes;

/// `Transpose` for TF's GPU types (`TF_CALL_POD_TYPES`); `perm` on the host.
#[kernel(
    op = Transpose,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["perm"]
)]
#[derive(Debug)]
pub struct TransposeGpu {
    mover: Mover,
}

impl BuildKernel for TransposeGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx.attr("T")?, entry::STRIDED)?,
        })
    }
}

impl OpKernel for TransposeGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let perm_t = ctx.input(1)?;
        registry_core::kernel_ensure!(
            is_vector(perm_t.shape()),
            "perm must be rank 1, got shape {}",
            perm_t.shape()
        );
        let rank = input.shape().rank();
        let perm_values = int_values(perm_t)?;
        registry_core::kernel_ensure!(
            perm_values.len() == rank,
            "transpose expects a vector of size {rank}. But input(1) is a vector of size {}",
            perm_values.len()
        );
        let perm = permutation(&perm_values, rank)?;
        let in_dims = input.dims();
        let out_dims: Dims = perm.iter().map(|&d| in_dims[d]).collect();
        let out_shape = shape_of(&out_dims)?;
        let identity = perm.iter().enumerate().all(|(i, &d)| i == d);
        if rank <= 1 || identity || non_singleton_dims_align(in_dims, &perm) {
            // The elements keep their order: share the buffer.
            return ctx.set_output(0, input.reshape(out_shape)?);
        }
        let in_strides = strides(in_dims);
        let steps: SmallVec<[i64; 8]> = perm.iter().map(|&d| dim_i64(in_strides[d])).collect();
        let plan = StridedPlan::new("Transpose", input.num_elements(), 0, &out_dims, &steps)?;
        let x = gpu_bytes(&input, 0)?;
        let out = self.mover.strided(x, &plan, out_shape)?;
        ctx.set_output(0, out)
    }
}

/// Checks that `values` is a permutation of `0..rank` (TF's messages).
pub(crate) fn permutation(values: &[i64], rank: usize) -> Result<Dims, KernelError> {
    let mut seen = vec![false; rank];
    let mut perm = SmallVec::with_capacity(rank);
    for &v in values {
        let d = usize::try_from(v)
            .ok()
            .filter(|&d| d < rank)
            .ok_or_else(|| {
                KernelError::invalid_argument(format!("{v} is out of range [0 .. {rank})"))
            })?;
        seen[d] = true;
        perm.push(d);
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        let all: Vec<String> = values.iter().map(i64::to_string).collect();
        return Err(KernelError::invalid_argument(format!(
            "{missing} is missing from {{{}}}.",
            all.join(",")
        )));
    }
    Ok(perm)
}

/// True when the dimensions of size other than 1 keep their order, so the
/// transpose is only a reshape (TF's `NonSingletonDimensionsAlign`).
fn non_singleton_dims_align(dims: &[usize], perm: &[usize]) -> bool {
    let mut last = None;
    for &d in perm {
        if dims[d] == 1 {
            continue;
        }
        if last.is_some_and(|l| d < l) {
            return false;
        }
        last = Some(d);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_checked_as_tf_does() {
        assert_eq!(&permutation(&[1, 0], 2).unwrap()[..], &[1, 0]);
        assert_eq!(
            permutation(&[0, 2], 2).unwrap_err().to_string(),
            "2 is out of range [0 .. 2)"
        );
        assert_eq!(
            permutation(&[0, 0], 2).unwrap_err().to_string(),
            "1 is missing from {0,0}."
        );
        assert!(non_singleton_dims_align(&[1, 3, 1, 4], &[0, 2, 1, 3]));
        assert!(!non_singleton_dims_align(&[2, 3], &[1, 0]));
    }
}
