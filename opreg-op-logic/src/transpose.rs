//! `Transpose`'s host-side checks (TF's messages) and layout, shared by
//! the CPU and GPU kernels: the validated permutation, the output shape,
//! whether the elements keep their order (then the output shares the
//! input's buffer), and the input step of each output dimension for the
//! strided copy.
//!
//! ```
//! use opreg_op_logic::transpose::Transposition;
//! use registry_core::tensor::Tensor;
//!
//! let perm = Tensor::from_vec([3], vec![2i32, 0, 1]).unwrap();
//! let t = Transposition::new(&[2, 3, 4], &perm).unwrap();
//! assert_eq!(&t.out_dims[..], &[4, 2, 3]);
//! assert!(!t.keeps_order);
//! assert_eq!(&t.input_steps(&[2, 3, 4])[..], &[1, 12, 4]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::index::{Dims, Ints, dim_i64, int_values, is_vector, strides};

/// A validated `Transpose` of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transposition {
    /// Output dimension `i` is input dimension `perm[i]`.
    pub perm: Dims,
    /// The output's dimensions.
    pub out_dims: Dims,
    /// The elements keep their row-major order (a permutation of rank at
    /// most 1, the identity, or one that only moves dimensions of size 1):
    /// the transpose is a reshape.
    pub keeps_order: bool,
}

impl Transposition {
    /// Checks `perm` (a rank-1 integer host tensor) against an input of
    /// `in_dims` (TF's `TransposeOp::Compute`).
    pub fn new(in_dims: &[usize], perm: &Tensor) -> Result<Self, KernelError> {
        registry_core::kernel_ensure!(
            is_vector(perm.shape()),
            "perm must be rank 1, got shape {}",
            perm.shape()
        );
        let rank = in_dims.len();
        let perm_values = int_values(perm)?;
        registry_core::kernel_ensure!(
            perm_values.len() == rank,
            "transpose expects a vector of size {rank}. But input(1) is a vector of size {}",
            perm_values.len()
        );
        let perm = permutation(&perm_values, rank)?;
        let out_dims = perm.iter().map(|&d| in_dims[d]).collect();
        let identity = perm.iter().enumerate().all(|(i, &d)| i == d);
        let keeps_order = rank <= 1 || identity || non_singleton_dims_align(in_dims, &perm);
        Ok(Self {
            perm,
            out_dims,
            keeps_order,
        })
    }

    /// The input step (in elements) of each output dimension, for a
    /// row-major input of `in_dims` (the dims validated).
    pub fn input_steps(&self, in_dims: &[usize]) -> Ints {
        let in_strides = strides(in_dims);
        self.perm.iter().map(|&d| dim_i64(in_strides[d])).collect()
    }
}

/// Checks that `values` is a permutation of `0..rank` (TF's messages).
fn permutation(values: &[i64], rank: usize) -> Result<Dims, KernelError> {
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

    #[test]
    fn transpositions_check_perm_and_find_reshapes() {
        let perm = |p: &[i64]| Tensor::from_vec([p.len()], p.to_vec()).unwrap();
        let t = Transposition::new(&[1, 3, 1, 4], &perm(&[2, 1, 0, 3])).unwrap();
        assert!(t.keeps_order);
        assert_eq!(&t.out_dims[..], &[1, 3, 1, 4]);
        let e = Transposition::new(&[2, 3], &perm(&[0])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "transpose expects a vector of size 2. But input(1) is a vector of size 1"
        );
        let matrix = Tensor::from_vec([1, 2], vec![1i32, 0]).unwrap();
        let e = Transposition::new(&[2, 3], &matrix).unwrap_err();
        assert_eq!(e.to_string(), "perm must be rank 1, got shape [1,2]");
    }
}
