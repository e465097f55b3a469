//! JAX as a host of opreg op libraries, through XLA's FFI.
//!
//! An op library (a crate of `#[op]`s and `#[kernel]`s built as a
//! `cdylib`) that calls [`export_jax_library!`] can be loaded by the
//! `opreg_jax` Python package (`python/` in the repository):
//!
//! ```python
//! import opreg_jax
//! lib = opreg_jax.load("target/release/libzero_out.so")
//! y = lib.zero_out(jnp.array([[1, 2], [3, 4]], jnp.int32))      # eager
//! y = jax.jit(lambda x: lib.zero_out(x) * 2)(x)                  # traced
//! ```
//!
//! - **One XLA FFI handler per op** with a CPU kernel. It reads the call's
//!   attributes by the op's attr types, binds the node (the attrs its
//!   input dtypes imply are inferred, defaults added, every value checked),
//!   dispatches on the buffers' dtypes to the registered `#[kernel]` (built
//!   once per distinct node, then cached), and runs it on XLA's buffers:
//!   inputs read in place, outputs allocated in XLA's result buffers (see
//!   `handler` for when one is copied instead).
//! - **Errors** (bad dtypes, bad attrs, kernel errors, panics) are XLA FFI
//!   errors made with XLA's own `XLA_FFI_Error_Create`, with the status
//!   code TensorFlow's kernels would use; JAX raises them as
//!   `jax.errors.JaxRuntimeError`.
//! - **Shapes before the call.** JAX needs each result's shape and dtype
//!   when it traces: the package asks the library, which runs the op's own
//!   shape function (the C entry point `opreg_jax_infer`).
//! - **Versions.** The handlers are written against XLA FFI API
//!   [`FFI_API_VERSION`]; they answer XLA's metadata probe with it, and
//!   refuse a call from an XLA of another major version. The package
//!   refuses a jaxlib whose FFI API is older or of another major version
//!   before it registers anything.
//!
//! Nothing of JAX or XLA is needed to build the library: the C API's types
//! are declared here (`ffi`), and XLA's functions are reached through the
//! API table of each call.
//!
//! ```ignore
//! // src/lib.rs of the crate `zero_out`, `crate-type = ["rlib", "cdylib"]`:
//! opreg_jax::export_jax_library!(zero_out);
//! ```

mod attrs;
mod bind;
mod dtypes;
mod entry;
pub mod error;
pub mod ffi;
mod handler;
mod library;
#[cfg(test)]
mod tests;

pub use library::{ABI_VERSION, function_name};

/// The XLA FFI API version (major, minor) the handlers are written against.
pub const FFI_API_VERSION: (i32, i32) = (ffi::API_MAJOR, ffi::API_MINOR);

/// Offers this crate's ops (those with CPU kernels) to JAX: the library's
/// C entry points describe them to the `opreg_jax` Python package, which
/// registers one XLA FFI handler per op. Call it once, at the crate root,
/// with the crate's own name, in a crate built as a `cdylib`.
///
/// ```ignore
/// opreg_jax::export_jax_library!(zero_out);
/// ```
#[macro_export]
macro_rules! export_jax_library {
    ($krate:ident) => {
        const _: () = {
            assert!(
                $crate::__private::is_crate_of(::core::stringify!($krate), ::core::module_path!()),
                "export_jax_library!(...) must name the crate it is called in"
            );
            $crate::__private::inventory::submit! {
                $crate::__private::JaxExport { crate_name: ::core::stringify!($krate) }
            }
            // Links the entry points (kept by the linker only when
            // referenced).
            #[used]
            static KEEP_ENTRY_POINTS: $crate::__private::EntryPoints =
                $crate::__private::ENTRY_POINTS;
        };
    };
}

#[doc(hidden)]
pub mod __private {
    use std::ffi::c_char;

    pub use crate::library::JaxExport;
    pub use inventory;
    pub use registry_core::library::is_crate_of;

    /// The library's C entry points, referenced so that they are linked.
    pub struct EntryPoints {
        /// `opreg_jax_describe`.
        pub describe: extern "C" fn() -> *mut c_char,
        /// `opreg_jax_infer`.
        pub infer: unsafe extern "C" fn(usize, *const c_char) -> *mut c_char,
        /// `opreg_jax_stats`.
        pub stats: extern "C" fn() -> *mut c_char,
        /// `opreg_jax_free`.
        pub free: unsafe extern "C" fn(*mut c_char),
    }

    /// The entry points.
    pub const ENTRY_POINTS: EntryPoints = EntryPoints {
        describe: crate::entry::opreg_jax_describe,
        infer: crate::entry::opreg_jax_infer,
        stats: crate::entry::opreg_jax_stats,
        free: crate::entry::opreg_jax_free,
    };
}
