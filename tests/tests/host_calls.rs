//! What the host tests share: the example library's calls (random inputs,
//! attrs, calls that must fail), each run through opreg's own executor for
//! the expected result; tensors as the Python drivers exchange them; and
//! finding a host's Python and running its driver script.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use opreg_runtime::library::load_op_library;
use opreg_runtime::{Graph, Session};
use opreg_tests::op_library::zero_out_library;
use opreg_tests::workspace_root;
use registry_core::proto::{AttrValue, DataType, DataTypeExt, GraphDef, NodeDef};
use registry_core::tensor::Tensor;
use serde_json::{Value, json};

/// A host framework's Python: `env` (the environment variable naming it),
/// else `venv`'s (relative to the workspace root); `None`, after saying
/// why, when it is missing and `require` (an environment variable) is not
/// `1`, which makes a missing Python a failure instead.
pub(crate) fn host_python(
    env: &str,
    venv: &str,
    require: &str,
    installer: &str,
) -> Option<PathBuf> {
    let required = std::env::var(require).is_ok_and(|v| v == "1");
    let python = std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(venv).join("bin/python"));
    if python.exists() {
        return Some(python);
    }
    assert!(
        !required,
        "{require}=1 but the python of {env} is not at {} (run {installer})",
        python.display()
    );
    eprintln!(
        "skipped: no python at {} ({installer} installs it)",
        python.display()
    );
    None
}

/// Runs driver `script` (under `tests/python/`) with `python` on
/// `request`; its report and stderr.
pub(crate) fn run_driver(
    python: &Path,
    script: &str,
    name: &str,
    request: &str,
) -> (Value, String) {
    let dir = std::env::temp_dir().join(format!("opreg-host-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let request_path = dir.join("request.json");
    let report_path = dir.join("report.json");
    std::fs::write(&request_path, request).expect("write the request");
    let output = Command::new(python)
        .arg(workspace_root().join("tests/python").join(script))
        .arg(&request_path)
        .arg(&report_path)
        .output()
        .expect("run the host's python");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{script} failed:\n{stderr}");
    let report = std::fs::read_to_string(&report_path).expect("the report");
    let _ = std::fs::remove_dir_all(&dir);
    (serde_json::from_str(&report).expect("report JSON"), stderr)
}

/// A small deterministic generator (splitmix64), so that failures replay.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn shape(&mut self, max_rank: usize, max_dim: usize) -> Vec<usize> {
        (0..self.below(max_rank + 1))
            .map(|_| self.below(max_dim + 1))
            .collect()
    }

    /// A `WeightedSum` call of 1 to `max_n` random `dtype` tensors of
    /// `shape`, random small weights and `normalize` (whose weights then do
    /// not sum to zero).
    pub(crate) fn weighted_sum_call(
        &mut self,
        dtype: DataType,
        shape: &[usize],
        max_n: usize,
    ) -> Call {
        let n = 1 + self.below(max_n);
        let values = (0..n).map(|_| self.tensor(dtype, shape)).collect();
        let mut weights: Vec<f64> = (0..n).map(|_| self.below(9) as f64 - 4.0).collect();
        let normalize = self.below(2) == 1;
        if normalize && weights.iter().sum::<f64>() == 0.0 {
            weights[0] += 1.0;
        }
        let weights = Tensor::from_f64(dtype, vec![n], &weights).expect("weights");
        weighted_sum_call(values, weights, normalize)
    }

    /// A tensor of `dtype` and `shape` with small values (exact in every
    /// dtype, so sums do not depend on rounding order).
    pub(crate) fn tensor(&mut self, dtype: DataType, shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        let values: Vec<f64> = (0..n).map(|_| self.below(41) as f64 - 20.0).collect();
        Tensor::from_f64(dtype, shape.to_vec(), &values).expect("a tensor")
    }
}

pub(crate) fn numpy_name(dtype: DataType) -> &'static str {
    match dtype {
        DataType::DtFloat => "float32",
        DataType::DtDouble => "float64",
        DataType::DtInt32 => "int32",
        other => panic!("no numpy name for {}", other.type_name()),
    }
}

pub(crate) fn to_json(t: &Tensor) -> Value {
    let hex: String = t
        .as_bytes()
        .expect("host bytes")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    json!({"dtype": numpy_name(t.dtype()), "shape": t.dims(), "hex": hex})
}

/// `(dtype name, shape, bytes)` of a tensor as the report writes it.
pub(crate) fn from_json(v: &Value) -> (String, Vec<usize>, Vec<u8>) {
    let hex = v["hex"].as_str().expect("hex");
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex byte"))
        .collect();
    let shape = v["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect();
    (v["dtype"].as_str().expect("dtype").to_owned(), shape, bytes)
}

/// One call of an op of the library: its inputs (a list for a list arg)
/// and attrs, for TensorFlow and for opreg.
pub(crate) struct Call {
    pub(crate) op: &'static str,
    pub(crate) function: &'static str,
    pub(crate) args: Vec<Vec<Tensor>>,
    pub(crate) list_arg: Vec<bool>,
    pub(crate) attrs: Vec<(&'static str, AttrValue)>,
    pub(crate) py_attrs: Value,
    /// For calls that must fail: the text every error message carries.
    pub(crate) error: Option<&'static str>,
}

impl Call {
    pub(crate) fn request(&self) -> Value {
        let args: Vec<Value> = self
            .args
            .iter()
            .zip(&self.list_arg)
            .map(|(a, &list)| {
                if list {
                    Value::Array(a.iter().map(to_json).collect())
                } else {
                    to_json(&a[0])
                }
            })
            .collect();
        json!({"function": self.function, "args": args, "attrs": self.py_attrs})
    }

    /// The same call through opreg's executor: a graph of Placeholders and
    /// the op, run by a Session.
    pub(crate) fn run_opreg(&self) -> Result<Tensor, String> {
        let inputs: Vec<&Tensor> = self.args.iter().flatten().collect();
        let mut nodes: Vec<NodeDef> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| NodeDef {
                name: format!("x{i}"),
                op: "Placeholder".into(),
                attr: [("dtype".to_owned(), AttrValue::from(t.dtype()))].into(),
                ..Default::default()
            })
            .collect();
        nodes.push(NodeDef {
            name: "y".into(),
            op: self.op.into(),
            input: (0..inputs.len()).map(|i| format!("x{i}")).collect(),
            attr: self
                .attrs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            ..Default::default()
        });
        let graph = Graph::new(GraphDef {
            node: nodes,
            ..Default::default()
        })
        .map_err(|e| e.to_string())?;
        let session = Session::new(graph);
        let names: Vec<String> = (0..inputs.len()).map(|i| format!("x{i}")).collect();
        let feeds: Vec<(&str, Tensor)> = names
            .iter()
            .map(String::as_str)
            .zip(inputs.iter().map(|t| (*t).clone()))
            .collect();
        let mut out = session.run(&feeds, &["y"]).map_err(|e| e.to_string())?;
        Ok(out.remove(0))
    }
}

pub(crate) fn zero_out_call(x: Tensor) -> Call {
    Call {
        op: "ZeroOut",
        function: "zero_out",
        args: vec![vec![x]],
        list_arg: vec![false],
        attrs: vec![],
        py_attrs: json!({}),
        error: None,
    }
}

pub(crate) fn weighted_sum_call(values: Vec<Tensor>, weights: Tensor, normalize: bool) -> Call {
    let dtype = weights.dtype();
    let n = values.len() as i64;
    Call {
        op: "WeightedSum",
        function: "weighted_sum",
        args: vec![values, vec![weights]],
        list_arg: vec![true, false],
        attrs: vec![
            ("N", AttrValue::from(n)),
            ("T", AttrValue::from(dtype)),
            ("normalize", AttrValue::from(normalize)),
        ],
        py_attrs: json!({"normalize": normalize}),
        error: None,
    }
}

/// Random calls of both example ops, and calls that must fail.
pub(crate) fn example_calls() -> Vec<Call> {
    let mut rng = Rng(0x0e1f_2a3b);
    let mut calls = Vec::new();
    for _ in 0..10 {
        let shape = rng.shape(4, 5);
        calls.push(zero_out_call(rng.tensor(DataType::DtInt32, &shape)));
    }
    // Large enough to be held without a copy.
    calls.push(zero_out_call(rng.tensor(DataType::DtInt32, &[300, 400])));
    for dtype in [DataType::DtFloat, DataType::DtDouble, DataType::DtInt32] {
        for round in 0..6 {
            let shape = if round == 5 {
                vec![256, 256]
            } else {
                rng.shape(3, 5)
            };
            calls.push(rng.weighted_sum_call(dtype, &shape, 4));
        }
    }
    let f = |shape: &[usize], v: f32| {
        Tensor::from_vec(shape.to_vec(), vec![v; shape.iter().product()]).unwrap()
    };
    let mut mismatched = weighted_sum_call(vec![f(&[2], 1.0), f(&[3], 1.0)], f(&[2], 1.0), false);
    mismatched.error = Some("values");
    calls.push(mismatched);
    let mut zero_sum = weighted_sum_call(
        vec![f(&[2], 1.0), f(&[2], 1.0)],
        Tensor::from_vec([2], vec![1.0f32, -1.0]).unwrap(),
        true,
    );
    zero_sum.error = Some("normalize is set, but the weights sum to zero");
    calls.push(zero_sum);
    calls
}

/// Loads the example library into this process (opreg's host), once.
pub(crate) fn load_zero_out() {
    static LOADED: OnceLock<()> = OnceLock::new();
    LOADED.get_or_init(|| {
        load_op_library(zero_out_library()).expect("opreg loads the example library");
    });
}

/// Runs the guide's (`docs/guide.md`) first Python block after `heading`
/// as written, with the example library in place of the reader's, under
/// `python` with `env` set; checks that it prints each of `printed`.
pub(crate) fn run_guide_block(python: &Path, heading: &str, env: (&str, &str), printed: &[&str]) {
    let guide = std::fs::read_to_string(workspace_root().join("docs/guide.md")).expect("the guide");
    let section = guide
        .find(heading)
        .unwrap_or_else(|| panic!("the guide has no {heading:?}"));
    let start = section
        + guide[section..]
            .find("```python\n")
            .unwrap_or_else(|| panic!("no python block after {heading:?}"))
        + "```python\n".len();
    let end = start + guide[start..].find("```").expect("the block's end");
    let library = zero_out_library();
    let code = guide[start..end].replace("target/release/libmy_ops.so", &library.to_string_lossy());
    assert_ne!(
        code,
        guide[start..end],
        "the block no longer loads target/release/libmy_ops.so"
    );
    let output = Command::new(python)
        .arg("-c")
        .arg(&code)
        .env(env.0, env.1)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for printed in printed {
        assert!(
            stdout.contains(printed),
            "{printed:?} not printed:\n{stdout}"
        );
    }
}

/// Checks that a host's outputs of a call (`theirs`, the driver's list of
/// tensors, or its error) are exactly opreg's `ours`: dtype, shape and
/// bytes; `what` names the call and mode in messages.
pub(crate) fn assert_same_output(host: &str, what: &str, theirs: &Value, ours: &Tensor) {
    let outputs = theirs
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {host} failed: {theirs}"));
    let (dtype, shape, bytes) = from_json(&outputs[0]);
    assert_eq!(dtype, numpy_name(ours.dtype()), "{what}");
    assert_eq!(shape, ours.dims(), "{what}");
    assert!(
        bytes == ours.as_bytes().unwrap(),
        "{what}: values differ from opreg's for shape {shape:?}"
    );
}
