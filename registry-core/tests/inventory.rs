//! The inventory side of the op registry: finalization, duplicates, invalid
//! registrations, lazy decoding and the global registry, with hand-written
//! `inventory::submit!` registrations (what `#[op]` emits).

// The standard ops, which these tests look up (linked by naming the crate).
use opreg_standard_ops as _;

use registry_core::__private::{OpRegistration, SourceLocation, inventory};
use registry_core::registry::{InvalidOp, OpOrigin, OpRegistry, RegistryError};
use registry_core::spec::OpSpec;

/// `OpDef { name, input_arg: [x: float], output_arg: [y: float] }`, encoded by
/// hand: field 1 (name), 2 (input_arg {1: name, 3: type = DT_FLOAT}), 3.
macro_rules! op_def_bytes {
    ($len:literal, $name:literal) => {
        concat!(
            "\x0a",
            $len,
            $name,
            "\x12\x05\x0a\x01x\x18\x01\x1a\x05\x0a\x01y\x18\x01"
        )
        .as_bytes()
    };
}

const OP_BYTES: &[u8] = op_def_bytes!("\x0f", "InventoryTestOp");
const DUP_BYTES: &[u8] = op_def_bytes!("\x10", "InventoryTestDup");
const OTHER_BYTES: &[u8] = op_def_bytes!("\x12", "InventoryTestOther");

macro_rules! registration {
    ($name:literal, $bytes:expr) => {
        OpRegistration {
            name: $name,
            op_def: $bytes,
            shape_fn: None,
            location: SourceLocation {
                file: file!(),
                line: line!(),
                module_path: module_path!(),
            },
        }
    };
}

inventory::submit!(registration!("InventoryTestOp", OP_BYTES));
inventory::submit!(registration!("InventoryTestDup", DUP_BYTES));
inventory::submit!(registration!("InventoryTestDup", DUP_BYTES));
inventory::submit!(registration!("InventoryTestMismatch", OTHER_BYTES));
inventory::submit!(registration!("InventoryTestBadBytes", b"\x0a\xff"));
inventory::submit!(registration!(
    "inventory_test_bad_name",
    b"\x0a\x17inventory_test_bad_name"
));

#[test]
fn hand_encoded_bytes_match_the_spec_parser() {
    let built = OpSpec::new("InventoryTestOp")
        .input("x: float")
        .output("y: float")
        .build()
        .unwrap();
    assert_eq!(prost::Message::encode_to_vec(&built), OP_BYTES);
}

#[test]
fn inventory_ops_are_found_and_decoded_lazily() {
    let registry = OpRegistry::from_inventory();
    let data = registry.look_up("InventoryTestOp").unwrap();
    assert_eq!(data.name(), "InventoryTestOp");
    assert_eq!(data.op_def().input_arg[0].name, "x");
    assert_eq!(data.op_def().output_arg[0].name, "y");
    assert!(data.shape_fn().is_none());
    let OpOrigin::Source(location) = data.origin() else {
        panic!("{:?}", data.origin())
    };
    assert!(location.file.ends_with("inventory.rs"), "{location}");
    // Same reference every time: decoded once.
    assert!(std::ptr::eq(
        data,
        registry.look_up("InventoryTestOp").unwrap()
    ));
}

#[test]
fn duplicates_keep_the_first_and_name_both_places() {
    let registry = OpRegistry::from_inventory();
    let errors = registry.process_registrations().unwrap_err();
    let dup: Vec<_> = errors
        .iter()
        .filter(|e| e.op_name() == Some("InventoryTestDup"))
        .collect();
    assert_eq!(dup.len(), 1, "{errors:#?}");
    let RegistryError::AlreadyExists {
        first: OpOrigin::Source(first),
        again: OpOrigin::Source(again),
        ..
    } = dup[0]
    else {
        panic!("{:?}", dup[0])
    };
    assert!(
        first.line < again.line,
        "the registration written first is kept: {first} vs {again}"
    );
    let message = dup[0].to_string();
    assert!(
        message.contains(&format!("inventory.rs:{}", first.line)),
        "{message}"
    );
    assert!(
        message.contains(&format!("inventory.rs:{}", again.line)),
        "{message}"
    );
    // The kept one still works.
    let kept = registry.look_up("InventoryTestDup").unwrap();
    assert_eq!(kept.origin(), OpOrigin::Source(*first));
}

#[test]
fn invalid_registrations_are_reported_not_fatal() {
    let registry = OpRegistry::from_inventory();
    let errors = registry.process_registrations().unwrap_err();
    let find = |name: &str| {
        errors
            .iter()
            .find(|e| e.op_name() == Some(name))
            .unwrap_or_else(|| panic!("no error for {name}: {errors:#?}"))
    };
    assert!(matches!(
        find("InventoryTestBadBytes"),
        RegistryError::Invalid {
            reason: InvalidOp::Decode(_),
            ..
        }
    ));
    let mismatch = find("InventoryTestMismatch");
    assert!(
        matches!(mismatch, RegistryError::Invalid { reason: InvalidOp::NameMismatch { op_def, .. }, .. } if op_def == "InventoryTestOther"),
        "{mismatch:?}"
    );
    assert!(
        matches!(
            find("inventory_test_bad_name"),
            RegistryError::Invalid {
                reason: InvalidOp::Validation(_),
                ..
            }
        ),
        "{:?}",
        find("inventory_test_bad_name")
    );
    // Errors are sorted by op name.
    let names: Vec<_> = errors.iter().map(|e| e.op_name().unwrap_or("")).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);

    // A lookup gives the same error; valid ops are unaffected.
    assert_eq!(
        registry.look_up("InventoryTestBadBytes").unwrap_err(),
        *find("InventoryTestBadBytes")
    );
    assert!(registry.look_up("InventoryTestOp").is_ok());
    // Invalid ops are named but never exported.
    assert!(registry.op_names().contains(&"InventoryTestMismatch"));
    let exported = registry.export_op_list(true);
    assert!(
        exported
            .op
            .iter()
            .all(|op| op.name != "InventoryTestMismatch" && op.name != "InventoryTestBadBytes")
    );
    assert!(exported.op.iter().any(|op| op.name == "InventoryTestOp"));
}

#[test]
fn run_time_registration_cannot_override_an_inventory_op() {
    let registry = OpRegistry::from_inventory();
    let spec = OpSpec::new("InventoryTestOp").input("x: float");
    let line = line!() + 1;
    let err = registry.register(spec, None).unwrap_err();
    let RegistryError::AlreadyExists {
        first: OpOrigin::Source(_),
        again: OpOrigin::RunTime(caller),
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(caller.line(), line);
    let message = err.to_string();
    assert!(
        message.contains("declared at") && message.contains("registered at run time at"),
        "{message}"
    );
    assert_eq!(
        registry
            .look_up("InventoryTestOp")
            .unwrap()
            .op_def()
            .output_arg
            .len(),
        1,
        "not overridden"
    );
}

#[test]
fn global_registry_sees_the_inventory() {
    let global = OpRegistry::global();
    assert!(std::ptr::eq(global, OpRegistry::global()));
    assert!(global.look_up("InventoryTestOp").is_ok());
    assert!(global.contains("InventoryTestDup"));
    let not_found = global.look_up("InventoryTestOq").unwrap_err();
    let RegistryError::NotFound { suggestions, .. } = &not_found else {
        panic!("{not_found:?}")
    };
    assert_eq!(
        suggestions.first().map(String::as_str),
        Some("InventoryTestOp"),
        "{not_found}"
    );
}

/// 1,736 registrations (TF's op count), as `#[op]` would emit them.
fn many_registrations() -> Vec<&'static OpRegistration> {
    (0..1736)
        .map(|i| {
            let name: &'static str = Box::leak(format!("SyntheticOp{i:04}").into_boxed_str());
            let op_def = OpSpec::new(name)
                .input("x: T")
                .output("y: T")
                .attr("T: {float, int32}")
                .build()
                .unwrap();
            let bytes: &'static [u8] =
                Box::leak(prost::Message::encode_to_vec(&op_def).into_boxed_slice());
            let location = SourceLocation {
                file: "synthetic.rs",
                line: i,
                module_path: "synthetic",
            };
            &*Box::leak(Box::new(OpRegistration {
                name,
                op_def: bytes,
                shape_fn: None,
                location,
            }))
        })
        .collect()
}

#[test]
fn finalization_indexes_names_only() {
    // Timing is measured by the criterion benchmark in tf-ops/benches; this
    // test checks the behaviour: everything is found, nothing is lost.
    let registrations = many_registrations();
    let registry = OpRegistry::from_registrations(registrations.iter().copied());
    let first = registry.look_up("SyntheticOp0999").unwrap();
    assert_eq!(first.op_def().attr[0].name, "T");
    assert_eq!(registry.len(), 1736);
    assert!(registry.process_registrations().is_ok());
    assert_eq!(registry.export_op_list(false).op.len(), 1736);
}

#[test]
fn from_registrations_reports_duplicates_deterministically() {
    let registrations = many_registrations();
    let forward = OpRegistry::from_registrations(
        registrations
            .iter()
            .copied()
            .chain(registrations[..2].iter().copied()),
    );
    let backward = OpRegistry::from_registrations(
        registrations[..2]
            .iter()
            .chain(registrations.iter())
            .rev()
            .copied(),
    );
    let forward_errors = forward.process_registrations().unwrap_err();
    assert_eq!(forward_errors.len(), 2);
    assert_eq!(
        forward_errors,
        backward.process_registrations().unwrap_err()
    );
}
