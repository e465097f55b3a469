//! Element-wise unary kernels: `Abs`, `Neg`, `Exp`, `Log`, `Sqrt`,
//! `Rsqrt`, `Square`, `Sigmoid`, `Tanh`, `Floor`, for every type TF's CPU
//! kernels have. The input is updated in place when it can be forwarded.

use opreg_standard_ops::{Abs, Exp, Floor, Log, Neg, Rsqrt, Sigmoid, Sqrt, Square, Tanh};
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::driver::unary;
use super::scalar::{AbsOp, NegOp, Transcendental};
use crate::numeric::{Float, Number};

/// `Abs`: `|x|` (wrapping for integers: `abs(MIN) = MIN`).
#[kernel(op = Abs, device = CPU, T = [float, double, int8, int16, int32, int64, half, bfloat16])]
fn abs<T: AbsOp>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_abs)
}

/// `Neg`: `-x` (wrapping for integers).
#[kernel(
    op = Neg,
    device = CPU,
    T = [float, double, int8, int16, int32, int64, half, bfloat16, complex64, complex128]
)]
fn neg<T: NegOp>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_neg)
}

/// `Square`: `x * x` (wrapping for integers).
#[kernel(
    op = Square,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
         uint64, complex64, complex128]
)]
fn square<T: Number>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, |x: T| x.mul_wrap(x))
}

/// `Floor`: the largest integer not greater than `x`.
#[kernel(op = Floor, device = CPU, T = [float, double, half, bfloat16])]
fn floor<T: Float>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, <T as num_traits::Float>::floor)
}

/// `Exp`: `e^x`.
#[kernel(op = Exp, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn exp<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_exp)
}

/// `Log`: natural logarithm.
#[kernel(op = Log, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn log<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_log)
}

/// `Sqrt`: square root.
#[kernel(op = Sqrt, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn sqrt<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_sqrt)
}

/// `Rsqrt`: `1 / sqrt(x)`.
#[kernel(op = Rsqrt, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn rsqrt<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_rsqrt)
}

/// `Sigmoid`: `1 / (1 + e^-x)`, without overflow for large `|x|`.
#[kernel(op = Sigmoid, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn sigmoid<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_sigmoid)
}

/// `Tanh`: hyperbolic tangent.
#[kernel(op = Tanh, device = CPU, T = [float, double, half, bfloat16, complex64, complex128])]
fn tanh<T: Transcendental>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, T::tf_tanh)
}
