//! An example crate of custom ops, written the way a user of opreg writes
//! one: it depends on `registry-core` only, and uses nothing but its public
//! API.
//!
//! - [`ZeroOut`]: TensorFlow's custom-op tutorial op (keeps the first
//!   element of an `int32` tensor and zeros the others).
//! - [`WeightedSum`]: `N` tensors of one shape summed with one weight each,
//!   for `float`, `double` and `int32`, with a defaulted attr `normalize`.
//!
//! Each op has a shape function ([`shapes`]) and, with the `cpu` feature
//! (on by default), a CPU kernel; with the `cuda` feature, GPU kernels too
//! (`gpu`, on kernels-cuda's device). A binary that uses the ops names this
//! crate once so that the linker keeps its registrations:
//!
//! ```
//! registry_core::link_ops!(zero_out);
//!
//! let op = registry_core::OpRegistry::global().look_up("ZeroOut").unwrap();
//! assert_eq!(op.op_def().input_arg[0].name, "to_zero");
//! ```
//!
//! Built as a `cdylib`, the crate is also an op library that a process
//! loads at run time (`opreg --load target/debug/libzero_out.so run ...`,
//! or `opreg_runtime::library::load_op_library`).
//!
//! `docs/guide.md`, the step-by-step guide for authors of ops, is compiled
//! and run as this crate's doctests.

#[cfg(feature = "cpu")]
mod cpu;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod ops;
pub mod shapes;
#[cfg(any(feature = "cpu", feature = "cuda"))]
mod weighted;

pub use ops::{WeightedSum, ZeroOut};

// Built as a `cdylib` (`target/<profile>/libzero_out.so`), this crate is an
// op library that a process loads at run time to register these ops and
// kernels: `opreg_runtime::library::load_op_library(path)`, or
// `opreg --load libzero_out.so ...`.
registry_core::export_op_library!(zero_out);
// The same library loads into TensorFlow (`tf.load_op_library(path)`): its
// ops and CPU kernels register with TensorFlow through its C API.
opreg_tensorflow::export_tensorflow_library!(zero_out);
// And into JAX (`opreg_jax.load(path)` from the `python/` package): its
// ops with CPU kernels become XLA FFI targets, callable eagerly and under
// `jax.jit`.
opreg_jax::export_jax_library!(zero_out);

/// The guide (`docs/guide.md`): every Rust block in it is compiled (and the
/// runnable ones run) as a doctest of this crate, so it cannot go stale.
///
/// rustdoc adds `extern crate zero_out;`, which links this crate's
/// registrations, to each doctest whose code contains the text `zero_out`
/// (`#![doc(test(no_crate_inject))]` did not prevent it when tried with rustc
/// 1.95).
/// The guide's blocks that declare their own `ZeroOut` therefore avoid that
/// text, which `tests/guide.rs` checks.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
pub struct GuideDoctests;
