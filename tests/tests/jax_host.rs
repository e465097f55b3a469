//! The example op library (`examples/zero_out`) and the fixture library
//! (`tests/tf-fixture-ops`) called from real JAX through the `opreg_jax`
//! package (`python/`) and XLA's FFI, driven by `tests/python/jax_host.py`:
//!
//! - random calls (shapes, dtypes, `N`, attrs) eagerly, under `jax.jit` and
//!   under `jax.vmap` give exactly what opreg's own executor gives;
//! - the guide's JAX block runs as written;
//! - a dtype an op does not take is a `TypeError`, bad attrs and shapes are
//!   `ValueError`s (before anything runs), kernel errors and panics are
//!   JAX's `JaxRuntimeError` with opreg's message and status code, and the
//!   backend keeps working after them;
//! - large inputs and outputs are XLA's buffers, not copies; a kernel is
//!   built once per distinct call;
//! - the handlers infer `N` and `T` when called without the package;
//! - loading a library twice gives the same ops; a copy is refused;
//! - a jaxlib of another FFI API version is refused before anything of the
//!   library is registered.
//!
//! JAX comes from `OPREG_JAX_PYTHON`, or the virtual environment
//! `scripts/install-jax.sh` makes in `.cache/jax` (with the package
//! installed; the README's test command runs it). Without it the tests
//! print "skipped:" and pass, unless `OPREG_REQUIRE_JAX=1` (set by
//! `.ci/run`), which fails them.

use std::path::{Path, PathBuf};

use opreg_tests::op_library::{tf_fixture_library, zero_out_library};
use registry_core::proto::DataType;
use registry_core::tensor::Tensor;
use serde_json::{Value, json};

use crate::host_calls::{
    Call, Rng, assert_same_output, example_calls, from_json, host_python, load_zero_out,
    run_driver, run_guide_block, to_json, zero_out_call,
};

/// JAX's Python, or `None` (after saying why) when the tests skip.
fn python() -> Option<PathBuf> {
    host_python(
        "OPREG_JAX_PYTHON",
        ".cache/jax",
        "OPREG_REQUIRE_JAX",
        "scripts/install-jax.sh",
    )
}

fn run_jax(python: &Path, name: &str, request: &str) -> (Value, String) {
    run_driver(python, "jax_host.py", &format!("jax-{name}"), request)
}

/// More random calls than the TensorFlow test makes: ranks 0 to 4, empty
/// dimensions, up to 6 list inputs, every dtype of each op.
fn more_calls(rng: &mut Rng) -> Vec<Call> {
    let mut calls = Vec::new();
    for _ in 0..12 {
        let shape = rng.shape(4, 4);
        calls.push(zero_out_call(rng.tensor(DataType::DtInt32, &shape)));
    }
    for dtype in [DataType::DtFloat, DataType::DtDouble, DataType::DtInt32] {
        for _ in 0..8 {
            let shape = rng.shape(4, 4);
            calls.push(rng.weighted_sum_call(dtype, &shape, 6));
        }
    }
    calls
}

/// Checks one mode's outcome of `call` against opreg's own result: equal
/// bytes, or for a call that must fail, an error of `kind` carrying the
/// call's text.
fn check_outcome(call: &Call, mode: &str, theirs: &Value, ours: &Result<Tensor, String>) {
    let what = format!("{} in {mode}", call.function);
    match (call.error, ours) {
        (None, Ok(ours)) => assert_same_output("JAX", &what, theirs, ours),
        (Some(text), Err(ours)) => {
            assert!(ours.contains(text), "opreg's error lacks {text:?}: {ours}");
            let message = theirs["message"]
                .as_str()
                .unwrap_or_else(|| panic!("{what} should fail with {text:?}, got {theirs}"));
            assert!(
                message.contains(text),
                "{what}: JAX's error lacks {text:?}: {message}"
            );
            // Shape function errors come before the call (ValueError);
            // kernel errors from XLA's run (JaxRuntimeError, with the code).
            let kind = theirs["error"].as_str().unwrap_or_default();
            let expected = if text == "values" {
                "ValueError"
            } else {
                "JaxRuntimeError"
            };
            assert_eq!(kind, expected, "{what}: {message}");
            if kind == "JaxRuntimeError" {
                assert!(
                    message.starts_with("INVALID_ARGUMENT: opreg op 'WeightedSum'"),
                    "{message}"
                );
            }
        }
        (expected, ours) => panic!("{what}: expected error {expected:?}, opreg gave {ours:?}"),
    }
}

#[test]
fn the_example_library_runs_in_jax_as_in_opreg() {
    let Some(python) = python() else { return };
    load_zero_out();
    let mut calls = example_calls();
    calls.extend(more_calls(&mut Rng(0x5eed_0a11)));
    // Bad inputs and attrs, refused before anything runs.
    let f = |shape: &[usize], v: f32| {
        Tensor::from_vec(shape.to_vec(), vec![v; shape.iter().product()]).unwrap()
    };
    let bad_cases = [
        json!({"function": "zero_out", "args": [to_json(&f(&[3], 1.0))]}),
        json!({"function": "weighted_sum", "args": [[to_json(&f(&[2], 1.0))], to_json(&Tensor::from_vec([1], vec![1i32]).unwrap())]}),
        json!({"function": "weighted_sum", "args": [[to_json(&f(&[2], 1.0))], to_json(&f(&[1], 1.0))], "attrs": {"normalize": "yes"}}),
        json!({"function": "weighted_sum", "args": [[to_json(&f(&[2], 1.0))], to_json(&f(&[1], 1.0))], "attrs": {"scale": 2}}),
        json!({"function": "weighted_sum", "args": [[], to_json(&f(&[0], 1.0))]}),
    ];
    let mut cases: Vec<Value> = calls.iter().map(Call::request).collect();
    cases.extend(bad_cases.iter().cloned());
    let request = json!({
        "library": zero_out_library(),
        "cases": cases,
        "checks": ["zero_copy", "load_twice", "raw_call", "versions"],
        // Loaded under a pretended old jaxlib, to be refused.
        "other_library": tf_fixture_library(),
    });
    let (report, stderr) = run_jax(&python, "example", &request.to_string());
    assert!(
        report["jax"].as_str().is_some_and(|v| v.starts_with("0.")),
        "{}",
        report["jax"]
    );
    assert_eq!(report["functions"], json!(["weighted_sum", "zero_out"]));
    assert_eq!(report["skipped"], json!([]));
    let results = report["cases"].as_array().expect("cases");
    assert_eq!(results.len(), cases.len(), "{stderr}");
    for (call, result) in calls.iter().zip(results) {
        let ours = call.run_opreg();
        for mode in ["eager", "jit", "vmap"] {
            check_outcome(call, mode, &result[mode], &ours);
        }
    }
    let bad = &results[calls.len()..];
    let expected = [
        (
            "TypeError",
            "input arg 'to_zero' is int32, but was given float",
        ),
        (
            "TypeError",
            "attr 'T' was set to DT_FLOAT, then to DT_INT32",
        ),
        ("ValueError", "attr 'normalize' is a bool, got \"yes\""),
        (
            "ValueError",
            "op 'WeightedSum' has no attr 'scale' (its attrs: N, T, normalize)",
        ),
        ("ValueError", "op 'WeightedSum'"),
    ];
    for (result, (kind, text)) in bad.iter().zip(expected) {
        for mode in ["eager", "jit", "vmap"] {
            assert_eq!(result[mode]["error"], kind, "{mode}: {}", result[mode]);
            let message = result[mode]["message"].as_str().unwrap();
            assert!(message.contains(text), "{mode}: {message:?} lacks {text:?}");
        }
    }
    // Large inputs are read in place and outputs written in XLA's buffers:
    // four calls, no copy, and the eager and jitted ZeroOut share a kernel.
    let zero_copy = &report["zero_copy"];
    assert_eq!(zero_copy["calls"], 4, "{zero_copy}");
    assert_eq!(zero_copy["output_copies"], 0, "{zero_copy}");
    assert!(
        zero_copy["kernels_built"].as_u64().unwrap() <= 1,
        "{zero_copy}"
    );
    // Loading again: the same ops; a copy of the file is refused, and the
    // loaded library still works.
    let twice = &report["load_twice"];
    assert_eq!(twice["same_ops"], true);
    let zeroed: Vec<u8> = [5i32, 0, 0, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(from_json(&twice["zero_out_after"]).2, zeroed);
    assert_eq!(from_json(&twice["zero_out_after_copy"]).2, zeroed);
    assert_eq!(twice["copy"]["error"], "LibraryError", "{}", twice["copy"]);
    let message = twice["copy"]["message"].as_str().unwrap();
    assert!(
        message.contains("is already registered by") && message.contains("libzero_out"),
        "{message}"
    );
    // The handlers alone: N and T inferred from the buffers; a result
    // declared with the wrong dtype, or an N the buffers do not fit, is an
    // error, not a wrong answer.
    let raw = &report["raw_call"];
    let sum: Vec<u8> = [3.0f32, 6.0, 9.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(from_json(&raw["inferred"]).2, sum, "{raw}");
    let wrong = raw["wrong_result_dtype"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        wrong.starts_with("INVALID_ARGUMENT: opreg op 'WeightedSum': result 0 was declared int32; the op makes float32"),
        "{raw}"
    );
    let wrong_n = raw["wrong_n"]["message"].as_str().unwrap_or_default();
    assert!(wrong_n.contains("3 input buffers do not fit"), "{raw}");
    // Versions: the package refuses a jaxlib whose FFI API is older or of
    // another major version, and registers nothing of a refused library.
    let versions = &report["versions"];
    assert_eq!(versions["library"], json!([0, 3]));
    let jaxlib = versions["jaxlib"].as_array().unwrap();
    assert_eq!(jaxlib[0], 0, "{versions}");
    assert!(jaxlib[1].as_i64().unwrap() >= 3, "{versions}");
    for refused in ["older_minor", "other_major", "old_jaxlib_load"] {
        assert_eq!(
            versions[refused]["error"], "UnsupportedJaxError",
            "{refused}: {versions}"
        );
    }
    assert!(
        versions["old_jaxlib_load"]["message"]
            .as_str()
            .unwrap()
            .contains("was built for XLA FFI API 0.3, but jaxlib"),
        "{versions}"
    );
    assert_eq!(versions["newer_minor"]["error"], Value::Null);
    assert_eq!(versions["registered_after_refusal"], json!([]));
}

#[test]
fn panics_and_construction_errors_reach_jax_as_errors() {
    let Some(python) = python() else { return };
    let ones = Tensor::from_vec([3], vec![1.0f32; 3]).unwrap();
    let x = to_json(&ones);
    let big = to_json(&Tensor::from_vec([4096], (1..=4096).map(|i| i as f32).collect()).unwrap());
    let ints = to_json(&Tensor::from_vec([3], vec![1i32; 3]).unwrap());
    let request = json!({
        "library": tf_fixture_library(),
        "cases": [
            {"function": "fixture_panic", "args": [x]},
            {"function": "fixture_scale", "args": [x], "attrs": {"factor": "NAN"}},
            {"function": "fixture_scale", "args": [x], "attrs": {"factor": 3.0}},
            {"function": "fixture_scale", "args": [big], "attrs": {"factor": 2.0}},
            {"function": "fixture_scale", "args": [x]},
            {"function": "fixture_scale", "args": [ints], "attrs": {"factor": 1.0}},
        ],
    });
    // JSON has no NaN; Python's json module reads this spelling of it.
    let request = request.to_string().replace("\"NAN\"", "NaN");
    let (report, _) = run_jax(&python, "fixture", &request);
    assert_eq!(
        report["functions"],
        json!(["abs", "fixture_panic", "fixture_scale"]),
        "every op with a CPU kernel, Abs included (JAX has no op registry to clash with)"
    );
    assert_eq!(report["skipped"], json!(["FixtureFlags: no CPU kernel"]));
    let cases = report["cases"].as_array().expect("cases");
    for mode in ["eager", "jit", "vmap"] {
        // A panic is caught at the boundary: INTERNAL, with its message.
        let panic = &cases[0][mode];
        assert_eq!(panic["error"], "JaxRuntimeError", "{mode}: {panic}");
        let message = panic["message"].as_str().unwrap();
        assert!(
            message.starts_with("INTERNAL: opreg op 'FixturePanic': the kernel panicked: the fixture kernel panicked on purpose"),
            "{message}"
        );
        // A kernel that refuses its attrs when built: INVALID_ARGUMENT.
        let refused = &cases[1][mode];
        assert_eq!(refused["error"], "JaxRuntimeError", "{mode}: {refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.starts_with("INVALID_ARGUMENT:")
                && message.contains("attr 'factor'")
                && message.contains("must be finite, got NaN"),
            "{message}"
        );
        // After both, the backend still runs calls.
        let (_, shape, bytes) = from_json(&cases[2][mode][0]);
        assert_eq!(shape, [3]);
        assert_eq!(
            bytes,
            Tensor::from_vec([3], vec![3.0f32; 3])
                .unwrap()
                .as_bytes()
                .unwrap()
        );
        let doubled: Vec<u8> = (1..=4096)
            .flat_map(|i| (i as f32 * 2.0).to_le_bytes())
            .collect();
        assert_eq!(from_json(&cases[3][mode][0]).2, doubled, "{mode}");
        // A required attr left out, and a dtype the op does not take.
        let missing = &cases[4][mode];
        assert_eq!(missing["error"], "ValueError", "{mode}: {missing}");
        assert!(
            missing["message"].as_str().unwrap().contains("'factor'"),
            "{missing}"
        );
        assert_eq!(
            cases[5][mode]["error"], "TypeError",
            "{mode}: {}",
            cases[5][mode]
        );
    }
}

/// The guide's JAX block (docs/guide.md, section 10), run as written with
/// the example library in place of the reader's.
#[test]
fn the_guides_jax_block_runs() {
    let Some(python) = python() else { return };
    run_guide_block(
        &python,
        "### The same library in JAX",
        ("JAX_PLATFORMS", "cpu"),
        &["[[1 0]\n [0 0]]", "[[50  0]\n [ 0  0]]", "[[1 0]\n [3 0]]"],
    );
}
