//! Every op of TF 2.21's registry that specs express, declared by this
//! crate or by the standard op set it re-exports, goes through the op
//! registry and comes out as TensorFlow's bytes; no op is declared twice.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use prost::Message;
use registry_core::Op;
use registry_core::proto::OpDef;
use registry_core::registry::OpRegistry;

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

/// The registry of this crate's ops (the generated ones and the standard op
/// set it re-exports) exports every case, byte for byte once the Doc text
/// of the standard ops is cleared (TF's registry carries none).
#[test]
fn exported_op_list_is_tf_2_21_byte_for_byte() {
    let registry = OpRegistry::from_registrations(
        registrations().filter(|r| is_generated(r) || is_standard(r)),
    );
    assert_eq!(registry.process_registrations(), Ok(()));
    let exported: BTreeMap<String, OpDef> = registry
        .export_op_list(true)
        .op
        .into_iter()
        .map(|op| (op.name.clone(), without_docs(op)))
        .collect();
    let cases = cases();
    assert_eq!(cases.len(), 1736);
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
    // Beyond the cases: only the standard ops TF's specs cannot express
    // (their outputs' type constructors: Shape's `Unary`, the TensorList
    // ops' `UnaryTensorContainer`).
    let case_names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let extra: Vec<&str> = exported
        .keys()
        .map(String::as_str)
        .filter(|name| !case_names.contains(name))
        .collect();
    assert_eq!(
        extra,
        [
            "EmptyTensorList",
            "Shape",
            "TensorListFromTensor",
            "TensorListPushBack",
            "TensorListReserve",
            "TensorListScatterIntoExistingList",
            "TensorListSetItem",
            "TensorListSplit",
        ]
    );
}

/// Each op is declared once: the generated set leaves the standard op set
/// to `opreg-standard-ops` (whose declarations carry the shape functions),
/// so the whole binary's registry has no duplicate, and the standard ops
/// resolve to those declarations.
#[test]
fn every_op_is_declared_once() {
    let generated: BTreeSet<&str> = registrations()
        .filter(|r| is_generated(r))
        .map(|r| r.name)
        .collect();
    let standard: BTreeSet<&str> = registrations()
        .filter(|r| is_standard(r))
        .map(|r| r.name)
        .collect();
    assert_eq!(standard.len(), opreg_standard_ops::NAMES.len());
    assert_eq!(
        generated.len() + standard.len(),
        1736 + 8,
        "Shape and 7 TensorList ops are beyond the cases"
    );
    let both: Vec<_> = generated.intersection(&standard).collect();
    assert!(both.is_empty(), "declared twice: {both:?}");
    let registry = OpRegistry::from_inventory();
    assert_eq!(registry.process_registrations(), Ok(()));
    let conv = registry.look_up("Conv2D").unwrap();
    assert!(
        conv.shape_fn().is_some(),
        "the standard declaration, with its shape function"
    );
    // The re-export is the standard op set's struct.
    assert_eq!(
        std::any::TypeId::of::<tf_registry_ops::Conv2D>(),
        std::any::TypeId::of::<opreg_standard_ops::Conv2D>()
    );
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
