//! NodeDef semantics (`registry_core::node_def`, TF's node_def_util.cc):
//! defaults, validation errors, dtype resolution, name ranges, input string
//! parsing, and every node of every shared TensorFlow graph.

// The standard ops, which these tests look up (linked by naming the crate).
use opreg_standard_ops as _;

use std::collections::HashMap;
use std::path::PathBuf;

use prost::Message;
use registry_core::OpRegistry;
use registry_core::node_def::{
    InputParseError, InputRef, NodeDefError, add_defaults_to_node_def, in_out_types_for_node,
    input_ranges, is_valid_node_name, name_ranges_for_node, output_ranges, parse_input,
    validate_node_def,
};
use registry_core::proto::attr_value::Value;
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef, OpDef};
use registry_core::spec::OpSpec;

use DataType::{DtDouble as F64, DtFloat as F32, DtInt32 as I32, DtInt64 as I64};

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

fn op(name: &str) -> &'static OpDef {
    OpRegistry::global()
        .look_up_op_def(name)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        attr: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        ..Default::default()
    }
}

/// A valid MatMul node with defaults added.
fn matmul() -> NodeDef {
    let mut n = node(
        "dense/MatMul",
        "MatMul",
        &["x", "w:0"],
        &[("T", F32.into())],
    );
    add_defaults_to_node_def(op("MatMul"), &mut n);
    n
}

/// A valid ConcatV2 of `n` float inputs, with defaults added.
fn concat(n: usize) -> NodeDef {
    let mut inputs: Vec<String> = (0..n).map(|i| format!("in{i}")).collect();
    inputs.push("axis".into());
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let mut node = node(
        "concat",
        "ConcatV2",
        &inputs,
        &[("N", (n as i64).into()), ("T", F32.into())],
    );
    add_defaults_to_node_def(op("ConcatV2"), &mut node);
    node
}

#[track_caller]
fn assert_names_node(err: &NodeDefError, node: &str) {
    assert_eq!(err.node(), node);
    assert!(
        err.to_string().contains(&format!("'{node}'")),
        "message does not name node '{node}': {err}"
    );
}

// ---------------------------------------------------------------------------
// Defaults

#[test]
fn defaults_are_added_and_set_attrs_kept() {
    let op_def = op("MatMul");
    let mut n = node(
        "mm",
        "MatMul",
        &["a", "b"],
        &[("T", F32.into()), ("transpose_a", true.into())],
    );
    let err = validate_node_def(&n, op_def).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::MissingAttr { attr, has_default: true, .. } if attr == "transpose_b"),
        "{err}"
    );
    assert!(
        err.to_string().contains("add_defaults_to_node_def"),
        "{err}"
    );

    add_defaults_to_node_def(op_def, &mut n);
    assert_eq!(n.attr["transpose_a"].value, Some(Value::B(true)), "kept");
    assert_eq!(n.attr["transpose_b"].value, Some(Value::B(false)), "added");
    for attr in &op_def.attr {
        assert!(n.attr.contains_key(&attr.name), "{} missing", attr.name);
    }
    validate_node_def(&n, op_def).unwrap();

    // Idempotent.
    let before = n.clone();
    add_defaults_to_node_def(op_def, &mut n);
    assert_eq!(n, before);
}

#[test]
fn defaults_do_not_invent_attrs_without_default() {
    let mut n = node("sum", "AddN", &[], &[]);
    add_defaults_to_node_def(op("AddN"), &mut n);
    assert!(n.attr.is_empty(), "{:?}", n.attr);
}

// ---------------------------------------------------------------------------
// Validation failures

#[test]
fn valid_nodes_pass() {
    validate_node_def(&matmul(), op("MatMul")).unwrap();
    validate_node_def(&concat(3), op("ConcatV2")).unwrap();
    let mut with_control = concat(2);
    with_control.input.extend(["^a".into(), "^b".into()]);
    validate_node_def(&with_control, op("ConcatV2")).unwrap();
}

#[test]
fn invalid_node_name() {
    for bad in ["", "_x", "a b", "a:0", "-a", "a^b"] {
        let mut n = matmul();
        n.name = bad.into();
        let err = validate_node_def(&n, op("MatMul")).unwrap_err();
        assert!(
            matches!(err, NodeDefError::InvalidNodeName { .. }),
            "{bad:?}: {err}"
        );
        assert_names_node(&err, bad);
    }
}

#[test]
fn op_mismatch() {
    let n = matmul();
    let err = validate_node_def(&n, op("Abs")).unwrap_err();
    assert!(matches!(err, NodeDefError::OpMismatch { .. }), "{err}");
    assert_names_node(&err, "dense/MatMul");
    assert_eq!(
        err.to_string(),
        "NodeDef 'dense/MatMul' has op 'MatMul' but was checked against OpDef 'Abs'"
    );
}

#[test]
fn malformed_input() {
    let mut n = matmul();
    n.input[1] = "w:x".into();
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert!(
        matches!(
            &err,
            NodeDefError::MalformedInput {
                index: 1,
                source,
                ..
            } if matches!(**source, InputParseError::BadPort { .. })
        ),
        "{err}"
    );
    assert_names_node(&err, "dense/MatMul");
    assert!(err.to_string().contains("input 1"), "{err}");
    assert!(err.to_string().contains("'w:x'"), "{err}");
}

#[test]
fn data_input_after_control_input() {
    let mut n = matmul();
    n.input = vec!["x".into(), "^init".into(), "w".into()];
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert!(
        matches!(
            &err,
            NodeDefError::DataInputAfterControl {
                index: 2,
                control_index: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_names_node(&err, "dense/MatMul");
    assert!(err.to_string().contains("'^init'"), "{err}");
}

#[test]
fn unknown_attr_is_an_error_but_underscore_attrs_are_allowed() {
    let mut n = matmul();
    n.attr.insert("_output_shapes".into(), 1.into());
    n.attr.insert("_class".into(), 1.into());
    validate_node_def(&n, op("MatMul")).unwrap();

    n.attr.insert("transpose_c".into(), 1.into());
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::UnknownAttr { attr, .. } if attr == "transpose_c"),
        "{err}"
    );
    assert_names_node(&err, "dense/MatMul");
    let msg = err.to_string();
    assert!(
        msg.contains("'transpose_c'") && msg.contains("'MatMul'"),
        "{msg}"
    );
    assert!(msg.contains("did you mean"), "{msg}");

    let mut n = matmul();
    n.attr.insert("zzzzzzzzzz".into(), 1.into());
    let msg = validate_node_def(&n, op("MatMul")).unwrap_err().to_string();
    assert!(!msg.contains("did you mean"), "{msg}");
}

#[test]
fn missing_attr_without_default() {
    let mut n = matmul();
    n.attr.remove("T");
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert_eq!(
        err,
        NodeDefError::MissingAttr {
            node: "dense/MatMul".into(),
            op: "MatMul".into(),
            attr: "T".into(),
            has_default: false
        }
    );
    assert_eq!(
        err.to_string(),
        "NodeDef 'dense/MatMul' (op 'MatMul') is missing attr 'T'"
    );
}

#[test]
fn attr_of_wrong_kind() {
    let mut n = matmul();
    n.attr.insert("transpose_a".into(), 1.into());
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::InvalidAttr { attr, .. } if attr == "transpose_a"),
        "{err}"
    );
    assert_names_node(&err, "dense/MatMul");
    assert!(err.to_string().contains("'bool'"), "{err}");
}

#[test]
fn attr_type_not_allowed() {
    let mut n = matmul();
    n.attr.insert("T".into(), DataType::DtString.into());
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::InvalidAttr { attr, .. } if attr == "T"),
        "{err}"
    );
    assert_names_node(&err, "dense/MatMul");
    assert!(err.to_string().contains("allowed values"), "{err}");
}

#[test]
fn attr_string_not_allowed() {
    let op_def = op("Conv2D");
    let mut n = node(
        "conv",
        "Conv2D",
        &["x", "f"],
        &[
            ("T", F32.into()),
            ("strides", [1, 1, 1, 1].into()),
            ("padding", "SAME".into()),
        ],
    );
    add_defaults_to_node_def(op_def, &mut n);
    validate_node_def(&n, op_def).unwrap();
    n.attr.insert("padding".into(), "SOMETIMES".into());
    let err = validate_node_def(&n, op_def).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::InvalidAttr { attr, .. } if attr == "padding"),
        "{err}"
    );
    assert_names_node(&err, "conv");
    assert!(err.to_string().contains("SOMETIMES"), "{err}");
}

#[test]
fn attr_below_minimum() {
    // AddN's N has minimum 1.
    let mut n = node("sum", "AddN", &[], &[("N", 0.into()), ("T", F32.into())]);
    add_defaults_to_node_def(op("AddN"), &mut n);
    let err = validate_node_def(&n, op("AddN")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::InvalidAttr { attr, .. } if attr == "N"),
        "{err}"
    );
    assert_names_node(&err, "sum");
    assert!(err.to_string().contains("minimum"), "{err}");
}

#[test]
fn wrong_number_of_inputs() {
    let mut n = matmul();
    n.input.pop();
    let err = validate_node_def(&n, op("MatMul")).unwrap_err();
    assert!(
        matches!(
            err,
            NodeDefError::InputCount {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_names_node(&err, "dense/MatMul");
    assert_eq!(
        err.to_string(),
        "NodeDef 'dense/MatMul' (op 'MatMul') has 1 data input(s) but the op expects 2: \
         a: float, b: float"
    );

    // N * T: N decides; control inputs do not count.
    let mut n = concat(3);
    n.input.remove(0);
    n.input.push("^ctl".into());
    let err = validate_node_def(&n, op("ConcatV2")).unwrap_err();
    assert!(
        matches!(
            err,
            NodeDefError::InputCount {
                expected: 4,
                found: 3,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().ends_with("values: 3 x float, axis: int32"),
        "{err}"
    );

    // No inputs at all.
    let mut n = node("p", "Placeholder", &["x"], &[("dtype", F32.into())]);
    add_defaults_to_node_def(op("Placeholder"), &mut n);
    let err = validate_node_def(&n, op("Placeholder")).unwrap_err();
    assert!(err.to_string().ends_with("expects 0: no inputs"), "{err}");
}

// ---------------------------------------------------------------------------
// Types

#[test]
fn types_fixed_and_type_attr() {
    // ArgMax: input: T, dimension: Tidx; output: output_type.
    let mut n = node(
        "am",
        "ArgMax",
        &["x", "d"],
        &[("T", F64.into()), ("output_type", I32.into())],
    );
    // Tidx comes from the op's default even before add_defaults_to_node_def.
    let (ins, outs) = in_out_types_for_node(&n, op("ArgMax")).unwrap();
    assert_eq!(ins, [F64, I32]);
    assert_eq!(outs, [I32]);
    add_defaults_to_node_def(op("ArgMax"), &mut n);
    n.attr.insert("Tidx".into(), I64.into());
    assert_eq!(
        in_out_types_for_node(&n, op("ArgMax")).unwrap(),
        (vec![F64, I64], vec![I32])
    );

    // Fixed types: Equal's output is bool.
    let n = node("eq", "Equal", &["a", "b"], &[("T", I64.into())]);
    let (ins, outs) = in_out_types_for_node(&n, op("Equal")).unwrap();
    assert_eq!(ins, [I64, I64]);
    assert_eq!(outs, [DataType::DtBool]);
}

#[test]
fn types_number_attr() {
    let n = node("sum", "AddN", &[], &[("N", 4.into()), ("T", F64.into())]);
    assert_eq!(
        in_out_types_for_node(&n, op("AddN")).unwrap(),
        (vec![F64; 4], vec![F64])
    );
    let n = concat(3);
    assert_eq!(
        in_out_types_for_node(&n, op("ConcatV2")).unwrap(),
        (vec![F32, F32, F32, I32], vec![F32])
    );
    // Pack: N * T in, T out.
    let n = node("pack", "Pack", &[], &[("N", 2.into()), ("T", I64.into())]);
    assert_eq!(
        in_out_types_for_node(&n, op("Pack")).unwrap(),
        (vec![I64, I64], vec![I64])
    );
}

#[test]
fn types_type_list_and_ref() {
    let op_def = OpSpec::new("ListAndRef")
        .input("components: Tcomponents")
        .input("counts: N * int64")
        .input("var: Ref(T)")
        .output("out: Tout")
        .output("ref_out: Ref(float)")
        .attr("Tcomponents: list(type) >= 0")
        .attr("Tout: list(type)")
        .attr("N: int >= 0")
        .attr("T: type")
        .build()
        .unwrap();
    let n = node(
        "lr",
        "ListAndRef",
        &[],
        &[
            ("Tcomponents", [F32, DataType::DtString, I32].into()),
            ("Tout", [DataType::DtBool].into()),
            ("N", 2.into()),
            ("T", F64.into()),
        ],
    );
    let (ins, outs) = in_out_types_for_node(&n, &op_def).unwrap();
    assert_eq!(
        ins,
        [
            F32,
            DataType::DtString,
            I32,
            I64,
            I64,
            DataType::DtDoubleRef
        ]
    );
    assert_eq!(outs, [DataType::DtBool, DataType::DtFloatRef]);

    let (i, o) = name_ranges_for_node(&n, &op_def).unwrap();
    assert_eq!(i["components"], 0..3);
    assert_eq!(i["counts"], 3..5);
    assert_eq!(i["var"], 5..6);
    assert_eq!(o["out"], 0..1);
    assert_eq!(o["ref_out"], 1..2);

    // An empty list is zero tensors; N = 0 is zero tensors.
    let mut n = n;
    n.attr
        .insert("Tcomponents".into(), Vec::<DataType>::new().into());
    n.attr.insert("N".into(), 0.into());
    let (ins, _) = in_out_types_for_node(&n, &op_def).unwrap();
    assert_eq!(ins, [DataType::DtDoubleRef]);
}

#[test]
fn type_resolution_errors_name_node_and_attr() {
    // Missing type attr.
    let n = node("sum", "AddN", &[], &[("N", 2.into())]);
    let err = in_out_types_for_node(&n, op("AddN")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::MissingAttr { attr, .. } if attr == "T"),
        "{err}"
    );
    assert_names_node(&err, "sum");

    // Negative N.
    let n = node("sum", "AddN", &[], &[("N", (-1).into()), ("T", F32.into())]);
    let err = in_out_types_for_node(&n, op("AddN")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::InvalidAttr { attr, .. } if attr == "N"),
        "{err}"
    );
    assert!(err.to_string().contains("-1"), "{err}");

    // Wrong kinds.
    let n = node("sum", "AddN", &[], &[("N", F32.into()), ("T", F32.into())]);
    let err = in_out_types_for_node(&n, op("AddN")).unwrap_err();
    assert!(
        err.to_string().contains("expected an int, got a type"),
        "{err}"
    );
    let n = node("sum", "AddN", &[], &[("N", 2.into()), ("T", 1.into())]);
    let err = in_out_types_for_node(&n, op("AddN")).unwrap_err();
    assert!(
        err.to_string().contains("expected a type, got an int"),
        "{err}"
    );

    // Not a DataType.
    let n = node(
        "sum",
        "AddN",
        &[],
        &[("N", 2.into()), ("T", Value::Type(12345).into())],
    );
    let err = in_out_types_for_node(&n, op("AddN")).unwrap_err();
    assert!(err.to_string().contains("12345"), "{err}");
    assert_names_node(&err, "sum");
}

// ---------------------------------------------------------------------------
// Ranges

#[test]
fn name_ranges() {
    let n = concat(4);
    let (i, o) = name_ranges_for_node(&n, op("ConcatV2")).unwrap();
    assert_eq!(i.len(), 2);
    assert_eq!(i["values"], 0..4);
    assert_eq!(i["axis"], 4..5);
    assert_eq!(o["output"], 0..1);
    assert_eq!(input_ranges(&n, op("ConcatV2")).unwrap(), i);
    assert_eq!(output_ranges(&n, op("ConcatV2")).unwrap(), o);

    // Ranges cover exactly the resolved types.
    let (ins, outs) = in_out_types_for_node(&n, op("ConcatV2")).unwrap();
    assert_eq!(i.values().map(|r| r.end).max(), Some(ins.len()));
    assert_eq!(o.values().map(|r| r.end).max(), Some(outs.len()));

    let (i, o) = name_ranges_for_node(&matmul(), op("MatMul")).unwrap();
    assert_eq!((i["a"].clone(), i["b"].clone()), (0..1, 1..2));
    assert_eq!(o["product"], 0..1);

    // Counts need N, not T.
    let n = node("sum", "AddN", &[], &[("N", 5.into())]);
    assert_eq!(input_ranges(&n, op("AddN")).unwrap()["inputs"], 0..5);
    let n = node("sum", "AddN", &[], &[]);
    let err = input_ranges(&n, op("AddN")).unwrap_err();
    assert!(
        matches!(&err, NodeDefError::MissingAttr { attr, .. } if attr == "N"),
        "{err}"
    );
    assert_names_node(&err, "sum");

    // No inputs.
    let n = node("p", "Placeholder", &[], &[("dtype", F32.into())]);
    assert!(input_ranges(&n, op("Placeholder")).unwrap().is_empty());
}

// ---------------------------------------------------------------------------
// Input strings

#[test]
fn parse_input_strings() {
    let ok = |s: &str, node: &str, port: usize, is_control: bool| {
        let parsed = parse_input(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        assert_eq!(
            parsed,
            InputRef {
                node,
                port,
                is_control
            },
            "{s:?}"
        );
        assert_eq!(InputRef::parse(s).unwrap(), parsed);
    };
    ok("x", "x", 0, false);
    ok("x:0", "x", 0, false);
    ok("x:2", "x", 2, false);
    ok("x:10", "x", 10, false);
    ok("dense/MatMul_1:3", "dense/MatMul_1", 3, false);
    ok("^init", "init", 0, true);
    ok("^a/b.c-d>e", "a/b.c-d>e", 0, true);
    ok(".x", ".x", 0, false);
    ok("7up", "7up", 0, false);

    assert_eq!(parse_input("x").unwrap().to_string(), "x");
    assert_eq!(parse_input("x:0").unwrap().to_string(), "x");
    assert_eq!(parse_input("x:3").unwrap().to_string(), "x:3");
    assert_eq!(parse_input("^x").unwrap().to_string(), "^x");
}

#[test]
fn parse_malformed_input_strings() {
    use InputParseError as E;
    let err = |s: &str| parse_input(s).unwrap_err();
    assert_eq!(err(""), E::Empty);
    assert!(matches!(err("^"), E::EmptyNodeName { .. }));
    assert!(matches!(err(":1"), E::EmptyNodeName { .. }));
    for bad in [
        "x:",
        "x:-1",
        "x:+1",
        "x:a",
        "x:1.5",
        "x: 1",
        "x:99999999999999999999999",
    ] {
        assert!(matches!(err(bad), E::BadPort { .. }), "{bad:?}");
        assert!(err(bad).to_string().contains(bad), "{bad:?}: {}", err(bad));
    }
    assert!(matches!(err("^x:1"), E::ControlWithPort { .. }));
    assert!(matches!(err("^x:0"), E::ControlWithPort { .. }));
    assert!(matches!(err("a:b:1"), E::InvalidNodeName { .. }));
    assert!(matches!(err("^^x"), E::InvalidNodeName { .. }));
    assert!(matches!(err("_x"), E::InvalidNodeName { .. }));
    assert!(matches!(err("a b"), E::InvalidNodeName { .. }));
    assert_eq!(
        err("x:-1").to_string(),
        "input 'x:-1' has output port '-1', which is not a non-negative integer"
    );
}

#[test]
fn node_name_rule() {
    for good in [
        "a", "A0", "0", ".", "a_b", "a/b", "a.b", "a-b", "a>b", "x/_1",
    ] {
        assert!(is_valid_node_name(good), "{good:?}");
    }
    for bad in ["", "_a", "/a", "-a", ">a", "a b", "a:0", "a^", "é", "a\n"] {
        assert!(!is_valid_node_name(bad), "{bad:?}");
    }
}

// ---------------------------------------------------------------------------
// The shared TensorFlow graphs

#[test]
fn every_shared_graph_node_validates_and_types_resolve() {
    let graphs_dir = shared_dir().join("graphs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&graphs_dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", graphs_dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("graph.pb").is_file())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 7,
        "too few graphs in {}",
        graphs_dir.display()
    );

    let mut checked_nodes = 0;
    let mut checked_edges = 0;
    for dir in dirs {
        let graph_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(dir.join("graph.pb")).unwrap();
        let graph = GraphDef::decode(bytes.as_slice()).unwrap();
        assert!(!graph.node.is_empty(), "{graph_name}: empty graph");

        let mut outputs_of: HashMap<String, Vec<DataType>> = HashMap::new();
        let mut inputs_of: Vec<(&NodeDef, Vec<DataType>)> = Vec::new();
        for original in &graph.node {
            let op_def = op(&original.op);
            let mut n = original.clone();
            add_defaults_to_node_def(op_def, &mut n);
            validate_node_def(&n, op_def).unwrap_or_else(|e| panic!("{graph_name}: {e}"));
            let (ins, outs) =
                in_out_types_for_node(&n, op_def).unwrap_or_else(|e| panic!("{graph_name}: {e}"));

            // Output dtypes agree with the node's own type attrs.
            let (_, out_ranges) = name_ranges_for_node(&n, op_def).unwrap();
            for arg in &op_def.output_arg {
                if arg.type_attr.is_empty() {
                    continue;
                }
                let Some(Value::Type(want)) = &n.attr[&arg.type_attr].value else {
                    panic!("{graph_name}/{}: {} is not a type", n.name, arg.type_attr);
                };
                for i in out_ranges[&arg.name].clone() {
                    assert_eq!(
                        outs[i] as i32, *want,
                        "{graph_name}/{}: output {i} vs attr {}",
                        n.name, arg.type_attr
                    );
                }
            }
            for attr in ["T", "dtype"] {
                if let (
                    Some(AttrValue {
                        value: Some(Value::Type(t)),
                    }),
                    Some(first),
                ) = (n.attr.get(attr), op_def.output_arg.first())
                    && first.type_attr == attr
                {
                    assert_eq!(outs[0] as i32, *t, "{graph_name}/{}", n.name);
                }
            }

            outputs_of.insert(n.name.clone(), outs);
            inputs_of.push((original, ins));
            checked_nodes += 1;
        }

        // Every data edge: the producer's output dtype is the consumer's
        // input dtype.
        for (n, ins) in inputs_of {
            for (i, text) in n.input.iter().enumerate() {
                let input = parse_input(text).unwrap();
                let producer = outputs_of
                    .get(input.node)
                    .unwrap_or_else(|| panic!("{graph_name}/{}: no node {}", n.name, input.node));
                if input.is_control {
                    continue;
                }
                assert_eq!(
                    producer[input.port], ins[i],
                    "{graph_name}: edge {text} -> {}:{i}",
                    n.name
                );
                checked_edges += 1;
            }
        }
    }
    assert!(checked_nodes >= 200, "only {checked_nodes} nodes checked");
    assert!(checked_edges > 100, "only {checked_edges} edges checked");
}
