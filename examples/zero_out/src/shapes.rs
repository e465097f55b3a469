//! The shape functions of the crate's ops
//! ([`ShapeFn`](registry_core::shape::ShapeFn)s, attached with
//! `#[op(shape_fn = path)]`). Graph checks and `Graph::infer_shapes` call
//! them with the inputs' partially known shapes.

use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// `ZeroOut`: the output has the input's shape (TensorFlow's tutorial sets
/// `c->set_output(0, c->input(0))`).
///
/// ```
/// use registry_core::OpRegistry;
/// use registry_core::proto::NodeDef;
/// use registry_core::shape::Shape;
/// registry_core::link_ops!(zero_out);
///
/// let op = OpRegistry::global().look_up("ZeroOut").unwrap();
/// let node = NodeDef { name: "z".into(), op: "ZeroOut".into(), input: vec!["x".into()], ..Default::default() };
/// let out = op.infer_shapes(&node, &[Shape::from([-1, 3])], &[]).unwrap();
/// assert_eq!(out[0].to_string(), "[?,3]");
/// ```
pub fn zero_out(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?.clone();
    c.set_output(0, input)
}

/// `WeightedSum`: the `values` merged into one shape (each known dimension
/// must agree), `weights` a vector of `N` elements; the output has the
/// merged shape of `values`.
pub fn weighted_sum(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let values = c.input_range("values").ok_or_else(|| {
        c.error(ShapeError::invalid_argument(
            "WeightedSum's shape function needs an input arg 'values'",
        ))
    })?;
    let mut merged = Shape::unknown();
    for i in values.clone() {
        merged = merged.merge(c.input(i)?).map_err(|e| c.input_error(i, e))?;
    }
    let w = values.end;
    let weights = c.input_with_rank(w, 1)?;
    weights
        .dim(0)
        .and_then(|d| d.merge(Dim::from(values.len())))
        .map_err(|e| c.input_error(w, e))?;
    c.set_output(0, merged)
}
