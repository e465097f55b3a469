//! `ArgMax` and `ArgMin`: the index of the largest (smallest) value along
//! one axis.
//!
//! Ties give the first index. The scan follows Eigen's `ArgMaxPairReducer`,
//! which TensorFlow's CPU kernel uses: the running best starts at index 0
//! with the type's lowest *finite* value, and an element replaces it only
//! when it is strictly greater. So NaN never wins (NaNs are skipped; a row
//! of only NaN gives 0), and neither does a value equal to the lowest finite
//! value (`-inf` and `f32::MIN` rows give 0). `ArgMin` mirrors it
//! (Eigen's `ArgMinPairReducer`): it starts at the highest finite value and
//! takes an element only when it is strictly smaller.
//!
//! `output_type` int16/uint16 indices wrap past their range, as TF's
//! `static_cast` does.

use opreg_standard_ops::{ArgMax, ArgMin};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::DataType;
use registry_core::tensor::{TensorElement, bf16, f16};

use super::engine::PARALLEL_MIN;
use crate::numeric::Element;
use opreg_op_logic::axes::ArgAxis;

/// An element type ArgMax compares.
pub trait ArgMaxElement: Element + TensorElement {
    /// The comparison key (`f32` for `half`/`bfloat16`).
    type Key: Copy + PartialOrd + Send + Sync;
    /// Eigen's starting value of ArgMax: the lowest finite value (`false`
    /// for bool).
    const FLOOR: Self::Key;
    /// Eigen's starting value of ArgMin: the highest finite value (`true`
    /// for bool).
    const CEIL: Self::Key;
    /// The key of a value.
    fn key(self) -> Self::Key;
}

macro_rules! plain_key {
    ($($t:ty => $floor:expr, $ceil:expr),* $(,)?) => {$(
        impl ArgMaxElement for $t {
            type Key = $t;
            const FLOOR: $t = $floor;
            const CEIL: $t = $ceil;
            #[inline]
            fn key(self) -> $t {
                self
            }
        }
    )*};
}

plain_key!(
    f32 => f32::MIN, f32::MAX, f64 => f64::MIN, f64::MAX,
    i8 => i8::MIN, i8::MAX, i16 => i16::MIN, i16::MAX, i32 => i32::MIN, i32::MAX,
    i64 => i64::MIN, i64::MAX,
    u8 => 0, u8::MAX, u16 => 0, u16::MAX, u32 => 0, u32::MAX, u64 => 0, u64::MAX,
    bool => false, true,
);

impl ArgMaxElement for f16 {
    type Key = f32;
    const FLOOR: f32 = -65504.0;
    const CEIL: f32 = 65504.0;
    #[inline]
    fn key(self) -> f32 {
        self.to_f32()
    }
}

impl ArgMaxElement for bf16 {
    type Key = f32;
    /// bfloat16's lowest finite value (`0xff7f`), widened exactly.
    const FLOOR: f32 = f32::from_bits(0xff7f_0000);
    /// bfloat16's highest finite value (`0x7f7f`), widened exactly.
    const CEIL: f32 = f32::from_bits(0x7f7f_0000);
    #[inline]
    fn key(self) -> f32 {
        self.to_f32()
    }
}

/// An ArgMax output index type.
pub trait IndexElement: Element + TensorElement {
    /// The index, truncated to the type as C++'s `static_cast` does.
    fn from_index(i: usize) -> Self;
}

macro_rules! index_element {
    ($($t:ty),*) => {$(
        impl IndexElement for $t {
            #[inline]
            #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
            fn from_index(i: usize) -> $t {
                i as $t
            }
        }
    )*};
}

index_element!(i16, u16, i32, i64);

/// `ArgMax` for every type TF registers on CPU, with the index as int16,
/// uint16, int32 or int64 (`output_type`); `dimension` is a host scalar of
/// int16, int32 or int64.
#[kernel(
    op = ArgMax,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
         bool],
    output_type = [int16, uint16, int32, int64],
    host_memory = ["dimension"]
)]
#[kernel(
    op = ArgMin,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
         bool],
    output_type = [int32, int64],
    host_memory = ["dimension"]
)]
fn arg_max<T: ArgMaxElement>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if ctx.info().op() == "ArgMin" {
        arg_dispatch::<T, true>(ctx)
    } else {
        arg_dispatch::<T, false>(ctx)
    }
}

fn arg_dispatch<T: ArgMaxElement, const MIN: bool>(
    ctx: &mut OpKernelContext<'_>,
) -> Result<(), KernelError> {
    match ctx.output_type(0)? {
        DataType::DtInt16 => arg_max_as::<T, i16, MIN>(ctx),
        DataType::DtUint16 => arg_max_as::<T, u16, MIN>(ctx),
        DataType::DtInt32 => arg_max_as::<T, i32, MIN>(ctx),
        DataType::DtInt64 => arg_max_as::<T, i64, MIN>(ctx),
        other => Err(KernelError::invalid_argument(format!(
            "{}: unsupported output_type {}",
            ctx.info().op(),
            other.as_str_name()
        ))),
    }
}

/// Whether `key` beats `best`: strictly greater (ArgMax) or smaller
/// (ArgMin); NaN never does.
#[inline(always)]
fn beats<K: PartialOrd, const MIN: bool>(key: K, best: K) -> bool {
    if MIN { key < best } else { key > best }
}

/// The starting best of a scan.
#[inline(always)]
fn start<T: ArgMaxElement, const MIN: bool>() -> T::Key {
    if MIN { T::CEIL } else { T::FLOOR }
}

fn arg_max_as<T: ArgMaxElement, O: IndexElement, const MIN: bool>(
    ctx: &mut OpKernelContext<'_>,
) -> Result<(), KernelError> {
    let input = ctx.input(0)?.clone();
    let ArgAxis {
        outer,
        n,
        inner,
        out_shape,
    } = ArgAxis::new(input.shape(), ctx.input(1)?)?;
    let x = input.as_slice::<T>()?;
    let out = ctx.allocate_output(0, out_shape)?;
    let out = out.as_mut_slice::<O>()?;
    if out.is_empty() {
        return Ok(());
    }
    arg_max_into::<T, O, MIN>(x, outer, n, inner, out);
    Ok(())
}

/// The first index of the maximum of a contiguous row.
#[inline]
fn row_arg_max<T: ArgMaxElement, const MIN: bool>(row: &[T]) -> usize {
    let mut best = start::<T, MIN>();
    let mut best_index = 0;
    for (i, &v) in row.iter().enumerate() {
        let k = v.key();
        if beats::<_, MIN>(k, best) {
            best = k;
            best_index = i;
        }
    }
    best_index
}

/// Columns `[j0, j0 + dst.len())` of block `block` (`n` rows of `inner`).
fn column_arg_max<T: ArgMaxElement, O: IndexElement, const MIN: bool>(
    block: &[T],
    n: usize,
    inner: usize,
    j0: usize,
    dst: &mut [O],
    best: &mut Vec<T::Key>,
) {
    let width = dst.len();
    best.clear();
    best.resize(width, start::<T, MIN>());
    dst.fill(O::from_index(0));
    for k in 0..n {
        let base = k * inner + j0;
        let Some(row) = block.get(base..base + width) else {
            return;
        };
        let index = O::from_index(k);
        for ((b, d), &v) in best.iter_mut().zip(dst.iter_mut()).zip(row) {
            let key = v.key();
            if beats::<_, MIN>(key, *b) {
                *b = key;
                *d = index;
            }
        }
    }
}

/// `x` is `[outer, n, inner]`, `out` is `[outer, inner]`.
fn arg_max_into<T: ArgMaxElement, O: IndexElement, const MIN: bool>(
    x: &[T],
    outer: usize,
    n: usize,
    inner: usize,
    out: &mut [O],
) {
    const TILE: usize = 1024;
    let parallel = x.len() >= PARALLEL_MIN;
    if inner == 1 {
        if parallel && outer > 1 {
            let rows_per_task = (PARALLEL_MIN / 2 / n).max(1);
            out.par_chunks_mut(rows_per_task)
                .zip(x.par_chunks(rows_per_task * n))
                .for_each(|(dst, src)| {
                    for (o, row) in dst.iter_mut().zip(src.chunks_exact(n)) {
                        *o = O::from_index(row_arg_max::<T, MIN>(row));
                    }
                });
        } else {
            for (o, row) in out.iter_mut().zip(x.chunks_exact(n)) {
                *o = O::from_index(row_arg_max::<T, MIN>(row));
            }
        }
        return;
    }
    let block = n * inner;
    let task = |o: usize, t: usize, dst: &mut [O], best: &mut Vec<T::Key>| {
        if let Some(b) = x.get(o * block..(o + 1) * block) {
            column_arg_max::<T, O, MIN>(b, n, inner, t * TILE, dst, best);
        }
    };
    if parallel {
        out.par_chunks_mut(inner).enumerate().for_each(|(o, dst)| {
            dst.par_chunks_mut(TILE)
                .enumerate()
                .for_each_init(Vec::new, |best, (t, tile)| task(o, t, tile, best));
        });
    } else {
        let mut best = Vec::new();
        for (o, dst) in out.chunks_mut(inner).enumerate() {
            for (t, tile) in dst.chunks_mut(TILE).enumerate() {
                task(o, t, tile, &mut best);
            }
        }
    }
}
