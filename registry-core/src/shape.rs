//! Shape functions: the type that `#[op(shape_fn = ...)]` takes. The
//! inference machinery itself grows with the kernel layer.

/// Why shape inference failed for a node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

/// The state a shape function reads (input shapes, attrs) and writes (output
/// shapes). Ranks and dimensions may be unknown (`None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InferenceContext {
    /// Shapes of the inputs: `None` for unknown rank, `Some(dims)` with
    /// `None` entries for unknown dimensions.
    pub inputs: Vec<Option<Vec<Option<i64>>>>,
    /// Shapes of the outputs, filled in by the shape function.
    pub outputs: Vec<Option<Vec<Option<i64>>>>,
}

/// A shape function (TF's `SetShapeFn`).
pub type ShapeFn = fn(&mut InferenceContext) -> Result<(), ShapeError>;
