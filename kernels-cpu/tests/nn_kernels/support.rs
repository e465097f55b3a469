//! Helpers for the linalg and nn kernel tests: NodeDefs (built with
//! `NodeDefBuilder`), running kernels through `create_op_kernel`, float
//! comparisons, and TensorFlow's reference graphs (`shared/graphs/*`:
//! `graph.pb` and `io.json`).
#![allow(dead_code)]

use std::path::PathBuf;

pub use crate::common::node;

use registry_core::create_op_kernel;
use registry_core::kernel::{CreateKernelError, KernelError, KernelInstance, TensorVec};
use registry_core::proto::attr_value::Value;
use registry_core::proto::prost::Message;
use registry_core::proto::{DataType, GraphDef, NodeDef};
use registry_core::tensor::{Complex64, Complex128, Tensor};

/// `node` with its attr `T` set to `t`, unchecked: for a `t` the op does
/// not allow, which creating the kernel must refuse.
pub fn with_t(mut node: NodeDef, t: DataType) -> NodeDef {
    node.attr.insert("T".into(), t.into());
    node
}

/// Builds the CPU kernel for `node` (panics with the reason when it fails).
pub fn kernel(node: &NodeDef) -> KernelInstance {
    kernels_cpu::link();
    create_op_kernel("CPU", node).unwrap_or_else(|e| panic!("no kernel for {}: {e}", node.op))
}

/// Tries to build the CPU kernel for `node`.
#[allow(clippy::result_large_err)] // the registry's error type, as returned
pub fn try_kernel(node: &NodeDef) -> Result<KernelInstance, CreateKernelError> {
    kernels_cpu::link();
    create_op_kernel("CPU", node)
}

/// Builds and runs `node` on `inputs`.
pub fn run(node: &NodeDef, inputs: Vec<Tensor>) -> Result<TensorVec, KernelError> {
    kernel(node).compute(inputs)
}

/// The message of a failed run.
pub fn run_err(node: &NodeDef, inputs: Vec<Tensor>) -> String {
    match run(node, inputs) {
        Ok(out) => panic!("{} succeeded unexpectedly: {out:?}", node.op),
        Err(e) => e.to_string(),
    }
}

/// A tensor from values given as `f64`: [`Tensor::from_f64`] for real
/// dtypes (Rust's `as` casts, f16/bf16 rounded to nearest), the real parts
/// for complex ones.
pub fn tensor(dtype: DataType, shape: &[usize], values: &[f64]) -> Tensor {
    let t = match dtype {
        DataType::DtComplex64 => Tensor::from_vec(
            shape,
            values
                .iter()
                .map(|&v| Complex64::new(v as f32, 0.0))
                .collect(),
        ),
        DataType::DtComplex128 => Tensor::from_vec(
            shape,
            values.iter().map(|&v| Complex128::new(v, 0.0)).collect(),
        ),
        _ => Tensor::from_f64(dtype, shape, values),
    };
    t.unwrap_or_else(|e| panic!("tensor({dtype:?}, {shape:?}): {e}"))
}

/// A tensor's values as `f64` ([`Tensor::to_f64`]; the real part for
/// complex).
pub fn values(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DataType::DtComplex64 => t
            .as_slice::<Complex64>()
            .expect("typed view")
            .iter()
            .map(|v| f64::from(v.re))
            .collect(),
        DataType::DtComplex128 => t
            .as_slice::<Complex128>()
            .expect("typed view")
            .iter()
            .map(|v| v.re)
            .collect(),
        _ => t.to_f64().unwrap_or_else(|e| panic!("values(): {e}")),
    }
}

/// Asserts `|a - e| <= abs + rel * |e|` element-wise (NaN matches NaN).
#[track_caller]
pub fn assert_close(actual: &[f64], expected: &[f64], abs: f64, rel: f64) {
    assert_eq!(actual.len(), expected.len(), "lengths differ");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let ok = (a.is_nan() && e.is_nan()) || a == e || (a - e).abs() <= abs + rel * e.abs();
        assert!(
            ok,
            "element {i}: got {a}, expected {e} (abs {abs}, rel {rel})"
        );
    }
}

/// Deterministic pseudo-random values in [-1, 1) (a small LCG).
pub fn pseudo_random(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// The `shared/` folder beside the checkout (override: `OPREG_SHARED_DIR`).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// One of TensorFlow's reference graphs: its GraphDef and io.json.
pub struct RefGraph {
    /// The frozen graph.
    pub graph: GraphDef,
    /// io.json.
    pub io: serde_json::Value,
}

/// Loads `shared/graphs/<name>`.
pub fn ref_graph(name: &str) -> RefGraph {
    let dir = shared_dir().join("graphs").join(name);
    let bytes = std::fs::read(dir.join("graph.pb"))
        .unwrap_or_else(|e| panic!("reading {}/graph.pb: {e}", dir.display()));
    let graph = GraphDef::decode(bytes.as_slice()).expect("graph.pb decodes");
    let text = std::fs::read_to_string(dir.join("io.json")).expect("io.json reads");
    RefGraph {
        graph,
        io: serde_json::from_str(&text).expect("io.json parses"),
    }
}

impl RefGraph {
    /// The node called `name`.
    pub fn node(&self, name: &str) -> NodeDef {
        self.graph
            .node
            .iter()
            .find(|n| n.name == name)
            .unwrap_or_else(|| panic!("no node {name}"))
            .clone()
    }

    /// The value of Const node `name`.
    pub fn constant(&self, name: &str) -> Tensor {
        let node = self.node(name);
        match node.attr.get("value").and_then(|v| v.value.as_ref()) {
            Some(Value::Tensor(t)) => Tensor::from_proto(t).expect("Const value decodes"),
            _ => panic!("{name} is not a Const"),
        }
    }

    /// A feed or fetch of io.json (`"node:0"`) as an `f32` tensor.
    pub fn f32_tensor(&self, name: &str) -> Tensor {
        let (shape, vals) = self.io_values(name);
        tensor(DataType::DtFloat, &shape, &vals)
    }

    /// A feed or fetch of io.json: its shape and values.
    pub fn io_values(&self, name: &str) -> (Vec<usize>, Vec<f64>) {
        let all = self.io["feeds"]
            .as_array()
            .into_iter()
            .chain(self.io["fetches"].as_array())
            .flatten();
        let entry = all
            .into_iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("io.json has no {name}"));
        let shape = entry["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| d.as_u64().expect("dim") as usize)
            .collect();
        let vals = entry["values"]
            .as_array()
            .expect("values")
            .iter()
            .map(|v| v.as_f64().expect("number"))
            .collect();
        (shape, vals)
    }
}
