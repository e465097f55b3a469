//! Maps whose output is larger than the caches, written with non-temporal
//! stores: a plain store to memory that is not in cache first reads the
//! line it writes (a third of the traffic of a memory-bound map such as
//! `Abs` on 16M floats), a streaming store does not. Each block of output
//! elements is computed into a small buffer in cache, then streamed out.

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

/// Whether [`map_into_streamed`] streams an output of `len` elements of `O`
/// (x86-64, outside Miri, outputs of [`MIN_BYTES`] or more).
pub(super) fn worth_it<O: TensorElement>(len: usize) -> bool {
    cfg!(all(target_arch = "x86_64", not(miri)))
        && BLOCK_BYTES.is_multiple_of(size_of::<O>())
        && std::mem::align_of::<O>() <= 16
        && len.saturating_mul(size_of::<O>()) >= MIN_BYTES
}

/// `dst[i] = f(src[i])` for the first `min(src.len(), dst.len())`
/// elements, the 16-byte aligned blocks of `dst` written with streaming
/// stores (then fenced, so that they are visible to the thread that waits
/// for this one). The same values as [`super::map_into_seq`].
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[multiversion::multiversion(targets("x86_64+avx+avx2+fma"))]
pub(super) fn map_into_streamed<A: Copy, O: TensorElement, F: Fn(A) -> O>(
    src: &[A],
    dst: &mut [O],
    f: &F,
) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_sfence, _mm_stream_si128};
    use std::mem::MaybeUninit;

    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    let per_block = BLOCK_BYTES / size_of::<O>();
    // (`align_offset` may answer usize::MAX: then nothing is streamed.)
    let head = dst.as_ptr().align_offset(16).min(n);
    let (head_dst, body_dst) = dst.split_at_mut(head);
    let (head_src, body_src) = src.split_at(head);
    super::map_into_seq(head_src, head_dst, f);
    let mut staging = Staging([MaybeUninit::uninit(); BLOCK_BYTES]);
    let mut dst_blocks = body_dst.chunks_exact_mut(per_block);
    let mut src_blocks = body_src.chunks_exact(per_block);
    for (d, s) in (&mut dst_blocks).zip(&mut src_blocks) {
        // SAFETY: the staging buffer is 64-byte aligned (at least `O`'s
        // alignment) and holds `per_block * size_of::<O>() == BLOCK_BYTES`
        // bytes, so it is `per_block` properly aligned `MaybeUninit<O>`s,
        // borrowed only through this slice until it ends below.
        let stage: &mut [MaybeUninit<O>] =
            unsafe { std::slice::from_raw_parts_mut(staging.0.as_mut_ptr().cast(), per_block) };
        for (slot, &x) in stage.iter_mut().zip(s) {
            slot.write(f(x));
        }
        let from = staging.0.as_ptr().cast::<__m128i>();
        let to = d.as_mut_ptr().cast::<__m128i>();
        for k in 0..BLOCK_BYTES / 16 {
            // SAFETY: every byte of the staging buffer was just written
            // (`per_block` elements of a `TensorElement`, whose types have
            // no padding), `from` is 64-byte aligned and `from + k` lies
            // inside it. `d` is `per_block` elements (`BLOCK_BYTES` bytes)
            // of the output, borrowed mutably here, starting 16-byte
            // aligned (the head above aligned the body, and blocks are
            // multiples of 16 bytes), so `to + k` is an aligned 16-byte
            // piece of it; any bit pattern the staging holds is a valid `O`
            // (it is one, copied byte for byte). SSE2 is part of x86-64.
            unsafe { _mm_stream_si128(to.add(k), _mm_load_si128(from.add(k))) };
        }
    }
    super::map_into_seq(src_blocks.remainder(), dst_blocks.into_remainder(), f);
    // Streaming stores are weakly ordered: fence them before the caller
    // (or the thread joining this chunk) reads the output.
    // SAFETY: SSE, all `_mm_sfence` needs, is part of x86-64. (In the
    // clone compiled for AVX2 the call is safe without the block.)
    #[allow(unused_unsafe)]
    unsafe {
        _mm_sfence()
    };
}

/// Without streaming stores (other architectures, Miri): the plain loop.
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
pub(super) fn map_into_streamed<A: Copy, O: TensorElement, F: Fn(A) -> O>(
    src: &[A],
    dst: &mut [O],
    f: &F,
) {
    super::map_into_seq(src, dst, f);
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
