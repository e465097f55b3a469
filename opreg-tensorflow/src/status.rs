//! `TF_Status` values, owned, and the TensorFlow error code of each kind of
//! opreg error.

use std::ffi::{CStr, CString};

use registry_core::kernel::KernelError;

use crate::api::{TF_Code, TF_Status, TfApi};

/// TensorFlow's error codes (`tensorflow/c/tf_status.h`), those used here.
#[allow(missing_docs)]
pub mod code {
    use super::TF_Code;
    pub const OK: TF_Code = 0;
    pub const INVALID_ARGUMENT: TF_Code = 3;
    pub const NOT_FOUND: TF_Code = 5;
    pub const ALREADY_EXISTS: TF_Code = 6;
    pub const RESOURCE_EXHAUSTED: TF_Code = 8;
    pub const FAILED_PRECONDITION: TF_Code = 9;
    pub const OUT_OF_RANGE: TF_Code = 11;
    pub const UNIMPLEMENTED: TF_Code = 12;
    pub const INTERNAL: TF_Code = 13;
}

/// An owned `TF_Status`, deleted on drop.
pub struct Status<'a> {
    api: &'a TfApi,
    raw: *mut TF_Status,
}

impl<'a> Status<'a> {
    /// A new status (OK).
    pub fn new(api: &'a TfApi) -> Self {
        // SAFETY: TF_NewStatus has no preconditions.
        let raw = unsafe { (api.TF_NewStatus)() };
        Self { api, raw }
    }

    /// A status set to `code` with `message` (NUL bytes in it are dropped).
    pub fn error(api: &'a TfApi, code: TF_Code, message: &str) -> Self {
        let status = Self::new(api);
        status.set(code, message);
        status
    }

    /// Sets the code and message.
    pub fn set(&self, code: TF_Code, message: &str) {
        let message = c_string(message);
        // SAFETY: `raw` is a live status; TF copies the message.
        unsafe { (self.api.TF_SetStatus)(self.raw, code, message.as_ptr()) }
    }

    /// The raw pointer, for a C API call.
    pub fn raw(&self) -> *mut TF_Status {
        self.raw
    }

    /// The status's code.
    pub fn code(&self) -> TF_Code {
        // SAFETY: `raw` is a live status.
        unsafe { (self.api.TF_GetCode)(self.raw) }
    }

    /// `Err(message)` unless the status is OK.
    pub fn check(&self) -> Result<(), (TF_Code, String)> {
        let code = self.code();
        if code == code::OK {
            return Ok(());
        }
        // SAFETY: `raw` is a live status; its message is a NUL-terminated
        // string it owns, copied here before the status can change.
        let message = unsafe { CStr::from_ptr((self.api.TF_Message)(self.raw)) };
        Err((code, message.to_string_lossy().into_owned()))
    }
}

impl Drop for Status<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from TF_NewStatus and is deleted once, here.
        unsafe { (self.api.TF_DeleteStatus)(self.raw) }
    }
}

/// `text` as a C string, without its NUL bytes (which C cannot carry).
pub fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "")).unwrap_or_default()
}

/// The TensorFlow code of a kernel error: the code TF's own kernels use
/// for the same kind of failure.
pub fn kernel_error_code(error: &KernelError) -> TF_Code {
    error.status_code() as TF_Code
}
