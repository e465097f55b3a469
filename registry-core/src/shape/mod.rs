//! Shape inference: TensorFlow's `shape_inference::InferenceContext` and
//! the common shape functions any op may use (the standard ops' own are in
//! `opreg-standard-ops`).
//!
//! - [`Shape`] and [`Dim`]: shapes with an unknown rank or unknown
//!   dimensions, and TF's algebra on them (merge, broadcast, subshape, dim
//!   arithmetic with unknowns).
//! - [`InferenceContext`]: what a shape function sees (the node, its attrs
//!   with the op's defaults, input shapes, constant input values) and what
//!   it sets (output shapes).
//! - [`ShapeFn`]: the type of a shape function, as `#[op(shape_fn = path)]`
//!   takes it.
//! - [`common`]: TF's element-wise `common_shape_fns` (unchanged,
//!   broadcast, merged, unknown, scalar, none).
//! - [`infer_shapes`] (and `OpRegistrationData::infer_shapes` for a
//!   registered op): the entry point for a graph executor.
//!
//! ```
//! # use opreg_standard_ops as _; // Reshape
//! use registry_core::OpRegistry;
//! use registry_core::proto::NodeDef;
//! use registry_core::shape::Shape;
//! use registry_core::tensor::Tensor;
//!
//! let reshape = OpRegistry::global().look_up("Reshape").unwrap();
//! let node = NodeDef {
//!     name: "r".into(),
//!     op: "Reshape".into(),
//!     input: vec!["x".into(), "shape".into()],
//!     ..Default::default()
//! };
//! let target = Tensor::from_vec([2], vec![-1i32, 8]).unwrap();
//! let inputs = [Shape::from([4, 6]), Shape::from([2])];
//!
//! // The value of `shape` known: the -1 is inferred.
//! let out = reshape.infer_shapes(&node, &inputs, &[None, Some(&target)]).unwrap();
//! assert_eq!(out[0].to_string(), "[3,8]");
//!
//! // Unknown: only the rank is known.
//! let out = reshape.infer_shapes(&node, &inputs, &[]).unwrap();
//! assert_eq!(out[0].to_string(), "[?,?]");
//!
//! // A mismatch names the node, the op and the input shapes.
//! let bad = Tensor::from_vec([2], vec![5i32, 5]).unwrap();
//! let err = reshape.infer_shapes(&node, &inputs, &[None, Some(&bad)]).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "Cannot reshape a tensor with 24 elements to shape [5,5] (25 elements) for \
//!      '{{node r}} = Reshape[Tshape=DT_INT32](x, shape)' with input shapes: [4,6], [2]."
//! );
//! ```

pub mod common;
mod context;
mod dim;
mod error;
mod infer;
mod partial;
mod summary;

pub use context::InferenceContext;
pub use dim::Dim;
pub use error::{InputLabel, NodeShapeError, ShapeError};
pub use infer::infer_shapes;
pub use partial::Shape;

/// A shape function (TF's `SetShapeFn`): reads the node's attrs and input
/// shapes from the context and sets every output shape.
///
/// ```
/// use registry_core::shape::{InferenceContext, ShapeError};
///
/// /// The output has the shape of input 0, which must be a matrix.
/// fn matrix_unchanged(c: &mut InferenceContext) -> Result<(), ShapeError> {
///     let input = c.input_with_rank(0, 2)?;
///     c.set_output(0, input)
/// }
/// ```
pub type ShapeFn = fn(&mut InferenceContext<'_>) -> Result<(), ShapeError>;
