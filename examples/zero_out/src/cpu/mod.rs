//! CPU kernels of the crate's ops (the `cpu` feature). Nothing here is
//! public: kernels are found through the global kernel registry.

mod weighted_sum;
mod zero_out;
