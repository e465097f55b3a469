//! [`TensorList`]: the value a TensorList handle (a scalar `DT_VARIANT`
//! tensor) holds, as TF's `tensorflow::TensorList`
//! (`tensorflow/core/kernels/tensor_list.h`).

use opreg_proto::DataType;

use super::{Tensor, TensorError, Variant, VariantValue};
use crate::shape::Shape;

/// A list of tensors of one dtype whose shapes are compatible with a
/// partial element shape: the value behind the TensorList ops
/// (`EmptyTensorList`, `TensorListSetItem`, `TensorListStack`, ...), held
/// in a scalar `DT_VARIANT` tensor.
///
/// Items may be unset (`None`, TF's `DT_INVALID` placeholders of
/// `TensorListReserve`). Cloning is shallow: item tensors share their
/// buffers.
///
/// ```
/// use registry_core::tensor::{Tensor, TensorList};
/// use registry_core::proto::DataType;
/// use registry_core::shape::Shape;
///
/// let mut list = TensorList::new(DataType::DtFloat, Shape::from([2]));
/// list.items.push(Some(Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap()));
/// list.items.push(None);
/// assert_eq!(list.len(), 2);
///
/// let handle = list.clone().into_tensor();
/// assert_eq!(handle.dims(), &[] as &[usize]);
/// assert_eq!(TensorList::from_tensor(&handle).unwrap(), &list);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TensorList {
    /// The dtype of every item.
    pub element_dtype: DataType,
    /// The shape every item is compatible with (possibly partial or of
    /// unknown rank).
    pub element_shape: Shape,
    /// The most items the list may hold (`EmptyTensorList`'s
    /// `max_num_elements`), -1 for no limit.
    pub max_num_elements: i64,
    /// The items; `None` for an unset item.
    pub items: Vec<Option<Tensor>>,
}

impl TensorList {
    /// An empty list of `element_dtype` items compatible with
    /// `element_shape`, without a size limit.
    pub fn new(element_dtype: DataType, element_shape: Shape) -> Self {
        TensorList {
            element_dtype,
            element_shape,
            max_num_elements: -1,
            items: Vec::new(),
        }
    }

    /// The number of items (set or not).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when the list has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// This list as a scalar `DT_VARIANT` tensor (a TensorList handle).
    pub fn into_tensor(self) -> Tensor {
        Tensor::scalar_variant(Variant::new(self))
    }

    /// The list a TensorList handle holds: `tensor` must be a scalar
    /// `DT_VARIANT` tensor holding a `TensorList` (TF's
    /// `GetInputList`; its error messages).
    ///
    /// ```
    /// use registry_core::tensor::{Tensor, TensorList};
    /// let err = TensorList::from_tensor(&Tensor::scalar(1.0f32)).unwrap_err();
    /// assert!(err.to_string().contains("variant"), "{err}");
    /// ```
    pub fn from_tensor(tensor: &Tensor) -> Result<&TensorList, TensorError> {
        let variant = single_variant(tensor)?;
        variant
            .get::<TensorList>()
            .ok_or_else(|| not_a_list(variant))
    }

    /// The list a TensorList handle holds, for writing in place: only when
    /// neither the tensor's storage nor the list is shared with anything
    /// else (a [`TensorError::SharedBuffer`] otherwise; copy the list with
    /// [`from_tensor`](Self::from_tensor) and `clone` then).
    ///
    /// ```
    /// use registry_core::tensor::TensorList;
    /// use registry_core::proto::DataType;
    /// use registry_core::shape::Shape;
    ///
    /// let mut handle = TensorList::new(DataType::DtInt32, Shape::scalar()).into_tensor();
    /// TensorList::from_tensor_mut(&mut handle).unwrap().items.push(None);
    /// let shared = handle.clone();
    /// assert!(TensorList::from_tensor_mut(&mut handle).is_err());
    /// assert_eq!(TensorList::from_tensor(&shared).unwrap().len(), 1);
    /// ```
    pub fn from_tensor_mut(tensor: &mut Tensor) -> Result<&mut TensorList, TensorError> {
        single_variant(tensor)?;
        let variants = tensor.as_mut_variants()?;
        let variant = &mut variants[0];
        if !variant.is::<TensorList>() {
            return Err(not_a_list(variant));
        }
        if !variant.is_unique() {
            return Err(TensorError::SharedBuffer { refs: 2 });
        }
        variant
            .get_mut::<TensorList>()
            .ok_or(TensorError::SharedBuffer { refs: 2 })
    }
}

impl VariantValue for TensorList {
    const TYPE_NAME: &'static str = "tensorflow::TensorList";

    /// The list itself plus its items' bytes (items sharing a buffer each
    /// count the whole of it).
    fn allocated_bytes(&self) -> u64 {
        let own = (std::mem::size_of::<Self>()
            + self.items.len() * std::mem::size_of::<Option<Tensor>>()) as u64;
        self.items
            .iter()
            .flatten()
            .fold(own, |sum, t| sum.saturating_add(t.allocated_bytes()))
    }
}

/// The one variant of a scalar `DT_VARIANT` tensor.
fn single_variant(tensor: &Tensor) -> Result<&Variant, TensorError> {
    if tensor.dtype() != DataType::DtVariant {
        return Err(TensorError::DtypeMismatch {
            expected: DataType::DtVariant,
            actual: tensor.dtype(),
        });
    }
    let variants = tensor.as_variants()?;
    match variants {
        [v] if tensor.dims().is_empty() => Ok(v),
        _ => Err(TensorError::NotAList {
            found: format!(
                "a DT_VARIANT tensor of shape {} (a TensorList handle is a scalar)",
                tensor.shape()
            ),
        }),
    }
}

fn not_a_list(variant: &Variant) -> TensorError {
    TensorError::NotAList {
        found: match variant.type_name() {
            Some(name) => format!("a variant holding {name}"),
            None => "an empty variant".to_owned(),
        },
    }
}

/// A partial shape written as TF's `PartialTensorShape::DebugString`:
/// `[2,?,3]`, or `<unknown>` for an unknown rank (for error messages).
///
/// ```
/// use registry_core::tensor::partial_shape_string;
/// use registry_core::shape::Shape;
/// assert_eq!(partial_shape_string(&Shape::from([2, -1])), "[2,?]");
/// assert_eq!(partial_shape_string(&Shape::unknown()), "<unknown>");
/// ```
pub fn partial_shape_string(shape: &Shape) -> String {
    if shape.is_rank_known() {
        shape.to_string()
    } else {
        "<unknown>".to_owned()
    }
}
