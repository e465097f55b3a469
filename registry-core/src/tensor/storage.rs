//! Tensor storage: an aligned, reference-counted host buffer, string
//! storage, variant storage, and the [`Storage`] enum that leaves room for device memory.

use std::alloc::{self, Layout};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;

use super::{TensorError, Variant};
use crate::memory::DeviceBuffer;

/// The alignment of every [`HostBuffer`] of more than [`INLINE_CAPACITY`]
/// bytes (TensorFlow's `EIGEN_MAX_ALIGN_BYTES` on AVX-512 hosts).
pub const HOST_ALIGNMENT: usize = 64;

/// Buffers of at least this many bytes are anonymous memory mappings
/// (zeroed by the OS, page-aligned, with transparent huge pages requested on
/// Linux) instead of heap allocations: the heap's `alloc_zeroed` of a 64 MiB
/// aligned block zero-fills it on one thread and faults it in 4 KiB pages
/// (43 ms measured here, against about 7 ms for a huge-page mapping).
const MAP_THRESHOLD: usize = 2 << 20;

/// The alignment of buffers of at most [`INLINE_CAPACITY`] bytes: enough
/// for every element type (the widest, `complex128`, is two `f64`s).
pub const INLINE_ALIGNMENT: usize = 8;

/// Buffers of at most this many bytes are held by value inside the
/// [`HostBuffer`] (and so inside the tensor), [`INLINE_ALIGNMENT`]-aligned:
/// no allocation, and copying the tensor copies them instead of counting
/// references. Scalars and other tiny tensors are the common case of
/// per-node overhead; for them an allocation and three atomic reference
/// count updates per kernel call were most of the cost (measured with
/// perf on `dispatch/abs_1_f32_slots`). A copy is never shared, so such a
/// buffer is always [unique](HostBuffer::is_unique) and kernels write
/// small outputs in place.
pub const INLINE_CAPACITY: usize = 16;

/// The bytes of an inline buffer, [`INLINE_ALIGNMENT`]-aligned.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct InlineBytes([u8; INLINE_CAPACITY]);

const _: () = assert!(std::mem::align_of::<InlineBytes>() == INLINE_ALIGNMENT);
const _: () = assert!(std::mem::align_of::<super::Complex128>() <= INLINE_ALIGNMENT);
const _: () = assert!(std::mem::align_of::<f64>() <= INLINE_ALIGNMENT);
const _: () = assert!(std::mem::align_of::<u64>() <= INLINE_ALIGNMENT);

/// The heap's alignment for the blocks of [`RawBuffer::Heap`]: glibc serves
/// 16-byte aligned requests from its fast paths, while 64-byte aligned ones
/// go through `posix_memalign`, which splits and consolidates chunks (a
/// third of the cost of a small tensor, measured with perf). The 64-byte
/// boundary is found inside a block over-allocated by 48 bytes.
const HEAP_ALIGN: usize = 16;

/// An owned, zero-initialised block of more than [`INLINE_CAPACITY`] bytes
/// whose first byte is [`HOST_ALIGNMENT`]-aligned.
enum RawBuffer {
    /// A heap block from `alloc_zeroed(heap_layout(len))`; the data starts
    /// at `base + offset`.
    Heap {
        base: NonNull<u8>,
        offset: usize,
        len: usize,
    },
    /// Large buffers: an anonymous mapping (page-aligned, zeroed when
    /// mapped). `ManuallyDrop` so that `Drop` can hand it to the
    /// [recycler](super::recycle).
    Mapped(ManuallyDrop<memmap2::MmapMut>),
    /// Memory another framework owns (a TensorFlow tensor's buffer, for
    /// instance), [`HOST_ALIGNMENT`]-aligned, kept alive by `owner` until
    /// the buffer is dropped. Written only when `writable` (the other
    /// framework handed it over for in-place use).
    Foreign {
        ptr: NonNull<u8>,
        len: usize,
        writable: bool,
        /// Held only to be dropped with the buffer.
        _owner: ForeignOwner,
    },
}

/// What keeps a [foreign](HostBuffer::from_foreign) buffer's memory alive:
/// dropping it releases the memory to the framework that owns it.
pub type ForeignOwner =
    Box<dyn std::any::Any + Send + Sync + std::panic::RefUnwindSafe + std::panic::UnwindSafe>;

/// The offset of the first [`HOST_ALIGNMENT`] boundary at or after `ptr`.
fn align_offset(ptr: *const u8) -> usize {
    ptr.align_offset(HOST_ALIGNMENT)
}

impl RawBuffer {
    /// A block of `len` bytes (a mapping when large), or an error when
    /// over the allocation cap or refused by the allocator. Its bytes are
    /// zeros with `zero`; without, a [recycled](super::recycle) block keeps
    /// the (initialised) bytes it held.
    fn new(len: usize, zero: bool) -> Result<Self, TensorError> {
        if let Err(limit) = crate::limits::check_allocation(len as u64) {
            return Err(TensorError::AllocationLimit {
                bytes: len as u64,
                limit,
            });
        }
        let mut raw = Self::allocate(len, zero)?;
        if !zero && cfg!(debug_assertions) {
            // Debug builds poison what a writer must overwrite (NaN for
            // floats, -1 for integers), so that a kernel that leaves an
            // element unwritten fails its tests instead of passing on
            // zeros.
            if let Some(bytes) = raw.bytes_mut() {
                bytes.fill(0xFF);
            }
        }
        Ok(raw)
    }

    /// [`new`](Self::new) after the allocation cap's check.
    fn allocate(len: usize, zero: bool) -> Result<Self, TensorError> {
        if len >= MAP_THRESHOLD
            && let Some(mapping) = super::recycle::take_mapping(len)
        {
            let mut raw = RawBuffer::Mapped(ManuallyDrop::new(mapping));
            if zero && let Some(bytes) = raw.bytes_mut() {
                bytes.fill(0);
            }
            return Ok(raw);
        }
        if let Some(mapping) = map_zeroed(len) {
            return Ok(RawBuffer::Mapped(ManuallyDrop::new(mapping)));
        }
        if let Some(base) = super::recycle::take(len) {
            let mut raw = RawBuffer::Heap {
                base,
                offset: align_offset(base.as_ptr()),
                len,
            };
            if zero && let Some(bytes) = raw.bytes_mut() {
                bytes.fill(0);
            }
            return Ok(raw);
        }
        let layout = Self::heap_layout(len).ok_or(TensorError::AllocationFailed { bytes: len })?;
        // SAFETY: `layout` has a non-zero size (at least one byte).
        let base = unsafe { alloc::alloc_zeroed(layout) };
        let base = NonNull::new(base).ok_or(TensorError::AllocationFailed { bytes: len })?;
        let offset = align_offset(base.as_ptr());
        Ok(RawBuffer::Heap { base, offset, len })
    }

    /// The heap layout for `len` bytes placed at a 64-byte boundary.
    fn heap_layout(len: usize) -> Option<Layout> {
        let size = len.checked_add(HOST_ALIGNMENT - HEAP_ALIGN)?.max(1);
        Layout::from_size_align(size, HEAP_ALIGN).ok()
    }

    fn len(&self) -> usize {
        match self {
            RawBuffer::Heap { len, .. } | RawBuffer::Foreign { len, .. } => *len,
            RawBuffer::Mapped(m) => m.len(),
        }
    }

    /// Whether the bytes may be written when no other handle shares them
    /// (always, but for foreign memory not handed over for writing).
    fn is_writable(&self) -> bool {
        match self {
            RawBuffer::Foreign { writable, .. } => *writable,
            RawBuffer::Heap { .. } | RawBuffer::Mapped(_) => true,
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            RawBuffer::Heap { base, offset, len } => {
                // SAFETY: `base` is a live allocation of `heap_layout(len)`,
                // i.e. at least `offset + len` initialised bytes (zeroed when
                // allocated) (offset
                // < 48 was reserved), written only through `bytes_mut`, which
                // needs `&mut self`; the slice borrows `self`, which owns the
                // block until `Drop`.
                unsafe { std::slice::from_raw_parts(base.as_ptr().add(*offset), *len) }
            }
            RawBuffer::Mapped(m) => &m[..],
            RawBuffer::Foreign { ptr, len, .. } => {
                // SAFETY: `HostBuffer::from_foreign`'s caller promised that
                // `ptr` is valid for reads of `len` bytes, unchanged by
                // others, until `owner` (dropped after this slice's borrow of
                // `self` ends) is dropped.
                unsafe { std::slice::from_raw_parts(ptr.as_ptr(), *len) }
            }
        }
    }

    /// The bytes for writing, or `None` for foreign memory that is not
    /// writable.
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            RawBuffer::Heap { base, offset, len } => {
                // SAFETY: as in `bytes`; `&mut self` makes this the only
                // reference to the block for the slice's lifetime.
                Some(unsafe { std::slice::from_raw_parts_mut(base.as_ptr().add(*offset), *len) })
            }
            RawBuffer::Mapped(m) => Some(&mut m[..]),
            RawBuffer::Foreign {
                ptr,
                len,
                writable: true,
                ..
            } => {
                // SAFETY: a writable foreign buffer was handed over for
                // exclusive use (`from_foreign`'s contract): valid for
                // writes of `len` bytes, touched by nobody else until
                // `owner` is dropped; `&mut self` makes this the only
                // reference for the slice's lifetime.
                Some(unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), *len) })
            }
            RawBuffer::Foreign { .. } => None,
        }
    }
}

// SAFETY: `RawBuffer` exclusively owns its bytes (a heap block or a
// mapping), or holds foreign memory whose owner is `Send + Sync` and which
// nobody writes while it is shared (`from_foreign`'s contract); shared
// access only reads them and mutation requires `&mut` (via
// `Arc::get_mut`), so moving or sharing it between threads is as safe as
// for `Vec<u8>`.
unsafe impl Send for RawBuffer {}
// SAFETY: see `Send` above; `&RawBuffer` only permits reads.
unsafe impl Sync for RawBuffer {}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        if let RawBuffer::Mapped(mapping) = self {
            // SAFETY: `self` is being dropped, so the mapping is taken out
            // of it exactly once and `self` is never used again.
            super::recycle::keep_mapping(unsafe { ManuallyDrop::take(mapping) });
        } else if let RawBuffer::Heap { base, len, .. } = self
            && let Err(base) = super::recycle::keep(*base, *len)
            && let Some(layout) = Self::heap_layout(*len)
        {
            // SAFETY: `base` was returned by `alloc_zeroed` with this exact
            // layout (same `len`, same alignment; a recycled block was
            // allocated for the same `len`) and is freed only here, once
            // the recycler has refused it.
            unsafe { alloc::dealloc(base.as_ptr(), layout) }
        }
    }
}

/// A host buffer's bytes: held by value when small, else shared.
#[derive(Clone)]
enum Bytes {
    /// At most [`INLINE_CAPACITY`] bytes: the first `len` of `bytes`.
    Inline { len: u8, bytes: InlineBytes },
    /// A reference-counted block.
    Shared(Arc<RawBuffer>),
}

/// An aligned block of host memory: 64-byte aligned and reference-counted,
/// or, when it holds at most [`INLINE_CAPACITY`] bytes,
/// [`INLINE_ALIGNMENT`]-aligned and held by value.
///
/// Cloning a large buffer shares the bytes (like `Arc`); cloning a small
/// one copies them. [`is_unique`](Self::is_unique) tells whether this
/// handle is the only one with these bytes, which is when a kernel may
/// forward an input buffer to an output and write to it in place.
///
/// ```
/// use registry_core::tensor::HostBuffer;
/// let a = HostBuffer::zeroed(64).unwrap();
/// assert!(a.is_unique());
/// let b = a.clone();
/// assert!(!a.is_unique() && a.ptr_eq(&b));
/// assert_eq!(a.as_ptr() as usize % 64, 0);
///
/// // Small buffers are copied, never shared.
/// let small = HostBuffer::zeroed(4).unwrap();
/// let copy = small.clone();
/// assert!(small.is_unique() && !small.ptr_eq(&copy));
/// assert_eq!(small.as_ptr() as usize % 8, 0);
/// ```
#[derive(Clone)]
pub struct HostBuffer {
    bytes: Bytes,
}

impl HostBuffer {
    /// Allocates `len` zero bytes; errors (rather than aborting) when the
    /// allocation is over [`max_allocation_bytes`](crate::limits::max_allocation_bytes),
    /// too large for the allocator, or fails.
    #[inline]
    pub fn zeroed(len: usize) -> Result<Self, TensorError> {
        Self::new(len, true)
    }

    /// Allocates `len` bytes for a writer that sets every one of them
    /// before anything reads them: zeros, or, when a freed block of the
    /// same size is reused, the bytes it held (the zero
    /// fill is skipped). Errors as [`zeroed`](Self::zeroed) does.
    ///
    /// The bytes are always initialised, but may be any values: not for a
    /// type some of whose bit patterns are invalid (`bool`).
    ///
    /// ```
    /// use registry_core::tensor::HostBuffer;
    /// let buffer = HostBuffer::for_overwrite(1 << 16).unwrap();
    /// assert_eq!(buffer.len(), 1 << 16);
    /// assert_eq!(buffer.as_ptr() as usize % 64, 0);
    /// ```
    #[inline]
    pub fn for_overwrite(len: usize) -> Result<Self, TensorError> {
        Self::new(len, false)
    }

    #[inline]
    fn new(len: usize, zero: bool) -> Result<Self, TensorError> {
        let bytes = if len <= INLINE_CAPACITY {
            Bytes::Inline {
                len: len as u8,
                bytes: InlineBytes([0; INLINE_CAPACITY]),
            }
        } else {
            Bytes::Shared(Arc::new(RawBuffer::new(len, zero)?))
        };
        Ok(Self { bytes })
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        match &self.bytes {
            Bytes::Inline { len, .. } => usize::from(*len),
            Bytes::Shared(raw) => raw.len(),
        }
    }

    /// True when the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Inline { len, bytes } => &bytes.0[..usize::from(*len)],
            Bytes::Shared(raw) => raw.bytes(),
        }
    }

    /// The bytes, mutably, when this handle is the only one. Crate-private:
    /// writing arbitrary bytes could make an invalid `bool`.
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match &mut self.bytes {
            Bytes::Inline { len, bytes } => Some(&mut bytes.0[..usize::from(*len)]),
            Bytes::Shared(raw) => Arc::get_mut(raw).and_then(RawBuffer::bytes_mut),
        }
    }

    /// A buffer over `len` bytes of memory that another framework owns (a
    /// TensorFlow or XLA tensor's buffer), without copying them when they
    /// are more than [`INLINE_CAPACITY`] bytes at a [`HOST_ALIGNMENT`]
    /// boundary: `owner` is kept with the buffer and dropped, releasing
    /// the memory, when the last handle is. Other memory (small, or not
    /// aligned) is copied into a buffer of this crate's own, and `owner`
    /// dropped at once.
    ///
    /// With `writable`, kernels may write to the bytes in place when no
    /// other handle shares the buffer; without it the buffer is never
    /// [unique](Self::is_unique), so nothing writes to it.
    ///
    /// ```
    /// use registry_core::tensor::HostBuffer;
    ///
    /// // Memory "owned by another framework": a 64-byte aligned block.
    /// let layout = std::alloc::Layout::from_size_align(256, 64).unwrap();
    /// struct Owner(*mut u8, std::alloc::Layout);
    /// // SAFETY (of the example): the block is only freed by `Drop`.
    /// unsafe impl Send for Owner {}
    /// unsafe impl Sync for Owner {}
    /// impl Drop for Owner {
    ///     fn drop(&mut self) { unsafe { std::alloc::dealloc(self.0, self.1) } }
    /// }
    /// let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    /// // SAFETY: 256 readable bytes, freed only when `Owner` is dropped.
    /// let buffer = unsafe { HostBuffer::from_foreign(ptr, 256, false, Box::new(Owner(ptr, layout))) }.unwrap();
    /// assert_eq!(buffer.as_ptr(), ptr.cast_const()); // not copied
    /// assert!(buffer.is_foreign() && !buffer.is_unique()); // read-only
    /// ```
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `len` bytes (and, with `writable`,
    /// for writes) until `owner` is dropped, and nothing else may write to
    /// them in that time (nor read them, with `writable`). For `DT_BOOL`
    /// tensors every byte must be 0 or 1. `ptr` may be null only when `len`
    /// is 0.
    pub unsafe fn from_foreign(
        ptr: *const u8,
        len: usize,
        writable: bool,
        owner: ForeignOwner,
    ) -> Result<Self, TensorError> {
        let aligned = (ptr as usize).is_multiple_of(HOST_ALIGNMENT);
        match NonNull::new(ptr.cast_mut()) {
            Some(ptr) if len > INLINE_CAPACITY && aligned => Ok(Self {
                bytes: Bytes::Shared(Arc::new(RawBuffer::Foreign {
                    ptr,
                    len,
                    writable,
                    _owner: owner,
                })),
            }),
            _ => {
                let mut copy = Self::zeroed(len)?;
                if len > 0 {
                    // SAFETY: the caller promised `len` readable bytes at
                    // a non-null `ptr` (only `len == 0` may be null).
                    let src = unsafe { std::slice::from_raw_parts(ptr, len) };
                    if let Some(dst) = copy.bytes_mut() {
                        dst.copy_from_slice(src);
                    }
                }
                drop(owner);
                Ok(copy)
            }
        }
    }

    /// True when the bytes are another framework's memory, held without a
    /// copy ([`from_foreign`](Self::from_foreign)).
    pub fn is_foreign(&self) -> bool {
        matches!(&self.bytes, Bytes::Shared(raw) if matches!(**raw, RawBuffer::Foreign { .. }))
    }

    /// The address of the first byte ([`HOST_ALIGNMENT`]-aligned, or
    /// [`INLINE_ALIGNMENT`]-aligned for at most [`INLINE_CAPACITY`] bytes).
    /// An inline buffer's bytes move with the buffer.
    pub fn as_ptr(&self) -> *const u8 {
        self.as_bytes().as_ptr()
    }

    /// True when no other handle shares these bytes, so they may be written
    /// in place (always, for inline buffers: clones are copies).
    #[inline]
    pub fn is_unique(&self) -> bool {
        match &self.bytes {
            Bytes::Inline { .. } => true,
            // No weak references are ever handed out.
            Bytes::Shared(raw) => Arc::strong_count(raw) == 1 && raw.is_writable(),
        }
    }

    /// An identity of the shared bytes, equal for the handles that share
    /// them; `None` for an inline buffer (its clones are copies).
    pub fn buffer_id(&self) -> Option<usize> {
        match &self.bytes {
            Bytes::Inline { .. } => None,
            Bytes::Shared(raw) => Some(Arc::as_ptr(raw).cast::<u8>() as usize),
        }
    }

    /// True when both handles share the same bytes (never for inline
    /// buffers, unless `other` is `self`).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.bytes, &other.bytes) {
            (Bytes::Shared(a), Bytes::Shared(b)) => Arc::ptr_eq(a, b),
            _ => std::ptr::eq(self, other),
        }
    }

    /// The number of handles sharing these bytes (1 for inline buffers).
    pub fn ref_count(&self) -> usize {
        match &self.bytes {
            Bytes::Inline { .. } => 1,
            Bytes::Shared(raw) => Arc::strong_count(raw),
        }
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

/// Where a tensor's elements live: host memory, host strings, host
/// variants, or a device's memory ([`DeviceBuffer`], from a backend such as `kernels-cuda`).
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
    /// `DT_VARIANT` elements: typed host values ([`Variant`]), shared by
    /// reference count (copies are shallow).
    Variants(Arc<Vec<Variant>>),
}

impl Storage {
    /// True when no other tensor shares this storage.
    pub fn is_unique(&self) -> bool {
        match self {
            Storage::Host(b) => b.is_unique(),
            Storage::Strings(s) => Arc::strong_count(s) == 1,
            Storage::Device(d) => d.is_unique(),
            Storage::Variants(v) => Arc::strong_count(v) == 1,
        }
    }

    /// An identity of the buffer, equal for storages that share it (as
    /// [`ptr_eq`](Self::ptr_eq) says); `None` when it is not shared (an
    /// inline host buffer: clones are copies).
    pub fn buffer_id(&self) -> Option<usize> {
        match self {
            Storage::Host(buffer) => buffer.buffer_id(),
            Storage::Strings(strings) => Some(Arc::as_ptr(strings).cast::<u8>() as usize),
            Storage::Device(buffer) => Some(buffer.buffer_id()),
            Storage::Variants(variants) => Some(Arc::as_ptr(variants).cast::<u8>() as usize),
        }
    }

    /// True when both share the same buffer.
    pub fn ptr_eq(&self, other: &Storage) -> bool {
        match (self, other) {
            (Storage::Host(a), Storage::Host(b)) => a.ptr_eq(b),
            (Storage::Strings(a), Storage::Strings(b)) => Arc::ptr_eq(a, b),
            (Storage::Device(a), Storage::Device(b)) => a.ptr_eq(b),
            (Storage::Variants(a), Storage::Variants(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}
