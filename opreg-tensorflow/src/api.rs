//! TensorFlow's stable C API (`tensorflow/c/ops.h`, `kernels.h`,
//! `tf_tensor.h`, `tf_status.h`, and two functions of `c_api.h`), resolved
//! at run time from the TensorFlow that loaded the library.
//!
//! Nothing here is linked: TensorFlow's Python package loads its own
//! `libtensorflow_framework.so.2` and `libtensorflow_cc.so.2` privately
//! (`RTLD_LOCAL`), so an op library finds them by their sonames among the
//! libraries already loaded (`dlopen` with `RTLD_NOLOAD`: nothing is loaded
//! that was not there), and each function by name. A process without
//! TensorFlow (opreg itself, a test binary) finds nothing, and the library
//! registers nothing with TensorFlow.
//!
//! Names are TensorFlow's own (`TF_Status`, `TF_NewStatus`), so that they
//! can be looked up in its headers.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};

/// TensorFlow's opaque C types.
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("TensorFlow's opaque `", stringify!($name), "`.")]
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque!(
    TF_Status,
    TF_Tensor,
    TF_OpDefinitionBuilder,
    TF_ShapeInferenceContext,
    TF_ShapeHandle,
    TF_DimensionHandle,
    TF_KernelBuilder,
    TF_OpKernelConstruction,
    TF_OpKernelContext,
);

/// `TF_Buffer` (`tensorflow/c/tf_buffer.h`).
#[repr(C)]
pub struct TF_Buffer {
    /// The bytes.
    pub data: *const c_void,
    /// Their length.
    pub length: usize,
    /// Frees `data`, if set.
    pub data_deallocator: Option<unsafe extern "C" fn(*mut c_void, usize)>,
}

/// `TF_DataType`: the values of `types.proto`'s `DataType`.
pub type TF_DataType = c_int;
/// `TF_Code`: the values of `error_codes.proto`'s `Code`.
pub type TF_Code = c_int;

/// A shape inference function (`TF_OpDefinitionBuilderSetShapeInferenceFunction`).
pub type ShapeInferenceFn = unsafe extern "C" fn(*mut TF_ShapeInferenceContext, *mut TF_Status);
/// A kernel's create function (`TF_NewKernelBuilder`).
pub type CreateFn = unsafe extern "C" fn(*mut TF_OpKernelConstruction) -> *mut c_void;
/// A kernel's compute function.
pub type ComputeFn = unsafe extern "C" fn(*mut c_void, *mut TF_OpKernelContext);
/// A kernel's delete function.
pub type DeleteFn = unsafe extern "C" fn(*mut c_void);
/// A tensor deallocator (`TF_NewTensor`).
pub type DeallocatorFn = unsafe extern "C" fn(*mut c_void, usize, *mut c_void);

/// The sonames of the libraries that export the C API, in lookup order.
pub const LIBRARIES: [&str; 2] = ["libtensorflow_framework.so.2", "libtensorflow_cc.so.2"];

macro_rules! c_api {
    (
        required { $( fn $name:ident($($arg:ty),* $(,)?) $(-> $ret:ty)?; )* }
        optional { $( fn $oname:ident($($oarg:ty),* $(,)?) $(-> $oret:ty)?; )* }
    ) => {
        /// The C API functions this crate calls, resolved from the loaded
        /// TensorFlow. Each field is the function of that name.
        #[allow(non_snake_case, missing_docs)]
        pub struct TfApi {
            $( pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?, )*
            $( pub $oname: Option<unsafe extern "C" fn($($oarg),*) $(-> $oret)?>, )*
        }

        impl TfApi {
            /// Resolves every function with `lookup`; the names of the
            /// required ones it cannot find are the error.
            fn resolve(lookup: impl Fn(&str) -> Option<*mut c_void>) -> Result<Self, Vec<&'static str>> {
                let resolved = || {
                    Some(Self {
                        $(
                            // SAFETY: the symbol of this name in TensorFlow's
                            // C API libraries is the C function its headers
                            // declare, with exactly this signature.
                            $name: unsafe {
                                std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                                    lookup(stringify!($name))?,
                                )
                            },
                        )*
                        $(
                            // SAFETY: as above, for an optional function.
                            $oname: lookup(stringify!($oname)).map(|f| unsafe {
                                std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($oarg),*) $(-> $oret)?>(f)
                            }),
                        )*
                    })
                };
                resolved().ok_or_else(|| {
                    [$(stringify!($name)),*]
                        .into_iter()
                        .filter(|name| lookup(name).is_none())
                        .collect()
                })
            }
        }
    };
}

c_api! {
    required {
        // tf_status.h
        fn TF_NewStatus() -> *mut TF_Status;
        fn TF_DeleteStatus(*mut TF_Status);
        fn TF_SetStatus(*mut TF_Status, TF_Code, *const c_char);
        fn TF_GetCode(*const TF_Status) -> TF_Code;
        fn TF_Message(*const TF_Status) -> *const c_char;
        // tf_buffer.h
        fn TF_DeleteBuffer(*mut TF_Buffer);
        // tf_tensor.h
        fn TF_NewTensor(TF_DataType, *const i64, c_int, *mut c_void, usize, DeallocatorFn, *mut c_void) -> *mut TF_Tensor;
        fn TF_DeleteTensor(*mut TF_Tensor);
        fn TF_TensorType(*const TF_Tensor) -> TF_DataType;
        fn TF_NumDims(*const TF_Tensor) -> c_int;
        fn TF_Dim(*const TF_Tensor, c_int) -> i64;
        fn TF_TensorByteSize(*const TF_Tensor) -> usize;
        fn TF_TensorData(*const TF_Tensor) -> *mut c_void;
        // ops.h
        fn TF_NewOpDefinitionBuilder(*const c_char) -> *mut TF_OpDefinitionBuilder;
        fn TF_RegisterOpDefinition(*mut TF_OpDefinitionBuilder, *mut TF_Status);
        fn TF_DeleteOpDefinitionBuilder(*mut TF_OpDefinitionBuilder);
        fn TF_OpDefinitionBuilderAddAttr(*mut TF_OpDefinitionBuilder, *const c_char);
        fn TF_OpDefinitionBuilderAddInput(*mut TF_OpDefinitionBuilder, *const c_char);
        fn TF_OpDefinitionBuilderAddOutput(*mut TF_OpDefinitionBuilder, *const c_char);
        fn TF_OpDefinitionBuilderSetIsCommutative(*mut TF_OpDefinitionBuilder, bool);
        fn TF_OpDefinitionBuilderSetIsAggregate(*mut TF_OpDefinitionBuilder, bool);
        fn TF_OpDefinitionBuilderSetIsStateful(*mut TF_OpDefinitionBuilder, bool);
        fn TF_OpDefinitionBuilderSetAllowsUninitializedInput(*mut TF_OpDefinitionBuilder, bool);
        fn TF_OpDefinitionBuilderDeprecated(*mut TF_OpDefinitionBuilder, c_int, *const c_char);
        fn TF_OpDefinitionBuilderSetShapeInferenceFunction(*mut TF_OpDefinitionBuilder, ShapeInferenceFn);
        fn TF_ShapeInferenceContextNumInputs(*mut TF_ShapeInferenceContext) -> i64;
        fn TF_NewShapeHandle() -> *mut TF_ShapeHandle;
        fn TF_DeleteShapeHandle(*mut TF_ShapeHandle);
        fn TF_NewDimensionHandle() -> *mut TF_DimensionHandle;
        fn TF_DeleteDimensionHandle(*mut TF_DimensionHandle);
        fn TF_ShapeInferenceContextGetInput(*mut TF_ShapeInferenceContext, c_int, *mut TF_ShapeHandle, *mut TF_Status);
        fn TF_ShapeInferenceContextSetOutput(*mut TF_ShapeInferenceContext, c_int, *mut TF_ShapeHandle, *mut TF_Status);
        fn TF_ShapeInferenceContextScalar(*mut TF_ShapeInferenceContext) -> *mut TF_ShapeHandle;
        fn TF_ShapeInferenceContextVectorFromSize(*mut TF_ShapeInferenceContext, usize) -> *mut TF_ShapeHandle;
        fn TF_ShapeInferenceContext_GetAttrType(*mut TF_ShapeInferenceContext, *const c_char, *mut TF_DataType, *mut TF_Status);
        fn TF_ShapeInferenceContextRank(*mut TF_ShapeInferenceContext, *mut TF_ShapeHandle) -> i64;
        fn TF_ShapeInferenceContextRankKnown(*mut TF_ShapeInferenceContext, *mut TF_ShapeHandle) -> c_int;
        fn TF_ShapeInferenceContextWithRank(*mut TF_ShapeInferenceContext, *mut TF_ShapeHandle, i64, *mut TF_ShapeHandle, *mut TF_Status);
        fn TF_ShapeInferenceContextDim(*mut TF_ShapeInferenceContext, *mut TF_ShapeHandle, i64, *mut TF_DimensionHandle);
        fn TF_DimensionHandleValueKnown(*mut TF_DimensionHandle) -> c_int;
        fn TF_DimensionHandleValue(*mut TF_DimensionHandle) -> i64;
        fn TF_ShapeInferenceContextSetUnknownShape(*mut TF_ShapeInferenceContext, *mut TF_Status);
        fn TF_ShapeInferenceContextConcatenateShapes(*mut TF_ShapeInferenceContext, *mut TF_ShapeHandle, *mut TF_ShapeHandle, *mut TF_ShapeHandle, *mut TF_Status);
        // kernels.h
        fn TF_NewKernelBuilder(*const c_char, *const c_char, CreateFn, ComputeFn, DeleteFn) -> *mut TF_KernelBuilder;
        fn TF_KernelBuilder_TypeConstraint(*mut TF_KernelBuilder, *const c_char, TF_DataType, *mut TF_Status);
        fn TF_KernelBuilder_HostMemory(*mut TF_KernelBuilder, *const c_char);
        fn TF_KernelBuilder_Priority(*mut TF_KernelBuilder, i32);
        fn TF_KernelBuilder_Label(*mut TF_KernelBuilder, *const c_char);
        fn TF_RegisterKernelBuilder(*const c_char, *mut TF_KernelBuilder, *mut TF_Status);
        fn TF_DeleteKernelBuilder(*mut TF_KernelBuilder);
        fn TF_OpKernelConstruction_GetNodeDef(*mut TF_OpKernelConstruction, *mut TF_Status) -> *mut TF_Buffer;
        fn TF_OpKernelConstruction_Failure(*mut TF_OpKernelConstruction, *mut TF_Status);
        fn TF_NumInputs(*mut TF_OpKernelContext) -> c_int;
        fn TF_NumOutputs(*mut TF_OpKernelContext) -> c_int;
        fn TF_GetInput(*mut TF_OpKernelContext, c_int, *mut *mut TF_Tensor, *mut TF_Status);
        fn TF_SetOutput(*mut TF_OpKernelContext, c_int, *const TF_Tensor, *mut TF_Status);
        fn TF_AllocateOutput(*mut TF_OpKernelContext, c_int, TF_DataType, *const i64, c_int, usize, *mut TF_Status) -> *mut TF_Tensor;
        fn TF_ForwardInputOrAllocateOutput(*mut TF_OpKernelContext, *const c_int, c_int, c_int, *const i64, c_int, *mut c_int, *mut TF_Status) -> *mut TF_Tensor;
        fn TF_OpKernelContext_Failure(*mut TF_OpKernelContext, *mut TF_Status);
    }
    optional {
        // c_api.h (libtensorflow_cc.so.2)
        fn TF_Version() -> *const c_char;
        fn TF_GetAllOpList() -> *mut TF_Buffer;
        fn TF_GetRegisteredKernelsForOp(*const c_char, *mut TF_Status) -> *mut TF_Buffer;
    }
}

/// The loaded TensorFlow: its C API and version.
pub struct Tensorflow {
    /// The functions.
    pub api: TfApi,
    /// `TF_Version()`, when the library has it.
    pub version: Option<String>,
}

/// Why TensorFlow's C API could not be used.
#[derive(Debug, Clone)]
pub enum ApiError {
    /// TensorFlow is not loaded in this process: nothing to register with.
    NotLoaded,
    /// It is loaded, but lacks functions this crate calls.
    Missing {
        /// Their names.
        missing: Vec<&'static str>,
        /// The functions that report a failed load, when it has those.
        report: Option<LoadErrorApi>,
    },
}

/// The functions that fail TensorFlow's load of a library with a message
/// (see `load`): enough of the C API to say what else is missing.
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case, missing_docs)]
pub struct LoadErrorApi {
    pub TF_NewStatus: unsafe extern "C" fn() -> *mut TF_Status,
    pub TF_DeleteStatus: unsafe extern "C" fn(*mut TF_Status),
    pub TF_NewOpDefinitionBuilder:
        unsafe extern "C" fn(*const c_char) -> *mut TF_OpDefinitionBuilder,
    pub TF_OpDefinitionBuilderAddAttr:
        unsafe extern "C" fn(*mut TF_OpDefinitionBuilder, *const c_char),
    pub TF_RegisterOpDefinition: unsafe extern "C" fn(*mut TF_OpDefinitionBuilder, *mut TF_Status),
}

impl LoadErrorApi {
    /// Resolves the functions with `lookup`, if it has them all.
    fn resolve(lookup: impl Fn(&str) -> Option<*mut c_void>) -> Option<Self> {
        // SAFETY: (each) the symbol of this name is the C function
        // TensorFlow's headers declare with this signature.
        unsafe {
            Some(Self {
                TF_NewStatus: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn() -> *mut TF_Status,
                >(lookup("TF_NewStatus")?),
                TF_DeleteStatus: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*mut TF_Status),
                >(lookup("TF_DeleteStatus")?),
                TF_NewOpDefinitionBuilder: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*const c_char) -> *mut TF_OpDefinitionBuilder,
                >(lookup("TF_NewOpDefinitionBuilder")?),
                TF_OpDefinitionBuilderAddAttr: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*mut TF_OpDefinitionBuilder, *const c_char),
                >(lookup(
                    "TF_OpDefinitionBuilderAddAttr",
                )?),
                TF_RegisterOpDefinition: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*mut TF_OpDefinitionBuilder, *mut TF_Status),
                >(lookup("TF_RegisterOpDefinition")?),
            })
        }
    }
}

impl TfApi {
    /// The functions that report a failed load.
    pub fn load_error_api(&self) -> LoadErrorApi {
        LoadErrorApi {
            TF_NewStatus: self.TF_NewStatus,
            TF_DeleteStatus: self.TF_DeleteStatus,
            TF_NewOpDefinitionBuilder: self.TF_NewOpDefinitionBuilder,
            TF_OpDefinitionBuilderAddAttr: self.TF_OpDefinitionBuilderAddAttr,
            TF_RegisterOpDefinition: self.TF_RegisterOpDefinition,
        }
    }
}

/// The TensorFlow loaded in this process, once resolved; `Err` when none is
/// loaded or it lacks functions.
pub fn tensorflow() -> &'static Result<Tensorflow, ApiError> {
    static TENSORFLOW: std::sync::OnceLock<Result<Tensorflow, ApiError>> =
        std::sync::OnceLock::new();
    TENSORFLOW.get_or_init(resolve)
}

#[cfg(target_os = "linux")]
fn resolve() -> Result<Tensorflow, ApiError> {
    use libloading::os::unix::{Library, RTLD_LAZY};
    /// glibc's `RTLD_NOLOAD`: only find a library that is already loaded.
    const RTLD_NOLOAD: std::ffi::c_int = 0x4;
    let libraries: Vec<Library> = LIBRARIES
        .iter()
        // SAFETY: with RTLD_NOLOAD nothing is loaded, so no initialiser
        // runs; an already loaded library is only referenced again (and
        // kept: the handles are never closed).
        .filter_map(|name| unsafe { Library::open(Some(name), RTLD_LAZY | RTLD_NOLOAD) }.ok())
        .collect();
    if libraries.is_empty() {
        return Err(ApiError::NotLoaded);
    }
    let lookup = |name: &str| {
        let symbol = format!("{name}\0");
        libraries.iter().find_map(|library| {
            // SAFETY: the symbol is only read as an address here; `resolve`
            // gives it its declared type.
            unsafe { library.get::<*mut c_void>(symbol.as_bytes()) }
                .ok()
                .map(|s| *s)
                .filter(|p| !p.is_null())
        })
    };
    let api = TfApi::resolve(lookup).map_err(|missing| ApiError::Missing {
        report: LoadErrorApi::resolve(lookup),
        missing,
    });
    // The libraries stay loaded for the life of the process (they are
    // TensorFlow's, which never unloads them).
    std::mem::forget(libraries);
    let api = api?;
    let version = api.TF_Version.map(|version| {
        // SAFETY: TF_Version returns a static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(version()) }
            .to_string_lossy()
            .into_owned()
    });
    Ok(Tensorflow { api, version })
}

#[cfg(not(target_os = "linux"))]
fn resolve() -> Result<Tensorflow, ApiError> {
    Err(ApiError::NotLoaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn never_called() {}

    /// A lookup that finds every name but `absent` (at a function that is
    /// never called).
    fn all_but(absent: &'static str) -> impl Fn(&str) -> Option<*mut c_void> {
        move |name| (name != absent).then_some(never_called as *const () as *mut c_void)
    }

    #[test]
    fn a_missing_function_is_named_and_the_load_can_still_be_failed() {
        let lookup = all_but("TF_ForwardInputOrAllocateOutput");
        let Err(missing) = TfApi::resolve(&lookup) else {
            panic!("resolved without TF_ForwardInputOrAllocateOutput")
        };
        assert_eq!(missing, ["TF_ForwardInputOrAllocateOutput"]);
        assert!(LoadErrorApi::resolve(&lookup).is_some());
        // Optional functions may be absent.
        assert!(
            TfApi::resolve(all_but("TF_GetAllOpList"))
                .is_ok_and(|api| api.TF_GetAllOpList.is_none())
        );
        // Without the registration functions, nothing can be reported.
        assert!(LoadErrorApi::resolve(all_but("TF_RegisterOpDefinition")).is_none());
    }
}
