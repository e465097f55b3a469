//! The math kernels against TensorFlow's own outputs: the graphs of
//! `shared/graphs` are run node by node (Const and Placeholder here, every
//! other node through `create_op_kernel` + `compute`), and every fetch whose
//! nodes are all element-wise math ops is compared with `io.json`.
//!
//! Tolerances (TF computes transcendental functions with Eigen's vectorized
//! approximations, we with the C library; the fetched values are the end
//! of chains of several ops, so differences add up):
//! - integers and bools: exact;
//! - f64: 4 ulps; f32: 4 ulps (Tanh/Sigmoid/Exp/Log chains);
//! - f16: 1 ulp of half (TF's half kernels compute in f32 and round, as
//!   ours do, but f32 results can differ by an ulp and round differently).

use std::collections::HashMap;
use std::path::PathBuf;

use registry_core::create_op_kernel;
use registry_core::node_def::parse_input;
use registry_core::proto::prost::Message;
use registry_core::proto::{DataType, GraphDef, NodeDef, attr_value::Value};
use registry_core::tensor::{Tensor, f16};
use serde_json::Value as Json;

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

fn dtype(name: &str) -> DataType {
    DataType::from_str_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

/// A tensor from io.json's encoding.
fn json_tensor(entry: &Json) -> Tensor {
    let shape: Vec<usize> = entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let values = entry["values"].as_array().unwrap();
    let f = |v: &Json| v.as_f64().unwrap();
    match dtype(entry["dtype"].as_str().unwrap()) {
        DataType::DtFloat => Tensor::from_vec(shape, values.iter().map(|v| f(v) as f32).collect()),
        DataType::DtDouble => Tensor::from_vec(shape, values.iter().map(f).collect()),
        DataType::DtHalf => {
            Tensor::from_vec(shape, values.iter().map(|v| f16::from_f64(f(v))).collect())
        }
        DataType::DtInt32 => Tensor::from_vec(
            shape,
            values.iter().map(|v| v.as_i64().unwrap() as i32).collect(),
        ),
        DataType::DtInt64 => {
            Tensor::from_vec(shape, values.iter().map(|v| v.as_i64().unwrap()).collect())
        }
        DataType::DtBool => {
            Tensor::from_vec(shape, values.iter().map(|v| v.as_bool().unwrap()).collect())
        }
        other => panic!("unexpected dtype {other:?}"),
    }
    .unwrap()
}

struct Graph {
    nodes: HashMap<String, NodeDef>,
    feeds: HashMap<String, Tensor>,
    values: HashMap<String, Option<Tensor>>,
}

impl Graph {
    fn load(name: &str) -> (Graph, Json) {
        let dir = shared_dir().join("graphs").join(name);
        let bytes = std::fs::read(dir.join("graph.pb")).unwrap_or_else(|e| panic!("{dir:?}: {e}"));
        let graph = GraphDef::decode(bytes.as_slice()).unwrap();
        let io: Json =
            serde_json::from_str(&std::fs::read_to_string(dir.join("io.json")).unwrap()).unwrap();
        let feeds = io["feeds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["node"].as_str().unwrap().to_owned(), json_tensor(f)))
            .collect();
        let nodes = graph
            .node
            .into_iter()
            .map(|n| (n.name.clone(), n))
            .collect();
        (
            Graph {
                nodes,
                feeds,
                values: HashMap::new(),
            },
            io,
        )
    }

    /// Output 0 of `name`, or None when a node on the way is not a math op.
    fn eval(&mut self, name: &str) -> Option<Tensor> {
        if let Some(v) = self.values.get(name) {
            return v.clone();
        }
        let node = self.nodes[name].clone();
        let value = match node.op.as_str() {
            "Placeholder" => self.feeds.get(name).cloned(),
            "Const" => match &node.attr["value"].value {
                Some(Value::Tensor(p)) => Some(Tensor::from_proto(p).unwrap()),
                _ => panic!("Const {name} without a tensor"),
            },
            op if MATH_OPS.contains(&op) => {
                let mut inputs = Vec::new();
                for input in node.input.iter().filter(|i| !i.starts_with('^')) {
                    let parsed = parse_input(input).unwrap();
                    assert_eq!(parsed.port, 0, "{name}: only output 0 is used here");
                    let node_name = parsed.node.to_owned();
                    inputs.push(self.eval(&node_name)?);
                }
                let kernel =
                    create_op_kernel("CPU", &node).unwrap_or_else(|e| panic!("{name}: {e}"));
                let mut out = kernel
                    .compute(inputs)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                Some(out.remove(0))
            }
            _ => None,
        };
        self.values.insert(name.to_owned(), value.clone());
        value
    }
}

fn ulps<T: Copy>(a: &[T], b: &[T], d: impl Fn(T, T) -> u64) -> u64 {
    a.iter().zip(b).map(|(&x, &y)| d(x, y)).max().unwrap_or(0)
}

use crate::math_common;
use math_common::{MATH_OPS, ulps_f16, ulps_f32, ulps_f64};

/// Runs every math-only fetch of `graph`; returns how many were checked.
fn check_graph(graph: &str) -> usize {
    kernels_cpu::link();
    let (mut g, io) = Graph::load(graph);
    let mut checked = 0;
    for fetch in io["fetches"].as_array().unwrap() {
        let node = fetch["node"].as_str().unwrap();
        let Some(actual) = g.eval(node) else {
            continue;
        };
        let expected = json_tensor(fetch);
        assert_eq!(actual.dtype(), expected.dtype(), "{graph}/{node}");
        assert_eq!(actual.dims(), expected.dims(), "{graph}/{node}");
        let worst = match actual.dtype() {
            DataType::DtFloat => ulps(
                actual.as_slice::<f32>().unwrap(),
                expected.as_slice().unwrap(),
                ulps_f32,
            ),
            DataType::DtDouble => ulps(
                actual.as_slice::<f64>().unwrap(),
                expected.as_slice().unwrap(),
                ulps_f64,
            ),
            DataType::DtHalf => ulps(
                actual.as_slice::<f16>().unwrap(),
                expected.as_slice().unwrap(),
                ulps_f16,
            ),
            _ => {
                assert_eq!(actual, expected, "{graph}/{node}");
                0
            }
        };
        let limit = match actual.dtype() {
            DataType::DtHalf => 1,
            _ => 4,
        };
        eprintln!("{graph}/{node} ({}): max {worst} ulps", fetch["op"]);
        assert!(worst <= limit, "{graph}/{node}: {worst} ulps > {limit}");
        checked += 1;
    }
    checked
}

#[test]
fn elementwise_f32_matches_tensorflow() {
    assert_eq!(check_graph("elementwise_f32"), 8);
}

#[test]
fn double_half_matches_tensorflow() {
    assert_eq!(check_graph("double_half"), 16);
}

#[test]
fn broadcast_int_matches_tensorflow() {
    assert_eq!(check_graph("broadcast_int"), 13);
}

#[test]
fn batchnorm_misc_math_fetches_match_tensorflow() {
    // rsqrt, pow, pow_elementwise, squared_difference, equal, greater,
    // logical_and, select, select_rowvec, select_v2.
    assert_eq!(check_graph("batchnorm_misc"), 10);
}
