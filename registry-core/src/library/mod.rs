//! Op libraries loaded at run time (TensorFlow's `tf.load_op_library`).
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
//! A host loads it with [`load_op_library`] (or `opreg --load
//! libzero_out.so ...`); its ops join [`OpRegistry::global`] and its kernels
//! [`KernelRegistry::global`], exactly as if the crate had been linked in.
//!
//! **Compatibility.** Rust has no stable ABI: a library's registrations are
//! Rust values (OpDefs, kernel factories, tensors) that the host uses
//! directly. A library is therefore accepted only when it was built with the
//! same registry-core version, compiler, target, panic strategy, debug
//! assertions and registry-core features as the host (its [`FINGERPRINT`]).
//! The fingerprint is read from a C-layout header first, so a library from
//! another build is refused with [`LibraryError::Incompatible`] without any
//! of its Rust code being run. Both sides must also use the same global
//! allocator (Rust's default, the system allocator), as tensors allocated
//! by a library's kernel are freed by the host.
//!
//! **Duplicates.** An op the host already has, a kernel identical to a
//! registered one (op, device, constraints, label and priority), or a
//! kernel for an unknown op refuses the whole library
//! ([`LibraryError::Conflicts`], listing every problem); nothing of it is
//! registered. Loading the same file again returns the first load.
//!
//! Libraries are never unloaded, not even refused ones (their initialisers
//! ran when they were opened): their registrations live as long as the
//! process.

mod abi;
mod error;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use opreg_proto::OpDef;
use prost::Message;

pub use abi::{FINGERPRINT, HEADER_VERSION, MAGIC};
#[doc(hidden)]
pub use abi::{LibraryContents, LibraryHeader, SYMBOL_PREFIX, is_crate_of};
pub use error::{LibraryError, LibraryProblem};

use crate::kernel::{KernelRegistration, KernelRegistry};
use crate::op::OpRegistration;
use crate::registry::{InvalidOp, LibraryOrigin, OpOrigin, OpRegistry, RegistryError};

/// Exports this crate's ops and kernels as an op library, for
/// [`load_op_library`]. Call it once, at the crate root, with the crate's
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

/// A loaded op library: its file and what it registered.
#[derive(Debug)]
pub struct LoadedLibrary {
    path: PathBuf,
    crate_name: &'static str,
    ops: Vec<String>,
    kernels: usize,
}

impl LoadedLibrary {
    /// The file it was loaded from (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The library crate's name.
    pub fn crate_name(&self) -> &str {
        self.crate_name
    }

    /// The ops it registered, sorted.
    pub fn ops(&self) -> &[String] {
        &self.ops
    }

    /// The number of kernels it registered.
    pub fn kernel_count(&self) -> usize {
        self.kernels
    }
}

/// Every library loaded so far, in load order.
static LOADED: Mutex<Vec<Arc<LoadedLibrary>>> = Mutex::new(Vec::new());

/// The op libraries loaded into this process, in load order.
pub fn loaded_op_libraries() -> Vec<Arc<LoadedLibrary>> {
    LOADED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Loads the op library at `path` and adds its ops and kernels to the
/// global registries (TF's `load_op_library`). Loading a file again returns
/// the first load. See the [module docs](self) for what is refused.
///
/// ```
/// use registry_core::library::{LibraryError, load_op_library};
/// let err = load_op_library("no/such/libops.so").unwrap_err();
/// assert!(matches!(err, LibraryError::Open { .. }), "{err}");
/// ```
pub fn load_op_library(path: impl AsRef<Path>) -> Result<Arc<LoadedLibrary>, LibraryError> {
    let given = path.as_ref();
    let path = given.canonicalize().map_err(|e| LibraryError::Open {
        path: given.to_path_buf(),
        reason: e.to_string(),
    })?;
    // Held for the whole load: two threads loading one file get one load.
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(done) = loaded.iter().find(|l| l.path == path) {
        return Ok(done.clone());
    }
    let library = load(&path, OpRegistry::global(), KernelRegistry::global())?;
    let library = Arc::new(library);
    loaded.push(library.clone());
    Ok(library)
}

/// The symbol `path`'s crate exports: cargo names a library
/// `lib<crate>.so` (`<crate>.dll` on Windows).
fn symbol_for(path: &Path) -> String {
    let file = path.file_name().and_then(|s| s.to_str()).unwrap_or("");
    let stem = file.split('.').next().unwrap_or(file);
    let name = if cfg!(windows) {
        stem
    } else {
        stem.strip_prefix("lib").unwrap_or(stem)
    };
    format!("{SYMBOL_PREFIX}{}", name.replace('-', "_"))
}

fn load(
    path: &Path,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Result<LoadedLibrary, LibraryError> {
    // SAFETY: loading a shared library runs its initialisers. That is the
    // contract of an op library (as of any plugin): the caller chose to
    // trust the file. Nothing of it is used below before its header checks.
    let library = unsafe { libloading::Library::new(path) }.map_err(|e| LibraryError::Open {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    // Never unloaded, even when refused: its initialisers have run, the
    // registries (and the errors below) point into it, and unloading Rust
    // code that may have registered destructors is not safe.
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    let symbol = symbol_for(path);
    // SAFETY: the symbol, when present, is the `#[repr(C)]` static that
    // `export_op_library!` defines; we only take its address here.
    let header: *const LibraryHeader =
        unsafe { library.get::<*const LibraryHeader>(symbol.as_bytes()) }
            .map(|s| *s)
            .map_err(|_| LibraryError::NotAnOpLibrary {
                path: path.to_path_buf(),
                symbol: symbol.clone(),
            })?;
    // SAFETY: `header` is the address of the exported static; its C layout
    // (magic, version, then the rest) is fixed across opreg builds, and the
    // library stays loaded while we read it.
    let header = unsafe { &*header };
    check_header(path, header)?;
    // SAFETY: the fingerprint matched: the library was built from the same
    // registry-core with the same compiler and settings, so its
    // `contents` returns a `&'static LibraryContents` of our own layout,
    // valid while the library is loaded (for ever: it is never unloaded).
    let contents: &'static LibraryContents =
        unsafe { &*(header.contents)().cast::<LibraryContents>() };
    let origin_path: &'static str = Box::leak(path.display().to_string().into_boxed_str());
    let decoded = check_contents(contents, origin_path, ops, kernels).map_err(|problems| {
        LibraryError::Conflicts {
            path: path.to_path_buf(),
            problems,
        }
    })?;
    let mut names = Vec::with_capacity(decoded.len());
    let mut problems = Vec::new();
    for (op_def, registration) in decoded {
        names.push(op_def.name.clone());
        let origin = library_origin(origin_path, registration);
        if let Err(e) = ops.register_validated(op_def, registration.shape_fn, origin) {
            problems.push(LibraryProblem::InvalidOp(Box::new(e)));
        }
    }
    if !problems.is_empty() {
        // Another thread registered one of the ops since the checks.
        return Err(LibraryError::Conflicts {
            path: path.to_path_buf(),
            problems,
        });
    }
    for &registration in &contents.kernels {
        kernels.register_static(registration);
    }
    names.sort();
    Ok(LoadedLibrary {
        path: path.to_path_buf(),
        crate_name: contents.crate_name,
        ops: names,
        kernels: contents.kernels.len(),
    })
}

fn check_header(path: &Path, header: &LibraryHeader) -> Result<(), LibraryError> {
    let bad = |detail: String| LibraryError::BadHeader {
        path: path.to_path_buf(),
        detail,
    };
    if header.magic != MAGIC {
        return Err(bad(format!("magic {:?}", header.magic)));
    }
    if header.header_version != HEADER_VERSION {
        return Err(bad(format!(
            "header version {}, this build reads {HEADER_VERSION}",
            header.header_version
        )));
    }
    if header.fingerprint.is_null() || header.fingerprint_len > 4096 {
        return Err(bad("no build fingerprint".into()));
    }
    // SAFETY: a version-1 header points at `fingerprint_len` bytes of a
    // string literal in the (still loaded) library; the length is bounded.
    let bytes = unsafe { std::slice::from_raw_parts(header.fingerprint, header.fingerprint_len) };
    let library = String::from_utf8_lossy(bytes);
    if library != FINGERPRINT {
        return Err(LibraryError::Incompatible {
            path: path.to_path_buf(),
            library: library.into_owned(),
            host: FINGERPRINT.to_owned(),
        });
    }
    Ok(())
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
            .find(|other| same_kernel_key(registration, other));
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

/// Two registrations that no lookup could tell apart.
pub(crate) fn same_kernel_key(a: &KernelRegistration, b: &KernelRegistration) -> bool {
    a.op == b.op
        && a.device == b.device
        && a.label == b.label
        && a.priority == b.priority
        && a.constraints == b.constraints
}
