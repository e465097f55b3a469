//! Maps whose output is larger than the caches, written with non-temporal
//! stores: a plain store to memory that is not in cache first reads the
//! line it writes (a third of the traffic of a memory-bound map such as
//! `Abs` on 16M floats), a streaming store does not. Each block of output
//! elements is computed into a small buffer in cache, then streamed out:
//! maps ([`map_into_streamed`]) and binary operations on operands of the
//! output's shape (`super::binary_into`) alike.

use registry_core::tensor::TensorElement;

/// Outputs of at least this many bytes are streamed: beyond what the
/// caches of a few cores hold, so that the output would not be read again
/// from cache anyway.
pub(super) const MIN_BYTES: usize = 8 << 20;

/// Bytes of output computed into the staging buffer per block.
const BLOCK_BYTES: usize = 512;

/// A block of output elements in cache, aligned for 16-byte loads.
#[repr(C, align(64))]
struct Staging([std::mem::MaybeUninit<u8>; BLOCK_BYTES]);

/// Whether [`fill_streamed`] streams an output of `len` elements of `O`
/// (x86-64, outside Miri, outputs of [`MIN_BYTES`] or more).
pub(super) fn worth_it<O: TensorElement>(len: usize) -> bool {
    cfg!(all(target_arch = "x86_64", not(miri)))
        && BLOCK_BYTES.is_multiple_of(size_of::<O>())
        && std::mem::align_of::<O>() <= 16
        && len.saturating_mul(size_of::<O>()) >= MIN_BYTES
}

/// `dst[i] = f(src[i])` for the first `min(src.len(), dst.len())`
/// elements, through [`fill_streamed`]. The same values as
/// [`super::map_into_seq`].
pub(super) fn map_into_streamed<A: Copy, O: TensorElement, F: Fn(A) -> O>(
    src: &[A],
    dst: &mut [O],
    f: &F,
) {
    let n = src.len().min(dst.len());
    fill_streamed(&mut dst[..n], |start, block| {
        super::map_into_seq(&src[start..start + block.len()], block, f);
    });
}

/// Sets every element of `dst` through `fill(start, block)`, which must
/// set all of `block` to the elements `start..start + block.len()` (the
/// values it writes are the ones `dst` gets). Blocks of [`BLOCK_BYTES`]
/// that start 16-byte aligned are filled in a staging buffer in cache and
/// written with streaming stores (then fenced, so that they are visible to
/// the thread that waits for this one); the unaligned head and the tail are
/// filled in place.
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(super) fn fill_streamed<O: TensorElement>(dst: &mut [O], fill: impl Fn(usize, &mut [O])) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_sfence, _mm_stream_si128};
    use std::mem::MaybeUninit;

    let Some(&first) = dst.first() else {
        return;
    };
    let per_block = BLOCK_BYTES / size_of::<O>();
    // (`align_offset` may answer usize::MAX: then nothing is streamed.)
    let head = dst.as_ptr().align_offset(16).min(dst.len());
    let (head_dst, body_dst) = dst.split_at_mut(head);
    fill(0, head_dst);
    let mut staging = Staging([MaybeUninit::uninit(); BLOCK_BYTES]);
    // SAFETY: the staging buffer is 64-byte aligned (at least `O`'s
    // alignment, which `worth_it` checks is at most 16) and holds `per_block
    // * size_of::<O>() == BLOCK_BYTES` bytes, so it is `per_block` properly
    // aligned `MaybeUninit<O>`s, borrowed only through this slice.
    let slots: &mut [MaybeUninit<O>] =
        unsafe { std::slice::from_raw_parts_mut(staging.0.as_mut_ptr().cast(), per_block) };
    for slot in slots.iter_mut() {
        slot.write(first);
    }
    // SAFETY: every slot was just initialised; `MaybeUninit<O>` has `O`'s
    // layout.
    let stage: &mut [O] = unsafe { &mut *(std::ptr::from_mut(slots) as *mut [O]) };
    let mut start = head;
    let mut blocks = body_dst.chunks_exact_mut(per_block);
    for block in &mut blocks {
        fill(start, stage);
        start += per_block;
        let from = stage.as_ptr().cast::<__m128i>();
        let to = block.as_mut_ptr().cast::<__m128i>();
        for k in 0..BLOCK_BYTES / 16 {
            // SAFETY: `stage` is `BLOCK_BYTES` initialised bytes (values of a
            // `TensorElement`, whose types have no padding), 64-byte aligned,
            // and `from + k` lies inside it. `block` is `per_block` elements
            // (`BLOCK_BYTES` bytes) of the output, borrowed mutably here,
            // starting 16-byte aligned (the head above aligned the body, and
            // blocks are multiples of 16 bytes), so `to + k` is an aligned
            // 16-byte piece of it; the bytes copied are a valid `O` (they
            // are one). SSE2 is part of x86-64.
            unsafe { _mm_stream_si128(to.add(k), _mm_load_si128(from.add(k))) };
        }
    }
    fill(start, blocks.into_remainder());
    // Streaming stores are weakly ordered: fence them before the caller
    // (or the thread joining this chunk) reads the output.
    // SAFETY: SSE, all `_mm_sfence` needs, is part of x86-64.
    unsafe { _mm_sfence() };
}

/// Without streaming stores (other architectures, Miri): `fill` on all of
/// `dst` at once.
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
pub(super) fn fill_streamed<O: TensorElement>(dst: &mut [O], fill: impl Fn(usize, &mut [O])) {
    fill(0, dst);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `map_into_streamed` against the plain loop, for outputs starting at
    /// every offset within 16 bytes and lengths around whole blocks.
    fn matches_plain<O: TensorElement>(f: impl Fn(u32) -> O) {
        let per_block = BLOCK_BYTES / size_of::<O>();
        let src: Vec<u32> = (0..4 * per_block as u32 + 40)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let zero = f(0);
        for offset in 0..16 / size_of::<O>().min(16) + 1 {
            for len in [
                0,
                1,
                per_block - 1,
                per_block,
                3 * per_block + 7,
                src.len() - offset,
            ] {
                let mut out = vec![zero; src.len() + 1];
                let dst = &mut out[offset..offset + len];
                map_into_streamed(&src[..len], dst, &f);
                let want: Vec<O> = src[..len].iter().map(|&x| f(x)).collect();
                assert_eq!(
                    &out[offset..offset + len],
                    &want[..],
                    "offset {offset}, len {len}"
                );
                assert!(
                    out[..offset]
                        .iter()
                        .chain(&out[offset + len..])
                        .all(|v| *v == zero)
                );
            }
        }
    }

    #[test]
    fn streamed_maps_write_what_the_plain_loop_writes() {
        matches_plain(|x| x as f32 * 0.5);
        matches_plain(|x| f64::from(x) - 1.0);
        matches_plain(|x| x as u8);
        matches_plain(|x| x % 3 == 0);
        matches_plain(|x| x as i16);
        matches_plain(|x| registry_core::tensor::Complex128 {
            re: f64::from(x),
            im: -1.0,
        });
    }

    #[test]
    fn only_outputs_larger_than_the_caches_are_streamed() {
        assert!(!worth_it::<f32>(MIN_BYTES / 4 - 1));
        assert_eq!(
            worth_it::<f32>(MIN_BYTES / 4),
            cfg!(all(target_arch = "x86_64", not(miri)))
        );
        // Through the public map: chunks on threads, each streamed.
        let x: Vec<f32> = (0..MIN_BYTES / 4 + 13).map(|i| i as f32 - 1e6).collect();
        let mut y = vec![0.0f32; x.len()];
        super::super::map_into_tensor(&x, &mut y, f32::abs).unwrap();
        assert!(x.iter().zip(&y).all(|(a, b)| a.abs() == *b));
    }
}
