//! `Select` (TF's v1 rules: a scalar condition, a condition of the shape of
//! `t`, or a vector condition choosing whole rows of `t`/`e`) and
//! `SelectV2` (condition, `t` and `e` broadcast together), for every type
//! TF's CPU kernels have except `resource`/`variant`. A unique `t` or `e`
//! of the output's shape is forwarded and only the other operand's
//! elements are written.

use opreg_standard_ops::{Select, SelectV2};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{Tensor, TensorShape};

use super::data::TensorData;
use crate::elementwise::{PARALLEL_MIN_ELEMENTS, chunk_len, for_each_segment};
use opreg_op_logic::broadcast::Broadcast;
use opreg_op_logic::select::{SelectV1, broadcast_error, v1_mode_of};

/// Where the output's values come from.
enum Target {
    /// A freshly allocated output: write every element.
    Fresh,
    /// `t` was forwarded: write the elements where the condition is false.
    HoldsThen,
    /// `e` was forwarded: write the elements where the condition is true.
    HoldsElse,
}

/// Forwards `t` (input 1) or `e` (input 2) to the output when unique and of
/// `shape`, else allocates it.
fn forward_or_allocate(
    ctx: &mut OpKernelContext<'_>,
    shape: &TensorShape,
    then_ok: bool,
    else_ok: bool,
) -> Result<Target, KernelError> {
    if then_ok && ctx.forward_input_with_shape(1, 0, shape)? {
        return Ok(Target::HoldsThen);
    }
    if else_ok && ctx.forward_input_with_shape(2, 0, shape)? {
        return Ok(Target::HoldsElse);
    }
    ctx.allocate_output(0, shape.clone())?;
    Ok(Target::Fresh)
}

/// `out[i] = cond[i] ? t[i] : e[i]` over equal-length slices, where the
/// target says which of `t`/`e` the output already holds (that one is
/// empty and not read).
fn select_flat<T: TensorData>(cond: &[bool], t: &[T], e: &[T], out: &mut [T], target: &Target) {
    match target {
        Target::Fresh => {
            let run = |o: &mut [T], c: &[bool], t: &[T], e: &[T]| {
                for ((o, &c), (a, b)) in o.iter_mut().zip(c).zip(t.iter().zip(e)) {
                    *o = if c { a.clone() } else { b.clone() };
                }
            };
            let chunk = chunk_len(out.len());
            if out.len() <= chunk {
                run(out, cond, t, e);
            } else {
                out.par_chunks_mut(chunk)
                    .zip(cond.par_chunks(chunk))
                    .zip(t.par_chunks(chunk).zip(e.par_chunks(chunk)))
                    .for_each(|((o, c), (t, e))| run(o, c, t, e));
            }
        }
        Target::HoldsThen => fill_where(out, cond, e, false),
        Target::HoldsElse => fill_where(out, cond, t, true),
    }
}

/// `out[i] = src[i]` where `cond[i] == want`.
fn fill_where<T: TensorData>(out: &mut [T], cond: &[bool], src: &[T], want: bool) {
    let run = |o: &mut [T], c: &[bool], s: &[T]| {
        for ((o, &c), v) in o.iter_mut().zip(c).zip(s) {
            if c == want {
                *o = v.clone();
            }
        }
    };
    let chunk = chunk_len(out.len());
    if out.len() <= chunk {
        run(out, cond, src);
    } else {
        out.par_chunks_mut(chunk)
            .zip(cond.par_chunks(chunk).zip(src.par_chunks(chunk)))
            .for_each(|(o, (c, s))| run(o, c, s));
    }
}

/// The operand slices, where an operand held by the output is empty (it
/// is not read).
fn operands<'a, T: TensorData>(
    t: &'a Option<Tensor>,
    e: &'a Option<Tensor>,
) -> Result<(&'a [T], &'a [T]), KernelError> {
    let view = |x: &'a Option<Tensor>| x.as_ref().map_or(Ok(&[][..]), |x| T::view(x));
    Ok((view(t)?, view(e)?))
}

/// `t` and `e` when still inputs (`None` once forwarded to the output).
fn then_else(ctx: &OpKernelContext<'_>) -> (Option<Tensor>, Option<Tensor>) {
    (ctx.input(1).ok().cloned(), ctx.input(2).ok().cloned())
}

/// The shared body of the `Select` kernels.
fn select_v1<T: TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let (mode, shape) = {
        let (cond, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let c = cond.as_slice::<bool>()?;
        T::view(t)?;
        T::view(e)?;
        let mode = v1_mode_of(ctx)?;
        if mode == SelectV1::Scalar {
            // The chosen operand is the output (its buffer is shared, no copy).
            let pick_then = c.first().copied().unwrap_or(false);
            let chosen = ctx.take_input(if pick_then { 1 } else { 2 })?;
            return ctx.set_output(0, chosen);
        }
        (mode, t.shape().clone())
    };
    let target = forward_or_allocate(ctx, &shape, true, true)?;
    let cond = ctx.input(0)?.clone();
    let (t, e) = then_else(ctx);
    let (ts, es) = operands::<T>(&t, &e)?;
    let c = cond.as_slice::<bool>()?;
    let out = T::view_mut(ctx.output_mut(0)?)?;
    if out.is_empty() {
        return Ok(());
    }
    if mode == SelectV1::Elements {
        select_flat(c, ts, es, out, &target);
        return Ok(());
    }
    let row = out.len() / c.len();
    let copy_row = |i: usize, o: &mut [T]| {
        let range = i * row..(i + 1) * row;
        match (&target, c[i]) {
            (Target::Fresh | Target::HoldsElse, true) => o.clone_from_slice(&ts[range]),
            (Target::Fresh | Target::HoldsThen, false) => o.clone_from_slice(&es[range]),
            _ => {}
        }
    };
    if out.len() < PARALLEL_MIN_ELEMENTS {
        out.chunks_mut(row)
            .enumerate()
            .for_each(|(i, o)| copy_row(i, o));
    } else {
        out.par_chunks_mut(row)
            .enumerate()
            .for_each(|(i, o)| copy_row(i, o));
    }
    Ok(())
}

/// The shared body of the `SelectV2` kernels.
fn select_v2<T: TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let b = {
        let (cond, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        cond.as_slice::<bool>()?;
        T::view(t)?;
        T::view(e)?;
        Broadcast::<3>::new([cond.dims(), t.dims(), e.dims()])
            .map_err(|err| broadcast_error(err, cond.shape(), t.shape(), e.shape()))?
    };
    let shape = b.out_shape().clone();
    let target = forward_or_allocate(ctx, &shape, b.is_identity(1), b.is_identity(2))?;
    let cond = ctx.input(0)?.clone();
    let (t, e) = then_else(ctx);
    let (ts, es) = operands::<T>(&t, &e)?;
    let c = cond.as_slice::<bool>()?;
    let out = T::view_mut(ctx.output_mut(0)?)?;
    if out.is_empty() {
        return Ok(());
    }
    if b.is_identity(0) && b.is_identity(1) && b.is_identity(2) {
        select_flat(c, ts, es, out, &target);
        return Ok(());
    }
    let step = |k: usize| usize::from(b.inner_contiguous(k));
    let (sc, st, se) = (step(0), step(1), step(2));
    for_each_segment(&b, out, |seg, [ic, it, ie]| {
        for (j, o) in seg.iter_mut().enumerate() {
            if c[ic + j * sc] {
                if !matches!(target, Target::HoldsThen) {
                    *o = ts[it + j * st].clone();
                }
            } else if !matches!(target, Target::HoldsElse) {
                *o = es[ie + j * se].clone();
            }
        }
    });
    Ok(())
}

/// `Select` for types with a Rust element type.
#[kernel(
    op = Select,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
         uint64, bool, complex64, complex128]
)]
fn select<T: TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    select_v1::<T>(ctx)
}

/// `Select` for `string`.
#[kernel(op = Select, device = CPU, T = [string])]
fn select_string(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    select_v1::<Vec<u8>>(ctx)
}

/// `SelectV2` for types with a Rust element type.
#[kernel(
    op = SelectV2,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
         uint64, bool, complex64, complex128]
)]
fn select_v2_kernel<T: TensorData>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    select_v2::<T>(ctx)
}

/// `SelectV2` for `string`.
#[kernel(op = SelectV2, device = CPU, T = [string])]
fn select_v2_string(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    select_v2::<Vec<u8>>(ctx)
}
