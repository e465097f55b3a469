//! The exact renderer (`registry_spec::op_spec`) on TensorFlow's own ops:
//! every OpDef of the conformance cases and of TF 2.21's whole registry is
//! written back as spec strings, and those build the same OpDef, byte for
//! byte. What the spec language cannot say is listed with its reason.

use std::collections::BTreeMap;

use opreg_proto::{OpDef, OpList, TextFormat};
use opreg_tests::conformance::{json_files, spec_of};
use opreg_tests::shared_dir;
use prost::Message;
use registry_spec::{op_spec, validate_op_def};
use serde_json::Value;

/// Why `op_def` does not come back from its rendered spec, or `None` when
/// it does, byte for byte.
fn round_trip_failure(op_def: &OpDef) -> Option<String> {
    let spec = op_spec(op_def);
    match spec.build() {
        Err(e) => Some(format!("rendered spec is rejected: {e}")),
        Ok(again) if again.encode_to_vec() != op_def.encode_to_vec() => Some(format!(
            "differs\n  rendered: {spec:?}\n  original: {}\n  rebuilt:  {}",
            op_def.to_pbtxt_short(),
            again.to_pbtxt_short()
        )),
        Ok(_) => None,
    }
}

/// The OpDef a conformance case stands for: what its spec builds, or for
/// `validate_proto` cases TF accepts, the OpDef given as text.
fn case_op_def(case: &Value) -> Option<OpDef> {
    if case["kind"].as_str() == Some("validate_proto") {
        if case["expect"]["valid"].as_bool() != Some(true) {
            return None;
        }
        let op_def = registry_spec::parse_op_def_text(case["op_def_text"].as_str()?)?;
        return validate_op_def(&op_def).is_ok().then_some(op_def);
    }
    spec_of(case).build().ok()
}

/// Valid OpDefs of the conformance cases that no spec can build, with why.
/// Both were given to TF's `ValidateOpDef` as proto text, not built from
/// specs; every OpDef built from a spec round trips.
const NOT_SPECIFIABLE: &[(&str, &str)] = &[
    (
        "validate-039",
        "its list(int) attr has an empty `default_value { }` (no value set): `= []` gives an \
         explicit empty list, which encodes differently",
    ),
    (
        "validate-072",
        "its list(type) attr is used as an input's type list without a minimum: a spec gives \
         such an attr the implied minimum 1",
    ),
];

#[test]
fn every_conformance_op_def_round_trips() {
    let files = json_files(&shared_dir().join("conformance"));
    assert!(!files.is_empty(), "no conformance JSON files");
    let (mut checked, mut failures) = (0, BTreeMap::new());
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable case file");
        let cases: Vec<Value> = serde_json::from_str(&text).expect("a JSON array of cases");
        for case in &cases {
            let Some(op_def) = case_op_def(case) else {
                continue;
            };
            checked += 1;
            if let Some(why) = round_trip_failure(&op_def) {
                let id = case["id"].as_str().unwrap_or("?").to_owned();
                failures.insert(id, why);
            }
        }
    }
    println!(
        "render round trip: {checked} conformance OpDefs, {} round trip byte for byte, {} cannot",
        checked - failures.len(),
        failures.len()
    );
    for (id, why) in &failures {
        match NOT_SPECIFIABLE.iter().find(|(known, _)| known == id) {
            Some((_, reason)) => println!("  {id} (known): {reason}"),
            None => println!("  {id}: {why}"),
        }
    }
    let failed: Vec<&str> = failures.keys().map(String::as_str).collect();
    let expected: Vec<&str> = NOT_SPECIFIABLE.iter().map(|(id, _)| *id).collect();
    assert_eq!(failed, expected, "the OpDefs that do not round trip");
    assert!(checked > 2000, "only {checked} OpDefs checked");
}

/// Whether an arg carries TF's full type (set by `SetTypeConstructor`,
/// which the spec language has no words for).
fn has_full_type(op_def: &OpDef) -> bool {
    op_def
        .input_arg
        .iter()
        .chain(&op_def.output_arg)
        .any(|arg| arg.experimental_full_type.is_some())
}

#[test]
fn tensorflow_registry_round_trips() {
    let bytes = std::fs::read(shared_dir().join("conformance/tf_2_21_ops.pb"))
        .expect("tf_2_21_ops.pb is readable");
    let ops = OpList::decode(bytes.as_slice()).expect("an OpList");
    let mut failures = BTreeMap::new();
    for op_def in &ops.op {
        if let Some(why) = round_trip_failure(op_def) {
            failures.insert(op_def.name.as_str(), why);
        }
    }
    let full_types: Vec<&str> = ops
        .op
        .iter()
        .filter(|op| has_full_type(op))
        .map(|op| op.name.as_str())
        .collect();
    println!(
        "render round trip: {} TF 2.21 ops, {} round trip byte for byte, {} cannot (type \
         constructors: an arg's experimental_full_type)",
        ops.op.len(),
        ops.op.len() - failures.len(),
        failures.len()
    );
    for (name, why) in failures.iter().filter(|(n, _)| !full_types.contains(n)) {
        println!("  {name}: {why}");
    }
    let failed: Vec<&str> = failures.keys().copied().collect();
    let mut expected = full_types.clone();
    expected.sort_unstable();
    assert_eq!(
        failed, expected,
        "exactly the ops with type constructors do not round trip"
    );
    // And the full types are all they lose.
    for op_def in ops.op.iter().filter(|op| has_full_type(op)) {
        let mut plain = op_def.clone();
        for arg in plain.input_arg.iter_mut().chain(&mut plain.output_arg) {
            arg.experimental_full_type = None;
        }
        assert_eq!(round_trip_failure(&plain), None, "{}", op_def.name);
    }
    assert!(
        ops.op.len() - failures.len() > 1700,
        "too few ops round trip"
    );
}
