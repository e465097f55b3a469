//! What an op library exports: a C-layout [`LibraryHeader`] that can be
//! read safely from any build, and the Rust-side [`LibraryContents`] that is
//! read only once the header says the library was built like its host.

use std::ffi::c_void;

use crate::kernel::KernelRegistration;
use crate::op::OpRegistration;

/// The first bytes of every [`LibraryHeader`].
pub const MAGIC: [u8; 8] = *b"OPREGLIB";

/// The layout version of [`LibraryHeader`] this build reads and writes.
pub const HEADER_VERSION: u32 = 1;

/// What a library must share with its host: this crate's version, the
/// compiler, target, panic strategy, debug assertions and features. Rust has
/// no stable ABI, so the registrations' Rust types are only the same types
/// when all of these are equal.
pub const FINGERPRINT: &str = concat!(
    "registry-core ",
    env!("CARGO_PKG_VERSION"),
    "; ",
    env!("OPREG_BUILD_FINGERPRINT")
);

/// The prefix of the exported symbol; the crate name follows
/// (`opreg_op_library__zero_out`). One symbol per crate, so that several op
/// libraries can also be linked into one binary as ordinary crates.
pub const SYMBOL_PREFIX: &str = "opreg_op_library__";

/// The C-layout header an op library exports (see
/// [`export_op_library!`](crate::export_op_library)). Its layout is fixed
/// by [`HEADER_VERSION`], so a host can read it from a library built by any
/// compiler, and refuse the library before touching a Rust type.
#[repr(C)]
pub struct LibraryHeader {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// [`HEADER_VERSION`].
    pub header_version: u32,
    /// The library's [`FINGERPRINT`], UTF-8, not NUL-terminated.
    pub fingerprint: *const u8,
    /// Its length in bytes.
    pub fingerprint_len: usize,
    /// Returns the library's `&'static LibraryContents`. Call it only when
    /// the fingerprint equals the host's.
    pub contents: unsafe extern "C" fn() -> *const c_void,
}

// SAFETY: the header is immutable and its pointers point at `'static` data
// (a string literal and a function), so sharing it between threads is safe.
unsafe impl Sync for LibraryHeader {}

impl LibraryHeader {
    /// The header of this build, with `contents` as its contents function.
    pub const fn new(contents: unsafe extern "C" fn() -> *const c_void) -> Self {
        Self {
            magic: MAGIC,
            header_version: HEADER_VERSION,
            fingerprint: FINGERPRINT.as_ptr(),
            fingerprint_len: FINGERPRINT.len(),
            contents,
        }
    }
}

/// The registrations an op library contributes: those of its own crate,
/// not those of the framework crates it links (their standard ops and
/// kernels are the host's already).
#[derive(Debug)]
pub struct LibraryContents {
    /// The library crate's name.
    pub crate_name: &'static str,
    /// Its `#[op]` registrations.
    pub ops: Vec<&'static OpRegistration>,
    /// Its `#[kernel]` registrations.
    pub kernels: Vec<&'static KernelRegistration>,
}

impl LibraryContents {
    /// Collects the registrations declared in `crate_name` from this
    /// binary's inventory.
    pub fn collect(crate_name: &'static str) -> Self {
        let own = |module_path: &str| module_path.split("::").next() == Some(crate_name);
        Self {
            crate_name,
            ops: inventory::iter::<OpRegistration>
                .into_iter()
                .filter(|r| own(r.location.module_path))
                .collect(),
            kernels: inventory::iter::<KernelRegistration>
                .into_iter()
                .filter(|r| own(r.location.module_path))
                .collect(),
        }
    }
}

/// Why a [`LibraryHeader`] was refused before any of the library's Rust
/// code was used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Not a header this build can read (another magic, layout version, or
    /// no fingerprint).
    #[error("unreadable header ({0})")]
    Unreadable(String),
    /// Built by another compiler, registry-core version or settings.
    #[error("incompatible build: library {library}, host {host}")]
    Incompatible {
        /// The library's build fingerprint.
        library: String,
        /// The host's ([`FINGERPRINT`]).
        host: String,
    },
}

impl LibraryHeader {
    /// Checks the header's C-layout fields (magic, layout version, build
    /// fingerprint) and, when the library was built like this host, returns
    /// its contents.
    ///
    /// # Safety
    /// `self` must be the header an op library exports, read while the
    /// library stays loaded (for ever: libraries are never unloaded), so
    /// that its pointers are valid.
    pub unsafe fn contents_if_compatible(&self) -> Result<&'static LibraryContents, HeaderError> {
        if self.magic != MAGIC {
            return Err(HeaderError::Unreadable(format!("magic {:?}", self.magic)));
        }
        if self.header_version != HEADER_VERSION {
            return Err(HeaderError::Unreadable(format!(
                "header version {}, this build reads {HEADER_VERSION}",
                self.header_version
            )));
        }
        if self.fingerprint.is_null() || self.fingerprint_len > 4096 {
            return Err(HeaderError::Unreadable("no build fingerprint".into()));
        }
        // SAFETY: a version-1 header points at `fingerprint_len` bytes of a
        // string literal in the (still loaded) library; the length is bounded.
        let bytes = unsafe { std::slice::from_raw_parts(self.fingerprint, self.fingerprint_len) };
        let library = String::from_utf8_lossy(bytes);
        if library != FINGERPRINT {
            return Err(HeaderError::Incompatible {
                library: library.into_owned(),
                host: FINGERPRINT.to_owned(),
            });
        }
        // SAFETY: the fingerprint matched: the library was built from the
        // same registry-core with the same compiler and settings, so its
        // `contents` returns a `&'static LibraryContents` of our own layout,
        // valid while the library is loaded (the caller's promise).
        Ok(unsafe { &*(self.contents)().cast::<LibraryContents>() })
    }
}

/// True when `module_path`'s first segment is `crate_name` (a `const`
/// check of [`export_op_library!`](crate::export_op_library)'s argument).
pub const fn is_crate_of(crate_name: &str, module_path: &str) -> bool {
    let (name, path) = (crate_name.as_bytes(), module_path.as_bytes());
    if path.len() < name.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if name[i] != path[i] {
            return false;
        }
        i += 1;
    }
    path.len() == name.len() || path[name.len()] == b':'
}
