//! `Transpose`: validates `perm`, shares the input when the permutation
//! keeps the element order (identity, or only moves dimensions of size 1),
//! and otherwise runs a [`StridedPlan`] (tiled for cache when the input's
//! innermost dimension moves).

use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::standard_ops::Transpose;
use smallvec::SmallVec;

use super::elements::run_on_elements;
use super::index::{dim_i64, int_values, is_vector, shape_of, strides};
use super::strided::StridedPlan;

/// `Transpose` for every type TF's CPU kernel has.
#[kernel(
    op = Transpose,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         string, uint16, uint32, uint64, uint8],
    host_memory = ["perm"]
)]
fn transpose(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
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
    let out_dims: SmallVec<[usize; 8]> = perm.iter().map(|&d| in_dims[d]).collect();
    let identity = perm.iter().enumerate().all(|(i, &d)| i == d);
    if rank <= 1 || identity || non_singleton_dims_align(in_dims, &perm) {
        // The elements keep their order: share the buffer.
        let shape = shape_of(&out_dims)?;
        let input = ctx.take_input(0)?;
        let output = input.reshape(shape)?;
        drop(input);
        return ctx.set_output(0, output);
    }
    let in_strides = strides(in_dims);
    let steps: SmallVec<[i64; 8]> = perm.iter().map(|&d| dim_i64(in_strides[d])).collect();
    let plan = StridedPlan::new(input.num_elements(), 0, &out_dims, &steps)?;
    let input = ctx.take_input(0)?;
    let out = ctx.allocate_output(0, shape_of(&out_dims)?)?;
    run_on_elements(&plan, &[&input], out)
}

/// Checks that `values` is a permutation of `0..rank` (TF's messages).
fn permutation(values: &[i64], rank: usize) -> Result<SmallVec<[usize; 8]>, KernelError> {
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
