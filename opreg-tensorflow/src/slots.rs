//! C function pointers that know which op or kernel they serve.
//!
//! TensorFlow's C API calls a shape function with only its inference
//! context, and a kernel's create function with only its construction
//! context: neither says which op or registration it is for. Each op and
//! each kernel registration therefore gets a function of its own, a
//! monomorphised copy of one generic function with its index as constant
//! parameters ([`SLOTS`] of each kind per library).

use std::ffi::c_void;

use crate::api::TF_Status;
use crate::api::{CreateFn, ShapeInferenceFn, TF_OpKernelConstruction, TF_ShapeInferenceContext};

/// How many ops with shape functions, and how many kernel registrations,
/// one library can give TensorFlow.
pub const SLOTS: usize = 32 * 32;

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

macro_rules! row {
    ($f:ident, $ty:ty, $hi:ident) => {
        [
            $f::<$hi, 0> as $ty,
            $f::<$hi, 1>,
            $f::<$hi, 2>,
            $f::<$hi, 3>,
            $f::<$hi, 4>,
            $f::<$hi, 5>,
            $f::<$hi, 6>,
            $f::<$hi, 7>,
            $f::<$hi, 8>,
            $f::<$hi, 9>,
            $f::<$hi, 10>,
            $f::<$hi, 11>,
            $f::<$hi, 12>,
            $f::<$hi, 13>,
            $f::<$hi, 14>,
            $f::<$hi, 15>,
            $f::<$hi, 16>,
            $f::<$hi, 17>,
            $f::<$hi, 18>,
            $f::<$hi, 19>,
            $f::<$hi, 20>,
            $f::<$hi, 21>,
            $f::<$hi, 22>,
            $f::<$hi, 23>,
            $f::<$hi, 24>,
            $f::<$hi, 25>,
            $f::<$hi, 26>,
            $f::<$hi, 27>,
            $f::<$hi, 28>,
            $f::<$hi, 29>,
            $f::<$hi, 30>,
            $f::<$hi, 31>,
        ]
    };
}

macro_rules! table {
    ($row:ident) => {
        [
            $row::<0>(),
            $row::<1>(),
            $row::<2>(),
            $row::<3>(),
            $row::<4>(),
            $row::<5>(),
            $row::<6>(),
            $row::<7>(),
            $row::<8>(),
            $row::<9>(),
            $row::<10>(),
            $row::<11>(),
            $row::<12>(),
            $row::<13>(),
            $row::<14>(),
            $row::<15>(),
            $row::<16>(),
            $row::<17>(),
            $row::<18>(),
            $row::<19>(),
            $row::<20>(),
            $row::<21>(),
            $row::<22>(),
            $row::<23>(),
            $row::<24>(),
            $row::<25>(),
            $row::<26>(),
            $row::<27>(),
            $row::<28>(),
            $row::<29>(),
            $row::<30>(),
            $row::<31>(),
        ]
    };
}

const fn shape_row<const HI: usize>() -> [ShapeInferenceFn; 32] {
    row!(shape_slot, ShapeInferenceFn, HI)
}

const fn create_row<const HI: usize>() -> [CreateFn; 32] {
    row!(create_slot, CreateFn, HI)
}

static SHAPE_FNS: [[ShapeInferenceFn; 32]; 32] = table!(shape_row);
static CREATE_FNS: [[CreateFn; 32]; 32] = table!(create_row);

/// The shape function of slot `index`, if there is one.
pub fn shape_fn(index: usize) -> Option<ShapeInferenceFn> {
    SHAPE_FNS.get(index / 32).map(|row| row[index % 32])
}

/// The create function of slot `index`, if there is one.
pub fn create_fn(index: usize) -> Option<CreateFn> {
    CREATE_FNS.get(index / 32).map(|row| row[index % 32])
}
