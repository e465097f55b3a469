//! `NodeDefBuilder` (TF's `NodeDefBuilder`): the attrs inputs imply, the
//! order of inputs, defaults and validation, and each problem it reports.

// The standard ops, which these tests look up (linked by naming the crate).
use opreg_standard_ops as _;

use registry_core::node_def::{BuildProblem, NodeDefBuildError, NodeDefBuilder, NodeOut};
use registry_core::proto::attr_value::Value;
use registry_core::proto::{AttrValue, DataType, OpDef};
use registry_core::spec::OpSpec;

use DataType::{DtFloat as F32, DtFloatRef as F32Ref, DtInt32 as I32, DtInt64 as I64};

fn problems(err: NodeDefBuildError) -> Vec<BuildProblem> {
    match err {
        NodeDefBuildError::Problems { problems, .. } => problems,
        other => panic!("expected build problems, got: {other}"),
    }
}

/// An op with every kind of input arg the builder infers attrs from.
fn list_and_ref_op() -> OpDef {
    OpSpec::new("ListAndRef")
        .input("components: Tcomponents")
        .input("counts: N * int64")
        .input("var: Ref(T)")
        .output("out: T")
        .attr("Tcomponents: list(type) >= 0")
        .attr("N: int >= 1")
        .attr("T: type")
        .build()
        .unwrap()
}

#[test]
fn inputs_set_the_attrs_they_imply_and_defaults_fill_the_rest() {
    let node = NodeDefBuilder::new("concat", "ConcatV2")
        .control_input("init")
        .input_list([("a", F32), ("b", F32)])
        .input(NodeOut::new("split", 1, I64))
        .device("/device:CPU:0")
        .finalize()
        .unwrap();
    assert_eq!(node.name, "concat");
    assert_eq!(node.op, "ConcatV2");
    assert_eq!(node.device, "/device:CPU:0");
    assert_eq!(node.input, ["a", "b", "split:1", "^init"]);
    assert_eq!(node.attr["N"], AttrValue::from(2));
    assert_eq!(node.attr["T"], AttrValue::from(F32));
    assert_eq!(node.attr["Tidx"], AttrValue::from(I64));
    assert_eq!(node.attr.len(), 3);

    // MatMul: T from the inputs, transpose_a/b from the op's defaults.
    let node = NodeDefBuilder::new("mm", "MatMul")
        .input(("a", DataType::DtDouble))
        .input(("b", DataType::DtDouble))
        .attr("transpose_b", true)
        .finalize()
        .unwrap();
    assert_eq!(node.attr["T"], AttrValue::from(DataType::DtDouble));
    assert_eq!(node.attr["transpose_a"], AttrValue::from(false));
    assert_eq!(node.attr["transpose_b"], AttrValue::from(true));
}

#[test]
fn attrs_given_explicitly_must_agree_with_the_inputs() {
    let agree = NodeDefBuilder::new("add", "AddV2")
        .attr("T", I32)
        .input(("x", I32))
        .input(("y", I32))
        .finalize();
    assert!(agree.is_ok(), "{agree:?}");

    let err = NodeDefBuilder::new("add", "AddV2")
        .input(("x", I32))
        .input(("y", F32))
        .finalize()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot build NodeDef 'add' (op 'AddV2'): attr 'T' was set to DT_INT32, then to DT_FLOAT"
    );
}

#[test]
fn a_list_sets_n_and_checks_every_element() {
    let node = NodeDefBuilder::new("sum", "AddN")
        .input_list([("a", I64), ("b", I64), ("c", I64)])
        .finalize()
        .unwrap();
    assert_eq!(node.attr["N"], AttrValue::from(3));
    assert_eq!(node.input, ["a", "b", "c"]);

    let found = problems(
        NodeDefBuilder::new("sum", "AddN")
            .input_list([("a", F32), ("b", I32)])
            .finalize()
            .unwrap_err(),
    );
    assert_eq!(
        found,
        [BuildProblem::WrongType {
            arg: "inputs".into(),
            expected: "float",
            actual: "int32",
            input: "b".into(),
        }]
    );
}

#[test]
fn an_arg_of_a_fixed_type_checks_the_dtype_given() {
    // OneHot: indices: TI, depth: int32, on_value: T, off_value: T.
    let err = NodeDefBuilder::new("oh", "OneHot")
        .input(("i", I64))
        .input(("depth", I64))
        .input(("on", F32))
        .input(("off", F32))
        .finalize()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot build NodeDef 'oh' (op 'OneHot'): input arg 'depth' is int32, but was given \
         int64 (from 'depth')"
    );
}

#[test]
fn single_tensors_and_lists_go_to_the_args_that_take_them() {
    let single_for_list = problems(
        NodeDefBuilder::new("sum", "AddN")
            .input(("a", F32))
            .finalize()
            .unwrap_err(),
    );
    assert_eq!(
        single_for_list,
        [BuildProblem::SingleTensorForList {
            arg: "inputs".into(),
            signature: "N * T".into(),
        }]
    );

    let list_for_single = problems(
        NodeDefBuilder::new("abs", "Abs")
            .input_list([("a", F32)])
            .finalize()
            .unwrap_err(),
    );
    assert_eq!(
        list_for_single,
        [BuildProblem::ListForSingleTensor { arg: "x".into() }]
    );
}

#[test]
fn too_many_and_too_few_inputs() {
    let too_many = problems(
        NodeDefBuilder::new("abs", "Abs")
            .input(("a", F32))
            .input(("b", F32))
            .finalize()
            .unwrap_err(),
    );
    assert_eq!(
        too_many,
        [BuildProblem::TooManyInputs { given: 2, args: 1 }]
    );

    let err = NodeDefBuilder::new("mm", "MatMul")
        .input(("a", F32))
        .finalize()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot build NodeDef 'mm' (op 'MatMul'): 1 of the op's 2 input args given; missing: b"
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let err = NodeDefBuilder::new("mm", "MatMul")
        .input(("", F32))
        .input(("^b", I32))
        .input(("c", F32))
        .finalize()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot build NodeDef 'mm' (op 'MatMul'): 4 problems:\n  \
         input arg 'a' was given a bad node name '': empty\n  \
         input arg 'b' was given a bad node name '^b': a control input; use control_input\n  \
         attr 'T' was set to DT_FLOAT, then to DT_INT32\n  \
         input 3 given, but the op has only 2 input arg(s)"
    );
}

#[test]
fn the_node_is_validated_against_its_op() {
    // Abs takes no strings: the inferred T is not allowed.
    let err = NodeDefBuilder::new("abs", "Abs")
        .input(("s", DataType::DtString))
        .finalize()
        .unwrap_err();
    let NodeDefBuildError::Invalid(invalid) = &err else {
        panic!("expected a validation error, got: {err}");
    };
    assert_eq!(invalid.node(), "abs");
    assert!(err.to_string().contains("'T'"), "{err}");

    // An attr the op does not define.
    let err = NodeDefBuilder::new("abs", "Abs")
        .input(("x", F32))
        .attr("alpha", 0.5)
        .finalize()
        .unwrap_err();
    assert!(matches!(err, NodeDefBuildError::Invalid(_)), "{err}");
    assert!(err.to_string().contains("'alpha'"), "{err}");
}

#[test]
fn an_unknown_op_is_reported_with_the_node() {
    let err = NodeDefBuilder::new("n", "MatMull")
        .input(("a", F32))
        .finalize()
        .unwrap_err();
    assert!(matches!(err, NodeDefBuildError::UnknownOp { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("cannot build NodeDef 'n': "),
        "{message}"
    );
    assert!(message.contains("MatMull"), "{message}");
}

#[test]
fn type_lists_and_reference_args() {
    let op_def = list_and_ref_op();
    let node = NodeDefBuilder::with_op_def("lr", &op_def)
        .input_list([("a", F32), ("b", DataType::DtString)])
        .input_list([("c", I64)])
        .input(("v", F32Ref))
        .finalize()
        .unwrap();
    assert_eq!(
        node.attr["Tcomponents"],
        AttrValue::from(vec![F32, DataType::DtString])
    );
    assert_eq!(node.attr["N"], AttrValue::from(1));
    // T is the reference's base type.
    assert_eq!(node.attr["T"], AttrValue::from(F32));
    assert_eq!(node.op, "ListAndRef");

    let found = problems(
        NodeDefBuilder::with_op_def("lr", &op_def)
            .input_list(Vec::<NodeOut>::new())
            .input_list([("c", I32)])
            .input(("v", F32))
            .finalize()
            .unwrap_err(),
    );
    assert_eq!(
        found,
        [
            BuildProblem::WrongType {
                arg: "counts".into(),
                expected: "int64",
                actual: "int32",
                input: "c".into(),
            },
            BuildProblem::NotARef {
                arg: "var".into(),
                actual: "float",
                input: "v".into(),
            },
        ]
    );
    // An empty type list is allowed (`>= 0`) and still sets the attr.
    let node = NodeDefBuilder::with_op_def("lr", &op_def)
        .input_list(Vec::<NodeOut>::new())
        .input_list([("c", I64)])
        .input(("v", F32Ref))
        .finalize()
        .unwrap();
    assert_eq!(
        node.attr["Tcomponents"].value,
        Some(Value::List(Default::default()))
    );
}

#[test]
fn fake_inputs_spread_dtypes_over_the_args() {
    let node = NodeDefBuilder::new("c", "ConcatV2")
        .fake_inputs(&[F32, F32, F32, I32])
        .finalize()
        .unwrap();
    assert_eq!(node.input, ["x0", "x1", "x2", "x3"]);
    assert_eq!(node.attr["N"], AttrValue::from(3));
    assert_eq!(node.attr["Tidx"], AttrValue::from(I32));

    // After explicit inputs, only the remaining args are fed.
    let node = NodeDefBuilder::new("mm", "MatMul")
        .input(("a", F32))
        .fake_inputs(&[F32])
        .finalize()
        .unwrap();
    assert_eq!(node.input, ["a", "x0"]);

    let found = problems(
        NodeDefBuilder::new("mm", "MatMul")
            .fake_inputs(&[F32, F32, F32])
            .finalize()
            .unwrap_err(),
    );
    assert!(
        matches!(&found[..], [BuildProblem::FakeInputs { given: 3, reason }] if reason.contains("1 too many")),
        "{found:?}"
    );
    let found = problems(
        NodeDefBuilder::new("c", "ConcatV2")
            .fake_inputs(&[])
            .finalize()
            .unwrap_err(),
    );
    assert!(
        matches!(&found[..], [BuildProblem::FakeInputs { given: 0, .. }]),
        "{found:?}"
    );
}
