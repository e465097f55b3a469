//! Launch configuration for element-parallel kernels.

use cudarc::driver::LaunchConfig;

/// Threads per block of element-parallel kernels.
pub const BLOCK: u32 = 256;

/// Blocks beyond this many are not launched: kernels loop over elements
/// with `GRID_STRIDE`, and a grid of this size already fills any current
/// GPU many times over.
const MAX_BLOCKS: u64 = 1 << 20;

/// A one-dimensional launch covering `n` elements (one per thread, grid
/// strided past `MAX_BLOCKS` (2^20) blocks); at least one block, so a kernel
/// can be launched for empty tensors too (though callers skip those).
///
/// ```
/// use opreg_cuda::{grid_for, BLOCK};
/// let cfg = grid_for(1000);
/// assert_eq!(cfg.block_dim, (BLOCK, 1, 1));
/// assert_eq!(cfg.grid_dim.0, 4);
/// assert_eq!(grid_for(1 << 40).grid_dim.0, 1 << 20);
/// ```
pub fn grid_for(n: usize) -> LaunchConfig {
    let blocks = (n as u64).div_ceil(BLOCK as u64).clamp(1, MAX_BLOCKS);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The most dimensions a [`ShapeArg`] carries (TF's GPU kernels have the
/// same kind of limit; larger ranks are collapsed or refused by callers).
pub const MAX_RANK: usize = 8;

/// Up to [`MAX_RANK`] dimension sizes or strides passed to a kernel by
/// value: `struct shape_arg { index_t rank; index_t d[8]; }` in the
/// [`PRELUDE`](super::PRELUDE).
///
/// ```
/// use opreg_cuda::ShapeArg;
/// let s = ShapeArg::new(&[2, 3, 4]).unwrap();
/// assert_eq!(s.rank, 3);
/// assert_eq!(&s.d[..3], &[2, 3, 4]);
/// assert!(ShapeArg::new(&[1; 9]).is_none());
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeArg {
    /// The number of entries used.
    pub rank: i64,
    /// The entries (unused ones are 0).
    pub d: [i64; MAX_RANK],
}

impl ShapeArg {
    /// The entries of `values`, or `None` when there are more than
    /// [`MAX_RANK`].
    pub fn new(values: &[i64]) -> Option<Self> {
        if values.len() > MAX_RANK {
            return None;
        }
        let mut d = [0; MAX_RANK];
        d[..values.len()].copy_from_slice(values);
        Some(Self {
            rank: values.len() as i64,
            d,
        })
    }

    /// Like [`new`](Self::new), from `usize` sizes.
    pub fn from_dims(dims: &[usize]) -> Option<Self> {
        let values: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        Self::new(&values)
    }
}

// SAFETY: `ShapeArg` is `repr(C)` plain data (an `i64` and an array of
// `i64`), laid out exactly as the prelude's `struct shape_arg`, so the
// kernel reads the bytes cudarc copies into the launch's parameter buffer.
unsafe impl cudarc::driver::DeviceRepr for ShapeArg {}
