//! Comparison and logic kernels with broadcasting and a `bool` output:
//! `Equal` and `NotEqual` (every type TF has, strings and quantized types
//! included, with their `incompatible_shape_error` attr), `Greater`,
//! `GreaterEqual`, `Less`, `LessEqual`, `LogicalAnd`, `LogicalOr` and
//! (unary) `LogicalNot`.

use std::marker::PhantomData;

use opreg_standard_ops::{
    Equal, Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalNot, LogicalOr, NotEqual,
};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::Tensor;

use super::data::TensorData;
use super::driver::{binary, compare, compare_by, unary};
use crate::numeric::{Denormal, Real, flushing_denormals};

/// `Equal` for types with a typed view: `x == y` (IEEE for floats, so
/// `NaN != NaN`; component-wise for complex).
#[kernel(
    op = Equal,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
         uint64, bool, complex64, complex128]
)]
#[kernel(
    op = NotEqual,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
         uint64, bool, complex64, complex128]
)]
pub struct EqualKernel<T> {
    incompatible_shape_error: bool,
    /// `NotEqual`: the answer is `x != y` (and `true` for incompatible
    /// shapes without `incompatible_shape_error`).
    not: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorData + Denormal> BuildKernel for EqualKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            incompatible_shape_error: ctx.attr("incompatible_shape_error")?,
            not: ctx.op() == "NotEqual",
            _t: PhantomData,
        })
    }
}

impl<T: TensorData + Denormal> OpKernel for EqualKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let lenient = (!self.incompatible_shape_error).then_some(self.not);
        let not = self.not;
        if flushing_denormals() {
            compare(ctx, lenient, |a: &T, b: &T| {
                (a.flushed() == b.flushed()) != not
            })
        } else {
            compare(ctx, lenient, |a: &T, b: &T| (a == b) != not)
        }
    }
}

/// `Equal` for `string` (byte-wise) and the quantized types (their stored
/// integers), which have no Rust element type: dispatches on the dtype.
#[kernel(op = Equal, device = CPU, T = [string, qint8, quint8, qint16, quint16, qint32])]
#[kernel(op = NotEqual, device = CPU, T = [string, qint8, quint8, qint16, quint16, qint32])]
pub struct EqualUntypedKernel {
    incompatible_shape_error: bool,
    not: bool,
    dtype: DataType,
}

impl BuildKernel for EqualUntypedKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            incompatible_shape_error: ctx.attr("incompatible_shape_error")?,
            not: ctx.op() == "NotEqual",
            dtype: ctx.attr("T")?,
        })
    }
}

/// The elements of a fixed-size tensor as `N`-byte arrays.
fn raw_elements<const N: usize>(t: &Tensor) -> Result<&[[u8; N]], KernelError> {
    Ok(t.as_bytes()?.as_chunks::<N>().0)
}

impl OpKernel for EqualUntypedKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let lenient = (!self.incompatible_shape_error).then_some(self.not);
        let not = self.not;
        match self.dtype {
            DataType::DtString => {
                compare::<Vec<u8>, _>(ctx, lenient, |a: &Vec<u8>, b: &Vec<u8>| (a == b) != not)
            }
            DataType::DtQint8 | DataType::DtQuint8 => {
                compare_by(ctx, lenient, raw_elements::<1>, |a, b| (a == b) != not)
            }
            DataType::DtQint16 | DataType::DtQuint16 => {
                compare_by(ctx, lenient, raw_elements::<2>, |a, b| (a == b) != not)
            }
            DataType::DtQint32 => {
                compare_by(ctx, lenient, raw_elements::<4>, |a, b| (a == b) != not)
            }
            other => Err(KernelError::unimplemented(format!(
                "Equal has no untyped kernel for {other:?}"
            ))),
        }
    }
}

/// `Greater`: `x > y` (false when either is NaN).
#[kernel(
    op = Greater,
    device = CPU,
    T = realnumbertype
)]
fn greater<T: Real + TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if flushing_denormals() {
        compare(ctx, None, |a: &T, b: &T| a.flushed() > b.flushed())
    } else {
        compare(ctx, None, |a: &T, b: &T| a > b)
    }
}

/// `GreaterEqual`: `x >= y` (false when either is NaN).
#[kernel(op = GreaterEqual, device = CPU, T = realnumbertype)]
fn greater_equal<T: Real + TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if flushing_denormals() {
        compare(ctx, None, |a: &T, b: &T| a.flushed() >= b.flushed())
    } else {
        compare(ctx, None, |a: &T, b: &T| a >= b)
    }
}

/// `Less`: `x < y` (false when either is NaN).
#[kernel(op = Less, device = CPU, T = realnumbertype)]
fn less<T: Real + TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if flushing_denormals() {
        compare(ctx, None, |a: &T, b: &T| a.flushed() < b.flushed())
    } else {
        compare(ctx, None, |a: &T, b: &T| a < b)
    }
}

/// `LessEqual`: `x <= y` (false when either is NaN).
#[kernel(op = LessEqual, device = CPU, T = realnumbertype)]
fn less_equal<T: Real + TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if flushing_denormals() {
        compare(ctx, None, |a: &T, b: &T| a.flushed() <= b.flushed())
    } else {
        compare(ctx, None, |a: &T, b: &T| a <= b)
    }
}

/// `LogicalOr`: `x || y` (in place when an input can be forwarded).
#[kernel(op = LogicalOr, device = CPU)]
fn logical_or(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary(ctx, |a: &bool, b: &bool| *a | *b)
}

/// `LogicalNot`: `!x` (in place when the input can be forwarded).
#[kernel(op = LogicalNot, device = CPU)]
fn logical_not(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    unary(ctx, |a: bool| !a)
}

/// `LogicalAnd`: `x && y` (in place when an input can be forwarded).
#[kernel(op = LogicalAnd, device = CPU)]
fn logical_and(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    binary(ctx, |a: &bool, b: &bool| *a & *b)
}
