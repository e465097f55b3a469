//! Shape inference over a whole [`Graph`]: each node's shape function in
//! topological order, with `Const` values (passed through `Identity`)
//! available to the shape functions that need constant inputs.

use registry_core::attr::NodeAttrs;

use crate::{Endpoint, Graph, GraphError};
use registry_core::shape::{Shape, infer_shapes};
use registry_core::tensor::Tensor;

/// The inferred output shapes of every node, indexed like [`Graph::nodes`].
pub type GraphShapes = Vec<Vec<Shape>>;

impl Graph {
    /// Infers every node's output shapes. `feeds` replace the shapes of the
    /// given endpoints (e.g. a Placeholder's `[?,16]` by the fed `[8,16]`).
    ///
    /// ```
    /// use opreg_runtime::Graph;
    /// use registry_core::proto::{GraphDef, TextFormat};
    /// # use opreg_standard_ops as _; // the ops used below
    /// use registry_core::shape::Shape;
    ///
    /// let graph = Graph::new(GraphDef::from_pbtxt(r#"
    ///   node { name: "x" op: "Placeholder"
    ///          attr { key: "dtype" value { type: DT_FLOAT } }
    ///          attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
    ///   node { name: "y" op: "Abs" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    /// "#).unwrap()).unwrap();
    /// let shapes = graph.infer_shapes(&[]).unwrap();
    /// assert_eq!(shapes[graph.index_of("y").unwrap()][0].to_string(), "[?,3]");
    /// let x = graph.endpoint("x", "feed").unwrap();
    /// let shapes = graph.infer_shapes(&[(x, Shape::from([2, 3]))]).unwrap();
    /// assert_eq!(shapes[graph.index_of("y").unwrap()][0].to_string(), "[2,3]");
    /// ```
    pub fn infer_shapes(&self, feeds: &[(Endpoint, Shape)]) -> Result<GraphShapes, GraphError> {
        let nodes = self.nodes();
        let mut shapes: GraphShapes = Vec::with_capacity(nodes.len());
        let mut constants: Vec<Option<Tensor>> = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            // A loop's back edge comes from a later node: unknown here.
            let input_shapes: Vec<Shape> = node
                .inputs
                .iter()
                .map(|e| {
                    shapes
                        .get(e.node)
                        .map_or_else(Shape::unknown, |s| s[e.port].clone())
                })
                .collect();
            let input_constants: Vec<Option<&Tensor>> = node
                .inputs
                .iter()
                .map(|e| {
                    let fed = feeds.iter().any(|(f, _)| f == e);
                    if e.port == 0 && !fed {
                        constants.get(e.node).and_then(Option::as_ref)
                    } else {
                        None
                    }
                })
                .collect();
            let mut outputs = match node.shape_fn {
                Some(shape_fn) => infer_shapes(
                    &node.op_def,
                    shape_fn,
                    &node.def,
                    &input_shapes,
                    &input_constants,
                )?,
                None => vec![Shape::unknown(); node.output_types.len()],
            };
            for (endpoint, shape) in feeds {
                if endpoint.node == i
                    && let Some(slot) = outputs.get_mut(endpoint.port)
                {
                    *slot = shape.clone();
                }
            }
            let constant = match node.def.op.as_str() {
                "Const" => NodeAttrs::new(&node.def, &node.op_def)
                    .get::<Tensor>("value")
                    .ok(),
                "Identity" => node.inputs.first().and_then(|e| {
                    if e.port == 0 {
                        constants[e.node].clone()
                    } else {
                        None
                    }
                }),
                _ => None,
            };
            shapes.push(outputs);
            constants.push(constant);
        }
        Ok(shapes)
    }
}
