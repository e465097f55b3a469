//! opreg op libraries inside other frameworks, in one binary (each loads
//! the example library into this process too, for opreg's own results):
//!
//! - `tensorflow_host`: `tf.load_op_library` in TensorFlow 2.21;
//! - `jax_host`: the `opreg_jax` Python package and XLA's FFI in JAX.
//!
//! `cargo test -p opreg-tests --test hosts jax_host::` runs one of them.

#[path = "host_calls.rs"]
mod host_calls;

#[path = "jax_host.rs"]
mod jax_host;

#[path = "tensorflow_host.rs"]
mod tensorflow_host;
