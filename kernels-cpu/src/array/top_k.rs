//! `TopKV2`: the `k` largest entries of each vector along the last
//! dimension, and their positions. The checks are
//! [`opreg_op_logic::top_k`]'s; the selection reproduces TF's CPU kernel
//! step by step, so that the outputs are TF's bit for bit, ties, NaNs and
//! the order of `sorted = false` included:
//!
//! - `k == 1`: Eigen's maximum reduction (packets of 8 lanes for `float`,
//!   `half` and `bfloat16`, 4 for `double`, then the scalar tail: a NaN in
//!   a packet is skipped, one in the tail wins), then the first position
//!   holding that maximum (position 0 when none does);
//! - `k == cols`: libstdc++'s `std::sort` (introsort) of the positions by
//!   descending value, then each run of equal values put in position order;
//! - otherwise: TF's `gtl::TopN` (a bounded heap on libstdc++'s heap
//!   algorithms) with a comparator that orders equal values by position;
//!   `sorted` extracts it with `std::sort_heap`, otherwise in heap order.
//!
//! (Checked against TF 2.21 on random rows with repeated values and NaNs.)
//! Rows are processed in parallel.

use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{TensorElement, bf16, f16};

use opreg_op_logic::top_k::top_k_geometry;
use opreg_standard_ops::TopKV2;
use std::marker::PhantomData;

/// An element type `TopKV2` ranks: ordered (floats partially), with Eigen's
/// `lowest()` (the most negative finite value) and its packet size.
pub(crate) trait TopKElement: TensorElement + PartialOrd {
    /// Eigen's `NumTraits<T>::lowest()`: where its maximum starts.
    const LOWEST: Self;
    /// Lanes of Eigen's packets for the maximum (1: no packets; integers
    /// have no NaN, so their packet size does not change the result).
    const PACKET: usize;
}

macro_rules! top_k_int {
    ($($t:ty),*) => {$(
        impl TopKElement for $t {
            const LOWEST: Self = <$t>::MIN;
            const PACKET: usize = 1;
        }
    )*};
}

top_k_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl TopKElement for f32 {
    const LOWEST: Self = f32::MIN;
    const PACKET: usize = 8;
}
impl TopKElement for f64 {
    const LOWEST: Self = f64::MIN;
    const PACKET: usize = 4;
}
impl TopKElement for f16 {
    const LOWEST: Self = f16::MIN;
    const PACKET: usize = 8;
}
impl TopKElement for bf16 {
    const LOWEST: Self = bf16::MIN;
    const PACKET: usize = 8;
}

/// C++'s `std::max(a, b)`: `a` unless `a < b` (so `a` when either is NaN).
fn std_max<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a < b { b } else { a }
}

/// The position TF's `k == 1` path picks: Eigen's maximum of `v`, then the
/// first position holding it (0 when none does, as for a NaN maximum).
fn arg_max_like_eigen<T: TopKElement>(v: &[T]) -> usize {
    let p = T::PACKET;
    let full = v.len() / p * p;
    // Packet lanes: `pmax(accum, x)` keeps the accumulator on NaN.
    let mut lanes = vec![T::LOWEST; p];
    for chunk in v[..full].chunks_exact(p) {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane = std_max(*lane, x);
        }
    }
    // The scalar tail: `accum = std::max(x, accum)` takes a NaN.
    let mut tail = T::LOWEST;
    for &x in &v[full..] {
        tail = std_max(x, tail);
    }
    let packed = lanes.into_iter().fold(T::LOWEST, std_max);
    let max = std_max(tail, packed);
    v.iter().position(|&x| x == max).unwrap_or(0)
}

// ---------------------------------------------------------------- libstdc++'s heap and sort

/// libstdc++'s `__push_heap`: moves `value` up from `hole` (not above
/// `top`).
fn push_heap_hole(
    a: &mut [usize],
    mut hole: usize,
    top: usize,
    value: usize,
    comp: &impl Fn(usize, usize) -> bool,
) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if !comp(a[parent], value) {
            break;
        }
        a[hole] = a[parent];
        hole = parent;
    }
    a[hole] = value;
}

/// libstdc++'s `__adjust_heap` on the heap `a[..len]`.
fn adjust_heap(
    a: &mut [usize],
    mut hole: usize,
    len: usize,
    value: usize,
    comp: &impl Fn(usize, usize) -> bool,
) {
    let top = hole;
    let mut second = hole;
    while len >= 1 && second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if comp(a[second], a[second - 1]) {
            second -= 1;
        }
        a[hole] = a[second];
        hole = second;
    }
    if len.is_multiple_of(2) && len >= 2 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        a[hole] = a[second - 1];
        hole = second - 1;
    }
    push_heap_hole(a, hole, top, value, comp);
}

/// `std::make_heap`.
fn make_heap(a: &mut [usize], comp: &impl Fn(usize, usize) -> bool) {
    let len = a.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = a[parent];
        adjust_heap(a, parent, len, value, comp);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// `std::pop_heap`: the top goes last, the rest stays a heap.
fn pop_heap(a: &mut [usize], comp: &impl Fn(usize, usize) -> bool) {
    let len = a.len();
    if len > 1 {
        let last = len - 1;
        let value = a[last];
        a[last] = a[0];
        adjust_heap(&mut a[..last], 0, last, value, comp);
    }
}

/// `std::push_heap`: the last element joins the heap.
fn push_heap(a: &mut [usize], comp: &impl Fn(usize, usize) -> bool) {
    if let Some(last) = a.len().checked_sub(1) {
        let value = a[last];
        push_heap_hole(a, last, 0, value, comp);
    }
}

/// `std::sort_heap`.
fn sort_heap(a: &mut [usize], comp: &impl Fn(usize, usize) -> bool) {
    let mut len = a.len();
    while len > 1 {
        pop_heap(&mut a[..len], comp);
        len -= 1;
    }
}

/// libstdc++'s `__unguarded_linear_insert` (guarded here at the start, which
/// a consistent comparator never reaches).
fn linear_insert(a: &mut [usize], mut last: usize, comp: &impl Fn(usize, usize) -> bool) {
    let value = a[last];
    while last > 0 && comp(value, a[last - 1]) {
        a[last] = a[last - 1];
        last -= 1;
    }
    a[last] = value;
}

/// libstdc++'s `__insertion_sort`.
fn insertion_sort(a: &mut [usize], comp: &impl Fn(usize, usize) -> bool) {
    for i in 1..a.len() {
        if comp(a[i], a[0]) {
            a[..=i].rotate_right(1);
        } else {
            linear_insert(a, i, comp);
        }
    }
}

/// libstdc++'s `__move_median_to_first`.
fn move_median_to_first(
    a: &mut [usize],
    result: usize,
    x: usize,
    y: usize,
    z: usize,
    comp: &impl Fn(usize, usize) -> bool,
) {
    let pick = if comp(a[x], a[y]) {
        if comp(a[y], a[z]) {
            y
        } else if comp(a[x], a[z]) {
            z
        } else {
            x
        }
    } else if comp(a[x], a[z]) {
        x
    } else if comp(a[y], a[z]) {
        z
    } else {
        y
    };
    a.swap(result, pick);
}

/// libstdc++'s `__unguarded_partition` of `a[first..last]` around `a[pivot]`
/// (bounded here, which a consistent comparator never needs).
fn unguarded_partition(
    a: &mut [usize],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    comp: &impl Fn(usize, usize) -> bool,
) -> usize {
    loop {
        while first < a.len() - 1 && comp(a[first], a[pivot]) {
            first += 1;
        }
        last -= 1;
        while last > 0 && comp(a[pivot], a[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        a.swap(first, last);
        first += 1;
    }
}

/// The threshold below which libstdc++ leaves ranges to insertion sort.
const SORT_THRESHOLD: usize = 16;

/// libstdc++'s `__introsort_loop` on `a[first..last]`.
fn introsort_loop(
    a: &mut [usize],
    first: usize,
    mut last: usize,
    mut depth: u32,
    comp: &impl Fn(usize, usize) -> bool,
) {
    while last - first > SORT_THRESHOLD {
        if depth == 0 {
            // std::__partial_sort(first, last, last): a heap sort.
            make_heap(&mut a[first..last], comp);
            sort_heap(&mut a[first..last], comp);
            return;
        }
        depth -= 1;
        let mid = first + (last - first) / 2;
        move_median_to_first(a, first, first + 1, mid, last - 1, comp);
        let cut = unguarded_partition(a, first + 1, last, first, comp);
        introsort_loop(a, cut, last, depth, comp);
        last = cut;
    }
}

/// libstdc++'s `std::sort`.
fn std_sort(a: &mut [usize], comp: &impl Fn(usize, usize) -> bool) {
    let n = a.len();
    if n == 0 {
        return;
    }
    introsort_loop(a, 0, n, 2 * n.ilog2(), comp);
    if n > SORT_THRESHOLD {
        insertion_sort(&mut a[..SORT_THRESHOLD], comp);
        for i in SORT_THRESHOLD..n {
            linear_insert(a, i, comp);
        }
    } else {
        insertion_sort(a, comp);
    }
}

// ---------------------------------------------------------------- one row

/// The positions of the top `k` of `v` (`0 < k <= v.len()`), as TF's CPU
/// kernel picks and orders them, into `out` (`k` entries).
fn top_k_row<T: TopKElement>(v: &[T], k: usize, sorted: bool, out: &mut [usize]) {
    let n = v.len();
    if k == 1 {
        out[0] = arg_max_like_eigen(v);
        return;
    }
    if k == n {
        for (i, o) in out.iter_mut().enumerate() {
            *o = i;
        }
        std_sort(out, &|a, b| v[b] < v[a]);
        // Runs of equal values in position order (NaN equals nothing).
        let mut start = 0;
        while start + 1 < n {
            let mut end = start + 1;
            if v[out[start]] == v[out[end]] {
                while end < n && v[out[start]] == v[out[end]] {
                    end += 1;
                }
                out[start..end].sort_unstable();
            }
            start = end;
        }
        return;
    }
    // gtl::TopN with TF's stable comparator.
    let comp = |a: usize, b: usize| {
        if v[b] < v[a] {
            true
        } else if v[b] > v[a] {
            false
        } else {
            a < b
        }
    };
    let mut heap: Vec<usize> = Vec::with_capacity(k + 1);
    let mut is_heap = false;
    for c in 0..n {
        if !is_heap {
            heap.push(c);
            if heap.len() == k + 1 {
                make_heap(&mut heap, &comp);
                pop_heap(&mut heap, &comp);
                heap.pop();
                is_heap = true;
            }
        } else if comp(c, heap[0]) {
            pop_heap(&mut heap, &comp);
            if let Some(last) = heap.last_mut() {
                *last = c;
            }
            push_heap(&mut heap, &comp);
        }
    }
    if sorted {
        sort_heap(&mut heap, &comp);
    }
    out.copy_from_slice(&heap[..k]);
}

// ---------------------------------------------------------------- the kernel

/// `TopKV2` for the types TF's CPU kernel has.
#[kernel(
    op = TopKV2,
    device = CPU,
    T = [bfloat16, half, float, double, int16, int32, int64, int8, uint16, uint32, uint64, uint8],
    index_type = [int16, int32, int64]
)]
struct TopKV2Kernel<T> {
    sorted: bool,
    element: PhantomData<fn() -> T>,
}

impl<T: TopKElement> BuildKernel for TopKV2Kernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            sorted: ctx.attr("sorted")?,
            element: PhantomData,
        })
    }
}

/// Rows per parallel task, about this many input elements each.
const TASK_ELEMENTS: usize = 16 * 1024;

impl<T: TopKElement> OpKernel for TopKV2Kernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let index_type = ctx.output_type(1)?;
        let index_max = match index_type {
            DataType::DtInt16 => i64::from(i16::MAX),
            DataType::DtInt32 => i64::from(i32::MAX),
            _ => i64::MAX,
        };
        let g = top_k_geometry(ctx.input(0)?.shape(), ctx.input(1)?, index_max)?;
        let (rows, cols, k) = (g.rows, g.cols, g.k);
        let mut positions = vec![0usize; rows * k];
        if k > 0 && rows > 0 {
            let input = ctx.input(0)?.as_slice::<T>()?;
            let rows_per_task = TASK_ELEMENTS.div_ceil(cols.max(1)).max(1);
            positions
                .par_chunks_mut(rows_per_task * k)
                .enumerate()
                .for_each(|(task, chunk)| {
                    for (r, out) in chunk.chunks_exact_mut(k).enumerate() {
                        let row = task * rows_per_task + r;
                        top_k_row(&input[row * cols..(row + 1) * cols], k, self.sorted, out);
                    }
                });
        }
        let input = ctx.take_input(0)?;
        let input = input.as_slice::<T>()?;
        let values = ctx.allocate_output(0, g.out_shape.clone())?;
        for (i, (v, &p)) in values
            .as_mut_slice::<T>()?
            .iter_mut()
            .zip(&positions)
            .enumerate()
        {
            *v = input[(i / k) * cols + p];
        }
        let indices = ctx.allocate_output(1, g.out_shape)?;
        // Positions are below the index type's maximum (checked above).
        match index_type {
            DataType::DtInt16 => write_indices::<i16>(indices.as_mut_slice()?, &positions),
            DataType::DtInt32 => write_indices::<i32>(indices.as_mut_slice()?, &positions),
            _ => write_indices::<i64>(indices.as_mut_slice()?, &positions),
        }
        Ok(())
    }
}

/// Writes `positions` as indices of type `I`.
fn write_indices<I: TryFrom<usize> + Default>(out: &mut [I], positions: &[usize]) {
    for (o, &p) in out.iter_mut().zip(positions) {
        *o = I::try_from(p).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(v: &[f32], k: usize, sorted: bool) -> Vec<usize> {
        let mut out = vec![0; k];
        top_k_row(v, k, sorted, &mut out);
        out
    }

    #[test]
    fn rows_match_tf() {
        // TF 2.21's indices for these rows.
        let nan = f32::NAN;
        let x = [3., 1., 4., 1., 5., 9., 2., 6.];
        assert_eq!(top(&x, 3, true), [5, 7, 4]);
        assert_eq!(top(&x, 3, false), [4, 5, 7]);
        assert_eq!(top(&x, 8, false), [5, 7, 4, 2, 0, 6, 1, 3]);
        let y = [5., 3., 5., 8., 9., 7., 9., 3.];
        assert_eq!(top(&y, 3, false), [3, 4, 6]);
        assert_eq!(top(&y, 8, true), [4, 6, 3, 5, 0, 2, 1, 7]);
        let z = [1., nan, 3., nan, 2.];
        assert_eq!(top(&z, 3, true), [1, 2, 4]);
        assert_eq!(top(&z, 5, true), [2, 0, 1, 3, 4]);
        assert_eq!(top(&z, 1, true), [4]);
        assert_eq!(top(&[nan, 1., 3.], 1, true), [2]);
        // A NaN in a packet is skipped, one in the tail wins.
        let mut p: Vec<f32> = (1..=8).map(|i| i as f32).collect();
        p[7] = nan;
        assert_eq!(top(&p, 1, true), [6]);
        p.push(nan);
        p[7] = 8.0;
        assert_eq!(top(&p, 1, true), [0]);
    }
}
