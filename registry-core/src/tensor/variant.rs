//! [`Variant`]: one element of a `DT_VARIANT` tensor, a typed host value
//! (TF's `tensorflow::Variant`), and [`VariantValue`], the trait its
//! payloads implement.
//!
//! A variant holds its value behind a reference count, so copying a variant
//! tensor is shallow. [`Variant::get_mut`] gives mutable access only when
//! nothing else holds the value (a kernel updates a list in place when its
//! input is not shared); [`Variant::make_mut`] copies it first otherwise
//! (copy-on-write, as `Arc::make_mut`).
//!
//! ```
//! use registry_core::tensor::{Variant, VariantValue};
//!
//! #[derive(Debug, Clone, PartialEq)]
//! struct Counter(u32);
//! impl VariantValue for Counter {
//!     const TYPE_NAME: &'static str = "example::Counter";
//! }
//!
//! let mut a = Variant::new(Counter(1));
//! assert_eq!(a.type_name(), Some("example::Counter"));
//! a.get_mut::<Counter>().unwrap().0 += 1; // unique: in place
//! let b = a.clone();
//! assert!(a.get_mut::<Counter>().is_none()); // shared now
//! a.make_mut::<Counter>().unwrap().0 += 1; // copied, then written
//! assert_eq!(b.get::<Counter>(), Some(&Counter(2)));
//! assert_eq!(a.get::<Counter>(), Some(&Counter(3)));
//! assert_ne!(a, b);
//! ```

use std::any::Any;
use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

/// A type that can be held in a [`Variant`] (an element of a `DT_VARIANT`
/// tensor): a host value with a type name, cloning (for copy-on-write),
/// `Debug`, unwind safety (tensors cross `catch_unwind`), and value equality (for comparing tensors; a type without a
/// meaningful one may compare by identity or return `false`).
///
/// ```
/// use registry_core::tensor::VariantValue;
///
/// #[derive(Debug, Clone, PartialEq)]
/// struct Token(String);
/// impl VariantValue for Token {
///     const TYPE_NAME: &'static str = "example::Token";
///     fn allocated_bytes(&self) -> u64 {
///         (std::mem::size_of::<Self>() + self.0.len()) as u64
///     }
/// }
/// assert_eq!(Token("ab".into()).allocated_bytes(), 26);
/// ```
pub trait VariantValue:
    Clone + PartialEq + fmt::Debug + Send + Sync + RefUnwindSafe + UnwindSafe + 'static
{
    /// The type's name (TF's `TypeName()`, e.g. `tensorflow::TensorList`),
    /// shown in errors and `Debug` output.
    const TYPE_NAME: &'static str;

    /// About how many bytes the value holds, for memory accounting
    /// ([`Tensor::allocated_bytes`](super::Tensor::allocated_bytes)). The
    /// default is the size of the value itself.
    fn allocated_bytes(&self) -> u64 {
        std::mem::size_of::<Self>() as u64
    }
}

/// The object-safe face of a [`VariantValue`].
trait DynValue: Send + Sync + RefUnwindSafe + UnwindSafe {
    fn type_name(&self) -> &'static str;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn clone_arc(&self) -> Arc<dyn DynValue>;
    fn dyn_eq(&self, other: &dyn DynValue) -> bool;
    fn dyn_fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn allocated_bytes(&self) -> u64;
}

impl<T: VariantValue> DynValue for T {
    fn type_name(&self) -> &'static str {
        T::TYPE_NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn clone_arc(&self) -> Arc<dyn DynValue> {
        Arc::new(self.clone())
    }

    fn dyn_eq(&self, other: &dyn DynValue) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn dyn_fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }

    fn allocated_bytes(&self) -> u64 {
        VariantValue::allocated_bytes(self)
    }
}

/// One element of a `DT_VARIANT` tensor: empty (as [`Tensor::zeros`]
/// makes them, TF's default-constructed `Variant`) or a typed
/// [`VariantValue`] shared by reference count.
///
/// Equality compares values: two empty variants are equal, values of
/// different types are not, values of one type compare with their
/// `PartialEq`.
///
/// ```
/// use registry_core::tensor::{Tensor, Variant};
/// use registry_core::proto::DataType;
///
/// let t = Tensor::zeros(DataType::DtVariant, [2]).unwrap();
/// assert!(t.as_variants().unwrap().iter().all(Variant::is_empty));
/// assert_eq!(Variant::empty(), Variant::default());
/// ```
///
/// [`Tensor::zeros`]: super::Tensor::zeros
#[derive(Clone, Default)]
pub struct Variant {
    value: Option<Arc<dyn DynValue>>,
}

impl Variant {
    /// An empty variant (holds no value).
    pub const fn empty() -> Self {
        Variant { value: None }
    }

    /// A variant holding `value`.
    ///
    /// ```
    /// use registry_core::tensor::{TensorList, Variant};
    /// use registry_core::proto::DataType;
    /// use registry_core::shape::Shape;
    ///
    /// let v = Variant::new(TensorList::new(DataType::DtFloat, Shape::unknown()));
    /// assert!(v.is::<TensorList>());
    /// assert_eq!(v.type_name(), Some("tensorflow::TensorList"));
    /// ```
    pub fn new<T: VariantValue>(value: T) -> Self {
        Variant {
            value: Some(Arc::new(value)),
        }
    }

    /// True when the variant holds no value.
    pub fn is_empty(&self) -> bool {
        self.value.is_none()
    }

    /// The held value's [type name](VariantValue::TYPE_NAME), or `None`
    /// when empty.
    pub fn type_name(&self) -> Option<&'static str> {
        self.value.as_deref().map(DynValue::type_name)
    }

    /// True when the variant holds a `T`.
    pub fn is<T: VariantValue>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// The held value as a `T`, or `None` when empty or of another type.
    pub fn get<T: VariantValue>(&self) -> Option<&T> {
        self.value.as_deref()?.as_any().downcast_ref::<T>()
    }

    /// The held value as a mutable `T`, only when it is a `T` and nothing
    /// else holds it (no clone of this variant shares it); `None` otherwise.
    ///
    /// ```
    /// use registry_core::tensor::{TensorList, Variant};
    /// use registry_core::proto::DataType;
    /// use registry_core::shape::Shape;
    ///
    /// let mut v = Variant::new(TensorList::new(DataType::DtInt32, Shape::scalar()));
    /// assert!(v.get_mut::<TensorList>().is_some());
    /// let shared = v.clone();
    /// assert!(v.get_mut::<TensorList>().is_none());
    /// drop(shared);
    /// assert!(v.get_mut::<TensorList>().is_some());
    /// ```
    pub fn get_mut<T: VariantValue>(&mut self) -> Option<&mut T> {
        Arc::get_mut(self.value.as_mut()?)?
            .as_any_mut()
            .downcast_mut::<T>()
    }

    /// The held value as a mutable `T`, copied first when something else
    /// holds it (copy-on-write, like `Arc::make_mut`); `None` when empty or
    /// of another type.
    pub fn make_mut<T: VariantValue>(&mut self) -> Option<&mut T> {
        let arc = self.value.as_mut()?;
        arc.as_any().downcast_ref::<T>()?;
        if Arc::get_mut(arc).is_none() {
            *arc = arc.clone_arc();
        }
        Arc::get_mut(arc)?.as_any_mut().downcast_mut::<T>()
    }

    /// A copy of the held value as a `T` (`None` when empty or of another
    /// type). For a [`TensorList`](super::TensorList) the copy is shallow:
    /// its items share their buffers.
    pub fn to_value<T: VariantValue>(&self) -> Option<T> {
        self.get::<T>().cloned()
    }

    /// True when nothing else holds this variant's value (always for an
    /// empty variant).
    pub fn is_unique(&self) -> bool {
        match &self.value {
            None => true,
            Some(arc) => Arc::strong_count(arc) == 1 && Arc::weak_count(arc) == 0,
        }
    }

    /// True when both variants hold the same value (the same allocation).
    pub fn ptr_eq(&self, other: &Variant) -> bool {
        match (&self.value, &other.value) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// About how many bytes the value holds ([`VariantValue::allocated_bytes`];
    /// 0 when empty).
    pub fn allocated_bytes(&self) -> u64 {
        self.value.as_deref().map_or(0, DynValue::allocated_bytes)
    }
}

impl PartialEq for Variant {
    fn eq(&self, other: &Self) -> bool {
        match (&self.value, &other.value) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.dyn_eq(b.as_ref()),
            _ => false,
        }
    }
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            None => f.write_str("Variant(empty)"),
            Some(v) => {
                write!(f, "Variant<{}>(", v.type_name())?;
                v.dyn_fmt(f)?;
                f.write_str(")")
            }
        }
    }
}
