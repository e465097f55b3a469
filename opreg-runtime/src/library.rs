//! Loading op libraries at run time (TensorFlow's `tf.load_op_library`).
//!
//! An op library is a crate of `#[op]`s and `#[kernel]`s built as a
//! `cdylib` that calls `registry_core::export_op_library!(its_crate)` once
//! (see [`registry_core::library`]). [`load_op_library`] opens it, checks
//! its C-layout header (a library from another build is refused with
//! [`LibraryError::Incompatible`] without any of its Rust code being run),
//! and adds its ops and kernels to the global registries, exactly as if the
//! crate had been linked in. An op the host already has, a kernel identical
//! to a registered one or a kernel for an unknown op refuses the whole
//! library ([`LibraryError::Conflicts`], listing every problem); nothing of
//! it is registered. Loading the same file again returns the first load.
//!
//! Libraries are never unloaded, not even refused ones (their initialisers
//! ran when they were opened): their registrations live as long as the
//! process.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use registry_core::library::{
    HeaderError, LibraryHeader, LibraryProblem, SYMBOL_PREFIX, register_library,
};
use registry_core::{KernelRegistry, OpRegistry};

/// Why [`load_op_library`] refused a library. Nothing of a refused library
/// is registered.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// The file could not be opened as a shared library.
    #[error("cannot load op library {}: {reason}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// The library has no opreg header: it was not built with
    /// `registry_core::export_op_library!`.
    #[error(
        "{} is not an opreg op library: it exports no `{symbol}` \
         (an op library calls `registry_core::export_op_library!(its_crate);` \
         and keeps the file name cargo gives it, lib<crate>.so)",
        path.display()
    )]
    NotAnOpLibrary {
        /// The file.
        path: PathBuf,
        /// The symbol looked for.
        symbol: String,
    },
    /// The header is not one this build can read.
    #[error(
        "op library {} has an unreadable header ({detail}); \
         it was built by an incompatible version of opreg",
        path.display()
    )]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The library was built by another compiler, another version of
    /// registry-core, or with other settings: its Rust types cannot be
    /// trusted to match the host's.
    #[error(
        "op library {} was built against an incompatible framework build, \
         so it is not loaded (rebuild it with the host's toolchain and \
         registry-core):\n  library: {library}\n  host:    {host}",
        path.display()
    )]
    Incompatible {
        /// The file.
        path: PathBuf,
        /// The library's build fingerprint.
        library: String,
        /// The host's.
        host: String,
    },
    /// The library's registrations clash with the host's or are invalid.
    #[error(
        "op library {} was not loaded: {} problem(s):\n{}",
        path.display(),
        problems.len(),
        problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n")
    )]
    Conflicts {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        problems: Vec<LibraryProblem>,
    },
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
/// use opreg_runtime::library::{LibraryError, load_op_library};
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
    let library = Arc::new(load(&path, OpRegistry::global(), KernelRegistry::global())?);
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
    // library stays loaded for ever (leaked above), so its pointers stay
    // valid.
    let contents = unsafe { (*header).contents_if_compatible() }.map_err(|e| match e {
        HeaderError::Unreadable(detail) => LibraryError::BadHeader {
            path: path.to_path_buf(),
            detail,
        },
        HeaderError::Incompatible { library, host } => LibraryError::Incompatible {
            path: path.to_path_buf(),
            library,
            host,
        },
    })?;
    let origin_path: &'static str = Box::leak(path.display().to_string().into_boxed_str());
    let registered = register_library(contents, origin_path, ops, kernels).map_err(|problems| {
        LibraryError::Conflicts {
            path: path.to_path_buf(),
            problems,
        }
    })?;
    Ok(LoadedLibrary {
        path: path.to_path_buf(),
        crate_name: contents.crate_name,
        ops: registered.ops,
        kernels: registered.kernels,
    })
}
