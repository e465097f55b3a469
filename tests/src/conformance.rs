//! Runs TensorFlow conformance cases (the JSON format of
//! `shared/conformance/`, described in its README) against the spec parser.

use std::path::{Path, PathBuf};

use base64::Engine;
use opreg_proto::{OpDef, TextFormat};
use prost::Message;
use registry_spec::{OpSpec, validate_op_def};
use serde_json::Value;

/// The outcome of one file of cases.
#[derive(Debug, Default)]
pub struct FileReport {
    /// The file read.
    pub path: PathBuf,
    /// Cases in the file.
    pub cases: usize,
    /// Cases whose result matched TensorFlow's.
    pub matched: usize,
    /// One line per failed case: its id and what differed.
    pub failures: Vec<String>,
}

impl std::fmt::Display for FileReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = if self.cases == 0 {
            100.0
        } else {
            100.0 * self.matched as f64 / self.cases as f64
        };
        write!(
            f,
            "conformance {}: {} cases, {} matched, {} failed ({pct:.1} %)",
            self.path.display(),
            self.cases,
            self.matched,
            self.failures.len()
        )
    }
}

/// Reads and runs every case of one JSON file.
pub fn run_file(path: &Path) -> Result<FileReport, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cases: Vec<Value> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut report = FileReport {
        path: path.to_owned(),
        cases: cases.len(),
        ..FileReport::default()
    };
    for case in &cases {
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        match run_case(case) {
            Ok(()) => report.matched += 1,
            Err(why) => report.failures.push(format!("{id}: {why}")),
        }
    }
    Ok(report)
}

fn strings(case: &Value, key: &str) -> Vec<String> {
    case[key].as_array().map_or_else(Vec::new, |a| {
        a.iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

/// The OpSpec a case describes (its builder calls).
pub fn spec_of(case: &Value) -> OpSpec {
    let mut spec = OpSpec::new(case["name"].as_str().unwrap_or_default());
    spec.attrs = strings(case, "attrs");
    spec.inputs = strings(case, "inputs");
    spec.outputs = strings(case, "outputs");
    spec.control_outputs = strings(case, "control_outputs");
    for flag in strings(case, "flags") {
        spec = match flag.as_str() {
            "commutative" => spec.commutative(),
            "aggregate" => spec.aggregate(),
            "stateful" => spec.stateful(),
            "allows_uninitialized_input" => spec.allows_uninitialized_input(),
            "distributed_communication" | "is_distributed_communication" => {
                spec.distributed_communication()
            }
            _ => spec,
        };
    }
    if let Some(dep) = case["deprecated"].as_object() {
        let version = dep.get("version").and_then(Value::as_i64).unwrap_or(0) as i32;
        let explanation = dep.get("explanation").and_then(Value::as_str).unwrap_or("");
        spec = spec.deprecated(version, explanation);
    }
    let doc_calls = strings(case, "doc_calls");
    if !doc_calls.is_empty() {
        spec.docs = doc_calls;
    } else if let Some(doc) = case["doc"].as_str() {
        spec = spec.doc(doc);
    }
    for _ in 0..case["shape_fn_calls"].as_u64().unwrap_or(0) {
        spec = spec.with_shape_fn();
    }
    spec
}

fn run_case(case: &Value) -> Result<(), String> {
    let expect = &case["expect"];
    if case["kind"].as_str() == Some("validate_proto") {
        let text = case["op_def_text"]
            .as_str()
            .ok_or("validate_proto case without op_def_text")?;
        let op_def =
            registry_spec::parse_op_def_text(text).ok_or("cannot read the case's OpDef")?;
        let result = validate_op_def(&op_def);
        return match (expect["valid"].as_bool(), result) {
            (Some(true), Ok(())) => Ok(()),
            (Some(true), Err(e)) => Err(format!("TF accepts, we reject: {e}")),
            (Some(false), Err(e)) => same_problem(&e.message, expect),
            (Some(false), Ok(())) => Err(format!("TF rejects ({}), we accept", tf_error(expect))),
            (None, _) => Err("validate_proto case without expect.valid".into()),
        };
    }
    let built = spec_of(case).build();
    if let Some(b64) = expect["op_def_pb_b64"].as_str() {
        let want = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| e.to_string())?;
        let op_def = built.map_err(|e| format!("TF builds it, we reject: {e}"))?;
        let got = op_def.encode_to_vec();
        if got != want {
            let tf = OpDef::decode(want.as_slice())
                .map(|o| o.to_pbtxt_short())
                .unwrap_or_default();
            return Err(format!(
                "bytes differ\n  ours: {}\n  TF's: {tf}",
                op_def.to_pbtxt_short()
            ));
        }
        return Ok(());
    }
    if expect.get("error").is_some() {
        return match built {
            Ok(op_def) => Err(format!(
                "TF rejects ({}), we accept: {}",
                tf_error(expect),
                op_def.to_pbtxt_short()
            )),
            Err(errors) if expect["exact_message"].as_bool() == Some(true) => {
                // Word for word; TF's line breaks (`\n\t`) and the random
                // marker its debug strings carry (`goo.gle/debugstr`,
                // `goo.gle/debugproto`...) aside.
                let words = |text: &str| {
                    text.split_whitespace()
                        .filter(|w| !w.starts_with("goo.gle/"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let tf = tf_error(expect);
                let ours: Vec<String> = errors.errors().iter().map(|e| e.tf_message()).collect();
                if ours.iter().any(|m| words(m) == words(&tf)) {
                    Ok(())
                } else {
                    Err(format!(
                        "different words:\n  ours: {ours:?}\n  TF's: {tf:?}"
                    ))
                }
            }
            Err(errors) => {
                let messages: Vec<String> =
                    errors.errors().iter().map(|e| e.kind.to_string()).collect();
                messages
                    .iter()
                    .find(|m| same_problem(m, expect).is_ok())
                    .map(|_| ())
                    .ok_or_else(|| {
                        format!(
                            "different problem: ours {messages:?}, TF's {}",
                            tf_error(expect)
                        )
                    })
            }
        };
    }
    if let Some(text) = expect["op_def_text"].as_str() {
        let want = registry_spec::parse_op_def_text(text).ok_or("cannot read the case's OpDef")?;
        let got = built.map_err(|e| format!("TF builds it, we reject: {e}"))?;
        return if normalize(got.clone()) == normalize(want.clone()) {
            Ok(())
        } else {
            Err(format!(
                "OpDef differs\n  ours: {}\n  TF's: {}",
                got.to_pbtxt_short(),
                want.to_pbtxt_short()
            ))
        };
    }
    if expect["valid"].as_bool() == Some(true) {
        return built
            .map(|_| ())
            .map_err(|e| format!("TF accepts, we reject: {e}"));
    }
    Err("case has no expectation this runner knows".into())
}

/// TF's tests compare allowed type lists as sets.
fn normalize(mut op_def: OpDef) -> OpDef {
    for attr in &mut op_def.attr {
        if let Some(opreg_proto::attr_value::Value::List(list)) =
            attr.allowed_values.as_mut().and_then(|v| v.value.as_mut())
        {
            list.r#type.sort_unstable();
        }
    }
    op_def
}

fn tf_error(expect: &Value) -> String {
    expect["error_normalized"]
        .as_str()
        .or(expect["error"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// Our message names the same problem as TF's when TF's message contains
/// ours (our messages keep TF's wording) after dropping TF's random markers.
fn same_problem(ours: &str, expect: &Value) -> Result<(), String> {
    let candidates = ["error", "error_normalized", "error_full"];
    let ours_core = collapse(ours.split("; did you mean").next().unwrap_or(ours));
    let ours_core = ours_core.as_str();
    for key in candidates {
        if let Some(tf) = expect[key].as_str() {
            let tf = collapse(tf);
            let tf = tf.as_str();
            if tf.contains(ours_core) || ours_core.contains(tf.split(" from ").next().unwrap_or(tf))
            {
                return Ok(());
            }
        }
    }
    Err(format!(
        "different problem: ours '{ours}', TF's '{}'",
        tf_error(expect)
    ))
}

/// TF's messages wrap context onto new lines (`\n\t for attr 'a'`).
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every `*.json` file of a directory, sorted.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files
}
