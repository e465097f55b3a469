//! The array kernels against TensorFlow itself:
//! - the graphs TF 2.21 ran (`shared/graphs/{addn_reduce,batchnorm_misc}`):
//!   every fetched node of an array op is recomputed from the graph's own
//!   NodeDefs (its Const nodes run through the Const kernel; inputs made by
//!   other ops are TF's fetched values) and must equal TF's output exactly
//!   (these ops only move elements);
//! - `shared/graphs/tf_cpu_kernels.md`: every CPU kernel TF registers for
//!   these ops (minus variant/resource/float8) has one here, found by
//!   `create_op_kernel`, with TF's host-memory args.
//!
//! The shared folder is `$OPREG_SHARED_DIR`, else `../../shared` from this
//! crate.

use std::collections::HashMap;
use std::path::PathBuf;

use registry_core::kernel::KernelError;
use registry_core::proto::attr_value::Value;
use registry_core::proto::{AttrValue, DataType, DataTypeExt, GraphDef, NodeDef, TextFormat};
use registry_core::tensor::{Tensor, f16};
use registry_core::{OpRegistry, create_op_kernel};
use serde_json::Value as Json;

/// The ops of the array group.
const ARRAY_OPS: &[&str] = &[
    "ConcatV2",
    "Const",
    "ExpandDims",
    "GatherV2",
    "Identity",
    "NoOp",
    "OneHot",
    "Pack",
    "Pad",
    "Placeholder",
    "Reshape",
    "Slice",
    "Squeeze",
    "StridedSlice",
    "Tile",
    "Transpose",
];

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

// ---------------------------------------------------------------- graphs

/// A tensor of io.json (`dtype`, `shape`, row-major `values`).
fn json_tensor(v: &Json) -> Tensor {
    let dtype = v["dtype"].as_str().unwrap();
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let values = v["values"].as_array().unwrap();
    let f = |x: &Json| x.as_f64().unwrap();
    let i = |x: &Json| x.as_i64().unwrap();
    match dtype {
        "DT_FLOAT" => Tensor::from_vec(shape, values.iter().map(|x| f(x) as f32).collect()),
        "DT_DOUBLE" => Tensor::from_vec(shape, values.iter().map(f).collect()),
        "DT_HALF" => Tensor::from_vec(shape, values.iter().map(|x| f16::from_f64(f(x))).collect()),
        "DT_INT32" => Tensor::from_vec(shape, values.iter().map(|x| i(x) as i32).collect()),
        "DT_INT64" => Tensor::from_vec(shape, values.iter().map(i).collect()),
        "DT_BOOL" => Tensor::from_vec(shape, values.iter().map(|x| x.as_bool().unwrap()).collect()),
        other => panic!("unexpected dtype {other} in io.json"),
    }
    .unwrap()
}

/// A graph with TF's feeds and fetches.
struct Golden {
    nodes: HashMap<String, NodeDef>,
    feeds: HashMap<String, Tensor>,
    fetches: Vec<(String, String, Tensor)>,
}

impl Golden {
    fn load(name: &str) -> Self {
        let dir = shared_dir().join("graphs").join(name);
        let graph = GraphDef::from_pbtxt(&read(dir.join("graph.pbtxt"))).unwrap();
        let io: Json = serde_json::from_str(&read(dir.join("io.json"))).unwrap();
        let by_node = |list: &Json| -> Vec<(String, String, Tensor)> {
            list.as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    assert_eq!(t["port"], 0);
                    (
                        t["node"].as_str().unwrap().to_owned(),
                        t["op"].as_str().unwrap().to_owned(),
                        json_tensor(t),
                    )
                })
                .collect()
        };
        Self {
            nodes: graph
                .node
                .into_iter()
                .map(|n| (n.name.clone(), n))
                .collect(),
            feeds: by_node(&io["feeds"])
                .into_iter()
                .map(|(n, _, t)| (n, t))
                .collect(),
            fetches: by_node(&io["fetches"]),
        }
    }

    /// Output 0 of `name`: fed, computed by our kernel (array ops), or
    /// TF's fetched value (other ops).
    fn eval(&self, name: &str, cache: &mut HashMap<String, Tensor>) -> Tensor {
        let name = name.trim_end_matches(":0");
        if let Some(t) = self.feeds.get(name).or_else(|| cache.get(name)) {
            return t.clone();
        }
        let node = &self.nodes[name];
        let out = if ARRAY_OPS.contains(&node.op.as_str()) {
            let inputs: Vec<Tensor> = node
                .input
                .iter()
                .filter(|i| !i.starts_with('^'))
                .map(|i| self.eval(i, cache))
                .collect();
            let kernel =
                create_op_kernel("CPU", node).unwrap_or_else(|e| panic!("kernel for {name}: {e}"));
            let mut out = kernel
                .compute(inputs)
                .unwrap_or_else(|e| panic!("computing {name}: {e}"));
            out.remove(0)
        } else {
            self.fetches
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, _, t)| t.clone())
                .unwrap_or_else(|| panic!("{name} ({}) is neither ours nor fetched", node.op))
        };
        cache.insert(name.to_owned(), out.clone());
        out
    }
}

/// Recomputes every fetched array-op node of graph `name`; returns how many.
fn check_graph(name: &str) -> usize {
    kernels_cpu::link();
    let golden = Golden::load(name);
    let mut cache = HashMap::new();
    let mut checked = 0;
    for (node, op, want) in &golden.fetches {
        if !ARRAY_OPS.contains(&op.as_str()) {
            continue;
        }
        let got = golden.eval(node, &mut cache);
        assert_eq!(got.dtype(), want.dtype(), "{name}/{node}");
        assert_eq!(got.shape(), want.shape(), "{name}/{node}");
        // Exact: data movement reproduces TF's bits.
        assert_eq!(&got, want, "{name}/{node} ({op})");
        checked += 1;
    }
    checked
}

#[test]
fn addn_reduce_graph_matches_tensorflow() {
    // Reshape (and -1), Transpose, ExpandDims, Squeeze, ConcatV2 x2.
    assert_eq!(check_graph("addn_reduce"), 7);
}

#[test]
fn batchnorm_misc_graph_matches_tensorflow() {
    // OneHot x2, Pack, Slice, StridedSlice x2, GatherV2 x2, Tile x2, Pad x2.
    assert_eq!(check_graph("batchnorm_misc"), 12);
}

// ---------------------------------------------------------------- kernel coverage

/// One TF CPU kernel: op, type constraints, host-memory args.
#[derive(Debug)]
struct TfKernel {
    op: String,
    types: Vec<(String, DataType)>,
    host_memory: Vec<String>,
}

/// TF's kernels for the array ops, from tf_cpu_kernels.md, minus the types
/// we have no tensors of; also returns how many were skipped.
fn tf_kernels() -> (Vec<TfKernel>, usize) {
    let text = read(shared_dir().join("graphs/tf_cpu_kernels.md"));
    let mut out = Vec::new();
    let mut skipped = 0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("- **") else {
            continue;
        };
        let (op, rest) = rest.split_once("**").unwrap();
        if !ARRAY_OPS.contains(&op) {
            continue;
        }
        let (_, combos) = rest.split_once("): ").unwrap();
        'combo: for combo in combos.split("; ") {
            let mut k = TfKernel {
                op: op.to_owned(),
                types: Vec::new(),
                host_memory: Vec::new(),
            };
            if combo.trim() != "(no constraint)" {
                for token in combo.split_whitespace() {
                    if let Some(args) = token.strip_prefix("[host:") {
                        let args = args.trim_end_matches(']');
                        k.host_memory = args.split(',').map(str::to_owned).collect();
                    } else {
                        let (attr, name) = token.split_once('=').unwrap();
                        if ["variant", "resource"].contains(&name) || name.starts_with("float8") {
                            skipped += 1;
                            continue 'combo;
                        }
                        let dtype = DataType::from_type_name(name).unwrap();
                        k.types.push((attr.to_owned(), dtype));
                    }
                }
            }
            out.push(k);
        }
    }
    (out, skipped)
}

/// A node of `op` with the given type attrs; other attrs without a default
/// get a valid value (a type attr its first allowed type or `float`, `N` =
/// 2, a float `value`).
fn coverage_node(op: &str, types: &[(String, DataType)]) -> NodeDef {
    let op_def = OpRegistry::global().look_up_op_def(op).unwrap();
    let mut node = NodeDef {
        name: "n".into(),
        op: op.into(),
        ..Default::default()
    };
    for (attr, dtype) in types {
        node.attr.insert(attr.clone(), (*dtype).into());
    }
    for attr in &op_def.attr {
        if node.attr.contains_key(&attr.name) || attr.default_value.is_some() {
            continue;
        }
        let value: AttrValue = match attr.r#type.as_str() {
            // The first allowed type (int32 for index attrs), else float.
            "type" => match attr.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::List(l)) if !l.r#type.is_empty() => Value::Type(l.r#type[0]).into(),
                _ => DataType::DtFloat.into(),
            },
            "int" => 2.into(),
            "tensor" => Tensor::scalar(1.0f32).to_proto().into(),
            other => panic!("{op}: no filler for attr kind {other}"),
        };
        node.attr.insert(attr.name.clone(), value);
    }
    let mut inputs = 0;
    for arg in &op_def.input_arg {
        inputs += if arg.number_attr.is_empty() { 1 } else { 2 };
    }
    node.input = (0..inputs).map(|i| format!("x{i}")).collect();
    node
}

#[test]
fn every_tf_cpu_kernel_of_the_array_ops_has_a_counterpart() {
    kernels_cpu::link();
    let (kernels, skipped) = tf_kernels();
    // 271 TF registrations without variant/resource/float8 (see the file).
    assert_eq!(kernels.len(), 271, "{skipped} skipped");
    let mut failures = Vec::new();
    for k in &kernels {
        let node = coverage_node(&k.op, &k.types);
        match create_op_kernel("CPU", &node) {
            Ok(instance) => {
                let mut ours: Vec<&str> = instance.registration().host_memory.to_vec();
                let mut theirs: Vec<&str> = k.host_memory.iter().map(String::as_str).collect();
                ours.sort_unstable();
                theirs.sort_unstable();
                if ours != theirs {
                    failures.push(format!("{k:?}: host memory {ours:?}"));
                }
            }
            Err(e) => failures.push(format!("{k:?}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unconstrained_kernels_take_every_dtype() {
    kernels_cpu::link();
    let dtypes = [
        DataType::DtFloat,
        DataType::DtString,
        DataType::DtBool,
        DataType::DtQint8,
        DataType::DtQuint16,
        DataType::DtComplex128,
        DataType::DtHalf,
        DataType::DtUint64,
    ];
    for op in [
        "Identity",
        "Squeeze",
        "Reshape",
        "ExpandDims",
        "Tile",
        "Placeholder",
    ] {
        for dtype in dtypes {
            let attr = if op == "Placeholder" { "dtype" } else { "T" };
            let node = coverage_node(op, &[(attr.to_owned(), dtype)]);
            assert!(
                create_op_kernel("CPU", &node).is_ok(),
                "{op} {}",
                dtype.type_name()
            );
        }
    }
    // NoOp: one kernel, no attrs.
    let node = coverage_node("NoOp", &[]);
    assert!(create_op_kernel("CPU", &node).is_ok());
    // Const of a string and of a quantized value.
    for value in [
        Tensor::scalar_string("s"),
        Tensor::zeros(DataType::DtQint32, [2]).unwrap(),
    ] {
        let mut node = coverage_node("Const", &[("dtype".to_owned(), value.dtype())]);
        node.attr.insert("value".into(), value.to_proto().into());
        let k = create_op_kernel("CPU", &node).unwrap();
        assert_eq!(k.compute([]).unwrap()[0], value);
    }
}

#[test]
fn tile_of_a_quantized_type_runs() {
    // Tile has no T constraint: every dtype we hold is tiled as bytes.
    kernels_cpu::link();
    let mut x = Tensor::zeros(DataType::DtQuint16, [2]).unwrap();
    x.as_mut_bytes()
        .unwrap()
        .copy_from_slice(&[1, 0, 0xff, 0xff]);
    let node = coverage_node("Tile", &[("T".to_owned(), DataType::DtQuint16)]);
    let k = create_op_kernel("CPU", &node).unwrap();
    let m = Tensor::from_vec([1], vec![2i32]).unwrap();
    let out = k.compute([x, m]).unwrap().remove(0);
    assert_eq!(out.dims(), &[4]);
    assert_eq!(
        out.as_bytes().unwrap(),
        &[1, 0, 0xff, 0xff, 1, 0, 0xff, 0xff]
    );
    // A wrong multiples dtype for the node is refused before running.
    let x = Tensor::zeros(DataType::DtQuint16, [2]).unwrap();
    let m = Tensor::from_vec([1], vec![2i64]).unwrap();
    assert!(matches!(
        k.compute([x, m]),
        Err(KernelError::InputDtype { index: 1, .. })
    ));
}
