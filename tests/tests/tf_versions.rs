//! GraphDef versions and op deprecation checked on load as TensorFlow 2.21
//! checks them: every case of `tests/data/tf-graphs/versions.json` (made by
//! TF itself with `scripts/tf-oracle/versions.py`) loads where TF loads it
//! and fails with TF's words where TF fails.

use opreg_runtime::Graph;
use opreg_runtime::versions::GRAPH_DEF_VERSION;
use registry_core::proto::{GraphDef, TextFormat};
use registry_core::registry::OpRegistry;
use registry_spec::OpSpec;
use serde_json::Value;

/// TF's deprecated `AdjustContrast`, as TF 2.21 declares it.
fn register_adjust_contrast(version: i32, explanation: &str) {
    let ops = OpRegistry::global();
    if ops.contains("AdjustContrast") {
        return;
    }
    let spec = OpSpec::new("AdjustContrast")
        .input("images: T")
        .input("contrast_factor: float")
        .input("min_value: float")
        .input("max_value: float")
        .output("output: float")
        .attr("T: {uint8, int8, int16, int32, int64, float, double}")
        .deprecated(version, explanation);
    ops.register(spec, None).unwrap();
}

fn cases() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tf-graphs/versions.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn versions_and_deprecation_as_tensorflow_enforces_them() {
    kernels_cpu::link();
    let data = cases();
    assert_eq!(
        data["graph_def_version"].as_i64(),
        Some(i64::from(GRAPH_DEF_VERSION))
    );
    let dep = &data["deprecated_op"];
    register_adjust_contrast(
        dep["version"].as_i64().unwrap() as i32,
        dep["explanation"].as_str().unwrap(),
    );
    let mut failures = Vec::new();
    let list = data["cases"].as_array().unwrap();
    for case in list {
        let text = case["graph_pbtxt"].as_str().unwrap();
        let ours = Graph::new(GraphDef::from_pbtxt(text).unwrap()).map_err(|e| e.to_string());
        let tf = case["expect"]["error"].as_str();
        match (&ours, tf) {
            (Ok(_), None) => {}
            (Err(ours), Some(tf)) if ours == tf => {}
            _ => failures.push(format!("{text}\n  ours: {ours:?}\n  TF's: {tf:?}")),
        }
    }
    assert!(list.len() >= 30);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn older_graphs_with_deprecated_ops_load_with_tf_warning() {
    kernels_cpu::link();
    register_adjust_contrast(2, "Use AdjustContrastv2 instead");
    let text = r#"
        node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
        node { name: "a" op: "AdjustContrast" input: "i" input: "i" input: "i" input: "i"
               attr { key: "T" value { type: DT_FLOAT } } }
        versions { producer: 1 }"#;
    let graph = Graph::new(GraphDef::from_pbtxt(text).unwrap()).unwrap();
    assert_eq!(
        graph.deprecation_warnings(),
        vec![
            "Op AdjustContrast is deprecated. It will cease to work in GraphDef version 2. \
             Use AdjustContrastv2 instead."
                .to_owned()
        ]
    );
    let newer = text.replace("producer: 1", "producer: 27");
    let err = Graph::new(GraphDef::from_pbtxt(&newer).unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Op AdjustContrast is not available in GraphDef version 27"),
        "{err}"
    );
}
