//! `TopKV2`'s checks (TF's `TopK` kernel, with its messages, in its order)
//! and geometry, shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::top_k::top_k_geometry;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let input = TensorShape::new([2, 3, 8]).unwrap();
//! let g = top_k_geometry(&input, &Tensor::scalar(3i32), i64::from(i32::MAX)).unwrap();
//! assert_eq!((g.rows, g.cols, g.k), (6, 8, 3));
//! assert_eq!(g.out_shape.dims(), &[2, 3, 3]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use super::index::{dim_i64, int_values, shape_of};

/// A checked `TopKV2`: the input is viewed as `[rows, cols]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopKGeometry {
    /// The number of vectors (the product of all dimensions but the last).
    pub rows: usize,
    /// The length of each vector (the last dimension).
    pub cols: usize,
    /// How many entries to keep per vector.
    pub k: usize,
    /// The shape of both outputs.
    pub out_shape: TensorShape,
}

/// Checks `k` (a host integer scalar) against an input of shape `input`,
/// for indices whose type's largest value is `index_max`.
pub fn top_k_geometry(
    input: &TensorShape,
    k: &Tensor,
    index_max: i64,
) -> Result<TopKGeometry, KernelError> {
    registry_core::kernel_ensure!(
        k.shape().rank() == 0,
        "k must be scalar, got shape {}",
        k.shape()
    );
    let k = int_values(k)?.first().copied().unwrap_or(0);
    registry_core::kernel_ensure!(k >= 0, "Need k >= 0, got {k}");
    let dims = input.dims();
    registry_core::kernel_ensure!(!dims.is_empty(), "input must be >= 1-D, got shape {input}");
    let cols = dims[dims.len() - 1];
    registry_core::kernel_ensure!(
        dim_i64(cols) >= k,
        "input must have at least k columns. Had {cols}, needed {k}"
    );
    let rows: usize = dims[..dims.len() - 1].iter().product();
    registry_core::kernel_ensure!(
        dim_i64(rows) <= index_max,
        "First dimension of flattened input must be <= {index_max}, got {rows}"
    );
    registry_core::kernel_ensure!(
        dim_i64(cols) <= index_max,
        "Second dimension of flattened input must be <= {index_max}, got {cols}"
    );
    // k <= cols, a usize.
    let k = usize::try_from(k).unwrap_or(cols);
    let mut out = dims.to_vec();
    out[dims.len() - 1] = k;
    Ok(TopKGeometry {
        rows,
        cols,
        k,
        out_shape: shape_of(&out)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(dims: &[usize], k: Tensor, max: i64) -> String {
        top_k_geometry(&TensorShape::new(dims).unwrap(), &k, max)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn checks_as_tf_does() {
        let max = i64::from(i32::MAX);
        // Messages from TF 2.21.
        assert_eq!(
            err(&[2, 8], Tensor::scalar(9i32), max),
            "input must have at least k columns. Had 8, needed 9"
        );
        assert_eq!(
            err(&[2, 8], Tensor::scalar(-1i32), max),
            "Need k >= 0, got -1"
        );
        let v = Tensor::from_vec([1], vec![1i32]).unwrap();
        assert_eq!(err(&[2, 8], v, max), "k must be scalar, got shape [1]");
        assert_eq!(
            err(&[], Tensor::scalar(0i32), max),
            "input must be >= 1-D, got shape []"
        );
        assert_eq!(
            err(&[40000, 2], Tensor::scalar(1i64), 32767),
            "First dimension of flattened input must be <= 32767, got 40000"
        );
        assert_eq!(
            err(&[2, 32768], Tensor::scalar(1i16), 32767),
            "Second dimension of flattened input must be <= 32767, got 32768"
        );
        let g = top_k_geometry(
            &TensorShape::new([0, 5]).unwrap(),
            &Tensor::scalar(2i32),
            max,
        )
        .unwrap();
        assert_eq!((g.rows, g.k, g.out_shape.dims()), (0, 2, &[0, 2][..]));
    }
}
