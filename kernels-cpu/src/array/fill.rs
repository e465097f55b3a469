//! `Fill`, `ZerosLike` and `OnesLike`: outputs holding one value
//! everywhere. `Fill` moves its value as bytes (any dtype, strings
//! included); `ZerosLike` is a fresh zero-filled output (TF's `T()`: 0,
//! `false`, the empty string); `OnesLike` writes 1 of its type, in place
//! when nothing else holds the input's buffer.

use opreg_standard_ops::{Fill, OnesLike, ZerosLike};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{Complex64, Complex128, TensorElement, bf16, f16};

use super::elements::{ElementOp, run_on_elements};
use super::parallel::PARALLEL_MIN_ELEMENTS;
use opreg_op_logic::fill::fill_shape;

/// About how many elements one parallel task fills.
const CHUNK: usize = 16 * 1024;

/// Sets every element of `out` to `value`, in parallel when large.
fn fill_with<T: Clone + Send + Sync>(out: &mut [T], value: &T) {
    if out.len() < PARALLEL_MIN_ELEMENTS {
        out.fill(value.clone());
        return;
    }
    out.par_chunks_mut(CHUNK)
        .for_each(|chunk| chunk.fill(value.clone()));
}

/// Fills the output with the first element of the single input.
struct FillPlan;

impl ElementOp for FillPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let value = inputs
            .first()
            .and_then(|v| v.first())
            .ok_or_else(|| KernelError::internal("fill without a value"))?;
        fill_with(out, value);
        Ok(())
    }
}

/// `Fill` for every type TF's CPU kernel has (but variants and resources).
#[kernel(
    op = Fill,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int4, int64,
         int8, qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint4, uint64,
         uint8],
    index_type = [int32, int64],
    host_memory = ["dims"]
)]
fn fill(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = fill_shape(ctx.input(0)?, ctx.input(1)?.shape())?;
    let empty = shape.num_elements() == 0;
    let value = ctx.take_input(1)?;
    let out = ctx.allocate_output(0, shape)?;
    if empty {
        return Ok(());
    }
    run_on_elements(&FillPlan, &[&value], out)
}

/// `ZerosLike` for the types TF's CPU kernel has (but variants): a
/// zero-filled output of the input's shape.
#[kernel(
    op = ZerosLike,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         string, uint16, uint32, uint64, uint8]
)]
fn zeros_like(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = ctx.input(0)?.shape().clone();
    // Host tensors are allocated zero-filled (empty strings for strings).
    ctx.allocate_output(0, shape)?;
    Ok(())
}

/// An element type with a one (`true` for `bool`).
trait One: TensorElement {
    /// One.
    const ONE: Self;
}

macro_rules! one {
    ($($t:ty => $one:expr),* $(,)?) => {$(
        impl One for $t {
            const ONE: Self = $one;
        }
    )*};
}

one!(
    i8 => 1, i16 => 1, i32 => 1, i64 => 1, u8 => 1, u16 => 1, u32 => 1, u64 => 1,
    f32 => 1.0, f64 => 1.0, f16 => f16::ONE, bf16 => bf16::ONE, bool => true,
    Complex64 => Complex64::new(1.0, 0.0), Complex128 => Complex128::new(1.0, 0.0),
);

/// `OnesLike` for the types TF's CPU kernel has: the input's buffer when
/// nothing else holds it, overwritten with ones.
#[kernel(
    op = OnesLike,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn ones_like<T: One>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = ctx.input(0)?.shape().clone();
    ctx.forward_input_or_allocate_output(&[0], 0, shape)?;
    fill_with(ctx.output_mut(0)?.as_mut_slice::<T>()?, &T::ONE);
    Ok(())
}
