//! Launch sizes of the element-wise kernels.

use cudarc::driver::LaunchConfig;
use opreg_cuda::grid_for;

/// The launch for `n` elements processed `vector` at a time per thread on
/// the flat paths (the kernels grid-stride, so any grid is correct).
pub(crate) fn flat_launch(n: usize, vector: usize) -> LaunchConfig {
    grid_for(n.div_ceil(vector.max(1)))
}
