//! Tensors: a dtype, a [`TensorShape`] and [`Storage`].
//!
//! Fixed-size elements live in an aligned [`HostBuffer`]: shared by
//! reference count and 64-byte aligned, or, for at most 16 bytes, held by
//! value in the tensor (8-byte aligned; cloning copies them);
//! typed views ([`Tensor::as_slice`]) are zero-copy and dtype-checked.
//! [`Tensor::from_proto`] and [`Tensor::to_proto`] convert to and from
//! TensorFlow's `TensorProto` in all of its encodings.
//!
//! `DT_VARIANT` tensors hold typed host values ([`Variant`]s, such as a
//! [`TensorList`]) instead of bytes: see [`Tensor::from_variants`].
//!
//! ```
//! use registry_core::tensor::Tensor;
//!
//! let t = Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! assert_eq!(t.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
//! assert!(t.as_slice::<i32>().is_err()); // wrong dtype
//!
//! let back = Tensor::from_proto(&t.to_proto()).unwrap();
//! assert_eq!(back, t);
//! ```

mod complex_ops;
mod dtype;
mod f64_view;
mod list;
mod proto;
mod recycle;
mod shape;
mod storage;
mod variant;

use std::sync::Arc;

use opreg_proto::{DataType, DataTypeExt};

use crate::memory::{DEVICE_CPU, DeviceBuffer, DeviceError};

pub use dtype::{Complex64, Complex128, TensorElement, bf16, element_size, f16, is_supported};
pub use list::{TensorList, partial_shape_string};
pub use proto::DEFAULT_MAX_PROTO_BYTES;
pub use shape::{IntoShape, TensorShape};
pub use storage::{
    ForeignOwner, HOST_ALIGNMENT, HostBuffer, INLINE_ALIGNMENT, INLINE_CAPACITY, Storage,
};
pub use variant::{Variant, VariantValue};

/// Errors from building, viewing or converting tensors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorError {
    /// A typed view or operation asked for a dtype the tensor does not have.
    #[error("dtype mismatch: tensor has dtype {}, but {} was requested", name(*.actual), name(*.expected))]
    DtypeMismatch {
        /// The dtype asked for.
        expected: DataType,
        /// The tensor's dtype.
        actual: DataType,
    },
    /// A shape had a negative (unknown) dimension.
    #[error(
        "shape {dims:?} has a negative dimension at index {index}; tensors need fully known shapes"
    )]
    NegativeDim {
        /// The dimensions as given.
        dims: Vec<i64>,
        /// The index of the first negative dimension.
        index: usize,
    },
    /// The element count of a shape overflows `i64`.
    #[error("shape {dims} has too many elements (the count overflows a 64-bit integer)")]
    ShapeOverflow {
        /// The dimensions as given.
        dims: String,
    },
    /// A shape proto had `unknown_rank` set.
    #[error("a tensor's shape must have a known rank")]
    UnknownRank,
    /// The number of values does not match the shape.
    #[error("shape {shape} has {expected} elements, but {actual} values were given")]
    ElementCount {
        /// The shape.
        shape: TensorShape,
        /// Its element count.
        expected: usize,
        /// The number of values given.
        actual: usize,
    },
    /// The proto's dtype is not a valid `DataType` value.
    #[error("unknown dtype enum value {0}")]
    UnknownDtype(i32),
    /// The dtype has no real-number view (strings, complex numbers), as
    /// [`Tensor::to_f64`] and [`Tensor::from_f64`] need.
    #[error("dtype {} has no real-number (f64) view", name(*.0))]
    NotReal(DataType),
    /// The dtype is not an integer type (or a `uint64` value does not fit
    /// in `i64`), where [`Tensor::int_values`] needs integers.
    #[error("expected an integer tensor, got dtype {}", name(*.0))]
    NotInteger(DataType),
    /// The dtype is valid but tensors of it are not supported.
    #[error("dtype {} is not supported by Tensor", name(*.0))]
    UnsupportedDtype(DataType),
    /// The tensor would need more memory than allowed.
    #[error("tensor of dtype {} and shape {shape} needs {bytes} bytes, over the limit of {limit}", name(*.dtype))]
    TooLarge {
        /// The dtype.
        dtype: DataType,
        /// The shape.
        shape: TensorShape,
        /// The bytes needed (saturated at `u64::MAX`).
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The allocator could not provide the memory.
    #[error("failed to allocate {bytes} bytes")]
    AllocationFailed {
        /// The bytes asked for.
        bytes: usize,
    },
    /// An allocation is over the process-wide cap
    /// ([`limits::max_allocation_bytes`](crate::limits::max_allocation_bytes)).
    #[error("allocating {bytes} bytes is over the limit of {limit} bytes for one allocation")]
    AllocationLimit {
        /// The bytes asked for.
        bytes: u64,
        /// The cap.
        limit: u64,
    },
    /// A typed field holds more values than the shape has elements.
    #[error("TensorProto of dtype {} and shape {shape} has {count} values in `{field}`, more than its {expected} elements", name(*.dtype))]
    TooManyValues {
        /// The dtype.
        dtype: DataType,
        /// The shape.
        shape: TensorShape,
        /// The field name (`float_val`, ...).
        field: &'static str,
        /// The number of values (complex pairs count as one).
        count: usize,
        /// The element count of the shape.
        expected: usize,
    },
    /// A complex field holds an odd number of floats.
    #[error("TensorProto field `{field}` has {count} numbers; complex values need an even count")]
    OddComplexValues {
        /// The field name.
        field: &'static str,
        /// The number of floats.
        count: usize,
    },
    /// `tensor_content` has the wrong length for the dtype and shape.
    #[error("TensorProto of dtype {} and shape {shape} has {actual} bytes of tensor_content, expected {expected}", name(*.dtype))]
    ContentLength {
        /// The dtype.
        dtype: DataType,
        /// The shape.
        shape: TensorShape,
        /// The bytes expected (elements × element size).
        expected: usize,
        /// The bytes present.
        actual: usize,
    },
    /// `tensor_content` was set on a string tensor (not supported).
    #[error("tensor_content is not supported for DT_STRING tensors; use string_val")]
    StringContent,
    /// An element range is outside a tensor.
    #[error(
        "cannot copy {count} elements from element {src_start} of a tensor of {src_len} \
         to element {dst_start} of a tensor of {dst_len}: out of bounds"
    )]
    ElementRange {
        /// The first element written.
        dst_start: usize,
        /// The first element read.
        src_start: usize,
        /// The number of elements.
        count: usize,
        /// The destination's element count.
        dst_len: usize,
        /// The source's element count.
        src_len: usize,
    },
    /// Host access (a slice, bytes, a proto) to a tensor on a device: copy
    /// it with [`Tensor::to_host`] first.
    #[error(
        "the tensor is in {device_type} memory; copy it to the host (Tensor::to_host) to read it there"
    )]
    NotOnHost {
        /// The device type holding it.
        device_type: &'static str,
    },
    /// A device failed to move or read the tensor.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A `DT_VARIANT` tensor was to be written as a `TensorProto`: its
    /// elements are host values without a serialized form here.
    #[error(
        "cannot convert a DT_VARIANT tensor of shape {shape} to a TensorProto: its elements are \
         host values ({type_name}) that opreg does not serialize"
    )]
    VariantProto {
        /// The tensor's shape.
        shape: TensorShape,
        /// The type name of the first non-empty element (`empty` when all are).
        type_name: &'static str,
    },
    /// A TensorList handle was expected (a scalar `DT_VARIANT` tensor
    /// holding a [`TensorList`]).
    #[error(
        "expected a TensorList handle (a scalar DT_VARIANT tensor holding a TensorList), got {found}"
    )]
    NotAList {
        /// What was found instead.
        found: String,
    },
    /// Mutable access was asked for while the buffer is shared.
    #[error(
        "the tensor's buffer is shared with {refs} handles; mutable access needs a unique buffer"
    )]
    SharedBuffer {
        /// The number of handles sharing the buffer.
        refs: usize,
    },
}

fn name(dtype: DataType) -> &'static str {
    dtype.type_name()
}

/// A dense tensor: dtype, shape and shared storage.
///
/// Cloning is cheap and shares the buffer (see [`is_unique`](Self::is_unique)
/// and [`as_mut_slice`](Self::as_mut_slice)). Equality compares dtype, shape
/// and element bytes (so `NaN == NaN` here when the bits match); variant
/// elements compare by value.
///
/// ```
/// use registry_core::tensor::Tensor;
/// use registry_core::proto::DataType;
///
/// let mut a = Tensor::zeros(DataType::DtInt32, [8]).unwrap();
/// a.as_mut_slice::<i32>().unwrap()[1] = 7;
/// let b = a.clone();
/// assert!(b.shares_buffer_with(&a) && !a.is_unique());
/// assert!(a.as_mut_slice::<i32>().is_err()); // shared: no in-place writes
/// drop(b);
/// assert!(a.is_unique());
/// assert_eq!(a.as_slice::<i32>().unwrap(), &[0, 7, 0, 0, 0, 0, 0, 0]);
///
/// // At most 16 bytes are held by value: clones are copies.
/// let s = Tensor::scalar(1.5f64);
/// assert!(!s.clone().shares_buffer_with(&s) && s.is_unique());
/// ```
#[derive(Debug, Clone)]
pub struct Tensor {
    dtype: DataType,
    shape: TensorShape,
    storage: Storage,
}

impl Tensor {
    /// A tensor of `shape` holding `data` (row-major), copied into an aligned
    /// buffer; errors when the lengths differ.
    pub fn from_vec<T: TensorElement>(
        shape: impl IntoShape,
        data: Vec<T>,
    ) -> Result<Self, TensorError> {
        Self::from_slice(shape, &data)
    }

    /// Like [`from_vec`](Self::from_vec), from a slice.
    pub fn from_slice<T: TensorElement>(
        shape: impl IntoShape,
        data: &[T],
    ) -> Result<Self, TensorError> {
        let shape = shape.into_shape()?;
        check_count(&shape, data.len())?;
        let mut t = Self::zeros(T::DTYPE, shape)?;
        t.typed_mut_unchecked::<T>().copy_from_slice(data);
        Ok(t)
    }

    /// A rank-0 tensor holding `value`.
    pub fn scalar<T: TensorElement>(value: T) -> Self {
        let mut t = match Self::zeros(T::DTYPE, TensorShape::scalar()) {
            Ok(t) => t,
            // Out of memory for one element: behave as `Box::new` does.
            Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>()),
        };
        t.typed_mut_unchecked::<T>()[0] = value;
        t
    }

    /// A tensor of `dtype` and `shape` filled with zeros (empty strings for
    /// `DT_STRING`, [empty variants](Variant::empty) for `DT_VARIANT`).
    #[inline]
    pub fn zeros(dtype: DataType, shape: impl IntoShape) -> Result<Self, TensorError> {
        let shape = shape.into_shape()?;
        let storage = Self::new_storage(dtype, &shape, true)?;
        Ok(Self {
            dtype,
            shape,
            storage,
        })
    }

    /// [`zeros`](Self::zeros) built directly in `slot` (an output slot of
    /// a kernel call), which it returns. Building in place matters for
    /// small tensors: moving a tensor through `Result`s costs more than
    /// allocating it.
    #[inline]
    pub(crate) fn zeros_in(
        slot: &mut Option<Tensor>,
        dtype: DataType,
        shape: TensorShape,
    ) -> Result<&mut Tensor, TensorError> {
        Self::new_in(slot, dtype, shape, true)
    }

    /// A host tensor of `dtype` and `shape` built directly in `slot`, as
    /// [`zeros_in`](Self::zeros_in), for a kernel that writes every element:
    /// the elements are unspecified (but valid) values until then, not
    /// zero-filled first when a freed buffer of its size is reused
    /// ([`HostBuffer::for_overwrite`]). `DT_BOOL`, strings and variants are
    /// filled as by [`zeros`](Self::zeros).
    #[inline]
    pub(crate) fn for_overwrite_in(
        slot: &mut Option<Tensor>,
        dtype: DataType,
        shape: TensorShape,
    ) -> Result<&mut Tensor, TensorError> {
        Self::new_in(slot, dtype, shape, dtype == DataType::DtBool)
    }

    /// A tensor built in `slot`, zero-filled with `zero`.
    #[inline]
    fn new_in(
        slot: &mut Option<Tensor>,
        dtype: DataType,
        shape: TensorShape,
        zero: bool,
    ) -> Result<&mut Tensor, TensorError> {
        let storage = Self::new_storage(dtype, &shape, zero)?;
        Ok(slot.insert(Self {
            dtype,
            shape,
            storage,
        }))
    }

    /// Storage for `dtype` and `shape`: zero-filled with `zero`, else
    /// (fixed-size elements only) possibly holding a reused buffer's bytes.
    #[inline]
    fn new_storage(
        dtype: DataType,
        shape: &TensorShape,
        zero: bool,
    ) -> Result<Storage, TensorError> {
        let n = shape.num_elements();
        if dtype == DataType::DtString {
            let bytes = (n as u64).saturating_mul(std::mem::size_of::<Vec<u8>>() as u64);
            check_limit(dtype, shape, bytes)?;
            let mut v = Vec::new();
            v.try_reserve_exact(n)
                .map_err(|_| TensorError::AllocationFailed {
                    bytes: n.saturating_mul(std::mem::size_of::<Vec<u8>>()),
                })?;
            v.resize(n, Vec::new());
            return Ok(Storage::Strings(Arc::new(v)));
        }
        if dtype == DataType::DtVariant {
            let size = std::mem::size_of::<Variant>();
            let bytes = (n as u64).saturating_mul(size as u64);
            check_limit(dtype, shape, bytes)?;
            let mut v = Vec::new();
            v.try_reserve_exact(n)
                .map_err(|_| TensorError::AllocationFailed {
                    bytes: n.saturating_mul(size),
                })?;
            v.resize(n, Variant::empty());
            return Ok(Storage::Variants(Arc::new(v)));
        }
        let size = element_size(dtype).ok_or_else(|| TensorError::UnsupportedDtype(dtype))?;
        let bytes = (n as u64).saturating_mul(size as u64);
        check_limit(dtype, shape, bytes)?;
        let buffer = if zero {
            HostBuffer::zeroed(bytes as usize)?
        } else {
            HostBuffer::for_overwrite(bytes as usize)?
        };
        Ok(Storage::Host(buffer))
    }

    /// A tensor whose elements live in device memory `buffer` (which must
    /// hold exactly the elements' bytes; strings cannot live on a device).
    /// Device backends build their kernels' outputs with this.
    pub fn from_device(
        dtype: DataType,
        shape: impl IntoShape,
        buffer: DeviceBuffer,
    ) -> Result<Self, TensorError> {
        let shape = shape.into_shape()?;
        let size = element_size(dtype).ok_or(TensorError::UnsupportedDtype(dtype))?;
        let expected = shape.num_elements().saturating_mul(size);
        if buffer.len() != expected {
            return Err(TensorError::Device(DeviceError::Transfer {
                device: buffer.device_type().to_owned(),
                reason: format!(
                    "a {} tensor of shape {shape} needs {expected} bytes, but the device buffer has {}",
                    dtype.type_name(),
                    buffer.len()
                ),
            }));
        }
        Ok(Self {
            dtype,
            shape,
            storage: Storage::Device(buffer),
        })
    }

    /// True when the elements are in host memory (every tensor but those
    /// made by a device backend).
    #[inline]
    pub fn is_on_host(&self) -> bool {
        !matches!(self.storage, Storage::Device(_))
    }

    /// The device type the elements live on: `"CPU"` for host memory.
    pub fn device_type(&self) -> &'static str {
        match &self.storage {
            Storage::Device(d) => d.device_type(),
            _ => DEVICE_CPU,
        }
    }

    /// The device memory, for tensors on a device.
    pub fn device_buffer(&self) -> Option<&DeviceBuffer> {
        match &self.storage {
            Storage::Device(d) => Some(d),
            _ => None,
        }
    }

    /// The device memory, mutably, for tensors on a device (a backend's
    /// kernel writes to it in place through
    /// [`DeviceBuffer::downcast_mut`], which checks it is not shared).
    pub fn device_buffer_mut(&mut self) -> Option<&mut DeviceBuffer> {
        match &mut self.storage {
            Storage::Device(d) => Some(d),
            _ => None,
        }
    }

    /// This tensor with its elements in host memory: itself (shared) when
    /// they already are, else a copy read back from the device (which waits
    /// for the device's queued work). Device bytes of a `bool` tensor other
    /// than 0 are read as `true`.
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// let t = Tensor::from_vec([5], vec![1i32, 2, 3, 4, 5]).unwrap();
    /// let h = t.to_host().unwrap();
    /// assert!(h.shares_buffer_with(&t));
    /// ```
    pub fn to_host(&self) -> Result<Tensor, TensorError> {
        let Storage::Device(device) = &self.storage else {
            return Ok(self.clone());
        };
        let mut host = Self::zeros(self.dtype, self.shape.clone())?;
        let Storage::Host(buffer) = &mut host.storage else {
            return Err(TensorError::UnsupportedDtype(self.dtype));
        };
        let bytes = buffer
            .bytes_mut()
            .ok_or(TensorError::SharedBuffer { refs: 2 })?;
        if bytes.len() != device.len() {
            return Err(TensorError::Device(DeviceError::Transfer {
                device: device.device_type().to_owned(),
                reason: format!(
                    "the device buffer has {} bytes, the host tensor {}",
                    device.len(),
                    bytes.len()
                ),
            }));
        }
        device.memory().copy_to_host(bytes)?;
        if self.dtype == DataType::DtBool {
            // Device memory is only bytes (a kernel may leave an output
            // unwritten, or write any byte): a `bool` must be 0 or 1.
            for b in bytes.iter_mut() {
                *b = u8::from(*b != 0);
            }
        }
        Ok(host)
    }

    /// A `DT_STRING` tensor of `shape` holding `data` (byte strings, not
    /// necessarily UTF-8).
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// let t = Tensor::from_strings([2], vec![b"a".to_vec(), b"bc".to_vec()]).unwrap();
    /// assert_eq!(t.as_strings().unwrap()[1], b"bc");
    /// ```
    pub fn from_strings(shape: impl IntoShape, data: Vec<Vec<u8>>) -> Result<Self, TensorError> {
        let shape = shape.into_shape()?;
        check_count(&shape, data.len())?;
        Ok(Self {
            dtype: DataType::DtString,
            shape,
            storage: Storage::Strings(Arc::new(data)),
        })
    }

    /// A `DT_VARIANT` tensor of `shape` holding `data` (typed host values,
    /// such as [`TensorList`]s).
    ///
    /// ```
    /// use registry_core::tensor::{Tensor, Variant, VariantValue};
    ///
    /// #[derive(Debug, Clone, PartialEq)]
    /// struct Tag(&'static str);
    /// impl VariantValue for Tag {
    ///     const TYPE_NAME: &'static str = "example::Tag";
    /// }
    ///
    /// let t = Tensor::from_variants([2], vec![Variant::new(Tag("a")), Variant::empty()]).unwrap();
    /// assert_eq!(t.as_variants().unwrap()[0].get::<Tag>(), Some(&Tag("a")));
    /// assert!(t.as_slice::<f32>().is_err());
    /// assert!(t.try_to_proto().is_err()); // host values have no TensorProto form
    /// let same = Tensor::from_variants([2], vec![Variant::new(Tag("a")), Variant::empty()]).unwrap();
    /// assert_eq!(t, same); // compared by value
    /// ```
    pub fn from_variants(shape: impl IntoShape, data: Vec<Variant>) -> Result<Self, TensorError> {
        let shape = shape.into_shape()?;
        check_count(&shape, data.len())?;
        Ok(Self {
            dtype: DataType::DtVariant,
            shape,
            storage: Storage::Variants(Arc::new(data)),
        })
    }

    /// A rank-0 `DT_VARIANT` tensor holding `value`.
    pub fn scalar_variant(value: Variant) -> Self {
        Self {
            dtype: DataType::DtVariant,
            shape: TensorShape::scalar(),
            storage: Storage::Variants(Arc::new(vec![value])),
        }
    }

    /// The elements of a `DT_VARIANT` tensor.
    pub fn as_variants(&self) -> Result<&[Variant], TensorError> {
        match &self.storage {
            Storage::Variants(v) => Ok(v),
            _ => Err(self.mismatch(DataType::DtVariant)),
        }
    }

    /// The elements of a `DT_VARIANT` tensor, mutably; errors when the
    /// storage is shared with another tensor. (Each [`Variant`] may still
    /// share its value: see [`Variant::get_mut`] and [`Variant::make_mut`].)
    ///
    /// ```
    /// use registry_core::tensor::{Tensor, Variant, TensorList};
    /// use registry_core::proto::DataType;
    /// use registry_core::shape::Shape;
    ///
    /// let mut t = Tensor::zeros(DataType::DtVariant, [1]).unwrap();
    /// t.as_mut_variants().unwrap()[0] = Variant::new(TensorList::new(DataType::DtFloat, Shape::unknown()));
    /// let copy = t.clone();
    /// assert!(t.as_mut_variants().is_err()); // shared storage
    /// assert_eq!(copy.as_variants().unwrap()[0].type_name(), Some("tensorflow::TensorList"));
    /// ```
    pub fn as_mut_variants(&mut self) -> Result<&mut [Variant], TensorError> {
        let dtype = self.dtype();
        match &mut self.storage {
            Storage::Variants(v) => {
                let refs = Arc::strong_count(v);
                Arc::get_mut(v)
                    .map(|v| v.as_mut_slice())
                    .ok_or(TensorError::SharedBuffer { refs })
            }
            _ => Err(TensorError::DtypeMismatch {
                expected: DataType::DtVariant,
                actual: dtype,
            }),
        }
    }

    /// A rank-0 `DT_STRING` tensor.
    pub fn scalar_string(value: impl Into<Vec<u8>>) -> Self {
        Self {
            dtype: DataType::DtString,
            shape: TensorShape::scalar(),
            storage: Storage::Strings(Arc::new(vec![value.into()])),
        }
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &TensorShape {
        &self.shape
    }

    /// The dimension sizes (shorthand for `shape().dims()`).
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The number of elements.
    pub fn num_elements(&self) -> usize {
        self.shape.num_elements()
    }

    /// The bytes this tensor's storage holds: the buffer's length, for
    /// `DT_STRING` the strings' bytes plus one `Vec` header per element, for
    /// `DT_VARIANT` one [`Variant`] per element plus each value's
    /// [`allocated_bytes`](VariantValue::allocated_bytes).
    /// Tensors sharing storage each report the whole of it.
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// assert_eq!(Tensor::from_vec([2, 3], vec![0f32; 6]).unwrap().allocated_bytes(), 24);
    /// ```
    pub fn allocated_bytes(&self) -> u64 {
        match &self.storage {
            Storage::Host(buffer) => buffer.len() as u64,
            Storage::Strings(strings) => strings.iter().fold(
                (strings.len() * std::mem::size_of::<Vec<u8>>()) as u64,
                |sum, s| sum.saturating_add(s.len() as u64),
            ),
            Storage::Device(buffer) => buffer.len() as u64,
            Storage::Variants(variants) => variants.iter().fold(
                (variants.len() * std::mem::size_of::<Variant>()) as u64,
                |sum, v| sum.saturating_add(v.allocated_bytes()),
            ),
        }
    }

    /// The storage (host buffer, strings, variants or device memory).
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// A host tensor of `dtype` and `shape` over `buffer` (no copy): what a
    /// bridge to another framework builds from that framework's memory
    /// ([`HostBuffer::from_foreign`]). Errors when `dtype` has no fixed
    /// element size or the buffer's length is not the shape's byte size.
    ///
    /// ```
    /// use registry_core::proto::DataType;
    /// use registry_core::tensor::{HostBuffer, Tensor};
    /// let t = Tensor::from_host_buffer(DataType::DtFloat, [2, 3], HostBuffer::zeroed(24).unwrap()).unwrap();
    /// assert_eq!(t.as_slice::<f32>().unwrap(), &[0.0; 6]);
    /// assert!(Tensor::from_host_buffer(DataType::DtFloat, [2], HostBuffer::zeroed(24).unwrap()).is_err());
    /// ```
    pub fn from_host_buffer(
        dtype: DataType,
        shape: impl IntoShape,
        buffer: HostBuffer,
    ) -> Result<Self, TensorError> {
        let shape = shape.into_shape()?;
        let size = element_size(dtype).ok_or(TensorError::UnsupportedDtype(dtype))?;
        let elements = buffer.len() / size.max(1);
        if !buffer.len().is_multiple_of(size.max(1)) || elements != shape.num_elements() {
            return Err(TensorError::ElementCount {
                expected: shape.num_elements(),
                shape,
                actual: elements,
            });
        }
        Ok(Self::from_parts(dtype, shape, Storage::Host(buffer)))
    }

    /// The host buffer of a tensor of fixed-size elements in host memory
    /// (`None` for strings, variants and device memory).
    pub fn host_buffer(&self) -> Option<&HostBuffer> {
        match &self.storage {
            Storage::Host(buffer) => Some(buffer),
            _ => None,
        }
    }

    /// True when no other tensor shares this tensor's buffer, so a kernel may
    /// forward it to an output and write in place.
    pub fn is_unique(&self) -> bool {
        self.storage.is_unique()
    }

    /// True when both tensors share the same buffer.
    pub fn shares_buffer_with(&self, other: &Tensor) -> bool {
        self.storage.ptr_eq(&other.storage)
    }

    /// An identity of the tensor's buffer, equal for tensors that share it
    /// (for counting shared memory once); `None` for a small tensor whose
    /// bytes are inline (its clones are copies).
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// let big = Tensor::from_vec([1024], vec![0f32; 1024]).unwrap();
    /// let view = big.reshape([32, 32]).unwrap();
    /// assert_eq!(big.buffer_id(), view.buffer_id());
    /// assert!(big.buffer_id().is_some());
    /// ```
    pub fn buffer_id(&self) -> Option<usize> {
        self.storage.buffer_id()
    }

    /// The same elements with another shape of equal element count, sharing
    /// the buffer (no copy).
    pub fn reshape(&self, shape: impl IntoShape) -> Result<Tensor, TensorError> {
        let shape = shape.into_shape()?;
        check_count(&shape, self.num_elements())?;
        Ok(Tensor {
            dtype: self.dtype,
            shape,
            storage: self.storage.clone(),
        })
    }

    /// The elements as a slice of `T` (zero-copy); errors unless the tensor's
    /// dtype is `T::DTYPE`.
    pub fn as_slice<T: TensorElement>(&self) -> Result<&[T], TensorError> {
        self.check_dtype(T::DTYPE)?;
        match &self.storage {
            Storage::Host(b) => Ok(cast_slice(b.as_bytes())),
            Storage::Strings(_) | Storage::Variants(_) => Err(self.mismatch(T::DTYPE)),
            Storage::Device(d) => Err(not_on_host(d)),
        }
    }

    /// The elements as a mutable slice of `T` (zero-copy); errors unless the
    /// dtype is `T::DTYPE` and the buffer is not shared.
    pub fn as_mut_slice<T: TensorElement>(&mut self) -> Result<&mut [T], TensorError> {
        self.check_dtype(T::DTYPE)?;
        match &mut self.storage {
            Storage::Host(b) => {
                let refs = b.ref_count();
                let bytes = b
                    .bytes_mut()
                    .ok_or_else(|| TensorError::SharedBuffer { refs })?;
                Ok(cast_slice_mut(bytes))
            }
            Storage::Strings(_) | Storage::Variants(_) => Err(TensorError::DtypeMismatch {
                expected: T::DTYPE,
                actual: self.dtype,
            }),
            Storage::Device(d) => Err(not_on_host(d)),
        }
    }

    /// The raw element bytes in host order (fixed-size dtypes only, including
    /// the quantized types, which have no typed view).
    pub fn as_bytes(&self) -> Result<&[u8], TensorError> {
        match &self.storage {
            Storage::Host(b) => Ok(b.as_bytes()),
            Storage::Strings(_) => Err(TensorError::UnsupportedDtype(DataType::DtString)),
            Storage::Variants(_) => Err(TensorError::UnsupportedDtype(DataType::DtVariant)),
            Storage::Device(d) => Err(not_on_host(d)),
        }
    }

    /// The raw element bytes for writing (fixed-size dtypes other than
    /// `DT_BOOL`, whose bytes must stay 0 or 1: use
    /// [`as_mut_slice::<bool>`](Self::as_mut_slice) or
    /// [`copy_elements`](Self::copy_elements)); errors when shared.
    pub fn as_mut_bytes(&mut self) -> Result<&mut [u8], TensorError> {
        if self.dtype() == DataType::DtBool {
            return Err(TensorError::UnsupportedDtype(DataType::DtBool));
        }
        match &mut self.storage {
            Storage::Host(b) => {
                let refs = b.ref_count();
                b.bytes_mut()
                    .ok_or_else(|| TensorError::SharedBuffer { refs })
            }
            Storage::Strings(_) => Err(TensorError::UnsupportedDtype(DataType::DtString)),
            Storage::Variants(_) => Err(TensorError::UnsupportedDtype(DataType::DtVariant)),
            Storage::Device(d) => Err(not_on_host(d)),
        }
    }

    /// Copies `count` elements of `src` starting at element `src_start` to
    /// this tensor starting at element `dst_start` (same dtype, any
    /// fixed-size dtype, string or variant; bounds-checked; variants are
    /// copied shallowly, sharing their values).
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// let src = Tensor::from_vec([4], vec![true, false, true, true]).unwrap();
    /// let mut dst = Tensor::from_vec([3], vec![false; 3]).unwrap();
    /// dst.copy_elements(1, &src, 2, 2).unwrap();
    /// assert_eq!(dst.as_slice::<bool>().unwrap(), &[false, true, true]);
    /// assert!(dst.copy_elements(2, &src, 0, 2).is_err()); // out of bounds
    /// ```
    pub fn copy_elements(
        &mut self,
        dst_start: usize,
        src: &Tensor,
        src_start: usize,
        count: usize,
    ) -> Result<(), TensorError> {
        self.check_dtype(src.dtype())?;
        let out_of_bounds =
            |start: usize, len: usize| start.checked_add(count).is_none_or(|end| end > len);
        if out_of_bounds(dst_start, self.num_elements())
            || out_of_bounds(src_start, src.num_elements())
        {
            return Err(TensorError::ElementRange {
                dst_start,
                src_start,
                count,
                dst_len: self.num_elements(),
                src_len: src.num_elements(),
            });
        }
        match (&mut self.storage, &src.storage) {
            (Storage::Host(dst), Storage::Host(s)) => {
                let size = element_size(self.dtype).unwrap_or(1);
                let refs = dst.ref_count();
                let bytes = dst
                    .bytes_mut()
                    .ok_or_else(|| TensorError::SharedBuffer { refs })?;
                bytes[dst_start * size..(dst_start + count) * size]
                    .copy_from_slice(&s.as_bytes()[src_start * size..(src_start + count) * size]);
                Ok(())
            }
            (Storage::Strings(dst), Storage::Strings(s)) => {
                let refs = Arc::strong_count(dst);
                let dst = Arc::get_mut(dst).ok_or_else(|| TensorError::SharedBuffer { refs })?;
                dst[dst_start..dst_start + count]
                    .clone_from_slice(&s[src_start..src_start + count]);
                Ok(())
            }
            (Storage::Variants(dst), Storage::Variants(s)) => {
                let refs = Arc::strong_count(dst);
                let dst = Arc::get_mut(dst).ok_or_else(|| TensorError::SharedBuffer { refs })?;
                dst[dst_start..dst_start + count]
                    .clone_from_slice(&s[src_start..src_start + count]);
                Ok(())
            }
            (Storage::Device(d), _) => Err(not_on_host(d)),
            (_, Storage::Device(d)) => Err(not_on_host(d)),
            _ => Err(self.mismatch(src.dtype())),
        }
    }

    /// The elements of a `DT_STRING` tensor.
    pub fn as_strings(&self) -> Result<&[Vec<u8>], TensorError> {
        match &self.storage {
            Storage::Strings(s) => Ok(s),
            Storage::Host(_) | Storage::Device(_) | Storage::Variants(_) => {
                Err(self.mismatch(DataType::DtString))
            }
        }
    }

    /// The elements of a `DT_STRING` tensor, mutably; errors when shared.
    pub fn as_mut_strings(&mut self) -> Result<&mut [Vec<u8>], TensorError> {
        let dtype = self.dtype();
        match &mut self.storage {
            Storage::Strings(s) => {
                let refs = Arc::strong_count(s);
                Arc::get_mut(s)
                    .map(|v| v.as_mut_slice())
                    .ok_or_else(|| TensorError::SharedBuffer { refs })
            }
            Storage::Host(_) | Storage::Device(_) | Storage::Variants(_) => {
                Err(TensorError::DtypeMismatch {
                    expected: DataType::DtString,
                    actual: dtype,
                })
            }
        }
    }

    fn check_dtype(&self, expected: DataType) -> Result<(), TensorError> {
        if self.dtype() == expected {
            Ok(())
        } else {
            Err(self.mismatch(expected))
        }
    }

    fn mismatch(&self, expected: DataType) -> TensorError {
        TensorError::DtypeMismatch {
            expected,
            actual: self.dtype(),
        }
    }

    /// Typed mutable access to a freshly made (unique) host tensor whose
    /// storage type is `T` (which may differ from `dtype` for quantized
    /// types). Panics only on an internal bug.
    pub(crate) fn typed_mut_unchecked<T: TensorElement>(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Host(b) => cast_slice_mut(
                b.bytes_mut()
                    .expect("internal: freshly made tensor buffer is unique"),
            ),
            Storage::Strings(_) | Storage::Device(_) | Storage::Variants(_) => {
                unreachable!("internal: typed access to a string, device or variant tensor")
            }
        }
    }

    /// The host elements viewed as storage type `T`, ignoring the dtype
    /// (for quantized types stored as plain integers). `T` must have the
    /// dtype's element size and be the type the buffer was written as.
    pub(crate) fn storage_slice<T: TensorElement>(&self) -> &[T] {
        match &self.storage {
            Storage::Host(b) => cast_slice(b.as_bytes()),
            Storage::Strings(_) | Storage::Device(_) | Storage::Variants(_) => &[],
        }
    }

    pub(crate) fn from_parts(dtype: DataType, shape: TensorShape, storage: Storage) -> Self {
        Self {
            dtype,
            shape,
            storage,
        }
    }
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Self) -> bool {
        if self.dtype() != other.dtype() || self.shape != other.shape {
            return false;
        }
        match (&self.storage, &other.storage) {
            (Storage::Host(a), Storage::Host(b)) => a.as_bytes() == b.as_bytes(),
            (Storage::Strings(a), Storage::Strings(b)) => a == b,
            // Variants compare by value (their `PartialEq`).
            (Storage::Variants(a), Storage::Variants(b)) => a == b,
            // Device memory is compared only by identity (reading it could
            // fail); compare `to_host()` copies for values.
            (Storage::Device(a), Storage::Device(b)) => a.ptr_eq(b),
            _ => false,
        }
    }
}

/// Refuses tensors over the allocation cap before allocating them (and
/// before `bytes` could overflow `usize`: the cap is below `isize::MAX`
/// whenever it matters, and saturated sizes are over any cap).
#[inline]
fn check_limit(dtype: DataType, shape: &TensorShape, bytes: u64) -> Result<(), TensorError> {
    if bytes <= INLINE_CAPACITY as u64 {
        return Ok(());
    }
    crate::limits::check_allocation(bytes).map_err(|limit| TensorError::TooLarge {
        dtype,
        shape: shape.clone(),
        bytes,
        limit,
    })
}

fn not_on_host(buffer: &DeviceBuffer) -> TensorError {
    TensorError::NotOnHost {
        device_type: buffer.device_type(),
    }
}

fn check_count(shape: &TensorShape, actual: usize) -> Result<(), TensorError> {
    if shape.num_elements() == actual {
        Ok(())
    } else {
        Err(TensorError::ElementCount {
            shape: shape.clone(),
            expected: shape.num_elements(),
            actual,
        })
    }
}

/// Views host bytes as elements. `bytes` must come from a [`HostBuffer`]
/// (at least [`INLINE_ALIGNMENT`]-aligned) whose length is a multiple of `size_of::<T>()`.
fn cast_slice<T: TensorElement>(bytes: &[u8]) -> &[T] {
    let size = std::mem::size_of::<T>();
    assert!(
        bytes.as_ptr().align_offset(std::mem::align_of::<T>()) == 0
            && bytes.len().is_multiple_of(size),
        "internal: misaligned or ragged tensor buffer"
    );
    // SAFETY: the pointer is aligned for `T` and valid for `bytes.len()`
    // bytes (checked above, and `T` is never zero-sized); every `T` is
    // plain data for which the buffer's bytes are a valid value: buffers
    // start zeroed (zero is valid for every `TensorElement`) and are only
    // written through typed `&mut [T]` of the tensor's own storage type,
    // so a `bool` byte is always 0 or 1. The lifetime is tied to `bytes`.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) }
}

/// Mutable form of [`cast_slice`].
fn cast_slice_mut<T: TensorElement>(bytes: &mut [u8]) -> &mut [T] {
    let size = std::mem::size_of::<T>();
    assert!(
        bytes.as_ptr().align_offset(std::mem::align_of::<T>()) == 0
            && bytes.len().is_multiple_of(size),
        "internal: misaligned or ragged tensor buffer"
    );
    // SAFETY: as in `cast_slice`; the exclusive borrow of `bytes` moves into
    // the returned slice, and any value written through it is a valid `T`,
    // so the bytes stay valid for the next typed read.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), bytes.len() / size) }
}
