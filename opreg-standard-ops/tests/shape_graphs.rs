//! Shape inference over the TensorFlow graphs of `shared/graphs`: shapes are
//! propagated from the feeds of each graph's `io.json` through every node,
//! in topological order, with the values of `Const` nodes available to the
//! nodes that read them; every fetch must come out fully defined and equal
//! to the shape TensorFlow recorded.

use opreg_standard_ops as _;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;

use prost::Message;
use registry_core::OpRegistry;
use registry_core::node_def::parse_input;
use registry_core::proto::attr_value::Value;
use registry_core::proto::{GraphDef, NodeDef};
use registry_core::shape::Shape;
use registry_core::tensor::Tensor;

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

const GRAPHS: [&str; 7] = [
    "addn_reduce",
    "batchnorm_misc",
    "broadcast_int",
    "cnn_f32",
    "double_half",
    "elementwise_f32",
    "mlp_f32",
];

/// `(node, port)` -> shape, for every tensor of the graph.
type Shapes = HashMap<(String, usize), Shape>;

/// The nodes of `graph` in an order where every node comes after its data
/// and control inputs.
fn topological_order(graph: &GraphDef) -> Vec<&NodeDef> {
    let index: HashMap<&str, usize> = graph
        .node
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let mut pending = vec![0usize; graph.node.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); graph.node.len()];
    for (i, node) in graph.node.iter().enumerate() {
        for input in &node.input {
            let input = parse_input(input).unwrap_or_else(|e| panic!("{}: {e}", node.name));
            let &from = index
                .get(input.node)
                .unwrap_or_else(|| panic!("{}: no node '{}'", node.name, input.node));
            pending[i] += 1;
            users[from].push(i);
        }
    }
    let mut ready: VecDeque<usize> = (0..graph.node.len()).filter(|&i| pending[i] == 0).collect();
    let mut order = Vec::with_capacity(graph.node.len());
    while let Some(i) = ready.pop_front() {
        order.push(&graph.node[i]);
        for &u in &users[i] {
            pending[u] -= 1;
            if pending[u] == 0 {
                ready.push_back(u);
            }
        }
    }
    assert_eq!(order.len(), graph.node.len(), "the graph has a cycle");
    order
}

/// `(node, port)` of a `"node:port"` tensor name.
fn tensor_name(name: &str) -> (String, usize) {
    let (node, port) = name.rsplit_once(':').expect("tensor names are node:port");
    (node.to_owned(), port.parse().unwrap())
}

fn json_shape(value: &serde_json::Value) -> Vec<i64> {
    value
        .as_array()
        .expect("shape is an array")
        .iter()
        .map(|d| d.as_i64().expect("dims are integers"))
        .collect()
}

/// Infers every tensor's shape in graph `name` and returns them with the
/// fetches (`node:port` -> TF's shape).
fn infer_graph(name: &str) -> (Shapes, BTreeMap<String, Vec<i64>>) {
    let dir = shared_dir().join("graphs").join(name);
    let bytes = std::fs::read(dir.join("graph.pb")).unwrap();
    let graph = GraphDef::decode(bytes.as_slice()).unwrap();
    let io: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("io.json")).unwrap()).unwrap();
    let entries = |key: &str| -> BTreeMap<String, Vec<i64>> {
        io[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_owned(),
                    json_shape(&e["shape"]),
                )
            })
            .collect()
    };
    let feeds = entries("feeds");
    let fetches = entries("fetches");
    assert!(!feeds.is_empty() && !fetches.is_empty(), "{name}");

    let registry = OpRegistry::global();
    let mut shapes = Shapes::new();
    let mut constants: HashMap<String, Tensor> = HashMap::new();
    for node in topological_order(&graph) {
        let op = registry
            .look_up(&node.op)
            .unwrap_or_else(|e| panic!("{name}/{}: {e}", node.name));
        let mut input_shapes = Vec::new();
        let mut input_constants = Vec::new();
        for input in &node.input {
            let input = parse_input(input).unwrap();
            if input.is_control {
                continue;
            }
            let key = (input.node.to_owned(), input.port);
            let shape = shapes
                .get(&key)
                .unwrap_or_else(|| panic!("{name}/{}: no shape for input {key:?}", node.name));
            input_shapes.push(shape.clone());
            input_constants.push(if input.port == 0 {
                constants.get(input.node)
            } else {
                None
            });
        }
        let outputs = op
            .infer_shapes(node, &input_shapes, &input_constants)
            .unwrap_or_else(|e| panic!("{name}/{}: {e}", node.name));
        for (port, mut shape) in outputs.into_iter().enumerate() {
            let tensor = format!("{}:{port}", node.name);
            if let Some(fed) = feeds.get(&tensor) {
                // A fed tensor has the fed shape, which must fit the inferred one.
                shape = shape
                    .merge(&Shape::from_dims(fed))
                    .unwrap_or_else(|e| panic!("{name}/{tensor}: feed {fed:?}: {e}"));
            }
            shapes.insert((node.name.clone(), port), shape);
        }
        if node.op == "Const"
            && let Some(Value::Tensor(proto)) =
                node.attr.get("value").and_then(|v| v.value.as_ref())
        {
            let t =
                Tensor::from_proto(proto).unwrap_or_else(|e| panic!("{name}/{}: {e}", node.name));
            constants.insert(node.name.clone(), t);
        }
    }
    for fed in feeds.keys() {
        assert!(
            shapes.contains_key(&tensor_name(fed)),
            "{name}: feed {fed} is no tensor of the graph"
        );
    }
    (shapes, fetches)
}

#[test]
fn fetch_shapes_match_tensorflow() {
    let mut checked = 0;
    for name in GRAPHS {
        let (shapes, fetches) = infer_graph(name);
        for (fetch, expected) in &fetches {
            let shape = shapes
                .get(&tensor_name(fetch))
                .unwrap_or_else(|| panic!("{name}: no tensor {fetch}"));
            assert!(
                shape.is_fully_defined(),
                "{name}: {fetch} is {shape}, expected {expected:?}"
            );
            assert_eq!(
                shape.to_known_dims().as_deref(),
                Some(expected.as_slice()),
                "{name}: {fetch}"
            );
            checked += 1;
        }
    }
    // Every fetch of the seven graphs.
    assert_eq!(checked, 13 + 23 + 13 + 5 + 16 + 8 + 3);
}

/// Every tensor of the graphs gets a fully defined shape: nothing is
/// left unknown once the feeds and constants are.
#[test]
fn every_tensor_is_fully_defined() {
    for name in GRAPHS {
        let (shapes, _) = infer_graph(name);
        let mut unknown: Vec<String> = shapes
            .iter()
            .filter(|(_, s)| !s.is_fully_defined())
            .map(|((node, port), s)| format!("{node}:{port} = {s}"))
            .collect();
        unknown.sort();
        // reserve_space_3 of FusedBatchNormV3 is unknown by definition.
        unknown.retain(|t| !t.contains(":5 = ?"));
        assert!(unknown.is_empty(), "{name}: {unknown:?}");
    }
}
