//! The shared bodies of the element-wise kernels: check and broadcast the
//! inputs, forward an input buffer to the output when TF would (a unique
//! input of the output's dtype and element count, TF's
//! `forward_input_or_allocate_output`) or allocate it, then run the loop of
//! [`crate::elementwise`].

use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{Tensor, TensorShape};

use super::data::TensorData;
use crate::elementwise::{
    binary_in_place_left, binary_in_place_right, binary_into, map_in_place, map_into_tensor,
};
use crate::numeric::{Denormal, Element, flushing_denormals};
use opreg_op_logic::broadcast::{Broadcast, BroadcastError};

/// `y = f(x)` element-wise, in place when input 0 can be forwarded.
pub(crate) fn unary<T, F>(ctx: &mut OpKernelContext<'_>, f: F) -> Result<(), KernelError>
where
    T: Element,
    F: Fn(T) -> T + Sync,
{
    ctx.input_slice::<T>(0)?;
    if ctx.forward_input(0, 0)? {
        map_in_place(ctx.output_mut(0)?.as_mut_slice::<T>()?, f);
        return Ok(());
    }
    let (x, out) = ctx.input_and_output_to_overwrite(0, 0)?;
    map_into_tensor(x.as_slice::<T>()?, out.as_mut_slice::<T>()?, f)
}

/// `z = f(x, y)` with broadcasting, output of the inputs' type.
pub(crate) fn binary<T, F>(ctx: &mut OpKernelContext<'_>, f: F) -> Result<(), KernelError>
where
    T: Element,
    F: Fn(&T, &T) -> T + Sync,
{
    binary_checked(ctx, f, |_| Ok(()))
}

/// [`binary_checked`] for TF's float arithmetic: where the thread flushes
/// denormals (TF's default), `f` sees denormal operands as zeros and its
/// denormal results become zeros, as TF's arithmetic instructions make
/// them; elsewhere `f` as is.
pub(crate) fn binary_arith<T, F, C>(
    ctx: &mut OpKernelContext<'_>,
    f: F,
    check: C,
) -> Result<(), KernelError>
where
    T: Element + Denormal,
    F: Fn(T, T) -> T + Sync,
    C: FnOnce(&[T]) -> Result<(), KernelError>,
{
    if flushing_denormals() {
        binary_checked(
            ctx,
            |a: &T, b: &T| f(a.flushed(), b.flushed()).flushed(),
            check,
        )
    } else {
        binary_checked(ctx, |a: &T, b: &T| f(*a, *b), check)
    }
}

/// [`binary`], after `check(y)` accepted the divisor/exponent input (run
/// only when the output is not empty, so unused values never fail).
pub(crate) fn binary_checked<T, F, C>(
    ctx: &mut OpKernelContext<'_>,
    f: F,
    check: C,
) -> Result<(), KernelError>
where
    T: Element,
    F: Fn(&T, &T) -> T + Sync,
    C: FnOnce(&[T]) -> Result<(), KernelError>,
{
    let b = {
        let (x, y) = (ctx.input(0)?, ctx.input(1)?);
        x.as_slice::<T>()?;
        let ys = y.as_slice::<T>()?;
        let b = Broadcast::binary(x.shape(), y.shape())?;
        if b.out_len() > 0 {
            check(ys)?;
        }
        b
    };
    let shape = b.out_shape().clone();
    if b.is_identity(0) && ctx.forward_input_with_shape(0, 0, &shape)? {
        let y = ctx.input(1)?.clone();
        let out = ctx.output_mut(0)?.as_mut_slice::<T>()?;
        return binary_in_place_left(&b, out, y.as_slice::<T>()?, f);
    }
    if b.is_identity(1) && ctx.forward_input_with_shape(1, 0, &shape)? {
        let x = ctx.input(0)?.clone();
        let out = ctx.output_mut(0)?.as_mut_slice::<T>()?;
        return binary_in_place_right(&b, x.as_slice::<T>()?, out, f);
    }
    let (x, y) = (ctx.input(0)?.clone(), ctx.input(1)?.clone());
    let out = ctx
        .allocate_output_to_overwrite(0, shape)?
        .as_mut_slice::<T>()?;
    binary_into(&b, x.as_slice::<T>()?, y.as_slice::<T>()?, out, f)
}

/// `z = f(x, y)` with broadcasting into a `bool` output (comparisons).
/// When the shapes cannot be broadcast and `incompatible` is given
/// (`Equal`'s and `NotEqual`'s `incompatible_shape_error = false`), the
/// output is a scalar holding it (`false` for `Equal`, `true` for
/// `NotEqual`), as TF's `BinaryOpShared` does; else TF's error.
pub(crate) fn compare<A, F>(
    ctx: &mut OpKernelContext<'_>,
    incompatible: Option<bool>,
    f: F,
) -> Result<(), KernelError>
where
    A: TensorData,
    F: Fn(&A, &A) -> bool + Sync,
{
    compare_by(ctx, incompatible, A::view, f)
}

/// [`compare`] with the element view given by `view` (e.g. the raw
/// elements of quantized tensors).
pub(crate) fn compare_by<A, V, F>(
    ctx: &mut OpKernelContext<'_>,
    incompatible: Option<bool>,
    view: V,
    f: F,
) -> Result<(), KernelError>
where
    A: Sync,
    V: for<'t> Fn(&'t Tensor) -> Result<&'t [A], KernelError>,
    F: Fn(&A, &A) -> bool + Sync,
{
    let (x, y) = (ctx.input(0)?.clone(), ctx.input(1)?.clone());
    let (xs, ys) = (view(&x)?, view(&y)?);
    let b = match Broadcast::new([x.dims(), y.dims()]) {
        Ok(b) => b,
        Err(BroadcastError::Incompatible) if incompatible.is_some() => {
            let out = ctx.allocate_output(0, TensorShape::scalar())?;
            out.as_mut_slice::<bool>()?[0] = incompatible == Some(true);
            return Ok(());
        }
        // TF's message ("Incompatible shapes: ...") or the overflow error.
        Err(_) => Broadcast::binary(x.shape(), y.shape())?,
    };
    let out = ctx.allocate_output(0, b.out_shape().clone())?;
    binary_into(&b, xs, ys, out.as_mut_slice::<bool>()?, f)
}
