//! A constructor for [`TensorShapeProto`] from dim sizes.

use crate::generated::TensorShapeProto;
use crate::generated::tensor_shape_proto::Dim;

impl TensorShapeProto {
    /// A known-rank shape with these dim sizes (-1 for an unknown dim; any
    /// value is kept as given, so hostile shapes can be built too).
    ///
    /// ```
    /// use opreg_proto::TensorShapeProto;
    /// let shape = TensorShapeProto::from_sizes(&[2, -1]);
    /// assert_eq!(shape.dim.iter().map(|d| d.size).collect::<Vec<_>>(), [2, -1]);
    /// assert!(!shape.unknown_rank);
    /// ```
    pub fn from_sizes(sizes: &[i64]) -> Self {
        Self {
            dim: sizes
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        }
    }
}
