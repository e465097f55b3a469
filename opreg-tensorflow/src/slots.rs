//! C function pointers that know which op or kernel they serve.
//!
//! TensorFlow's C API calls a shape function with only its inference
//! context, and a kernel's create function with only its construction
//! context: neither says which op or registration it is for. Each op and
//! each kernel registration therefore gets a function of its own, a
//! monomorphised copy of one generic function with its index as constant
//! parameters ([`SLOTS`] of each kind per library, in tables made by
//! [`registry_core::slot_table!`]).

use std::ffi::c_void;

use registry_core::library::slots::slot;

use crate::api::TF_Status;
use crate::api::{CreateFn, ShapeInferenceFn, TF_OpKernelConstruction, TF_ShapeInferenceContext};

pub use registry_core::library::slots::SLOTS;

/// The shape function of slot `HI * 32 + LO`.
unsafe extern "C" fn shape_slot<const HI: usize, const LO: usize>(
    ctx: *mut TF_ShapeInferenceContext,
    status: *mut TF_Status,
) {
    // SAFETY: TensorFlow passes its live context and status.
    unsafe { crate::shapes::infer(HI * 32 + LO, ctx, status) }
}

/// The kernel create function of slot `HI * 32 + LO`.
unsafe extern "C" fn create_slot<const HI: usize, const LO: usize>(
    ctx: *mut TF_OpKernelConstruction,
) -> *mut c_void {
    // SAFETY: TensorFlow passes its live construction context.
    unsafe { crate::kernels::create(HI * 32 + LO, ctx) }
}

static SHAPE_FNS: [[ShapeInferenceFn; 32]; 32] =
    registry_core::slot_table!(shape_slot as ShapeInferenceFn);
static CREATE_FNS: [[CreateFn; 32]; 32] = registry_core::slot_table!(create_slot as CreateFn);

/// The shape function of slot `index`, if there is one.
pub fn shape_fn(index: usize) -> Option<ShapeInferenceFn> {
    slot(&SHAPE_FNS, index)
}

/// The create function of slot `index`, if there is one.
pub fn create_fn(index: usize) -> Option<CreateFn> {
    slot(&CREATE_FNS, index)
}
