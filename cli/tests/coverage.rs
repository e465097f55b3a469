//! `opreg coverage` on the standard ops: the model against the kernel
//! registry's own lookup, TF's kernel registry, the JSON, table and SVG
//! outputs of the binary, bad input, and the checked-in `docs/coverage.svg`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use opreg_cli::coverage::{CellState, Coverage, CoverageError, TfKernelStats, parse_kernel_list};
use opreg_proto::attr_value::Value;
use opreg_proto::{AttrValue, DataType, KernelList, NodeDef};
use registry_core::kernel::{
    FnKernel, KernelError, KernelRegistration, KernelRegistry, OpKernel, OpKernelConstruction,
    TypeConstraint,
};
use registry_core::node_def::add_defaults_to_node_def;
use registry_core::op::SourceLocation;
use registry_core::registry::OpRegistry;
use registry_core::spec::OpSpec;
use registry_core::tensor::is_supported;
use serde_json::Value as Json;

use crate::common;

use common::{opreg, stdout_of};

fn json_of(args: &[&str]) -> Json {
    let mut all = vec!["coverage", "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout_of(&all)).expect("opreg coverage --format json parses")
}

fn tf_pb() -> PathBuf {
    opreg_tests::shared_dir().join("conformance/tf_2_21_kernels.pb")
}

fn tf_pb_arg() -> String {
    tf_pb().display().to_string()
}

fn tf_kernels() -> KernelList {
    let bytes = std::fs::read(tf_pb()).expect("reading tf_2_21_kernels.pb");
    parse_kernel_list(&bytes, &tf_pb()).expect("TF's KernelList decodes")
}

fn temp_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("opreg-coverage-{}-{name}", std::process::id()))
}

/// The coverage of the standard ops on CPU, in this process.
fn cpu_coverage(tf: Option<&KernelList>) -> Coverage {
    assert!(common::link_kernels_like_the_binary() > 0);
    Coverage::compute(
        OpRegistry::global(),
        KernelRegistry::global(),
        &["CPU".to_owned()],
        tf.map(|l| (l, "tf_2_21_kernels.pb")),
    )
}

fn type_attr_value(t: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(t as i32)),
    }
}

/// For each type attr of `op`, the types for which the kernel registry's own
/// lookup (`find_kernel`, TF's `FindKernelDef`) finds a CPU kernel for some
/// combination of the other type attrs' values. Only types opreg has tensors
/// of are tried; `None` when the op has a `list(type)` attr.
fn covered_by_lookup(
    op: &str,
    allowed: &BTreeMap<String, Vec<DataType>>,
) -> BTreeMap<String, BTreeSet<DataType>> {
    let op_def = OpRegistry::global().look_up_op_def(op).expect("registered");
    let attrs: Vec<(&String, Vec<DataType>)> = allowed
        .iter()
        .map(|(a, ts)| (a, ts.iter().copied().filter(|&t| is_supported(t)).collect()))
        .collect();
    let mut found: BTreeMap<String, BTreeSet<DataType>> = attrs
        .iter()
        .map(|(a, _)| ((*a).clone(), BTreeSet::new()))
        .collect();
    // Every combination of the attrs' values (an odometer over the lists).
    let mut index = vec![0usize; attrs.len()];
    if attrs.iter().any(|(_, ts)| ts.is_empty()) {
        return found;
    }
    loop {
        let mut node = NodeDef {
            name: "n".into(),
            op: op.into(),
            ..Default::default()
        };
        for ((attr, ts), &i) in attrs.iter().zip(&index) {
            node.attr.insert((*attr).clone(), type_attr_value(ts[i]));
        }
        add_defaults_to_node_def(op_def, &mut node);
        if KernelRegistry::global().find_kernel(&node, "CPU").is_ok() {
            for ((attr, ts), &i) in attrs.iter().zip(&index) {
                found.get_mut(*attr).expect("attr").insert(ts[i]);
            }
        }
        let mut k = 0;
        loop {
            if k == index.len() {
                return found;
            }
            index[k] += 1;
            if index[k] < attrs[k].1.len() {
                break;
            }
            index[k] = 0;
            k += 1;
        }
    }
}

#[test]
fn abs_on_cpu_covers_exactly_the_types_of_its_kernels() {
    let coverage = cpu_coverage(None);
    let row = coverage
        .rows
        .iter()
        .find(|r| r.op == "Abs")
        .expect("an Abs row");
    assert_eq!(row.attr.as_deref(), Some("T"));
    // What the kernel registry holds for Abs on CPU, read directly.
    let registered: BTreeSet<DataType> = KernelRegistry::global()
        .kernels_for_op("Abs")
        .iter()
        .filter(|r| r.device == "CPU")
        .flat_map(|r| registry_core::kernel::constraint_types(r, "T").unwrap_or_default())
        .copied()
        .collect();
    assert!(registered.contains(&DataType::DtFloat), "{registered:?}");
    let covered: BTreeSet<DataType> = row.devices[0].covered.iter().copied().collect();
    assert_eq!(covered, registered);
    // And what the OpDef allows: every allowed type is a cell, no other.
    let op_def = OpRegistry::global().look_up_op_def("Abs").unwrap();
    let allowed: BTreeSet<i32> = match op_def.attr[0].allowed_values.as_ref().unwrap().value {
        Some(Value::List(ref l)) => l.r#type.iter().copied().collect(),
        _ => panic!("Abs's T is constrained"),
    };
    let cells: BTreeSet<i32> = row
        .cells(0)
        .iter()
        .map(|(t, _)| t.unwrap() as i32)
        .collect();
    assert_eq!(cells, allowed);
    // The binary says the same.
    let json = json_of(&["--device", "cpu"]);
    let abs = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "Abs")
        .unwrap();
    let covered_json: BTreeSet<String> = abs["devices"]["CPU"]["cells"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, s)| *s == "covered")
        .map(|(t, _)| t.clone())
        .collect();
    let expected: BTreeSet<String> = registered
        .iter()
        .map(|t| t.as_str_name().to_owned())
        .collect();
    assert_eq!(covered_json, expected);
}

#[test]
fn every_row_agrees_with_the_kernel_lookup() {
    let coverage = cpu_coverage(None);
    let mut by_op: BTreeMap<&str, BTreeMap<String, Vec<DataType>>> = BTreeMap::new();
    for row in &coverage.rows {
        if let Some(attr) = &row.attr {
            by_op
                .entry(&row.op)
                .or_default()
                .insert(attr.clone(), row.allowed.clone());
        }
    }
    let mut checked = 0;
    for (op, allowed) in &by_op {
        let op_def = OpRegistry::global().look_up_op_def(op).unwrap();
        if op_def.attr.iter().any(|a| a.r#type == "list(type)") {
            continue;
        }
        let found = covered_by_lookup(op, allowed);
        for row in coverage.rows.iter().filter(|r| r.op == *op) {
            let attr = row.attr.as_ref().unwrap();
            let covered: BTreeSet<DataType> = row.devices[0].covered.iter().copied().collect();
            assert_eq!(covered, found[attr], "{op} {attr}");
            checked += 1;
            // Types without tensors are never covered, whatever the kernels.
            for (t, state) in row.cells(0) {
                let t = t.unwrap();
                if !is_supported(t) {
                    assert_eq!(state, CellState::NoTensor, "{op} {attr}={t:?}");
                }
            }
        }
    }
    assert!(checked >= 60, "only {checked} rows checked");
}

#[test]
fn ops_without_type_attrs_say_whether_a_kernel_exists() {
    let coverage = cpu_coverage(None);
    let untyped: Vec<_> = coverage.rows.iter().filter(|r| r.attr.is_none()).collect();
    let names: Vec<&str> = untyped.iter().map(|r| r.op.as_str()).collect();
    assert!(names.contains(&"NoOp"), "{names:?}");
    for row in untyped {
        let op_def = OpRegistry::global().look_up_op_def(&row.op).unwrap();
        assert!(
            !op_def
                .attr
                .iter()
                .any(|a| a.r#type == "type" || a.r#type == "list(type)")
        );
        let has = KernelRegistry::global()
            .kernels_for_op(&row.op)
            .iter()
            .any(|r| r.device == "CPU");
        let expected = if has {
            CellState::Covered
        } else {
            CellState::Missing
        };
        assert_eq!(row.cells(0), vec![(None, expected)], "{}", row.op);
    }
}

#[test]
fn ops_with_several_type_attrs_get_one_row_per_attr() {
    let coverage = cpu_coverage(None);
    let cast: Vec<&str> = coverage
        .rows
        .iter()
        .filter(|r| r.op == "Cast")
        .filter_map(|r| r.attr.as_deref())
        .collect();
    assert_eq!(cast, ["SrcT", "DstT"]);
    // Every op of the registry has a row, in order, but the ops the runtime
    // runs itself (no kernels to cover).
    let mut ops: Vec<&str> = coverage.rows.iter().map(|r| r.op.as_str()).collect();
    ops.dedup();
    let names = OpRegistry::global().export_op_list(false).op;
    let names: Vec<&str> = names
        .iter()
        .map(|o| o.name.as_str())
        .filter(|op| !opreg_runtime::is_runtime_op(op))
        .collect();
    assert!(names.contains(&"TensorListStack") && !names.contains(&"Merge"));
    assert_eq!(ops, names);
}

#[test]
fn disallowed_types_never_appear() {
    let json = json_of(&["--against", &tf_pb_arg()]);
    for row in json["rows"].as_array().unwrap() {
        let op = row["op"].as_str().unwrap();
        let Some(attr) = row["attr"].as_str() else {
            continue;
        };
        let op_def = OpRegistry::global().look_up_op_def(op).unwrap();
        let def = op_def.attr.iter().find(|a| a.name == attr).unwrap();
        let op_allows: Option<BTreeSet<String>> =
            match def.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::List(l)) if !l.r#type.is_empty() => Some(
                    l.r#type
                        .iter()
                        .map(|&t| DataType::try_from(t).unwrap().as_str_name().to_owned())
                        .collect(),
                ),
                _ => None,
            };
        let allowed: BTreeSet<String> = row["allowed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect();
        match &op_allows {
            Some(list) => assert_eq!(&allowed, list, "{op} {attr}"),
            // Unconstrained: every non-reference type.
            None => assert_eq!(allowed.len(), opreg_proto::DATA_TYPES.len(), "{op} {attr}"),
        }
        let cells: BTreeSet<String> = row["devices"]["CPU"]["cells"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(cells, allowed, "{op} {attr}");
    }
    // TF registers MatMul for int16, which MatMul does not allow.
    let matmul = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "MatMul")
        .unwrap();
    assert!(matmul["devices"]["CPU"]["cells"].get("DT_INT16").is_none());
    let disallowed = json["against"]["kernels"]["CPU"]["disallowed"]
        .as_array()
        .unwrap();
    assert!(
        disallowed
            .iter()
            .any(|d| d.as_str().unwrap().starts_with("MatMul: T in [int16]")),
        "{disallowed:?}"
    );
}

#[test]
fn every_tf_cpu_kernel_of_the_standard_ops_is_covered() {
    let tf = tf_kernels();
    let coverage = cpu_coverage(Some(&tf));
    let TfKernelStats {
        total,
        matched,
        no_tensor,
        disallowed,
        unmatched,
    } = coverage.against.as_ref().unwrap().kernels[0].clone();
    // The numbers of tests/tests/tf_kernel_coverage.rs: 1748 checked there
    // plus the 34 float8 kernels of the array ops (we have float8 tensors,
    // that test skips them) = 1782; 60 skipped (variant, resource: the
    // TensorList ops' variant kernels among them); 15 that TF's op does not
    // allow (MatMul int16, MaxPool and the resizes uint32/uint64,
    // LeakyRelu's integer types). The ops the runtime runs itself (Switch,
    // Merge, While...) have no rows, so their TF kernels are not counted.
    assert!(
        unmatched.is_empty(),
        "TF kernels without ours: {unmatched:?}"
    );
    assert_eq!(matched, 1782);
    assert_eq!(no_tensor, 60);
    assert_eq!(disallowed.len(), 15, "{disallowed:?}");
    assert_eq!(total, matched + no_tensor + disallowed.len());
    // Cell by cell: wherever TF has a kernel, so do we, unless opreg has no
    // tensors of the type; and never a TF-only cell.
    let s = coverage.summary(0);
    let tf_cells = s.tf.unwrap();
    assert_eq!(tf_cells.tf_only, 0);
    assert!(tf_cells.tf_only_no_tensor > 0);
    assert_eq!(tf_cells.cells, tf_cells.both + tf_cells.tf_only_no_tensor);
    for row in &coverage.rows {
        for (t, state) in row.cells(0) {
            assert_ne!(state, CellState::TfOnly, "{} {t:?}", row.label());
            if state == CellState::TfOnlyNoTensor {
                assert!(!is_supported(t.unwrap()));
            }
        }
    }
    // The binary agrees and says so in its summary.
    let table = stdout_of(&["coverage", "--device", "CPU", "--against", &tf_pb_arg()]);
    assert!(
        table.contains(
            "1857 TF kernels: 1782 matched by ours, 0 unmatched,\n  60 of types without opreg \
             tensors, 15 for types the op does not allow"
        ),
        "{table}"
    );
    let json = json_of(&["--against", &tf_pb_arg()]);
    assert_eq!(json["against"]["kernels"]["CPU"]["matched"], 1782);
    assert_eq!(json["summary"]["CPU"]["tf"]["tf_only"], 0);
}

#[test]
fn the_table_lists_every_row_and_a_summary() {
    let coverage = cpu_coverage(None);
    let table = stdout_of(&["coverage"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("OP"), "{}", lines[0]);
    assert!(lines[0].contains("CPU"));
    for (line, row) in lines[1..].iter().zip(&coverage.rows) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], row.op);
        assert_eq!(words[1], row.attr.as_deref().unwrap_or("-"));
        if row.attr.is_some() {
            assert_eq!(words[2], row.allowed.len().to_string(), "{line}");
            assert_eq!(words[4], row.devices[0].covered.len().to_string(), "{line}");
        }
    }
    let s = coverage.summary(0);
    let summary = format!(
        "CPU: {}/{} ops have a kernel, {}/{} cover every allowed type opreg has tensors of\n\
         CPU: {}/{} allowed cells covered",
        s.ops_with_kernel, s.ops, s.ops_complete, s.ops, s.cells_covered, s.cells_allowed
    );
    assert!(table.contains(&summary), "{summary}\n{table}");
    assert_eq!(
        s.ops_with_kernel, s.ops,
        "every standard op has a CPU kernel"
    );
    // Missing types are named: FusedBatchNormV3's U allows bfloat16, which
    // no CPU kernel takes (TF has none either).
    let fbn = coverage
        .rows
        .iter()
        .find(|r| r.op == "FusedBatchNormV3" && r.attr.as_deref() == Some("U"))
        .unwrap();
    let missing: Vec<&str> = fbn
        .cells(0)
        .iter()
        .filter(|(_, s)| *s == CellState::Missing)
        .map(|(t, _)| opreg_proto::DataTypeExt::type_name(t.unwrap()))
        .collect();
    if !missing.is_empty() {
        let line = lines
            .iter()
            .find(|l| l.starts_with("FusedBatchNormV3") && l.contains(" U "))
            .unwrap();
        assert!(
            line.contains(&format!("missing: {}", missing.join(" "))),
            "{line}"
        );
    }
}

#[test]
fn json_has_the_documented_structure() {
    let coverage = cpu_coverage(None);
    let json = json_of(&[]);
    let devices: BTreeSet<&str> = KernelRegistry::global()
        .all()
        .iter()
        .map(|r| r.device)
        .chain(["CPU"])
        .collect();
    let listed: BTreeSet<&str> = json["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(
        listed, devices,
        "default: CPU and every device with a kernel"
    );
    assert_eq!(json["devices"][0], "CPU");
    assert!(json["against"].is_null());
    assert_eq!(json["rows"].as_array().unwrap().len(), coverage.rows.len());
    let dtypes: Vec<&str> = json["dtypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let expected: Vec<&str> = coverage.dtypes.iter().map(|t| t.as_str_name()).collect();
    assert_eq!(dtypes, expected);
    let noop = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "NoOp")
        .unwrap();
    assert!(noop["attr"].is_null());
    assert_eq!(noop["devices"]["CPU"]["cells"]["any"], "covered");
    let s = coverage.summary(0);
    let cpu = &json["summary"]["CPU"];
    assert_eq!(cpu["ops"], s.ops);
    assert_eq!(cpu["cells_allowed"], s.cells_allowed);
    assert_eq!(cpu["cells_covered"], s.cells_covered);
    assert_eq!(cpu["cells_no_tensor"], s.cells_no_tensor);
    let states: BTreeSet<&str> = CellState::ALL.iter().map(|s| s.name()).collect();
    for row in json["rows"].as_array().unwrap() {
        for state in row["devices"]["CPU"]["cells"].as_object().unwrap().values() {
            assert!(states.contains(state.as_str().unwrap()), "{state}");
        }
    }
}

#[test]
fn devices_are_case_insensitive_and_filtered() {
    common::link_kernels_like_the_binary();
    let json = json_of(&["--device", "cpu,GPU"]);
    assert_eq!(json["devices"], serde_json::json!(["CPU", "GPU"]));
    let gpu_kernels = KernelRegistry::global()
        .all()
        .iter()
        .filter(|r| r.device == "GPU")
        .count();
    if gpu_kernels == 0 {
        assert_eq!(json["summary"]["GPU"]["cells_covered"], 0);
    }
    let json = json_of(&["--device", "Cpu"]);
    assert_eq!(json["devices"], serde_json::json!(["CPU"]));
    assert!(json["summary"].get("GPU").is_none());
}

/// Checks that the tags of an XML document nest; returns the elements by name.
fn xml_elements(text: &str) -> BTreeMap<String, usize> {
    let mut stack: Vec<String> = Vec::new();
    let mut counts = BTreeMap::new();
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        let text_before = &rest[..start];
        assert!(!text_before.contains('>'), "stray '>' in {text_before:?}");
        let end = rest[start..].find('>').expect("unclosed tag") + start;
        let tag = &rest[start + 1..end];
        assert!(!tag.contains('<'), "'<' inside tag {tag:?}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
        } else {
            let name = tag
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_end_matches('/')
                .to_owned();
            *counts.entry(name.clone()).or_insert(0) += 1;
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        // Entities in text must be the five XML ones.
        for (i, _) in text_before.match_indices('&') {
            let entity = &text_before[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "bad entity in {text_before:?}"
            );
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    counts
}

#[test]
fn svg_is_xml_with_one_rect_per_cell() {
    let svg = stdout_of(&["coverage", "--format", "svg", "--against", &tf_pb_arg()]);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    let elements = xml_elements(&svg);
    assert_eq!(elements["svg"], 1);
    let json = json_of(&["--against", &tf_pb_arg()]);
    let mut cells = 0;
    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    for row in json["rows"].as_array().unwrap() {
        for device in json["devices"].as_array().unwrap() {
            for state in row["devices"][device.as_str().unwrap()]["cells"]
                .as_object()
                .unwrap()
                .values()
            {
                cells += 1;
                *by_state
                    .entry(state.as_str().unwrap().to_owned())
                    .or_default() += 1;
            }
        }
    }
    assert_eq!(svg.matches("<rect class=\"cell ").count(), cells);
    for (state, n) in &by_state {
        assert_eq!(
            svg.matches(&format!("<rect class=\"cell {state}\""))
                .count(),
            *n,
            "{state}"
        );
    }
    // A legend entry per state that can occur with --against.
    assert_eq!(svg.matches("<rect class=\"legend ").count(), 6);
    // Without --against, three.
    let svg = stdout_of(&["coverage", "--format", "svg"]);
    xml_elements(&svg);
    assert_eq!(svg.matches("<rect class=\"legend ").count(), 3);
}

#[test]
fn docs_coverage_svg_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/coverage.svg");
    let checked_in = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let svg = stdout_of(&[
        "coverage",
        "--device",
        "cpu",
        "--format",
        "svg",
        "--against",
        &tf_pb_arg(),
    ]);
    assert!(
        checked_in == svg,
        "docs/coverage.svg is stale; regenerate it with\n  cargo run -p opreg-cli --bin opreg -- \
         coverage --device cpu --format svg --against ../shared/conformance/tf_2_21_kernels.pb \
         > docs/coverage.svg"
    );
}

#[test]
fn docs_coverage_gpu_svg_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/coverage-gpu.svg");
    let checked_in = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let svg = stdout_of(&["coverage", "--device", "gpu", "--format", "svg"]);
    xml_elements(&svg);
    assert!(
        checked_in == svg,
        "docs/coverage-gpu.svg is stale; regenerate it with\n  cargo run -p opreg-cli --bin opreg -- \
         coverage --device gpu --format svg > docs/coverage-gpu.svg"
    );
}

fn assert_fails(args: &[&str], message: &str) {
    let output = opreg(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "opreg {args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(message), "{message:?} not in {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_input_is_an_error() {
    let missing = temp_file("missing.pb");
    assert_fails(
        &["coverage", "--against", missing.to_str().unwrap()],
        "cannot read",
    );
    let text = temp_file("text.pb");
    std::fs::write(&text, "this is not a protobuf\n").unwrap();
    assert_fails(
        &["coverage", "--against", text.to_str().unwrap()],
        "is not a binary KernelList protobuf",
    );
    let empty = temp_file("empty.pb");
    std::fs::write(&empty, b"").unwrap();
    assert_fails(
        &["coverage", "--against", empty.to_str().unwrap()],
        "holds no kernels",
    );
    // TF's OpList is a protobuf, but not a KernelList.
    let ops = opreg_tests::shared_dir().join("conformance/tf_2_21_ops.pb");
    let output = opreg(&["coverage", "--against", ops.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_fails(&["coverage", "--device", "tpu"], "unknown device 'tpu'");
    assert_fails(
        &["coverage", "--format", "svg", "--device", "cpu,npu"],
        "unknown device 'npu'",
    );
    for f in [text, empty] {
        let _ = std::fs::remove_file(f);
    }
    // The library reports the same as typed errors.
    assert!(matches!(
        parse_kernel_list(b"", Path::new("x.pb")),
        Err(CoverageError::NotKernelList { .. })
    ));
}

fn dummy_factory(_: &OpKernelConstruction<'_>) -> Result<Box<dyn OpKernel>, KernelError> {
    Ok(Box::new(FnKernel(|_| Ok(()))))
}

const HERE: SourceLocation = SourceLocation {
    file: file!(),
    line: line!(),
    module_path: module_path!(),
};

static PAIR_KERNELS: [KernelRegistration; 2] = [
    // A kernel for (A=float, B=int32) only.
    KernelRegistration {
        op: "Pair",
        device: "CPU",
        constraints: &[
            TypeConstraint {
                attr: "A",
                types: &[DataType::DtFloat],
            },
            TypeConstraint {
                attr: "B",
                types: &[DataType::DtInt32],
            },
        ],
        host_memory: &[],
        label: "",
        priority: 0,
        factory: dummy_factory,
        kernel_name: "pair::<f32, i32>",
        sources: None,
        location: HERE,
    },
    // A GPU kernel that leaves B unconstrained.
    KernelRegistration {
        op: "Pair",
        device: "GPU",
        constraints: &[TypeConstraint {
            attr: "A",
            types: &[DataType::DtDouble],
        }],
        host_memory: &[],
        label: "",
        priority: 0,
        factory: dummy_factory,
        kernel_name: "pair_gpu::<f64>",
        sources: None,
        location: HERE,
    },
];

#[test]
fn projection_per_attr_on_a_small_registry() {
    let ops = OpRegistry::new();
    ops.register(
        OpSpec::new("Pair")
            .input("x: A")
            .input("y: B")
            .output("z: A")
            .attr("A: {float, double, half}")
            .attr("B: type"),
        None,
    )
    .unwrap();
    ops.register(OpSpec::new("Nothing"), None).unwrap();
    let kernels = KernelRegistry::from_registrations(&PAIR_KERNELS);
    let coverage = Coverage::compute(&ops, &kernels, &["CPU".into(), "GPU".into()], None);
    let labels: Vec<String> = coverage.rows.iter().map(|r| r.label()).collect();
    assert_eq!(labels, ["Nothing", "Pair A", "Pair B"]);
    let pair_a = &coverage.rows[1];
    assert_eq!(
        pair_a.allowed,
        [DataType::DtHalf, DataType::DtFloat, DataType::DtDouble]
    );
    assert_eq!(pair_a.devices[0].covered, [DataType::DtFloat]);
    assert_eq!(pair_a.devices[1].covered, [DataType::DtDouble]);
    let pair_b = &coverage.rows[2];
    assert_eq!(pair_b.allowed.len(), opreg_proto::DATA_TYPES.len());
    assert_eq!(pair_b.devices[0].covered, [DataType::DtInt32]);
    // Unconstrained on GPU: every type opreg has tensors of.
    let gpu: Vec<DataType> = pair_b
        .allowed
        .iter()
        .copied()
        .filter(|&t| is_supported(t))
        .collect();
    assert_eq!(pair_b.devices[1].covered, gpu);
    assert_eq!(coverage.rows[0].cells(0), vec![(None, CellState::Missing)]);
    let s = coverage.summary(0);
    assert_eq!((s.ops, s.ops_with_kernel, s.ops_complete), (2, 1, 0));
    assert_eq!(s.cells_allowed, 1 + 3 + opreg_proto::DATA_TYPES.len());
    assert_eq!(s.cells_covered, 2);

    // Against a TF list with a DEFAULT-device kernel for Nothing, and a
    // kernel for a type Pair does not allow.
    let tf = KernelList {
        kernel: vec![
            registry_core::proto::KernelDef {
                op: "Nothing".into(),
                device_type: "DEFAULT".into(),
                ..Default::default()
            },
            KernelRegistration {
                constraints: &[TypeConstraint {
                    attr: "A",
                    types: &[DataType::DtInt8],
                }],
                ..PAIR_KERNELS[0]
            }
            .kernel_def(),
            PAIR_KERNELS[0].kernel_def(),
        ],
    };
    let coverage = Coverage::compute(&ops, &kernels, &["CPU".into()], Some((&tf, "tf.pb")));
    assert_eq!(coverage.rows[0].cells(0), vec![(None, CellState::TfOnly)]);
    let a: Vec<CellState> = coverage.rows[1].cells(0).iter().map(|c| c.1).collect();
    assert_eq!(a, [CellState::Neither, CellState::Both, CellState::Neither]);
    let stats = &coverage.against.as_ref().unwrap().kernels[0];
    assert_eq!(stats.total, 2, "DEFAULT kernels are not CPU registrations");
    assert_eq!(stats.matched, 1);
    assert_eq!(stats.disallowed.len(), 1, "{stats:?}");
}
