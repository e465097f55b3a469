//! Op libraries (TensorFlow's `tf.load_op_library`): what a library
//! exports, and how its registrations join the registries.
//!
//! An op library is a crate of `#[op]`s and `#[kernel]`s built as a
//! `cdylib` that calls [`export_op_library!`](crate::export_op_library)
//! once:
//!
//! ```toml
//! [lib]
//! crate-type = ["rlib", "cdylib"]
//! ```
//!
//! ```ignore
//! // src/lib.rs of the crate `zero_out`
//! registry_core::export_op_library!(zero_out);
//! ```
//!
//! A host loads it with `opreg_runtime::library::load_op_library` (or
//! `opreg --load libzero_out.so ...`); its ops join [`OpRegistry::global`]
//! and its kernels [`KernelRegistry::global`], exactly as if the crate had
//! been linked in. This module holds the two sides both builds must agree
//! on: the C-layout [`LibraryHeader`] with its build [`FINGERPRINT`]
//! (checked by [`LibraryHeader::contents_if_compatible`] before any Rust
//! type of the library is used), and [`register_library`], which checks a
//! library's registrations against the registries and adds them.
//!
//! **Compatibility.** Rust has no stable ABI: a library's registrations are
//! Rust values (OpDefs, kernel factories, tensors) that the host uses
//! directly. A library is therefore accepted only when it was built with the
//! same registry-core version, compiler, target, panic strategy, debug
//! assertions and registry-core features as the host (its [`FINGERPRINT`]).
//! Both sides must also use the same global allocator (Rust's default, the
//! system allocator), as tensors allocated by a library's kernel are freed
//! by the host.
//!
//! **Duplicates.** An op the host already has, a kernel identical to a
//! registered one (op, device, constraints, label and priority), or a
//! kernel for an unknown op refuses the whole library (every
//! [`LibraryProblem`] is listed); nothing of it is registered.

mod abi;
mod error;
pub mod slots;

use opreg_proto::OpDef;
use prost::Message;

pub use abi::{FINGERPRINT, HEADER_VERSION, HeaderError, MAGIC};
#[doc(hidden)]
pub use abi::{LibraryContents, LibraryHeader, SYMBOL_PREFIX, is_crate_of};
pub use error::LibraryProblem;

use crate::kernel::KernelRegistry;
use crate::op::OpRegistration;
use crate::registry::{InvalidOp, LibraryOrigin, OpOrigin, OpRegistry, RegistryError};

/// Exports this crate's ops and kernels as an op library, for
/// `opreg_runtime::library::load_op_library`. Call it once, at the crate root, with the crate's
/// own name (a compile error otherwise), in a crate whose `crate-type`
/// includes `"cdylib"`:
///
/// ```ignore
/// registry_core::export_op_library!(zero_out);
/// ```
///
/// It defines one exported symbol, `opreg_op_library__<crate>`, and
/// nothing else; the crate can still be used as an ordinary dependency.
#[macro_export]
macro_rules! export_op_library {
    ($krate:ident) => {
        const _: () = {
            assert!(
                $crate::library::is_crate_of(::core::stringify!($krate), ::core::module_path!()),
                "export_op_library!(...) must name the crate it is called in"
            );

            #[doc(hidden)]
            #[unsafe(export_name = ::core::concat!("opreg_op_library__", ::core::stringify!($krate)))]
            pub static OPREG_OP_LIBRARY: $crate::library::LibraryHeader =
                $crate::library::LibraryHeader::new(contents);

            unsafe extern "C" fn contents() -> *const ::core::ffi::c_void {
                static CONTENTS: ::std::sync::OnceLock<$crate::library::LibraryContents> =
                    ::std::sync::OnceLock::new();
                let contents = CONTENTS.get_or_init(|| {
                    $crate::library::LibraryContents::collect(::core::stringify!($krate))
                });
                ::core::ptr::from_ref(contents).cast()
            }
        };
    };
}

/// What [`register_library`] added: the library's ops (sorted) and its
/// number of kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredLibrary {
    /// The ops it registered, sorted.
    pub ops: Vec<String>,
    /// The number of kernels it registered.
    pub kernels: usize,
}

/// Checks every registration of a loaded library (`contents`, from the file
/// `library`) against `ops` and `kernels` and, when none clashes or is
/// invalid, registers them all; otherwise registers nothing and returns
/// every problem.
pub fn register_library(
    contents: &'static LibraryContents,
    library: &'static str,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Result<RegisteredLibrary, Vec<LibraryProblem>> {
    let decoded = check_contents(contents, library, ops, kernels)?;
    let mut names = Vec::with_capacity(decoded.len());
    let mut problems = Vec::new();
    for (op_def, registration) in decoded {
        names.push(op_def.name.clone());
        let origin = library_origin(library, registration);
        if let Err(e) = ops.register_validated(op_def, registration.shape_fn, origin) {
            problems.push(LibraryProblem::InvalidOp(Box::new(e)));
        }
    }
    if !problems.is_empty() {
        // Another thread registered one of the ops since the checks.
        return Err(problems);
    }
    for &registration in &contents.kernels {
        kernels.register_static(registration);
    }
    names.sort();
    Ok(RegisteredLibrary {
        ops: names,
        kernels: contents.kernels.len(),
    })
}

/// Decodes the library's OpDefs and checks every registration against the
/// registries, collecting every problem.
fn check_contents(
    contents: &'static LibraryContents,
    library: &'static str,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Result<Vec<(OpDef, &'static OpRegistration)>, Vec<LibraryProblem>> {
    let mut problems = Vec::new();
    let mut decoded: Vec<(OpDef, &'static OpRegistration)> = Vec::new();
    for &registration in &contents.ops {
        let origin = library_origin(library, registration);
        let op_def = match OpDef::decode(registration.op_def) {
            Ok(op_def) => op_def,
            Err(e) => {
                problems.push(LibraryProblem::InvalidOp(Box::new(
                    RegistryError::Invalid {
                        name: registration.name.to_owned(),
                        origin,
                        reason: InvalidOp::Decode(e),
                    },
                )));
                continue;
            }
        };
        let first = ops
            .look_up(&op_def.name)
            .ok()
            .map(|existing| existing.origin())
            .or_else(|| {
                decoded
                    .iter()
                    .find(|(d, _)| d.name == op_def.name)
                    .map(|(_, r)| library_origin(library, r))
            });
        match first {
            Some(first) => problems.push(LibraryProblem::DuplicateOp {
                name: op_def.name.clone(),
                first,
                again: origin,
            }),
            None => decoded.push((op_def, registration)),
        }
    }
    for (index, &registration) in contents.kernels.iter().enumerate() {
        let known_op = ops.look_up(registration.op).is_ok()
            || contents.ops.iter().any(|r| r.name == registration.op);
        if !known_op {
            problems.push(LibraryProblem::KernelWithoutOp {
                op: registration.op.to_owned(),
                kernel: registration.kernel_name.to_owned(),
                location: registration.location.to_string(),
            });
        }
        let earlier = contents.kernels[..index]
            .iter()
            .copied()
            .find(|other| registration.same_key(other));
        if let Some(existing) = kernels.duplicate_of(registration).or(earlier) {
            problems.push(LibraryProblem::DuplicateKernel {
                op: registration.op.to_owned(),
                device: registration.device.to_owned(),
                kernel: registration.kernel_name.to_owned(),
                location: registration.location.to_string(),
                existing: format!("{} ({})", existing.kernel_name, existing.location),
            });
        }
    }
    if problems.is_empty() {
        Ok(decoded)
    } else {
        Err(problems)
    }
}

/// The origin of a library's op (leaked: origins are `'static`, and a
/// library's ops live as long as the process).
fn library_origin(library: &'static str, registration: &OpRegistration) -> OpOrigin {
    OpOrigin::Library(Box::leak(Box::new(LibraryOrigin {
        library,
        location: registration.location,
    })))
}
