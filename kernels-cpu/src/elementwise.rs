//! Element-wise loops: flat maps (in place or into another buffer) and
//! walks over a [`Broadcast`], parallel with rayon for large tensors.
//!
//! Work below [`PARALLEL_MIN_ELEMENTS`] elements (a quarter of it on a thread
//! of rayon's pool, see `crate::split`) runs on the calling thread;
//! larger work is split into contiguous chunks (a multiple of 64 elements,
//! so threads never share an output cache line). Each chunk is processed
//! with plain slice loops that LLVM vectorizes: the closure is inlined and
//! there is no index arithmetic or bounds check per element.
//!
//! ```
//! use kernels_cpu::elementwise;
//! use opreg_op_logic::broadcast::Broadcast;
//!
//! let b = Broadcast::new([&[2, 1][..], &[3][..]]).unwrap();
//! let (x, y) = ([10, 20], [1, 2, 3]);
//! let mut out = [0; 6];
//! elementwise::binary_into(&b, &x, &y, &mut out, |a: &i32, b: &i32| a + b).unwrap();
//! assert_eq!(out, [11, 12, 13, 21, 22, 23]);
//! ```

use multiversion::multiversion;
use rayon::prelude::*;
use registry_core::kernel::KernelError;
use registry_core::tensor::TensorElement;

mod streaming;

use opreg_op_logic::broadcast::{Broadcast, Dims};

/// Below this many elements, element-wise work stays on the calling thread.
pub const PARALLEL_MIN_ELEMENTS: usize = 32 * 1024;

/// The chunk length for `n` elements: all of them when small, else about
/// four chunks per thread, between half the parallel minimum and 1M
/// elements, a multiple of 64. On a thread of rayon's pool (a long run's
/// kernels), the minimum is a quarter of [`PARALLEL_MIN_ELEMENTS`].
pub fn chunk_len(n: usize) -> usize {
    let min_parallel = crate::split::min_parallel_work(PARALLEL_MIN_ELEMENTS);
    if n < min_parallel {
        return n.max(1);
    }
    let threads = rayon::current_num_threads().max(1);
    let per = n.div_ceil(threads.saturating_mul(4));
    per.clamp(min_parallel / 2, 1 << 20).next_multiple_of(64)
}

/// `data[i] = f(data[i])` for every element.
pub fn map_in_place<T, F>(data: &mut [T], f: F)
where
    T: Copy + Send,
    F: Fn(T) -> T + Sync,
{
    let chunk = chunk_len(data.len());
    if data.len() <= chunk {
        map_in_place_seq(data, &f);
    } else {
        data.par_chunks_mut(chunk)
            .for_each(|c| map_in_place_seq(c, &f));
    }
}

/// Compiled also for AVX2 and picked at run time (see [`map_into_seq`]).
#[multiversion(targets("x86_64+avx+avx2+fma"))]
fn map_in_place_seq<T: Copy, F: Fn(T) -> T>(data: &mut [T], f: &F) {
    for v in data {
        *v = f(*v);
    }
}

/// `dst[i] = f(src[i])` for every element; errors when the lengths differ.
pub fn map_into<A, O, F>(src: &[A], dst: &mut [O], f: F) -> Result<(), KernelError>
where
    A: Copy + Sync,
    O: Send,
    F: Fn(A) -> O + Sync,
{
    map_chunks(src, dst, &f, map_into_seq)
}

/// `seq(src chunk, dst chunk, f)` over chunks of [`chunk_len`] elements,
/// in parallel when there are several; errors when the lengths differ.
fn map_chunks<A, O, F>(
    src: &[A],
    dst: &mut [O],
    f: &F,
    seq: fn(&[A], &mut [O], &F),
) -> Result<(), KernelError>
where
    A: Copy + Sync,
    O: Send,
    F: Sync,
{
    check_len("input", src.len(), dst.len())?;
    let chunk = chunk_len(dst.len());
    if dst.len() <= chunk {
        seq(src, dst, f);
    } else {
        dst.par_chunks_mut(chunk)
            .zip(src.par_chunks(chunk))
            .for_each(|(d, s)| seq(s, d, f));
    }
    Ok(())
}

/// [`map_into`] into a tensor's elements: an output of 8 MiB or more is
/// written with streaming stores, which do not read the output's memory
/// first (`Abs` on 16M floats into a fresh buffer: 5-25% faster, measured
/// outside the tree). The same values as [`map_into`].
///
/// ```
/// let x = vec![-1.5f32; 4 << 20];
/// let mut y = vec![0.0f32; x.len()];
/// kernels_cpu::elementwise::map_into_tensor(&x, &mut y, f32::abs).unwrap();
/// assert!(y.iter().all(|&v| v == 1.5));
/// ```
pub fn map_into_tensor<A, O, F>(src: &[A], dst: &mut [O], f: F) -> Result<(), KernelError>
where
    A: Copy + Sync,
    O: TensorElement,
    F: Fn(A) -> O + Sync,
{
    let seq: fn(&[A], &mut [O], &F) = if streaming::worth_it::<O>(dst.len()) {
        streaming::map_into_streamed
    } else {
        map_into_seq
    };
    map_chunks(src, dst, &f, seq)
}

/// Compiled also for AVX2 (picked at run time when the processor has it):
/// 8 lanes per instruction for the maps whose `f` vectorizes (the
/// exponential's activations above all), the same arithmetic either way
/// (Rust never fuses a multiply and an add on its own).
#[multiversion(targets("x86_64+avx+avx2+fma"))]
fn map_into_seq<A: Copy, O, F: Fn(A) -> O>(src: &[A], dst: &mut [O], f: &F) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = f(s);
    }
}

fn check_len(what: &str, actual: usize, expected: usize) -> Result<(), KernelError> {
    if actual == expected {
        Ok(())
    } else {
        Err(KernelError::internal(format!(
            "element-wise loop: {what} has {actual} elements, expected {expected}"
        )))
    }
}

/// Calls `f(segment, offsets)` for consecutive runs of output elements that
/// lie in one innermost row of `b`'s reduced problem, in parallel chunks
/// for large outputs. `offsets[k]` is operand `k`'s element index for the
/// first element of the segment; along the segment operand `k` advances by
/// one element when [`Broadcast::inner_contiguous`] is true for it, else it
/// stays put. `out` must have `b.out_len()` elements.
pub fn for_each_segment<O, const K: usize, F>(b: &Broadcast<K>, out: &mut [O], f: F)
where
    O: Send,
    F: Fn(&mut [O], [usize; K]) + Sync,
{
    let n = out.len();
    if n == 0 {
        return;
    }
    let chunk = chunk_len(n);
    if n <= chunk {
        walk(b, 0, out, &f);
    } else {
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| walk(b, i * chunk, c, &f));
    }
}

/// Walks the output elements `start..start + out.len()` row segment by row
/// segment, keeping the operands' offsets up to date with an odometer (one
/// division per dimension per chunk, none per element).
fn walk<O, const K: usize, F>(b: &Broadcast<K>, start: usize, out: &mut [O], f: &F)
where
    F: Fn(&mut [O], [usize; K]),
{
    let dims = b.dims();
    let r = dims.len();
    let inner = dims[r - 1];
    let mut idx: Dims = smallvec::smallvec![0; r];
    let mut rem = start;
    for d in (0..r).rev() {
        idx[d] = rem % dims[d];
        rem /= dims[d];
    }
    // Offset of each operand at the start of the current row.
    let mut base = [0usize; K];
    for (k, base) in base.iter_mut().enumerate() {
        let s = b.strides(k);
        *base = (0..r - 1).map(|d| idx[d] * s[d]).sum();
    }
    let inner_step: [usize; K] = std::array::from_fn(|k| b.strides(k)[r - 1]);
    let mut col = idx[r - 1];
    let mut rest: &mut [O] = out;
    while !rest.is_empty() {
        let len = (inner - col).min(rest.len());
        let (seg, tail) = std::mem::take(&mut rest).split_at_mut(len);
        let offsets: [usize; K] = std::array::from_fn(|k| base[k] + col * inner_step[k]);
        f(seg, offsets);
        rest = tail;
        col += len;
        if col == inner {
            col = 0;
            for d in (0..r - 1).rev() {
                idx[d] += 1;
                for (k, base) in base.iter_mut().enumerate() {
                    *base += b.strides(k)[d];
                }
                if idx[d] < dims[d] {
                    break;
                }
                idx[d] = 0;
                for (k, base) in base.iter_mut().enumerate() {
                    *base -= b.strides(k)[d] * dims[d];
                }
            }
        }
    }
}

fn check_broadcast<const K: usize>(
    b: &Broadcast<K>,
    lens: [usize; K],
    out: usize,
) -> Result<(), KernelError> {
    check_len("the output", out, b.out_len())?;
    for (k, len) in lens.into_iter().enumerate() {
        check_len("an operand", len, b.in_len(k))?;
    }
    Ok(())
}

/// `out = f(x, y)` element-wise with broadcasting (`x` and `y` are operands
/// 0 and 1 of `b`). Fast loops for tensor-tensor, tensor-scalar and
/// scalar-tensor rows; an output of 8 MiB or more whose rows take both
/// operands element by element is written with streaming stores (as
/// [`map_into_tensor`]'s).
///
/// ```
/// use kernels_cpu::elementwise::binary_into;
/// use opreg_op_logic::broadcast::Broadcast;
///
/// let b = Broadcast::new([&[2, 3][..], &[3][..]]).unwrap();
/// let mut out = [0.0f32; 6];
/// binary_into(&b, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[10.0, 20.0, 30.0], &mut out, |a, c| a + c).unwrap();
/// assert_eq!(out, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
/// ```
pub fn binary_into<A, B, O, F>(
    b: &Broadcast<2>,
    x: &[A],
    y: &[B],
    out: &mut [O],
    f: F,
) -> Result<(), KernelError>
where
    A: Sync,
    B: Sync,
    O: TensorElement,
    F: Fn(&A, &B) -> O + Sync,
{
    check_broadcast(b, [x.len(), y.len()], out.len())?;
    let (xv, yv) = (b.inner_contiguous(0), b.inner_contiguous(1));
    let stream = streaming::worth_it::<O>(out.len());
    let zip = |seg: &mut [O], x: &[A], y: &[B]| {
        for (o, (a, c)) in seg.iter_mut().zip(x.iter().zip(y)) {
            *o = f(a, c);
        }
    };
    for_each_segment(b, out, |seg, [ix, iy]| {
        let n = seg.len();
        match (xv, yv) {
            (true, true) if stream => {
                let (x, y) = (&x[ix..ix + n], &y[iy..iy + n]);
                streaming::fill_streamed(seg, |start, block| {
                    let end = start + block.len();
                    zip(block, &x[start..end], &y[start..end]);
                });
            }
            (true, true) => zip(seg, &x[ix..ix + n], &y[iy..iy + n]),
            (true, false) => {
                let c = &y[iy];
                for (o, a) in seg.iter_mut().zip(&x[ix..ix + n]) {
                    *o = f(a, c);
                }
            }
            (false, true) => {
                let a = &x[ix];
                for (o, c) in seg.iter_mut().zip(&y[iy..iy + n]) {
                    *o = f(a, c);
                }
            }
            (false, false) => {
                for o in seg {
                    *o = f(&x[ix], &y[iy]);
                }
            }
        }
    });
    Ok(())
}

/// `out = f(out, y)` element-wise, where `out` holds operand 0 of `b`
/// (forwarded, so it maps one-to-one onto the output) and `y` is operand 1.
pub fn binary_in_place_left<T, B, F>(
    b: &Broadcast<2>,
    out: &mut [T],
    y: &[B],
    f: F,
) -> Result<(), KernelError>
where
    T: Send,
    B: Sync,
    F: Fn(&T, &B) -> T + Sync,
{
    check_broadcast(b, [out.len(), y.len()], out.len())?;
    let yv = b.inner_contiguous(1);
    for_each_segment(b, out, |seg, [_, iy]| {
        let n = seg.len();
        if yv {
            for (o, c) in seg.iter_mut().zip(&y[iy..iy + n]) {
                *o = f(o, c);
            }
        } else {
            let c = &y[iy];
            for o in seg {
                *o = f(o, c);
            }
        }
    });
    Ok(())
}

/// `out = f(x, out)` element-wise, where `x` is operand 0 of `b` and `out`
/// holds operand 1 (forwarded).
pub fn binary_in_place_right<A, T, F>(
    b: &Broadcast<2>,
    x: &[A],
    out: &mut [T],
    f: F,
) -> Result<(), KernelError>
where
    A: Sync,
    T: Send,
    F: Fn(&A, &T) -> T + Sync,
{
    check_broadcast(b, [x.len(), out.len()], out.len())?;
    let xv = b.inner_contiguous(0);
    for_each_segment(b, out, |seg, [ix, _]| {
        let n = seg.len();
        if xv {
            for (o, a) in seg.iter_mut().zip(&x[ix..ix + n]) {
                *o = f(a, o);
            }
        } else {
            let a = &x[ix];
            for o in seg {
                *o = f(a, o);
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: index arithmetic per element.
    fn naive(xs: &[usize], ys: &[usize], x: &[i64], y: &[i64]) -> (Vec<usize>, Vec<i64>) {
        let rank = xs.len().max(ys.len());
        let pad = |s: &[usize]| {
            let mut v = vec![1; rank - s.len()];
            v.extend_from_slice(s);
            v
        };
        let (px, py) = (pad(xs), pad(ys));
        let out: Vec<usize> = (0..rank).map(|d| px[d].max(py[d])).collect();
        let n: usize = out.iter().product();
        let mut res = Vec::with_capacity(n);
        for i in 0..n {
            let (mut rem, mut ix, mut iy, mut sx, mut sy) = (i, 0, 0, 1, 1);
            for d in (0..rank).rev() {
                let c = rem % out[d];
                rem /= out[d];
                if px[d] != 1 {
                    ix += c * sx;
                }
                if py[d] != 1 {
                    iy += c * sy;
                }
                sx *= px[d];
                sy *= py[d];
            }
            res.push(x[ix] * 1000 + y[iy]);
        }
        (out, res)
    }

    #[test]
    fn walks_match_naive_indexing_across_chunks() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[7, 1, 5], &[3, 1]),
            (&[300, 1, 1, 3], &[1, 200, 2, 1]),
            (&[1], &[70000]),
            (&[70001], &[70001]),
            (&[2, 1, 40000], &[2, 3, 1]),
            (&[], &[4]),
        ];
        for (xs, ys) in cases {
            let nx: usize = xs.iter().product();
            let ny: usize = ys.iter().product();
            let x: Vec<i64> = (0..nx as i64).collect();
            let y: Vec<i64> = (0..ny as i64).map(|v| v % 997).collect();
            let (out_dims, expected) = naive(xs, ys, &x, &y);
            let b = Broadcast::new([*xs, *ys]).unwrap();
            assert_eq!(b.out_shape().dims(), out_dims.as_slice());
            let f = |a: &i64, c: &i64| a * 1000 + c;
            let mut out = vec![0i64; expected.len()];
            binary_into(&b, &x, &y, &mut out, f).unwrap();
            assert_eq!(out, expected, "{xs:?} vs {ys:?}");
            if b.is_identity(0) {
                let mut o = x.clone();
                binary_in_place_left(&b, &mut o, &y, f).unwrap();
                assert_eq!(o, expected);
            }
            if b.is_identity(1) {
                let mut o = y.clone();
                binary_in_place_right(&b, &x, &mut o, f).unwrap();
                assert_eq!(o, expected);
            }
        }
    }

    /// Outputs large enough to be streamed, at offsets within 16 bytes (the
    /// streamed blocks start after an unaligned head): every element is the
    /// plain loop's, and the elements around the output are untouched.
    #[test]
    fn large_binary_outputs_are_the_plain_loops() {
        let n = streaming::MIN_BYTES / 4 + 37;
        assert_eq!(
            streaming::worth_it::<f32>(n),
            cfg!(all(target_arch = "x86_64", not(miri)))
        );
        let x: Vec<f32> = (0..n).map(|i| (i % 1013) as f32 - 500.0).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 211) as f32 * 0.25).collect();
        let b = Broadcast::new([&[n][..], &[n][..]]).unwrap();
        for offset in [0, 1, 3] {
            let mut out = vec![-7.0f32; n + 4];
            binary_into(&b, &x, &y, &mut out[offset..offset + n], |a, c| a * c - 1.0).unwrap();
            let inside = &out[offset..offset + n];
            assert!(
                inside
                    .iter()
                    .zip(x.iter().zip(&y))
                    .all(|(o, (a, c))| *o == a * c - 1.0),
                "offset {offset}"
            );
            assert!(
                out[..offset]
                    .iter()
                    .chain(&out[offset + n..])
                    .all(|v| *v == -7.0)
            );
        }
        // Comparisons write bools (one byte each), streamed from 8M of them.
        let n = streaming::MIN_BYTES + 5;
        let (x, y): (Vec<u8>, Vec<u8>) = (0..n).map(|i| (i as u8, (i % 251) as u8)).unzip();
        assert!(streaming::worth_it::<bool>(n));
        let b = Broadcast::new([&[n][..], &[n][..]]).unwrap();
        let mut less = vec![false; n];
        binary_into(&b, &x, &y, &mut less, |a, c| a < c).unwrap();
        assert!(
            less.iter()
                .zip(x.iter().zip(&y))
                .all(|(l, (a, c))| *l == (a < c))
        );
    }

    #[test]
    fn maps_check_lengths() {
        let mut v: Vec<u32> = (0..100_000).collect();
        map_in_place(&mut v, |x| x * 2);
        assert_eq!(v[99_999], 199_998);
        let mut d = vec![0u64; 100_000];
        map_into(&v, &mut d, |x| u64::from(x) + 1).unwrap();
        assert_eq!(d[5], 11);
        assert!(map_into(&v[1..], &mut d, u64::from).is_err());
    }
}
