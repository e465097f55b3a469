//! Element-wise binary arithmetic with TF's broadcasting: `AddV2`, `Sub`,
//! `Mul`, `RealDiv`, `FloorDiv`, `FloorMod`, `Maximum`, `Minimum`, `Pow`,
//! `SquaredDifference`. Integer arithmetic wraps; integer division by zero
//! and integer powers with negative exponents are `InvalidArgument` errors
//! (checked before any output is written).

use opreg_standard_ops::{
    AddV2, FloorDiv, FloorMod, Maximum, Minimum, Mul, Pow, RealDiv, SquaredDifference, Sub,
};
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::driver::{binary_arith, binary_checked};
use super::scalar::{Conjugate, FloorDivMod, MinMaxOp, PowOp, Transcendental};
use crate::numeric::{Number, flushing_denormals};

/// TF's message for an integer division or modulo by zero.
pub const DIVISION_BY_ZERO: &str = "Integer division by zero";
/// TF's message for an integer power with a negative exponent.
pub const NEGATIVE_POWER: &str = "Integers to negative integer powers are not allowed";

/// `AddV2`: `x + y`.
#[kernel(
    op = AddV2,
    device = CPU,
    T = [realnumbertype, complex64, complex128]
)]
fn add_v2<T: Number>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, |a: T, b: T| a.add_wrap(b), no_check)
}

/// `Sub`: `x - y`.
#[kernel(
    op = Sub,
    device = CPU,
    T = [realnumbertype, complex64, complex128]
)]
fn sub<T: Number>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, |a: T, b: T| a.sub_wrap(b), no_check)
}

/// `Mul`: `x * y`.
#[kernel(
    op = Mul,
    device = CPU,
    T = [realnumbertype, complex64, complex128]
)]
fn mul<T: Number>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, |a: T, b: T| a.mul_wrap(b), no_check)
}

/// `RealDiv`: `x / y` (IEEE: a zero divisor gives an infinity or NaN).
#[kernel(op = RealDiv, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn real_div<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, |a: T, b: T| a / b, no_check)
}

/// No input to check.
fn no_check<T>(_: &[T]) -> Result<(), KernelError> {
    Ok(())
}

/// Rejects a zero divisor for integer types.
fn check_divisor<T: FloorDivMod>(y: &[T]) -> Result<(), KernelError> {
    if T::INTEGER && y.contains(&T::ZERO) {
        return Err(KernelError::invalid_argument(DIVISION_BY_ZERO));
    }
    Ok(())
}

/// `FloorDiv`: `floor(x / y)`.
#[kernel(
    op = FloorDiv,
    device = CPU,
    T = realnumbertype
)]
fn floor_div<T: FloorDivMod>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, |a: T, b: T| a.floor_div(b), check_divisor::<T>)
}

/// `FloorMod`: the remainder of the floor division, with the sign of `y`.
#[kernel(
    op = FloorMod,
    device = CPU,
    T = realnumbertype
)]
fn floor_mod<T: FloorDivMod>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if flushing_denormals() {
        binary_checked(
            ctx,
            |a: &T, b: &T| a.floor_mod_flushing(*b),
            check_divisor::<T>,
        )
    } else {
        binary_checked(ctx, |a: &T, b: &T| a.floor_mod(*b), check_divisor::<T>)
    }
}

/// `Maximum`: the larger of `x` and `y`; NaN if either is NaN.
#[kernel(
    op = Maximum,
    device = CPU,
    T = realnumbertype
)]
fn maximum<T: MinMaxOp>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, T::tf_max, no_check)
}

/// `Minimum`: the smaller of `x` and `y`; NaN if either is NaN.
#[kernel(
    op = Minimum,
    device = CPU,
    T = realnumbertype
)]
fn minimum<T: MinMaxOp>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(ctx, T::tf_min, no_check)
}

/// `Pow`: `x ^ y`.
#[kernel(
    op = Pow,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, complex64, complex128]
)]
fn pow<T: PowOp>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let check = |y: &[T]| {
        if T::INTEGER && y.iter().any(|v| v.is_negative_int()) {
            return Err(KernelError::invalid_argument(NEGATIVE_POWER));
        }
        Ok(())
    };
    if flushing_denormals() {
        binary_checked(ctx, |a: &T, b: &T| a.pow_op_flushing(*b), check)
    } else {
        binary_checked(ctx, |a: &T, b: &T| a.pow_op(*b), check)
    }
}

/// `SquaredDifference`: `conj(x - y) * (x - y)`.
#[kernel(
    op = SquaredDifference,
    device = CPU,
    T = [float, double, half, bfloat16, int32, int64, complex64, complex128]
)]
fn squared_difference<T: Conjugate>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary_arith(
        ctx,
        |a: T, b: T| {
            let d = a.sub_wrap(b);
            d.mul_wrap(d.conj())
        },
        no_check,
    )
}
