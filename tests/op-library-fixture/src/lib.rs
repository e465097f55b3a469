//! Headers in opreg's op-library layout (version 1: magic, version,
//! fingerprint pointer and length, contents function) that a host must
//! refuse. The test copies this library to `libmismatch.so`,
//! `libbadmagic.so` and `libnewheader.so`; each name selects one symbol.

use std::ffi::c_void;

#[repr(C)]
pub struct Header {
    magic: [u8; 8],
    header_version: u32,
    fingerprint: *const u8,
    fingerprint_len: usize,
    contents: unsafe extern "C" fn() -> *const c_void,
}

// SAFETY: immutable, and every pointer points at 'static data.
unsafe impl Sync for Header {}

/// Must never be called: a host calls it only after the fingerprint check,
/// which every header here fails. Aborting makes a wrong call impossible to miss.
unsafe extern "C" fn contents() -> *const c_void {
    std::process::abort()
}

/// A library built against another registry-core and compiler.
const OLD_BUILD: &str = "registry-core 0.0.9; rustc 1.80.0 (051478957 2024-07-21); \
    target x86_64-unknown-linux-gnu; panic=unwind; debug_assertions=true; \
    features [default,standard-ops]";

const fn header(magic: [u8; 8], header_version: u32) -> Header {
    Header {
        magic,
        header_version,
        fingerprint: OLD_BUILD.as_ptr(),
        fingerprint_len: OLD_BUILD.len(),
        contents,
    }
}

#[unsafe(export_name = "opreg_op_library__mismatch")]
pub static MISMATCH: Header = header(*b"OPREGLIB", 1);

#[unsafe(export_name = "opreg_op_library__badmagic")]
pub static BAD_MAGIC: Header = header(*b"NOTOPREG", 1);

#[unsafe(export_name = "opreg_op_library__newheader")]
pub static NEW_HEADER: Header = header(*b"OPREGLIB", 2);
