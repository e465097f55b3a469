//! `MatrixBandPart`'s checks (TF's `MatrixBandPartOp`, with its messages)
//! and which elements of each matrix are kept, shared by the CPU and GPU
//! kernels.
//!
//! ```
//! use opreg_op_logic::band_part::band;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let b = band(&TensorShape::new([3, 4]).unwrap(), &Tensor::scalar(1i64), &Tensor::scalar(0i64))
//!     .unwrap()
//!     .unwrap();
//! assert!(b.keeps(1, 0) && b.keeps(1, 1) && !b.keeps(1, 2) && !b.keeps(2, 0));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use super::index::int_values;

/// A checked band: the innermost matrices are `rows × cols`, `batch` of
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// The number of matrices.
    pub batch: usize,
    /// Rows per matrix.
    pub rows: usize,
    /// Columns per matrix.
    pub cols: usize,
    /// Sub-diagonals kept (negative: all).
    pub lower: i64,
    /// Super-diagonals kept (negative: all).
    pub upper: i64,
}

impl Band {
    /// Whether element `(m, n)` of a matrix is inside the band.
    pub fn keeps(&self, m: usize, n: usize) -> bool {
        let (m, n) = (m as i128, n as i128);
        (self.lower < 0 || m - n <= i128::from(self.lower))
            && (self.upper < 0 || n - m <= i128::from(self.upper))
    }

    /// The columns `[start, end)` of row `m` inside the band.
    pub fn row_range(&self, m: usize) -> (usize, usize) {
        let start = if self.lower < 0 {
            0
        } else {
            m.saturating_sub(usize::try_from(self.lower).unwrap_or(usize::MAX))
        };
        let end = if self.upper < 0 {
            self.cols
        } else {
            m.saturating_add(usize::try_from(self.upper).unwrap_or(usize::MAX))
                .saturating_add(1)
                .min(self.cols)
        };
        (start.min(self.cols), end.max(start.min(self.cols)))
    }
}

/// The single value of a scalar `name`, with TF's message otherwise.
fn scalar(t: &Tensor, name: &str) -> Result<i64, KernelError> {
    registry_core::kernel_ensure!(
        t.shape().rank() == 0,
        "{name} must be scalar, got shape {}",
        t.shape()
    );
    Ok(int_values(t)?.first().copied().unwrap_or(0))
}

/// Checks `num_lower` and `num_upper` (host integer scalars, at most the
/// rows and the columns) against an input of shape `input` (rank >= 2).
/// `None` when the output is the input (nothing to zero, or no elements).
pub fn band(
    input: &TensorShape,
    num_lower: &Tensor,
    num_upper: &Tensor,
) -> Result<Option<Band>, KernelError> {
    let dims = input.dims();
    registry_core::kernel_ensure!(
        dims.len() >= 2,
        "input must be at least 2-dim, received shape: {input}"
    );
    let (rows, cols) = (dims[dims.len() - 2], dims[dims.len() - 1]);
    let batch = dims[..dims.len() - 2].iter().product();
    let (r, c) = (
        i64::try_from(rows).unwrap_or(i64::MAX),
        i64::try_from(cols).unwrap_or(i64::MAX),
    );
    let lower = scalar(num_lower, "num_lower")?;
    registry_core::kernel_ensure!(
        lower <= r,
        "num_lower must be negative or less or equal to number of rows ({r}) got: {lower}"
    );
    let upper = scalar(num_upper, "num_upper")?;
    registry_core::kernel_ensure!(
        upper <= c,
        "num_upper must be negative or less or equal to number of columns ({c}) got: {upper}"
    );
    if input.num_elements() == 0 || ((lower < 0 || lower == r) && (upper < 0 || upper == c)) {
        return Ok(None);
    }
    Ok(Some(Band {
        batch,
        rows,
        cols,
        lower,
        upper,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn checks_as_tf_does() {
        let m = shape(&[3, 4]);
        let s = |v: i32| Tensor::scalar(v);
        let err = |l: Tensor, u: Tensor| band(&m, &l, &u).unwrap_err().to_string();
        // Messages from TF 2.21.
        assert_eq!(
            err(s(4), s(1)),
            "num_lower must be negative or less or equal to number of rows (3) got: 4"
        );
        assert_eq!(
            err(s(1), s(5)),
            "num_upper must be negative or less or equal to number of columns (4) got: 5"
        );
        let v = Tensor::from_vec([1], vec![1i32]).unwrap();
        assert_eq!(
            err(v.clone(), s(1)),
            "num_lower must be scalar, got shape [1]"
        );
        assert_eq!(err(s(1), v), "num_upper must be scalar, got shape [1]");
        assert_eq!(
            band(&shape(&[2]), &s(1), &s(1)).unwrap_err().to_string(),
            "input must be at least 2-dim, received shape: [2]"
        );
        // The whole matrix: nothing to do.
        assert_eq!(band(&m, &s(3), &s(4)).unwrap(), None);
        assert_eq!(band(&m, &s(-5), &s(-7)).unwrap(), None);
        assert_eq!(band(&shape(&[2, 0, 4]), &s(0), &s(0)).unwrap(), None);
    }

    #[test]
    fn row_ranges_are_the_kept_columns() {
        let m = shape(&[5, 4]);
        for (l, u) in [(1i64, 0i64), (-1, 1), (0, 0), (2, -1), (4, 3)] {
            let b = band(&m, &Tensor::scalar(l), &Tensor::scalar(u))
                .unwrap()
                .unwrap_or(Band {
                    batch: 1,
                    rows: 5,
                    cols: 4,
                    lower: l,
                    upper: u,
                });
            for row in 0..5 {
                let (s, e) = b.row_range(row);
                for col in 0..4 {
                    assert_eq!(
                        b.keeps(row, col),
                        (s..e).contains(&col),
                        "{l} {u} {row} {col}"
                    );
                }
            }
        }
    }
}
