//! Every op of TF 2.21's registry that specs express, declared by this
//! crate, goes through the op registry and comes out as TensorFlow's bytes;
//! the only duplicates are the standard op set of registry-core, when its
//! `standard-ops` feature is on (always, inside this workspace).

mod common;

use std::collections::{BTreeMap, BTreeSet};

use prost::Message;
use registry_core::Op;
use registry_core::proto::OpDef;
use registry_core::registry::{OpOrigin, OpRegistry, RegistryError};

use common::{cases, is_generated, is_standard, registrations};

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

/// A registry of this crate's ops alone: its export is every case, byte for
/// byte.
#[test]
fn exported_op_list_is_tf_2_21_byte_for_byte() {
    let registry = OpRegistry::from_registrations(registrations().filter(|r| is_generated(r)));
    assert_eq!(registry.process_registrations(), Ok(()));
    let exported: BTreeMap<String, OpDef> = registry
        .export_op_list(true)
        .op
        .into_iter()
        .map(|op| (op.name.clone(), op))
        .collect();
    let cases = cases();
    assert_eq!(cases.len(), 1736);
    assert_eq!(exported.len(), cases.len(), "ops exported");
    let mut failures = Vec::new();
    for case in &cases {
        match exported.get(&case.name) {
            None => failures.push(format!("{}: not exported", case.name)),
            Some(op) if op.encode_to_vec() != case.op_def => failures.push(format!(
                "{}:\n  ours: {op:?}\n  TF:   {:?}",
                case.name,
                OpDef::decode(case.op_def.as_slice()).unwrap()
            )),
            Some(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} ops differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The registry of the whole binary (this crate and, with `standard-ops`,
/// registry-core's standard set) holds every case; OpDefs equal TF's once the
/// Doc text of the standard ops (which win the duplicates) is cleared.
#[test]
fn whole_registry_holds_every_op() {
    let registry = OpRegistry::from_inventory();
    let exported: BTreeMap<String, OpDef> = registry
        .export_op_list(true)
        .op
        .into_iter()
        .map(|op| (op.name.clone(), op))
        .collect();
    for case in cases() {
        let op = exported
            .get(&case.name)
            .unwrap_or_else(|| panic!("{} not exported", case.name));
        assert_eq!(
            without_docs(op.clone()).encode_to_vec(),
            case.op_def,
            "{}",
            case.name
        );
    }
}

/// `process_registrations` reports exactly the standard ops, each once, as
/// `AlreadyExists` naming the standard-op and the generated declaration; with
/// the feature off there is nothing to report.
#[test]
fn standard_ops_are_the_only_duplicates() {
    // The standard ops this crate declares too (not Shape: its type
    // constructor is beyond the specs the generator writes).
    let generated: BTreeSet<&str> = registrations()
        .filter(|r| is_generated(r))
        .map(|r| r.name)
        .collect();
    let standard: BTreeSet<&str> = registrations()
        .filter(|r| is_standard(r) && generated.contains(r.name))
        .map(|r| r.name)
        .collect();
    let registry = OpRegistry::from_inventory();
    let Err(errors) = registry.process_registrations() else {
        assert!(
            standard.is_empty(),
            "standard ops {standard:?} registered twice, but no error"
        );
        return;
    };
    assert_eq!(
        standard.len(),
        79,
        "the standard op set is on, with {standard:?}"
    );
    let mut reported = BTreeSet::new();
    for error in &errors {
        let RegistryError::AlreadyExists { name, first, again } = error else {
            panic!("not a duplicate: {error}");
        };
        assert!(reported.insert(name.as_str()), "{name} reported twice");
        let places: Vec<_> = [first, again]
            .into_iter()
            .map(OpOrigin::source_location)
            .collect();
        let [Some(first), Some(again)] = places[..] else {
            panic!("{error}: not both from source")
        };
        let mut modules = [first.module_path, again.module_path];
        modules.sort();
        assert!(
            modules[0].starts_with("opreg_standard_ops")
                && modules[1].starts_with("tf_registry_ops"),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains(first.file) && message.contains(again.file),
            "{message}"
        );
    }
    assert_eq!(reported, standard);
}

/// Struct names: the op's name, made a Rust identifier where it is not one.
#[test]
fn struct_names_map_to_op_names() {
    use tf_registry_ops as ops;
    assert_eq!(ops::Abs::NAME, "Abs");
    assert_eq!(ops::_Arg::NAME, "_Arg");
    assert_eq!(
        ops::Namespace_TestStringOutput::NAME,
        "Namespace>TestStringOutput"
    );
    assert_eq!(ops::Copy_::NAME, "Copy");
    assert_eq!(ops::CopyOp::NAME, "CopyOp");
    assert_eq!(ops::Iterator_::NAME, "Iterator");
    assert_eq!(ops::None_::NAME, "None");
    assert_eq!(ops::Send_::NAME, "Send");
    let deprecated = ops::AdjustContrast::op_def().deprecation.unwrap();
    assert_eq!(
        (deprecated.version, deprecated.explanation.as_str()),
        (2, "Use AdjustContrastv2 instead")
    );
}
