//! Tensor storage: an aligned, reference-counted host buffer, string
//! storage, and the [`Storage`] enum that leaves room for device memory.

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Arc;

use super::TensorError;
use crate::device::DeviceBuffer;

/// The alignment of every [`HostBuffer`] of more than [`INLINE_CAPACITY`]
/// bytes (TensorFlow's `EIGEN_MAX_ALIGN_BYTES` on AVX-512 hosts).
pub const HOST_ALIGNMENT: usize = 64;

/// The alignment of buffers of at most [`INLINE_CAPACITY`] bytes: enough
/// for every element type (the widest, `complex128`, needs 16) and for any
/// SIMD load of the whole buffer.
pub const INLINE_ALIGNMENT: usize = 16;

/// Buffers of at least this many bytes are anonymous memory mappings
/// (zeroed by the OS, page-aligned, with transparent huge pages requested on
/// Linux) instead of heap allocations: the heap's `alloc_zeroed` of a 64 MiB
/// aligned block zero-fills it on one thread and faults it in 4 KiB pages
/// (43 ms measured here, against about 7 ms for a huge-page mapping).
const MAP_THRESHOLD: usize = 2 << 20;

/// Buffers of at most this many bytes live inside the reference-counted
/// block itself, [`INLINE_ALIGNMENT`]-aligned: one small allocation per
/// tensor instead of two (a 1-element tensor is the common case of scalars
/// and of per-node overhead). Aligning them to 64 bytes would push the
/// block off the allocator's fast path for nothing: 16 bytes are one SIMD
/// register.
pub const INLINE_CAPACITY: usize = 16;

/// The bytes of an inline buffer, [`INLINE_ALIGNMENT`]-aligned.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct InlineBytes([u8; INLINE_CAPACITY]);

const _: () = assert!(std::mem::align_of::<InlineBytes>() == INLINE_ALIGNMENT);

/// The heap's alignment for the blocks of [`RawBuffer::Heap`]: glibc serves
/// 16-byte aligned requests from its fast paths, while 64-byte aligned ones
/// go through `posix_memalign`, which splits and consolidates chunks (a
/// third of the cost of a small tensor, measured with perf). The 64-byte
/// boundary is found inside a block over-allocated by 48 bytes.
const HEAP_ALIGN: usize = 16;

/// An owned, zero-initialised buffer whose first byte is
/// [`HOST_ALIGNMENT`]-aligned ([`INLINE_ALIGNMENT`] for inline ones).
enum RawBuffer {
    /// Small buffers: the first `len` bytes of the array.
    Inline { bytes: InlineBytes, len: usize },
    /// A heap block from `alloc_zeroed(heap_layout(len))`; the data starts
    /// at `base + offset`.
    Heap {
        base: NonNull<u8>,
        offset: usize,
        len: usize,
    },
    /// Large buffers: an anonymous mapping (page-aligned, zeroed).
    Mapped(memmap2::MmapMut),
}

/// The offset of the first [`HOST_ALIGNMENT`] boundary at or after `ptr`.
fn align_offset(ptr: *const u8) -> usize {
    ptr.align_offset(HOST_ALIGNMENT)
}

impl RawBuffer {
    /// The heap layout for `len` bytes placed at a 64-byte boundary.
    fn heap_layout(len: usize) -> Option<Layout> {
        let size = len.checked_add(HOST_ALIGNMENT - HEAP_ALIGN)?.max(1);
        Layout::from_size_align(size, HEAP_ALIGN).ok()
    }

    fn len(&self) -> usize {
        match self {
            RawBuffer::Inline { len, .. } | RawBuffer::Heap { len, .. } => *len,
            RawBuffer::Mapped(m) => m.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            RawBuffer::Inline { bytes, len } => &bytes.0[..*len],
            RawBuffer::Heap { base, offset, len } => {
                // SAFETY: `base` is a live allocation of `heap_layout(len)`,
                // i.e. at least `offset + len` zero-initialised bytes (offset
                // < 48 was reserved), written only through `bytes_mut`, which
                // needs `&mut self`; the slice borrows `self`, which owns the
                // block until `Drop`.
                unsafe { std::slice::from_raw_parts(base.as_ptr().add(*offset), *len) }
            }
            RawBuffer::Mapped(m) => m,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            RawBuffer::Inline { bytes, len } => &mut bytes.0[..*len],
            RawBuffer::Heap { base, offset, len } => {
                // SAFETY: as in `bytes`; `&mut self` makes this the only
                // reference to the block for the slice's lifetime.
                unsafe { std::slice::from_raw_parts_mut(base.as_ptr().add(*offset), *len) }
            }
            RawBuffer::Mapped(m) => m,
        }
    }
}

// SAFETY: `RawBuffer` exclusively owns its bytes (an array, a heap block or
// a mapping); shared access only reads them and mutation requires `&mut`
// (via `Arc::get_mut`), so moving or sharing it between threads is as safe
// as for `Vec<u8>`.
unsafe impl Send for RawBuffer {}
// SAFETY: see `Send` above; `&RawBuffer` only permits reads.
unsafe impl Sync for RawBuffer {}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        if let RawBuffer::Heap { base, len, .. } = self
            && let Some(layout) = Self::heap_layout(*len)
        {
            // SAFETY: `base` was returned by `alloc_zeroed` with this exact
            // layout (same `len`, same alignment) and is freed only here.
            unsafe { alloc::dealloc(base.as_ptr(), layout) }
        }
    }
}

/// A reference-counted, aligned block of host memory: 64-byte aligned, or
/// 16-byte aligned when it holds at most [`INLINE_CAPACITY`] bytes.
///
/// Cloning shares the bytes (like `Arc`); [`is_unique`](Self::is_unique)
/// tells whether this handle is the only one, which is when a kernel may
/// forward an input buffer to an output and write to it in place.
///
/// ```
/// use registry_core::tensor::HostBuffer;
/// let a = HostBuffer::zeroed(64).unwrap();
/// assert!(a.is_unique());
/// let b = a.clone();
/// assert!(!a.is_unique() && a.ptr_eq(&b));
/// assert_eq!(a.as_ptr() as usize % 64, 0);
/// assert_eq!(HostBuffer::zeroed(4).unwrap().as_ptr() as usize % 16, 0);
/// ```
#[derive(Clone)]
pub struct HostBuffer {
    raw: Arc<RawBuffer>,
}

impl HostBuffer {
    /// Allocates `len` zero bytes; errors (rather than aborting) when the
    /// allocation is over [`max_allocation_bytes`](crate::limits::max_allocation_bytes),
    /// too large for the allocator, or fails.
    #[inline]
    pub fn zeroed(len: usize) -> Result<Self, TensorError> {
        let raw = if len <= INLINE_CAPACITY {
            RawBuffer::Inline {
                bytes: InlineBytes([0; INLINE_CAPACITY]),
                len,
            }
        } else if let Err(limit) = crate::limits::check_allocation(len as u64) {
            return Err(TensorError::AllocationLimit {
                bytes: len as u64,
                limit,
            });
        } else if let Some(mapping) = map_zeroed(len) {
            RawBuffer::Mapped(mapping)
        } else {
            let layout = RawBuffer::heap_layout(len)
                .ok_or_else(|| TensorError::AllocationFailed { bytes: len })?;
            // SAFETY: `layout` has a non-zero size (at least one byte).
            let base = unsafe { alloc::alloc_zeroed(layout) };
            let base =
                NonNull::new(base).ok_or_else(|| TensorError::AllocationFailed { bytes: len })?;
            let offset = align_offset(base.as_ptr());
            RawBuffer::Heap { base, offset, len }
        };
        Ok(Self { raw: Arc::new(raw) })
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// True when the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.raw.bytes()
    }

    /// The bytes, mutably, when this handle is the only one. Crate-private:
    /// writing arbitrary bytes could make an invalid `bool`.
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Arc::get_mut(&mut self.raw).map(RawBuffer::bytes_mut)
    }

    /// The address of the first byte ([`HOST_ALIGNMENT`]-aligned, or
    /// [`INLINE_ALIGNMENT`]-aligned for at most [`INLINE_CAPACITY`] bytes).
    pub fn as_ptr(&self) -> *const u8 {
        self.raw.bytes().as_ptr()
    }

    /// True when no other handle shares these bytes, so they may be written
    /// in place.
    pub fn is_unique(&self) -> bool {
        // No weak references are ever handed out.
        Arc::strong_count(&self.raw) == 1
    }

    /// True when both handles share the same bytes.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.raw, &other.raw)
    }

    /// The number of handles sharing these bytes.
    pub fn ref_count(&self) -> usize {
        Arc::strong_count(&self.raw)
    }
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer")
            .field("len", &self.len())
            .field("refs", &self.ref_count())
            .finish()
    }
}

/// A zeroed anonymous mapping of `len` bytes for large buffers (page
/// alignment exceeds [`HOST_ALIGNMENT`]), or `None` to use the heap: small
/// buffers, a failed mapping, or Miri (which cannot map memory).
fn map_zeroed(len: usize) -> Option<memmap2::MmapMut> {
    if len < MAP_THRESHOLD || cfg!(miri) {
        return None;
    }
    let mapping = memmap2::MmapMut::map_anon(len).ok()?;
    #[cfg(target_os = "linux")]
    {
        // Fewer page faults; only a hint, so a refusal changes nothing.
        let _ = mapping.advise(memmap2::Advice::HugePage);
    }
    Some(mapping)
}

/// Where a tensor's elements live: host memory, host strings, or a
/// device's memory ([`DeviceBuffer`], from a backend such as `kernels-cuda`).
///
/// `#[non_exhaustive]`: more kinds of memory may come.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Storage {
    /// Fixed-size elements in a 64-byte aligned host buffer.
    Host(HostBuffer),
    /// `DT_STRING` elements: one byte string each, shared by reference count.
    Strings(Arc<Vec<Vec<u8>>>),
    /// Fixed-size elements in a device's memory.
    Device(DeviceBuffer),
}

impl Storage {
    /// True when no other tensor shares this storage.
    pub fn is_unique(&self) -> bool {
        match self {
            Storage::Host(b) => b.is_unique(),
            Storage::Strings(s) => Arc::strong_count(s) == 1,
            Storage::Device(d) => d.is_unique(),
        }
    }

    /// True when both share the same buffer.
    pub fn ptr_eq(&self, other: &Storage) -> bool {
        match (self, other) {
            (Storage::Host(a), Storage::Host(b)) => a.ptr_eq(b),
            (Storage::Strings(a), Storage::Strings(b)) => Arc::ptr_eq(a, b),
            (Storage::Device(a), Storage::Device(b)) => a.ptr_eq(b),
            _ => false,
        }
    }
}
