//! TensorFlow 2.21's answers for single ops (`tests/data/tf-ops/<group>.json`,
//! made by `scripts/tf-oracle/ops.py` with TF's CPU kernels): each case is a
//! GraphDef of `Const` inputs `x0, x1, ...` and the op as node `y`, with
//! TF's outputs (bits), or TF's error and whether it came from the shape
//! function (`graph`) or the kernel (`run`), and TF's inferred output
//! shapes. `shape_cases` hold graphs with partially known `Placeholder`
//! inputs and TF's inferred shapes only.

use std::path::PathBuf;

use base64::Engine as _;
use opreg_runtime::{Graph, Session};
use prost::Message;
use registry_core::proto::GraphDef;
use registry_core::shape::Shape;
use registry_core::tensor::Tensor;
use serde_json::Value;

use crate::numerics::tensor_of;

/// The groups of the data (one file each).
pub const GROUPS: [&str; 5] = ["activation", "array", "math", "nn", "reduce"];

/// TF's error for a case.
#[derive(Debug, Clone)]
pub struct TfError {
    /// `graph` (the shape function or the NodeDef check) or `run` (the
    /// kernel).
    pub phase: String,
    /// TF's code name (`INVALID_ARGUMENT`, ...).
    pub code: String,
    /// TF's message.
    pub message: String,
}

/// One op case.
#[derive(Debug, Clone)]
pub struct OpCase {
    /// Unique in its group: op, dtype, what it checks.
    pub name: String,
    /// The op.
    pub op: String,
    /// Consts `x0..` and the op `y`.
    pub graph: GraphDef,
    /// `y:0, y:1, ...`.
    pub fetches: Vec<String>,
    /// TF's outputs (`None` when TF erred).
    pub outputs: Option<Vec<Tensor>>,
    /// TF's error.
    pub error: Option<TfError>,
    /// TF's inferred static shape of each output (`None` when the graph
    /// could not be built).
    pub shapes: Option<Vec<Shape>>,
}

/// The data folder (`$OPREG_TESTS_DATA_DIR` on another machine).
fn data_dir() -> PathBuf {
    std::env::var_os("OPREG_TESTS_DATA_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data"),
        PathBuf::from,
    )
}

fn shape_of(v: &Value) -> Result<Shape, String> {
    match v {
        Value::Null => Ok(Shape::unknown()),
        Value::Array(dims) => {
            let dims: Vec<i64> = dims
                .iter()
                .map(|d| d.as_i64().ok_or("bad dim"))
                .collect::<Result<_, _>>()?;
            Ok(Shape::from_dims(&dims))
        }
        other => Err(format!("bad shape {other}")),
    }
}

fn case_of(c: &Value) -> Result<OpCase, String> {
    let text = |k: &str| c[k].as_str().map(str::to_owned).ok_or(format!("no {k}"));
    let name = text("name")?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text("graph")?)
        .map_err(|e| format!("{name}: graph: {e}"))?;
    let graph = GraphDef::decode(bytes.as_slice()).map_err(|e| format!("{name}: graph: {e}"))?;
    let outputs = match &c["outputs"] {
        Value::Array(outs) => Some(
            outs.iter()
                .map(tensor_of)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{name}: {e}"))?,
        ),
        _ => None,
    };
    let error = c.get("error").filter(|e| !e.is_null()).map(|e| TfError {
        phase: e["phase"].as_str().unwrap_or_default().to_owned(),
        code: e["code"].as_str().unwrap_or_default().to_owned(),
        message: e["message"].as_str().unwrap_or_default().to_owned(),
    });
    let shapes = match &c["shapes"] {
        Value::Array(s) => Some(s.iter().map(shape_of).collect::<Result<Vec<_>, _>>()?),
        _ => None,
    };
    Ok(OpCase {
        op: text("op")?,
        fetches: c["fetches"]
            .as_array()
            .map(|f| {
                f.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        name,
        graph,
        outputs,
        error,
        shapes,
    })
}

/// The cases (`"cases"`) and the shape cases (`"shape_cases"`) of `group`.
pub fn load_group(group: &str) -> Result<(Vec<OpCase>, Vec<OpCase>), String> {
    let path = data_dir().join(format!("tf-ops/{group}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let root: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let list = |key: &str| -> Result<Vec<OpCase>, String> {
        root[key]
            .as_array()
            .map(|cases| cases.iter().map(case_of).collect())
            .unwrap_or(Ok(Vec::new()))
    };
    Ok((list("cases")?, list("shape_cases")?))
}

/// What opreg answered for a case.
#[derive(Debug)]
pub enum Outcome {
    /// The graph was rejected (NodeDef check or shape function).
    GraphError(String),
    /// The graph was built; its inferred shapes of `y`, and the run's
    /// outputs or error.
    Ran {
        /// opreg's inferred shapes of `y`'s outputs.
        shapes: Vec<Shape>,
        /// The fetched outputs, or the run's error.
        result: Result<Vec<Tensor>, String>,
    },
}

/// Builds and runs `case` on the CPU.
pub fn run_case(case: &OpCase) -> Outcome {
    let graph = match Graph::new(case.graph.clone()) {
        Ok(g) => g,
        Err(e) => return Outcome::GraphError(e.to_string()),
    };
    let shapes = graph
        .infer_shapes(&[])
        .ok()
        .and_then(|all| graph.index_of("y").and_then(|i| all.get(i).cloned()))
        .unwrap_or_default();
    let session = Session::new(graph);
    let fetches: Vec<&str> = case.fetches.iter().map(String::as_str).collect();
    let result = session.run(&[], &fetches).map_err(|e| e.to_string());
    Outcome::Ran { shapes, result }
}

/// Whether opreg's inferred shape agrees with TF's: equal, or as
/// specific where TF's is known (opreg may know more than TF only where
/// TF's is unknown).
pub fn shapes_agree(ours: &Shape, tf: &Shape) -> bool {
    ours.is_compatible(tf) && (ours.rank().is_some() || tf.rank().is_none()) && {
        match (ours.dims(), tf.dims()) {
            (Some(a), Some(b)) => a
                .iter()
                .zip(b)
                .all(|(x, y)| y.value().is_none() || x.value() == y.value()),
            _ => true,
        }
    }
}

/// `t` itself, or for complex tensors a float tensor with a last dimension
/// of 2 (real, imaginary), so the float comparison applies to both parts.
pub fn comparable(t: &Tensor) -> Tensor {
    use registry_core::proto::DataType;
    use registry_core::tensor::{Complex64, Complex128};
    let mut dims = t.dims().to_vec();
    dims.push(2);
    let split = match t.dtype() {
        DataType::DtComplex64 => t.as_slice::<Complex64>().ok().and_then(|c| {
            Tensor::from_vec(
                dims,
                c.iter().flat_map(|v| [v.re, v.im]).collect::<Vec<f32>>(),
            )
            .ok()
        }),
        DataType::DtComplex128 => t.as_slice::<Complex128>().ok().and_then(|c| {
            Tensor::from_vec(
                dims,
                c.iter().flat_map(|v| [v.re, v.im]).collect::<Vec<f64>>(),
            )
            .ok()
        }),
        _ => None,
    };
    split.unwrap_or_else(|| t.clone())
}
