//! The example op library (`examples/zero_out`) and a fixture library
//! (`tests/tf-fixture-ops`) loaded into real TensorFlow 2.21 with
//! `tf.load_op_library`, driven by `tests/python/tf_host.py`:
//!
//! - the OpDefs TensorFlow holds are opreg's, byte for byte (without Doc
//!   text, which TensorFlow's C API cannot set);
//! - random calls (shapes, dtypes, `N`, attrs) in eager mode, inside
//!   `tf.function` and in a TF 1 graph `Session` give exactly what opreg's
//!   own executor gives for the same library and inputs;
//! - `tf.function` sees the shapes opreg's shape functions infer;
//! - kernel and shape errors are TensorFlow exceptions of the matching kind
//!   with opreg's message, a kernel panic included;
//! - an op TensorFlow already has stays TensorFlow's, and loading a library
//!   twice (same path, and a copy) changes nothing.
//!
//! TensorFlow comes from `OPREG_TF_PYTHON`, or the virtual environment
//! `scripts/install-tf.sh` makes in `.cache/tf` (the README's test command
//! runs it). Without it the tests print "skipped:" and pass, unless
//! `OPREG_REQUIRE_TF=1` (set by `.ci/run`), which fails them.

use std::path::{Path, PathBuf};

use opreg_tests::op_library::{tf_fixture_library, zero_out_library};
use prost::Message;
use registry_core::OpRegistry;
use registry_core::proto::NodeDef;
use registry_core::shape::Shape;
use registry_core::spec::OpSpec;
use registry_core::tensor::Tensor;
use serde_json::{Value, json};

use crate::host_calls::{
    Call, assert_same_output, example_calls, from_json, host_python, load_zero_out, run_driver,
    run_guide_block, to_json,
};

/// TensorFlow's Python, or `None` (after saying why) when the tests skip.
fn python() -> Option<PathBuf> {
    host_python(
        "OPREG_TF_PYTHON",
        ".cache/tf",
        "OPREG_REQUIRE_TF",
        "scripts/install-tf.sh",
    )
}

/// Runs `tests/python/tf_host.py` on `request`; its report and stderr.
fn run_tensorflow(python: &Path, name: &str, request: &str) -> (Value, String) {
    run_driver(python, "tf_host.py", &format!("tf-{name}"), request)
}

/// The serialized OpDef TensorFlow should hold for `op`: opreg's, without
/// Doc text.
fn expected_op_def(op: &str) -> String {
    let op_def = OpRegistry::global()
        .look_up(op)
        .expect("loaded")
        .op_def()
        .clone();
    let bytes = opreg_tensorflow::without_docs(&op_def).encode_to_vec();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check_outcome(call: &Call, mode: &str, theirs: &Value, ours: &Result<Tensor, String>) {
    match (call.error, ours) {
        (None, Ok(ours)) => assert_same_output(
            "TensorFlow",
            &format!("{} in {mode}", call.function),
            theirs,
            ours,
        ),
        (Some(text), Err(ours)) => {
            assert!(ours.contains(text), "opreg's error lacks {text:?}: {ours}");
            let message = theirs["message"].as_str().unwrap_or_else(|| {
                panic!(
                    "{} in {mode} should fail with {text:?}, got {theirs}",
                    call.function
                )
            });
            assert!(
                message.contains(text),
                "{mode}: TensorFlow's error lacks {text:?}: {message}"
            );
            // Kernel errors are InvalidArgumentError; shape function errors
            // in graph construction are the ValueError TensorFlow makes of
            // them.
            let kind = theirs["error"].as_str().unwrap_or_default();
            assert!(
                kind == "InvalidArgumentError" || kind == "ValueError",
                "{mode}: error kind {kind}: {message}"
            );
        }
        (expected, ours) => panic!(
            "{}: expected error {expected:?}, opreg gave {ours:?}",
            call.function
        ),
    }
}

#[test]
fn the_example_library_runs_in_tensorflow_as_in_opreg() {
    let Some(python) = python() else { return };
    load_zero_out();
    let calls = example_calls();
    let shape_queries = [
        (
            "zero_out",
            json!([{"dtype": "int32", "shape": [-1, 3]}]),
            json!({}),
        ),
        (
            "zero_out",
            json!([{"dtype": "int32", "shape": null}]),
            json!({}),
        ),
        (
            "weighted_sum",
            json!([[{"dtype": "float32", "shape": [-1, 3]}, {"dtype": "float32", "shape": [2, -1]}], {"dtype": "float32", "shape": [-1]}]),
            json!({}),
        ),
        (
            "weighted_sum",
            json!([[{"dtype": "float64", "shape": null}, {"dtype": "float64", "shape": [4, -1, 2]}], {"dtype": "float64", "shape": [2]}]),
            json!({"normalize": true}),
        ),
    ];
    let request = json!({
        "library": zero_out_library(),
        "ops": ["ZeroOut", "WeightedSum"],
        "cases": calls.iter().map(Call::request).collect::<Vec<_>>(),
        "shapes": shape_queries.iter().map(|(f, args, attrs)| json!({"function": f, "args": args, "attrs": attrs})).collect::<Vec<_>>(),
        "checks": ["load_twice"],
    });
    let (report, stderr) = run_tensorflow(&python, "example", &request.to_string());
    assert_eq!(report["version"], "2.21.0");
    for op in ["ZeroOut", "WeightedSum"] {
        assert_eq!(
            report["op_defs"][op].as_str(),
            Some(expected_op_def(op).as_str()),
            "{op}'s OpDef in TensorFlow"
        );
    }
    for function in ["zero_out", "weighted_sum"] {
        assert!(
            report["functions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == function),
            "TensorFlow made no wrapper {function}: {}",
            report["functions"]
        );
    }
    let cases = report["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), calls.len());
    for (call, case) in calls.iter().zip(cases) {
        let ours = call.run_opreg();
        for mode in ["eager", "function", "session"] {
            check_outcome(call, mode, &case[mode], &ours);
        }
    }
    // The shapes tf.function infers are opreg's shape functions' answers.
    let expected: [Value; 4] = [
        json!([[-1, 3]]),
        json!([null]),
        json!([[2, 3]]),
        json!([[4, -1, 2]]),
    ];
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(&report["shapes"][i], want, "shape query {i}");
    }
    let ours = OpRegistry::global()
        .look_up("ZeroOut")
        .unwrap()
        .infer_shapes(
            &NodeDef {
                name: "z".into(),
                op: "ZeroOut".into(),
                ..Default::default()
            },
            &[Shape::from([-1, 3])],
            &[],
        )
        .unwrap();
    assert_eq!(ours[0].to_string(), "[?,3]");
    // Loading again: the same path gives the same module; a copy finds
    // every op and kernel registered, adds nothing, and breaks nothing.
    let twice = &report["load_twice"];
    assert_eq!(twice["same_module_functions"], report["functions"]);
    let copy: Vec<&str> = twice["copy_functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !copy.contains(&"zero_out"),
        "the copy re-registered ZeroOut: {copy:?}"
    );
    assert!(
        stderr.contains(
            "is not registered with TensorFlow: it has a kernel for the same device and types"
        ),
        "{stderr}"
    );
    let (_, _, after) = from_json(&twice["zero_out_after"]);
    assert_eq!(
        after,
        [5i32, 0, 0, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    );
}

#[test]
fn panics_clashes_and_construction_errors_reach_tensorflow_as_errors() {
    let Some(python) = python() else { return };
    let ones = Tensor::from_vec([3], vec![1.0f32; 3]).unwrap();
    let x = to_json(&ones);
    let request = json!({
        "library": tf_fixture_library(),
        "ops": ["FixtureFlags"],
        "cases": [
            {"function": "fixture_panic", "args": [x]},
            {"function": "fixture_scale", "args": [x], "attrs": {"factor": "NAN"}},
            {"function": "fixture_scale", "args": [x], "attrs": {"factor": 3.0}},
        ],
        "checks": ["clash", "forwarding"],
    });
    // JSON has no NaN; Python's json module reads this spelling of it.
    let request = request.to_string().replace("\"NAN\"", "NaN");
    let (report, stderr) = run_tensorflow(&python, "fixture", &request);
    // Flags, deprecation and defaults reach TensorFlow as opreg's run-time
    // builder (the macro's parser) makes them from the same strings.
    let flags = OpSpec::new("FixtureFlags")
        .input("x: T")
        .input("y: T")
        .output("z: T")
        .attr("T: {float, int32} = DT_INT32")
        .attr("mode: {'fast', 'exact'} = 'exact'")
        .attr("scale: float = 0.1")
        .attr("axes: list(int) = [0, -1]")
        .commutative()
        .aggregate()
        .stateful()
        .allows_uninitialized_input()
        .deprecated(7, "Use AddV2")
        .build()
        .unwrap();
    let hex: String = flags
        .encode_to_vec()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        report["op_defs"]["FixtureFlags"].as_str(),
        Some(hex.as_str())
    );
    let functions: Vec<&str> = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        functions.contains(&"fixture_panic") && functions.contains(&"fixture_scale"),
        "{functions:?}"
    );
    let cases = report["cases"].as_array().expect("cases");
    for mode in ["eager", "function", "session"] {
        // A panic is caught at the boundary: an InternalError with its message.
        let panic = &cases[0][mode];
        assert_eq!(panic["error"], "InternalError", "{mode}: {panic}");
        let message = panic["message"].as_str().unwrap();
        assert!(
            message.contains("the kernel panicked: the fixture kernel panicked on purpose"),
            "{message}"
        );
        // A kernel that refuses its attrs when built: InvalidArgumentError.
        let refused = &cases[1][mode];
        assert_eq!(
            refused["error"], "InvalidArgumentError",
            "{mode}: {refused}"
        );
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains("attr 'factor'") && message.contains("must be finite, got NaN"),
            "{message}"
        );
        let (_, shape, bytes) = from_json(&cases[2][mode][0]);
        assert_eq!(shape, [3]);
        assert_eq!(
            bytes,
            Tensor::from_vec([3], vec![3.0f32; 3])
                .unwrap()
                .as_bytes()
                .unwrap()
        );
    }
    // Abs stays TensorFlow's: no wrapper, TF's kernels answer (the
    // library's int8 "Abs" would return its input), TF's OpDef is kept.
    let clash = &report["clash"];
    assert_eq!(clash["wrapper"], false);
    assert_eq!(from_json(&clash["abs_int8"]).2, [3u8, 4]);
    assert_eq!(from_json(&clash["abs_float"]).2, 1.5f32.to_le_bytes());
    let hex = clash["op_def"].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let abs = registry_core::proto::OpDef::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        abs.attr[0].name, "T",
        "TensorFlow's Abs was replaced: {abs:?}"
    );
    assert!(
        stderr.contains("op 'Abs'") && stderr.contains("is not registered with TensorFlow"),
        "{stderr}"
    );
    // In place or not, the kernel computes the same.
    let forwarding = &report["forwarding"];
    assert_eq!(
        from_json(&forwarding["graph"]),
        from_json(&forwarding["expected"])
    );
    let (_, _, eager) = from_json(&forwarding["eager"]);
    let doubled: Vec<u8> = (1..=4096)
        .flat_map(|i| (i as f32 * 2.0).to_le_bytes())
        .collect();
    assert_eq!(eager, doubled);
}

/// The guide's Python block (docs/guide.md, section 10), run as written
/// with the example library in place of the reader's.
#[test]
fn the_guides_python_block_runs_in_tensorflow() {
    let Some(python) = python() else { return };
    run_guide_block(
        &python,
        "### The same library in TensorFlow",
        ("TF_CPP_MIN_LOG_LEVEL", "2"),
        &["[[1 0]\n [0 0]]", "[[5 0]\n [0 0]]", "[9 0 0]"],
    );
}
