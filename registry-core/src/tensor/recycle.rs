//! Freed blocks of host buffers, kept for the next buffer of the same
//! size (what TensorFlow's BFC allocator does for its tensors).
//!
//! A graph's runs allocate the same sizes in the same order, run after run:
//! a buffer freed by one node is soon asked for again by a later node or
//! the next run. Taking it back from here costs a lock and a short scan
//! instead of the heap's `calloc` or a fresh mapping, and a buffer whose
//! kernel writes every element
//! ([`HostBuffer::for_overwrite`](super::HostBuffer::for_overwrite))
//! skips the zero fill too: its bytes are whatever the block held last,
//! which are initialised (every block starts zeroed and is only written
//! through byte slices), so reading them before writing is not undefined
//! behaviour, only unspecified values.
//!
//! Heap blocks of [`MIN_BYTES`] or more are kept (smaller ones cost the
//! heap little), at most [`CAP_BYTES`] of them in all. Large buffers are
//! anonymous memory mappings, whose pages the OS zeroes at the first touch
//! of each run's fresh mapping (half the time of `Abs` on 16M floats with
//! a fresh output, `perf record`); whole mappings are kept too, at most
//! [`MAPPED_CAP_BYTES`] of them. The rest go back to the heap or the OS.

use std::ptr::NonNull;
use std::sync::Mutex;

/// The smallest block kept for reuse, in bytes of data.
pub(super) const MIN_BYTES: usize = 16 << 10;

/// The most bytes of heap blocks kept for reuse in all.
pub(super) const CAP_BYTES: usize = 32 << 20;

/// The most bytes of memory mappings kept for reuse in all.
pub(super) const MAPPED_CAP_BYTES: usize = 256 << 20;

/// A freed block: a heap block's base pointer, or a whole mapping.
enum Block {
    Heap(NonNull<u8>),
    Mapped(memmap2::MmapMut),
}

/// A freed block, for a buffer of `len` bytes.
struct FreeBlock {
    block: Block,
    len: usize,
}

// SAFETY: a `FreeBlock` is the only holder of its heap block or mapping
// (the buffer that owned it was dropped and gave it up), and the global
// allocator's blocks may be used and freed from any thread (a mapping is
// `Send` already).
unsafe impl Send for FreeBlock {}

/// The blocks kept, newest last, and the bytes of each kind.
struct FreeBlocks {
    blocks: Vec<FreeBlock>,
    heap_bytes: usize,
    mapped_bytes: usize,
}

impl FreeBlocks {
    /// The bytes kept of the kind `block` is, for updating.
    fn bytes_of(&mut self, mapped: bool) -> &mut usize {
        if mapped {
            &mut self.mapped_bytes
        } else {
            &mut self.heap_bytes
        }
    }

    /// The newest kept block of `len` bytes and of the kind asked for.
    fn take(&mut self, len: usize, mapped: bool) -> Option<Block> {
        let at = self
            .blocks
            .iter()
            .rposition(|b| b.len == len && matches!(b.block, Block::Mapped(_)) == mapped)?;
        let block = self.blocks.swap_remove(at);
        *self.bytes_of(mapped) -= len;
        Some(block.block)
    }

    /// Keeps `block` if there is room under its kind's cap; else gives it
    /// back.
    fn keep(&mut self, block: Block, len: usize) -> Result<(), Block> {
        let mapped = matches!(block, Block::Mapped(_));
        let cap = if mapped { MAPPED_CAP_BYTES } else { CAP_BYTES };
        if *self.bytes_of(mapped) + len > cap || self.blocks.try_reserve(1).is_err() {
            return Err(block);
        }
        *self.bytes_of(mapped) += len;
        self.blocks.push(FreeBlock { block, len });
        Ok(())
    }
}

static FREE_BLOCKS: Mutex<FreeBlocks> = Mutex::new(FreeBlocks {
    blocks: Vec::new(),
    heap_bytes: 0,
    mapped_bytes: 0,
});

/// A kept heap block for a buffer of exactly `len` bytes (the newest, most
/// likely still in cache), or `None`. The caller owns it from now on,
/// allocated with the layout it had for `len` bytes.
pub(super) fn take(len: usize) -> Option<NonNull<u8>> {
    if len < MIN_BYTES {
        return None;
    }
    match FREE_BLOCKS.lock().ok()?.take(len, false)? {
        Block::Heap(base) => Some(base),
        // (`take` returns heap blocks only when asked for them.)
        Block::Mapped(_) => None,
    }
}

/// Keeps the heap block `base` of a buffer of `len` bytes for reuse;
/// gives it back (`Err`) when it is too small or there is no room, for
/// the caller to free.
pub(super) fn keep(base: NonNull<u8>, len: usize) -> Result<(), NonNull<u8>> {
    if len < MIN_BYTES {
        return Err(base);
    }
    let Ok(mut free) = FREE_BLOCKS.lock() else {
        return Err(base);
    };
    free.keep(Block::Heap(base), len).map_err(|_| base)
}

/// A kept mapping of exactly `len` bytes, or `None`.
pub(super) fn take_mapping(len: usize) -> Option<memmap2::MmapMut> {
    match FREE_BLOCKS.lock().ok()?.take(len, true)? {
        Block::Mapped(mapping) => Some(mapping),
        Block::Heap(_) => None,
    }
}

/// Keeps a buffer's mapping for reuse if there is room; else it is
/// dropped (unmapped) here.
pub(super) fn keep_mapping(mapping: memmap2::MmapMut) {
    let len = mapping.len();
    if let Ok(mut free) = FREE_BLOCKS.lock() {
        // A mapping without room is unmapped as the error drops.
        let _ = free.keep(Block::Mapped(mapping), len);
    }
}

/// Bytes of data kept now (for tests).
#[cfg(test)]
pub(super) fn kept_bytes() -> usize {
    FREE_BLOCKS.lock().map(|f| f.heap_bytes).unwrap_or(0)
}

/// Bytes of mappings kept now (for tests).
#[cfg(test)]
pub(super) fn kept_mapped_bytes() -> usize {
    FREE_BLOCKS.lock().map(|f| f.mapped_bytes).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::HostBuffer;
    use super::*;

    /// A size no other test allocates (blocks are shared by all threads).
    fn unusual_len(k: usize) -> usize {
        MIN_BYTES + 4096 * 7 + 64 * k + 13
    }

    /// Allocates a buffer of `len` bytes, fills it with 0xAB and frees it;
    /// returns where its data was.
    fn freed_block(len: usize) -> *const u8 {
        let mut first = HostBuffer::zeroed(len).unwrap();
        first.bytes_mut().unwrap().fill(0xAB);
        first.as_ptr()
    }

    #[test]
    fn a_freed_block_serves_the_next_buffer_of_its_size_zeroed_when_asked() {
        let len = unusual_len(1);
        let at = freed_block(len);
        let again = HostBuffer::zeroed(len).unwrap();
        assert_eq!(again.as_ptr(), at, "the freed block is reused");
        assert!(again.as_bytes().iter().all(|&b| b == 0), "and zeroed");
        assert_eq!(again.as_ptr() as usize % super::super::HOST_ALIGNMENT, 0);
    }

    #[test]
    fn a_buffer_for_overwrite_reuses_a_block_without_zeroing_it() {
        let len = unusual_len(2);
        let at = freed_block(len);
        let again = HostBuffer::for_overwrite(len).unwrap();
        assert_eq!(again.as_ptr(), at);
        // Debug builds poison it; release builds leave the old bytes.
        let expected = if cfg!(debug_assertions) { 0xFF } else { 0xAB };
        assert!(again.as_bytes().iter().all(|&b| b == expected));
    }

    #[test]
    fn small_blocks_are_not_kept_and_the_cap_holds() {
        drop(HostBuffer::zeroed(MIN_BYTES - 1).unwrap());
        assert!(take(MIN_BYTES - 1).is_none());
        // Blocks beyond the cap go back to the heap.
        let len = unusual_len(3);
        let buffers: Vec<_> = (0..CAP_BYTES / len + 8)
            .map(|_| HostBuffer::zeroed(len).unwrap())
            .collect();
        drop(buffers);
        assert!(kept_bytes() <= CAP_BYTES);
    }

    #[test]
    fn a_freed_mapping_serves_the_next_large_buffer_of_its_size() {
        // Large buffers are mappings (where the OS can map memory).
        if cfg!(miri) {
            return;
        }
        let len = (2 << 20) + 4096 * 3 + 64 * 5 + 7;
        let at = freed_block(len);
        let again = HostBuffer::zeroed(len).unwrap();
        assert_eq!(again.as_ptr(), at, "the freed mapping is reused");
        assert!(again.as_bytes().iter().all(|&b| b == 0), "and zeroed");
        drop(again);
        let at = freed_block(len);
        let again = HostBuffer::for_overwrite(len).unwrap();
        assert_eq!(again.as_ptr(), at);
        let expected = if cfg!(debug_assertions) { 0xFF } else { 0xAB };
        assert!(again.as_bytes().iter().all(|&b| b == expected));
        // Mappings beyond their cap are unmapped.
        let buffers: Vec<_> = (0..MAPPED_CAP_BYTES / len + 4)
            .map(|_| HostBuffer::for_overwrite(len).unwrap())
            .collect();
        drop(buffers);
        assert!(kept_mapped_bytes() <= MAPPED_CAP_BYTES);
    }

    #[test]
    fn bool_tensors_for_overwrite_are_zeros_not_reused_bytes() {
        use crate::proto::DataType;
        use crate::tensor::{IntoShape, Tensor};
        let len = unusual_len(4);
        freed_block(len);
        let mut slot = None;
        let t = Tensor::for_overwrite_in(&mut slot, DataType::DtBool, [len].into_shape().unwrap())
            .unwrap();
        assert!(t.as_slice::<bool>().unwrap().iter().all(|&b| !b));
    }
}
