//! The CPU kernels' tests, one binary: each module was its own test target,
//! and each target linked the whole kernel library (about 90 MB apiece), so
//! the modules share one link instead. `cargo test -p kernels-cpu --test
//! cpu_kernels math_unary::` runs one module.

// Shared by the modules below.
mod common;
mod math_common;
#[cfg(any(feature = "nn", feature = "linalg"))]
#[path = "nn_kernels/support.rs"]
mod nn_support;

#[path = "array_forwarding.rs"]
mod array_forwarding;

#[path = "array_kernels.rs"]
mod array_kernels;

#[path = "array_shape_fill.rs"]
mod array_shape_fill;

#[path = "array_space_pad.rs"]
mod array_space_pad;

#[path = "array_split_gather.rs"]
mod array_split_gather;

#[path = "array_tf_kernels.rs"]
mod array_tf_kernels;

#[path = "array_tf_reference.rs"]
mod array_tf_reference;

#[path = "linalg_matmul.rs"]
mod linalg_matmul;

#[path = "list_kernels.rs"]
mod list_kernels;

#[path = "math_add_n.rs"]
mod math_add_n;

#[path = "math_binary.rs"]
mod math_binary;

#[path = "math_cast.rs"]
mod math_cast;

#[path = "math_compare.rs"]
mod math_compare;

#[path = "math_coverage.rs"]
mod math_coverage;

#[path = "math_graphs.rs"]
mod math_graphs;

#[path = "math_select.rs"]
mod math_select;

#[path = "math_unary.rs"]
mod math_unary;

#[path = "nn_kernels.rs"]
mod nn_kernels;

#[path = "reduce_kernels.rs"]
mod reduce_kernels;

#[path = "registry_smoke.rs"]
mod registry_smoke;
