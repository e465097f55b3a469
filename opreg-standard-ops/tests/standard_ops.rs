//! The standard op set against TensorFlow 2.21: every op of the list in
//! `graphs/README.md` is defined, the registrations are the `NAMES` list,
//! and each OpDef equals TF 2.21's registry entry byte for byte once the Doc text (summary,
//! description, arg and attr descriptions; TF's registry carries none) is
//! cleared.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use opreg_standard_ops as standard_ops;
use prost::Message;
use registry_core::__private::{OpRegistration, inventory};
use registry_core::Op;
use registry_core::proto::{OpDef, OpList};

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

fn read(rel: &str) -> Vec<u8> {
    let path = shared_dir().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The op names of the paragraph "**The standard op set** (...): Abs, ...,
/// Transpose." of `graphs/README.md`.
fn readme_standard_ops() -> BTreeSet<String> {
    let readme = String::from_utf8(read("graphs/README.md")).unwrap();
    let start = readme
        .find("**The standard op set**")
        .expect("no standard op set in the README");
    let rest = &readme[start..];
    let list_start = rest.find("):").expect("no `):` before the list") + 2;
    let list = &rest[list_start..];
    let list = &list[..list.find('.').expect("the list ends with `.`")];
    list.split(',').map(|name| name.trim().to_owned()).collect()
}

/// The registrations made by `opreg_standard_ops`, by op name.
fn standard_registrations() -> BTreeMap<&'static str, &'static OpRegistration> {
    let mut found = BTreeMap::new();
    for reg in inventory::iter::<OpRegistration> {
        if reg.location.module_path.starts_with("opreg_standard_ops") {
            let first = found.insert(reg.name, reg);
            assert!(
                first.is_none(),
                "{} is registered twice by the standard op set",
                reg.name
            );
        }
    }
    found
}

fn tf_ops() -> BTreeMap<String, OpDef> {
    let list = OpList::decode(read("conformance/tf_2_21_ops.pb").as_slice()).unwrap();
    list.op
        .into_iter()
        .map(|op| (op.name.clone(), op))
        .collect()
}

/// The OpDef without its Doc text.
fn without_docs(mut op: OpDef) -> OpDef {
    op.summary.clear();
    op.description.clear();
    for arg in op.input_arg.iter_mut().chain(op.output_arg.iter_mut()) {
        arg.description.clear();
    }
    for attr in &mut op.attr {
        attr.description.clear();
    }
    op
}

#[test]
fn standard_ops_cover_the_readme_list() {
    let readme = readme_standard_ops();
    assert_eq!(readme.len(), 54, "{readme:?}");
    let ours: BTreeSet<String> = standard_registrations()
        .keys()
        .map(|n| n.to_string())
        .collect();
    let missing: Vec<_> = readme.difference(&ours).collect();
    assert!(missing.is_empty(), "missing {missing:?}");
    let names: BTreeSet<String> = opreg_standard_ops::NAMES
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(ours, names, "the registrations are not the NAMES list");
}

#[test]
fn standard_ops_are_tf_2_21_byte_for_byte() {
    let tf = tf_ops();
    let mut failures = Vec::new();
    for (name, reg) in standard_registrations() {
        let Some(tf_op) = tf.get(name) else {
            failures.push(format!("{name}: not in TF 2.21's registry"));
            continue;
        };
        let ours = OpDef::decode(reg.op_def).unwrap();
        let expected = without_docs(tf_op.clone()).encode_to_vec();
        if without_docs(ours.clone()).encode_to_vec() != expected {
            failures.push(format!(
                "{name} ({}):\n  ours: {ours:?}\n  TF:   {tf_op:?}",
                reg.location
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} ops differ from TF 2.21:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_standard_op_has_a_summary_and_description() {
    for (name, reg) in standard_registrations() {
        let op = OpDef::decode(reg.op_def).unwrap();
        assert!(
            op.summary.ends_with('.'),
            "{name}: summary {:?}",
            op.summary
        );
        assert!(!op.description.is_empty(), "{name}: no description");
    }
}

#[test]
fn op_trait_matches_the_registration() {
    let regs = standard_registrations();
    for (name, bytes) in [
        (standard_ops::Abs::NAME, standard_ops::Abs::OP_DEF_BYTES),
        (
            standard_ops::Conv2D::NAME,
            standard_ops::Conv2D::OP_DEF_BYTES,
        ),
        (standard_ops::NoOp::NAME, standard_ops::NoOp::OP_DEF_BYTES),
        (
            standard_ops::Placeholder::NAME,
            standard_ops::Placeholder::OP_DEF_BYTES,
        ),
    ] {
        assert_eq!(regs[name].op_def, bytes, "{name}");
    }
    let conv = standard_ops::Conv2D::op_def();
    assert_eq!(conv.name, "Conv2D");
    assert_eq!(
        conv.summary,
        "Computes a 2-D convolution given 4-D `input` and `filter` tensors."
    );
    assert!(
        standard_ops::AddN::SIGNATURE.allows_type("T", registry_core::proto::DataType::DtVariant)
    );
}
