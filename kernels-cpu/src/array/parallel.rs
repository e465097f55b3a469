//! Splitting an output into row chunks for rayon, and staying sequential for
//! small outputs.

use rayon::prelude::*;

/// Outputs with fewer elements than this are filled on the calling thread.
pub(crate) const PARALLEL_MIN_ELEMENTS: usize = 32 * 1024;

/// About how many elements one parallel task fills.
const CHUNK_ELEMENTS: usize = 16 * 1024;

/// Calls `fill(first_row, chunk)` on chunks of whole `row_len`-element rows
/// of `out` (the last chunk may be shorter): once with all of `out` when it
/// is small, else in parallel on chunks of about [`CHUNK_ELEMENTS`].
pub(crate) fn for_each_row_chunk<T, F>(out: &mut [T], row_len: usize, fill: F)
where
    T: Send,
    F: Fn(usize, &mut [T]) + Sync + Send,
{
    for_each_row_chunk_min(out, row_len, 1, fill);
}

/// Like [`for_each_row_chunk`], with a multiple of `min_rows` rows in every
/// chunk but the last (for kernels that work on blocks of rows).
pub(crate) fn for_each_row_chunk_min<T, F>(out: &mut [T], row_len: usize, min_rows: usize, fill: F)
where
    T: Send,
    F: Fn(usize, &mut [T]) + Sync + Send,
{
    if row_len == 0 || out.is_empty() {
        return;
    }
    if out.len() < PARALLEL_MIN_ELEMENTS {
        fill(0, out);
        return;
    }
    let min_rows = min_rows.max(1);
    let rows = CHUNK_ELEMENTS.div_ceil(row_len).next_multiple_of(min_rows);
    let len = rows.saturating_mul(row_len);
    out.par_chunks_mut(len)
        .enumerate()
        .for_each(|(i, chunk)| fill(i * rows, chunk));
}

/// `dst.clone_from_slice(src)` (equal lengths), in parallel pieces when large.
pub(crate) fn copy<T: Clone + Send + Sync>(dst: &mut [T], src: &[T]) {
    if dst.len() < PARALLEL_MIN_ELEMENTS {
        dst.clone_from_slice(src);
        return;
    }
    dst.par_chunks_mut(CHUNK_ELEMENTS)
        .zip(src.par_chunks(CHUNK_ELEMENTS))
        .for_each(|(d, s)| d.clone_from_slice(s));
}
