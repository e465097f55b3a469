//! TensorFlow as a host of opreg op libraries.
//!
//! An op library (a crate of `#[op]`s and `#[kernel]`s built as a `cdylib`)
//! that calls [`export_tensorflow_library!`] loads into TensorFlow with
//! `tf.load_op_library(path)`:
//!
//! - **Ops** TensorFlow does not have are registered from their spec
//!   strings (`TF_NewOpDefinitionBuilder`), with their flags and
//!   deprecation, while TensorFlow loads the library, so TensorFlow makes
//!   Python wrappers for them. TensorFlow's copy of an op is opreg's OpDef
//!   without its Doc text (the C API cannot set it). An op TensorFlow
//!   already has is not registered again; the library's kernels for it are
//!   added when the definitions agree (and a warning says so when not).
//! - **Shape functions** run in TensorFlow's shape inference through its C
//!   shape API, which gives input shapes and `type` attrs only (see
//!   `shapes` for what else the bridge derives, and what stays unknown).
//! - **CPU kernels** are registered with `TF_NewKernelBuilder` with their
//!   type constraints, host-memory args, priority and label. Each is built
//!   once per node from its NodeDef, reads TensorFlow's input tensors in
//!   place, hands its outputs to TensorFlow without copying, forwards
//!   inputs to outputs when TensorFlow allows, and reports every error
//!   (and panic) as a TensorFlow status of the matching code.
//! - **GPU kernels** are not exported: the C API gives the CUDA stream only
//!   to kernels of pluggable devices, not of TensorFlow's own GPU device.
//!
//! Nothing of TensorFlow is needed to build the library: the C API is
//! resolved from the TensorFlow that loads it (`api`). In a process
//! without TensorFlow (`opreg --load`), nothing happens. A TensorFlow that
//! lacks a function or is older than 2.16 fails the load with a message.
//!
//! ```ignore
//! // src/lib.rs of the crate `zero_out`, `crate-type = ["rlib", "cdylib"]`:
//! registry_core::export_op_library!(zero_out); // for opreg --load
//! opreg_tensorflow::export_tensorflow_library!(zero_out); // for tf.load_op_library
//! ```

pub mod api;
mod kernels;
mod load;
mod shapes;
mod slots;
pub mod status;
mod tensors;

pub use load::{MIN_TF_MINOR, without_docs};

/// Makes this crate's ops and CPU kernels register with TensorFlow when
/// TensorFlow loads the library (`tf.load_op_library`). Call it once, at
/// the crate root, with the crate's own name, in a crate built as a
/// `cdylib`.
///
/// ```ignore
/// opreg_tensorflow::export_tensorflow_library!(zero_out);
/// ```
#[macro_export]
macro_rules! export_tensorflow_library {
    ($krate:ident) => {
        const _: () = {
            assert!(
                $crate::__private::is_crate_of(::core::stringify!($krate), ::core::module_path!()),
                "export_tensorflow_library!(...) must name the crate it is called in"
            );
            $crate::__private::inventory::submit! {
                $crate::__private::TfExport { crate_name: ::core::stringify!($krate) }
            }
            // Links the load-time entry point (kept by the linker only when
            // referenced).
            #[used]
            static KEEP_ON_LOAD: &$crate::__private::OnLoad = &$crate::__private::ON_LOAD;
        };
    };
}

#[doc(hidden)]
pub mod __private {
    pub use crate::load::TfExport;
    pub use inventory;
    pub use registry_core::library::is_crate_of;

    /// The type of [`ON_LOAD`].
    pub type OnLoad = unsafe extern "C" fn();

    /// The load-time entry point, run by the dynamic loader with the
    /// library's other initialisers. It lives in this crate, which is
    /// linked after the library's own crate, so it runs after the
    /// initialisers that collect the library's `#[op]` and `#[kernel]`
    /// registrations.
    #[used]
    #[cfg_attr(
        any(target_os = "linux", target_os = "android", target_os = "freebsd"),
        unsafe(link_section = ".init_array")
    )]
    pub static ON_LOAD: OnLoad = on_load;

    unsafe extern "C" fn on_load() {
        // Nothing may unwind into the dynamic loader.
        let _ = std::panic::catch_unwind(crate::load::load_into_tensorflow);
    }
}
