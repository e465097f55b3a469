//! The part of XLA's FFI C API (`xla/ffi/api/c_api.h`, API 0.3, shipped in
//! jaxlib's include dir) that the handlers use, as `#[repr(C)]` types.
//!
//! Every struct XLA passes starts with its `struct_size`, the size of the
//! fields the caller knows of: a handler reads a field only when that size
//! covers it ([`covers`]).

#![allow(missing_docs)] // the C API's own names and fields, documented in c_api.h

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

/// The FFI API major version these handlers are written against
/// (`XLA_FFI_API_MAJOR`).
pub const API_MAJOR: c_int = 0;
/// The FFI API minor version these handlers are written against
/// (`XLA_FFI_API_MINOR`).
pub const API_MINOR: c_int = 3;

/// `XLA_FFI_Extension_Metadata`.
pub const EXTENSION_METADATA: c_int = 1;
/// `XLA_FFI_ExecutionStage_EXECUTE`.
pub const STAGE_EXECUTE: c_int = 3;
/// `XLA_FFI_ArgType_BUFFER` and `XLA_FFI_RetType_BUFFER`.
pub const BUFFER: c_int = 1;

/// `XLA_FFI_AttrType`.
pub mod attr_type {
    use std::ffi::c_int;
    pub const ARRAY: c_int = 1;
    pub const DICTIONARY: c_int = 2;
    pub const SCALAR: c_int = 3;
    pub const STRING: c_int = 4;
}

/// Opaque `XLA_FFI_Error`.
#[repr(C)]
pub struct Error {
    _private: [u8; 0],
}

#[repr(C)]
pub struct ExtensionBase {
    pub struct_size: usize,
    pub kind: c_int,
    pub next: *mut ExtensionBase,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ApiVersion {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub major_version: c_int,
    pub minor_version: c_int,
}

#[repr(C)]
pub struct ErrorCreateArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub message: *const c_char,
    pub errc: c_int,
}

pub type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut Error;

#[repr(C)]
pub struct Buffer {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub dtype: c_int,
    pub data: *mut c_void,
    pub rank: i64,
    pub dims: *mut i64,
}

#[repr(C)]
pub struct ByteSpan {
    pub ptr: *const c_char,
    pub len: usize,
}

#[repr(C)]
pub struct Scalar {
    pub dtype: c_int,
    pub value: *mut c_void,
}

#[repr(C)]
pub struct Array {
    pub dtype: c_int,
    pub size: usize,
    pub data: *mut c_void,
}

#[repr(C)]
pub struct Args {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub size: i64,
    pub types: *mut c_int,
    pub args: *mut *mut c_void,
}

#[repr(C)]
pub struct Rets {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub size: i64,
    pub types: *mut c_int,
    pub rets: *mut *mut c_void,
}

#[repr(C)]
pub struct Attrs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub size: i64,
    pub types: *mut c_int,
    pub names: *mut *mut ByteSpan,
    pub attrs: *mut *mut c_void,
}

#[repr(C)]
pub struct CallFrame {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub api: *const Api,
    pub ctx: *mut c_void,
    pub stage: c_int,
    pub args: Args,
    pub rets: Rets,
    pub attrs: Attrs,
    pub future: *mut c_void,
}

#[repr(C)]
pub struct Metadata {
    pub struct_size: usize,
    pub api_version: ApiVersion,
    pub traits: u32,
    pub state_type_id: i64,
}

#[repr(C)]
pub struct MetadataExtension {
    pub extension_base: ExtensionBase,
    pub metadata: *mut Metadata,
}

/// The head of `XLA_FFI_Api`: the handlers call nothing past
/// `XLA_FFI_Error_Create`.
#[repr(C)]
pub struct Api {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub api_version: ApiVersion,
    pub internal_api: *const c_void,
    pub error_create: Option<ErrorCreate>,
}

/// An XLA FFI handler (`XLA_FFI_Handler`).
pub type Handler = unsafe extern "C" fn(*mut CallFrame) -> *mut Error;

/// `XLA_FFI_STRUCT_SIZE(T, last_field)`: the size of a struct up to and
/// including its last field as the C API defines it.
macro_rules! struct_size {
    ($t:ty, $last:ident: $field:ty) => {
        offset_of!($t, $last) + size_of::<$field>()
    };
}

pub const API_VERSION_SIZE: usize = struct_size!(ApiVersion, minor_version: c_int);
pub const ERROR_CREATE_ARGS_SIZE: usize = struct_size!(ErrorCreateArgs, errc: c_int);
pub const BUFFER_SIZE: usize = struct_size!(Buffer, dims: *mut i64);
pub const ARGS_SIZE: usize = struct_size!(Args, args: *mut *mut c_void);
pub const RETS_SIZE: usize = struct_size!(Rets, rets: *mut *mut c_void);
pub const ATTRS_SIZE: usize = struct_size!(Attrs, attrs: *mut *mut c_void);
pub const CALL_FRAME_SIZE: usize = struct_size!(CallFrame, attrs: Attrs);
pub const METADATA_SIZE: usize = struct_size!(Metadata, traits: u32);
pub const METADATA_EXTENSION_SIZE: usize = struct_size!(MetadataExtension, metadata: *mut Metadata);
/// How much of `XLA_FFI_Api` the handlers read.
pub const API_HEAD_SIZE: usize = struct_size!(Api, error_create: Option<ErrorCreate>);

/// True when a struct whose `struct_size` is `size` has the fields this
/// crate reads of one whose full size here is `needed`.
pub fn covers(size: usize, needed: usize) -> bool {
    size >= needed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_are_c_api_0_3s_on_64_bit_targets() {
        // Sizes as the C API's XLA_FFI_STRUCT_SIZE gives them (x86-64 and
        // aarch64 Linux), worked out from c_api.h's field lists.
        assert_eq!(API_VERSION_SIZE, 24);
        assert_eq!(ERROR_CREATE_ARGS_SIZE, 28);
        assert_eq!(BUFFER_SIZE, 48);
        assert_eq!(ARGS_SIZE, 40);
        assert_eq!(ATTRS_SIZE, 48);
        // 8 + 8 + 8 + 8 + 4 (+4 padding) + Args 40 + Rets 40 + Attrs 48.
        assert_eq!(CALL_FRAME_SIZE, 168);
        // 8 + ApiVersion 24 + traits 4.
        assert_eq!(METADATA_SIZE, 36);
        assert_eq!(METADATA_EXTENSION_SIZE, 32);
        assert_eq!(API_HEAD_SIZE, 56);
    }
}
