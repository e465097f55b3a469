//! Tensor storage: a 64-byte aligned, reference-counted host buffer, string
//! storage, and the [`Storage`] enum that leaves room for device memory.

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Arc;

use super::TensorError;

/// The alignment of every [`HostBuffer`] in bytes (TensorFlow's
/// `EIGEN_MAX_ALIGN_BYTES` on AVX-512 hosts).
pub const HOST_ALIGNMENT: usize = 64;

/// Buffers of at least this many bytes are anonymous memory mappings
/// (zeroed by the OS, page-aligned, with transparent huge pages requested on
/// Linux) instead of heap allocations: the heap's `alloc_zeroed` of a 64 MiB
/// aligned block zero-fills it on one thread and faults it in 4 KiB pages
/// (43 ms measured here, against about 7 ms for a huge-page mapping).
const MAP_THRESHOLD: usize = 2 << 20;

/// An owned, zero-initialised, [`HOST_ALIGNMENT`]-aligned allocation: a
/// heap block, or (for large buffers) an anonymous mapping that `mapping`
/// owns.
struct RawBuffer {
    ptr: NonNull<u8>,
    len: usize,
    mapping: Option<memmap2::MmapMut>,
}

impl RawBuffer {
    /// The layout used for `len` bytes; zero-length buffers still allocate
    /// one byte so the pointer is a real, aligned allocation.
    fn layout(len: usize) -> Option<Layout> {
        Layout::from_size_align(len.max(1), HOST_ALIGNMENT).ok()
    }
}

// SAFETY: `RawBuffer` exclusively owns its allocation of plain bytes; shared
// access only reads them and mutation requires `&mut` (via `Arc::get_mut`), so
// moving or sharing it between threads is as safe as for `Vec<u8>`.
unsafe impl Send for RawBuffer {}
// SAFETY: see `Send` above; `&RawBuffer` only permits reads.
unsafe impl Sync for RawBuffer {}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        if self.mapping.is_some() {
            // The mapping unmaps itself when the field is dropped.
            return;
        }
        // The layout was valid when the buffer was allocated, so it still is.
        if let Some(layout) = Self::layout(self.len) {
            // SAFETY: `ptr` was returned by `alloc_zeroed` with this exact
            // layout (same `len`, same alignment) and is freed only here.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

/// A reference-counted, 64-byte aligned block of host memory.
///
/// Cloning shares the bytes (like `Arc`); [`is_unique`](Self::is_unique)
/// tells whether this handle is the only one, which is when a kernel may
/// forward an input buffer to an output and write to it in place.
///
/// ```
/// use registry_core::tensor::HostBuffer;
/// let a = HostBuffer::zeroed(16).unwrap();
/// assert!(a.is_unique());
/// let b = a.clone();
/// assert!(!a.is_unique() && a.ptr_eq(&b));
/// assert_eq!(a.as_ptr() as usize % 64, 0);
/// ```
#[derive(Clone)]
pub struct HostBuffer {
    raw: Arc<RawBuffer>,
}

impl HostBuffer {
    /// Allocates `len` zero bytes; errors (rather than aborting) when the
    /// allocation is too large or fails.
    pub fn zeroed(len: usize) -> Result<Self, TensorError> {
        if let Some(mut mapping) = map_zeroed(len) {
            let ptr = NonNull::new(mapping.as_mut_ptr())
                .ok_or(TensorError::AllocationFailed { bytes: len })?;
            return Ok(Self {
                raw: Arc::new(RawBuffer {
                    ptr,
                    len,
                    mapping: Some(mapping),
                }),
            });
        }
        let layout = RawBuffer::layout(len).ok_or(TensorError::AllocationFailed { bytes: len })?;
        // SAFETY: `layout` has a non-zero size (at least one byte).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(TensorError::AllocationFailed { bytes: len })?;
        Ok(Self {
            raw: Arc::new(RawBuffer {
                ptr,
                len,
                mapping: None,
            }),
        })
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// True when the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `ptr` points to an allocation (heap block or mapping) of at least `len` initialised
        // (zeroed, then only written through `&mut`) bytes that lives as long
        // as `self.raw`, and no `&mut` to it exists while `&self` is borrowed
        // (mutable access needs `&mut self` and a unique `Arc`).
        unsafe { std::slice::from_raw_parts(self.raw.ptr.as_ptr(), self.raw.len) }
    }

    /// The bytes, mutably, when this handle is the only one. Crate-private:
    /// writing arbitrary bytes could make an invalid `bool`.
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        let raw = Arc::get_mut(&mut self.raw)?;
        // SAFETY: as in `as_bytes`; `Arc::get_mut` proved this is the only
        // handle, and `&mut self` keeps it so for the returned lifetime.
        Some(unsafe { std::slice::from_raw_parts_mut(raw.ptr.as_ptr(), raw.len) })
    }

    /// The address of the first byte (64-byte aligned).
    pub fn as_ptr(&self) -> *const u8 {
        self.raw.ptr.as_ptr()
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

/// Where a tensor's elements live.
///
/// Today every tensor is on the host; a device variant (GPU memory) can be
/// added later without changing the [`Tensor`](super::Tensor) API, which is
/// why the enum is `#[non_exhaustive]`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Storage {
    /// Fixed-size elements in a 64-byte aligned host buffer.
    Host(HostBuffer),
    /// `DT_STRING` elements: one byte string each, shared by reference count.
    Strings(Arc<Vec<Vec<u8>>>),
}

impl Storage {
    /// True when no other tensor shares this storage.
    pub fn is_unique(&self) -> bool {
        match self {
            Storage::Host(b) => b.is_unique(),
            Storage::Strings(s) => Arc::strong_count(s) == 1,
        }
    }

    /// True when both share the same buffer.
    pub fn ptr_eq(&self, other: &Storage) -> bool {
        match (self, other) {
            (Storage::Host(a), Storage::Host(b)) => a.ptr_eq(b),
            (Storage::Strings(a), Storage::Strings(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}
