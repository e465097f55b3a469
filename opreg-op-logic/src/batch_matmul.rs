//! `BatchMatMulV2`/`V3`'s checks (TF's `BaseBatchMatMulOp` and `MatMulBCast`,
//! with their messages) and geometry: the matrices' sizes after `adj_x` and
//! `adj_y`, the broadcast batch shape and, per output matrix, which matrix
//! of each input it multiplies. Shared by the CPU and GPU kernels and by
//! `Einsum`'s contractions.
//!
//! ```
//! use opreg_op_logic::batch_matmul::BatchMatMulGeometry;
//! use registry_core::tensor::TensorShape;
//!
//! let x = TensorShape::new([2, 1, 3, 4]).unwrap();
//! let y = TensorShape::new([5, 4, 6]).unwrap();
//! let g = BatchMatMulGeometry::new(&x, &y, false, false).unwrap();
//! assert_eq!(g.out_shape.dims(), &[2, 5, 3, 6]);
//! assert_eq!((g.m, g.k, g.n, g.batch), (3, 4, 6, 10));
//! // Output matrix 7 = batch index (1, 2): x's matrix 1, y's matrix 2.
//! assert_eq!((g.x_matrix(7), g.y_matrix(7)), (1, 2));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;
use smallvec::SmallVec;

use crate::index::Dims;

/// A checked batched matrix product `out[b] = op(x[bx]) · op(y[by])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchMatMulGeometry {
    /// Rows of each output matrix (of `x` after `adj_x`).
    pub m: usize,
    /// The contracted size (columns of `x`, rows of `y`, after adjoints).
    pub k: usize,
    /// Columns of each output matrix (of `y` after `adj_y`).
    pub n: usize,
    /// The number of output matrices (the broadcast batch shape's size).
    pub batch: usize,
    /// The output's shape: the broadcast batch shape, then `[m, n]`.
    pub out_shape: TensorShape,
    /// The broadcast batch dimensions.
    batch_dims: Dims,
    /// Each input's matrix stride per batch dimension (0 where broadcast).
    x_strides: Dims,
    y_strides: Dims,
    /// Whether an input has a single matrix (every output uses it).
    x_single: bool,
    y_single: bool,
}

impl BatchMatMulGeometry {
    /// Checks `x` and `y` (ranks >= 2, batch dimensions that broadcast,
    /// inner sizes that agree after the adjoints), with TF's messages.
    pub fn new(
        x: &TensorShape,
        y: &TensorShape,
        adj_x: bool,
        adj_y: bool,
    ) -> Result<Self, KernelError> {
        registry_core::kernel_ensure!(x.rank() >= 2, "In[0] ndims must be >= 2: {}", x.rank());
        registry_core::kernel_ensure!(y.rank() >= 2, "In[1] ndims must be >= 2: {}", y.rank());
        let (xd, yd) = (x.dims(), y.dims());
        let (xb, yb) = (&xd[..xd.len() - 2], &yd[..yd.len() - 2]);
        let rank = xb.len().max(yb.len());
        let at = |b: &[usize], d: usize| {
            let missing = rank - b.len();
            if d < missing { 1 } else { b[d - missing] }
        };
        let mut batch_dims: Dims = SmallVec::with_capacity(rank);
        for d in 0..rank {
            let (a, b) = (at(xb, d), at(yb, d));
            let out = match (a, b) {
                (a, b) if a == b => a,
                (1, b) => b,
                (a, 1) => a,
                _ => {
                    return Err(KernelError::invalid_argument(format!(
                        "In[0] and In[1] must have compatible batch dimensions: {x} vs. {y}"
                    )));
                }
            };
            batch_dims.push(out);
        }
        let (mut m, mut kx) = (xd[xd.len() - 2], xd[xd.len() - 1]);
        if adj_x {
            std::mem::swap(&mut m, &mut kx);
        }
        let (mut ky, mut n) = (yd[yd.len() - 2], yd[yd.len() - 1]);
        if adj_y {
            std::mem::swap(&mut ky, &mut n);
        }
        registry_core::kernel_ensure!(kx == ky, "Matrix size-incompatible: In[0]: {x}, In[1]: {y}");
        let strides = |b: &[usize]| -> Dims {
            let mut s: Dims = SmallVec::from_elem(0, rank);
            let mut acc = 1usize;
            for d in (0..rank).rev() {
                let size = at(b, d);
                if size != 1 {
                    s[d] = acc;
                }
                acc = acc.saturating_mul(size);
            }
            s
        };
        let mut out_dims = batch_dims.clone();
        out_dims.extend([m, n]);
        let out_shape = TensorShape::new(&out_dims)?;
        let batch = batch_dims.iter().product();
        Ok(Self {
            m,
            k: kx,
            n,
            batch,
            out_shape,
            x_strides: strides(xb),
            y_strides: strides(yb),
            x_single: xb.iter().product::<usize>() == 1,
            y_single: yb.iter().product::<usize>() == 1,
            batch_dims,
        })
    }

    fn matrix(&self, b: usize, strides: &[usize], single: bool) -> usize {
        if single {
            return 0;
        }
        let mut rest = b;
        let mut index = 0;
        for d in (0..self.batch_dims.len()).rev() {
            let size = self.batch_dims[d];
            index += (rest % size) * strides[d];
            rest /= size;
        }
        index
    }

    /// Which matrix of `x` output matrix `b` multiplies.
    pub fn x_matrix(&self, b: usize) -> usize {
        self.matrix(b, &self.x_strides, self.x_single)
    }

    /// Which matrix of `y` output matrix `b` multiplies.
    pub fn y_matrix(&self, b: usize) -> usize {
        self.matrix(b, &self.y_strides, self.y_single)
    }

    /// Whether every output matrix multiplies `x`'s and `y`'s matrix of the
    /// same index (no broadcasting but of single matrices): a strided
    /// batched product.
    pub fn is_strided(&self) -> bool {
        (0..self.batch).all(|b| {
            (self.x_single || self.x_matrix(b) == b) && (self.y_single || self.y_matrix(b) == b)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn adjoints_and_broadcasting() {
        let g = BatchMatMulGeometry::new(&shape(&[4, 3]), &shape(&[2, 5, 4]), true, true).unwrap();
        assert_eq!(g.out_shape.dims(), &[2, 3, 5]);
        assert_eq!((g.x_matrix(1), g.y_matrix(1)), (0, 1));
        assert!(g.is_strided());
        let g =
            BatchMatMulGeometry::new(&shape(&[3, 1, 2, 2]), &shape(&[1, 4, 2, 2]), false, false)
                .unwrap();
        assert_eq!(g.batch, 12);
        assert_eq!((g.x_matrix(5), g.y_matrix(5)), (1, 1));
        assert!(!g.is_strided());
    }

    #[test]
    fn errors_as_tensorflow() {
        let e = BatchMatMulGeometry::new(&shape(&[3]), &shape(&[3, 3]), false, false).unwrap_err();
        assert!(e.to_string().contains("In[0] ndims must be >= 2: 1"), "{e}");
        let e = BatchMatMulGeometry::new(&shape(&[2, 3, 4]), &shape(&[3, 4, 5]), false, false)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("compatible batch dimensions: [2,3,4] vs. [3,4,5]"),
            "{e}"
        );
        let e =
            BatchMatMulGeometry::new(&shape(&[3, 4]), &shape(&[3, 5]), false, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("Matrix size-incompatible: In[0]: [3,4], In[1]: [3,5]"),
            "{e}"
        );
    }
}
