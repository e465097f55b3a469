//! Shape inference (`registry_core::shape`): the shape algebra, the
//! inference context, the error messages, and the shape function of every
//! standard op, with unknown ranks and dimensions and the errors TF raises.

use registry_core::OpRegistry;
use registry_core::proto::tensor_shape_proto::Dim as ProtoDim;
use registry_core::proto::{AttrValue, DataType, NodeDef, TensorProto, TensorShapeProto};
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError, infer_shapes};
use registry_core::spec::OpSpec;
use registry_core::tensor::Tensor;

// ---------------------------------------------------------------- helpers

/// Parses TF's notation: `?` (unknown rank) or `[2,?,3]`.
fn sh(text: &str) -> Shape {
    if text == "?" {
        return Shape::unknown();
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or_else(|| panic!("bad shape {text}"));
    if inner.is_empty() {
        return Shape::scalar();
    }
    Shape::new(inner.split(',').map(|d| match d.trim() {
        "?" => Dim::UNKNOWN,
        n => Dim::new(n.parse().unwrap()),
    }))
}

fn node(op: &str, num_inputs: usize, attrs: &[(&str, AttrValue)]) -> NodeDef {
    NodeDef {
        name: op.to_lowercase(),
        op: op.into(),
        input: (0..num_inputs).map(|i| format!("in{i}")).collect(),
        attr: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        ..Default::default()
    }
}

fn i32s(v: &[i32]) -> Tensor {
    Tensor::from_vec([v.len()], v.to_vec()).unwrap()
}

fn i64s(v: &[i64]) -> Tensor {
    Tensor::from_vec([v.len()], v.to_vec()).unwrap()
}

fn scalar(v: i32) -> Tensor {
    Tensor::scalar(v)
}

/// Runs the registered shape function of `op` on a node with `attrs`
/// (and `N` set to the number of inputs where the op has it).
fn run(
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: &[&str],
    constants: &[Option<Tensor>],
) -> Result<Vec<Shape>, ShapeError> {
    let data = OpRegistry::global().look_up(op).unwrap();
    let mut attrs = attrs.to_vec();
    if data.op_def().attr.iter().any(|a| a.name == "N") && !attrs.iter().any(|a| a.0 == "N") {
        let n = match op {
            "ConcatV2" => inputs.len() - 1,
            _ => inputs.len(),
        };
        attrs.push(("N", AttrValue::from(n as i64)));
    }
    let node = node(op, inputs.len(), &attrs);
    let shapes: Vec<Shape> = inputs.iter().map(|s| sh(s)).collect();
    let constants: Vec<Option<&Tensor>> = constants.iter().map(Option::as_ref).collect();
    data.infer_shapes(&node, &shapes, &constants)
}

/// The single output of `op`, as text.
fn out(
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: &[&str],
    constants: &[Option<Tensor>],
) -> String {
    match run(op, attrs, inputs, constants) {
        Ok(shapes) => {
            assert_eq!(shapes.len(), 1, "{op}: {shapes:?}");
            shapes[0].to_string()
        }
        Err(e) => panic!("{op} {inputs:?}: {e}"),
    }
}

/// The error of `op`, whose plain kind is returned with its message.
fn err(
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: &[&str],
    constants: &[Option<Tensor>],
) -> ShapeError {
    match run(op, attrs, inputs, constants) {
        Ok(shapes) => panic!("{op} {inputs:?}: expected an error, got {shapes:?}"),
        Err(e) => {
            // Every error from a shape function is placed in its node.
            assert_eq!(e.node(), Some(op.to_lowercase().as_str()), "{e}");
            assert!(
                e.to_string()
                    .contains(&format!("{{{{node {}}}}} = {op}[", op.to_lowercase())),
                "{e}"
            );
            e
        }
    }
}

// ---------------------------------------------------------------- Dim

#[test]
fn dim_basics() {
    assert_eq!(Dim::new(3).value(), Some(3));
    assert_eq!(Dim::new(-1), Dim::UNKNOWN);
    assert_eq!(Dim::new(-7), Dim::unknown());
    assert!(!Dim::UNKNOWN.is_known());
    assert_eq!(Dim::UNKNOWN.to_i64(), -1);
    assert_eq!(Dim::from(Some(4)), Dim::new(4));
    assert_eq!(Dim::from(None), Dim::UNKNOWN);
    assert_eq!(format!("{} {}", Dim::new(0), Dim::UNKNOWN), "0 ?");
    assert!(Dim::new(2).is_compatible(2));
    assert!(Dim::new(2).is_compatible(Dim::UNKNOWN));
    assert!(!Dim::new(2).is_compatible(3));
}

#[test]
fn dim_merge() {
    assert_eq!(Dim::UNKNOWN.merge(5).unwrap(), Dim::new(5));
    assert_eq!(Dim::new(5).merge(Dim::UNKNOWN).unwrap(), Dim::new(5));
    assert_eq!(Dim::new(5).merge(5).unwrap(), Dim::new(5));
    assert_eq!(Dim::UNKNOWN.merge(Dim::UNKNOWN).unwrap(), Dim::UNKNOWN);
    let e = Dim::new(2).merge(3).unwrap_err();
    assert_eq!(e, ShapeError::DimMismatch { a: 2, b: 3 });
    assert_eq!(e.to_string(), "Dimensions must be equal, but are 2 and 3");
}

#[test]
fn dim_arithmetic() {
    let u = Dim::UNKNOWN;
    // add
    assert_eq!(Dim::new(2).add(3).unwrap(), Dim::new(5));
    assert_eq!(u.add(0).unwrap(), u);
    assert_eq!(Dim::new(0).add(u).unwrap(), u);
    assert_eq!(u.add(4).unwrap(), u);
    assert!(matches!(
        Dim::new(i64::MAX).add(1),
        Err(ShapeError::DimOverflow { op: '+', .. })
    ));
    // multiply
    assert_eq!(Dim::new(4).multiply(3).unwrap(), Dim::new(12));
    assert_eq!(u.multiply(1).unwrap(), u);
    assert_eq!(Dim::new(1).multiply(u).unwrap(), u);
    assert_eq!(u.multiply(0).unwrap(), Dim::new(0));
    assert_eq!(u.multiply(2).unwrap(), u);
    assert!(matches!(
        Dim::new(i64::MAX).multiply(2),
        Err(ShapeError::DimOverflow { op: '*', .. })
    ));
    // subtract
    assert_eq!(Dim::new(7).subtract(2).unwrap(), Dim::new(5));
    assert_eq!(u.subtract(0).unwrap(), u);
    assert_eq!(u.subtract(1).unwrap(), u);
    assert_eq!(Dim::new(3).subtract(u).unwrap(), u);
    let e = Dim::new(2).subtract(3).unwrap_err();
    assert_eq!(e, ShapeError::NegativeDim { a: 2, b: 3 });
    assert_eq!(
        e.to_string(),
        "Negative dimension size caused by subtracting 3 from 2"
    );
    // divide
    assert_eq!(Dim::new(7).divide(2, false).unwrap(), Dim::new(3));
    assert_eq!(Dim::new(8).divide(2, true).unwrap(), Dim::new(4));
    assert_eq!(u.divide(1, true).unwrap(), u);
    assert_eq!(u.divide(3, true).unwrap(), u);
    assert_eq!(Dim::new(6).divide(u, true).unwrap(), u);
    let e = Dim::new(7).divide(2, true).unwrap_err();
    assert_eq!(
        e,
        ShapeError::NotEvenlyDivisible {
            dividend: 7,
            divisor: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "Dimension size must be evenly divisible by 2 but is 7"
    );
    assert_eq!(
        Dim::new(7).divide(0, false).unwrap_err(),
        ShapeError::NonPositiveDivisor { divisor: 0 }
    );
}

// ---------------------------------------------------------------- Shape

#[test]
fn shape_basics_and_display() {
    assert_eq!(Shape::unknown().to_string(), "?");
    assert_eq!(Shape::scalar().to_string(), "[]");
    assert_eq!(Shape::from([2, -1, 3]).to_string(), "[2,?,3]");
    assert_eq!(Shape::vector(4).to_string(), "[4]");
    assert_eq!(Shape::matrix(2, Dim::UNKNOWN).to_string(), "[2,?]");
    assert_eq!(Shape::unknown_of_rank(3).to_string(), "[?,?,?]");
    assert_eq!(format!("{:?}", sh("[1,?]")), "[1,?]");

    let s = sh("[2,?,3]");
    assert_eq!(s.rank(), Some(3));
    assert_eq!(Shape::unknown().rank(), None);
    assert_eq!(s.dim(0).unwrap(), Dim::new(2));
    assert_eq!(s.dim(-1).unwrap(), Dim::new(3));
    assert_eq!(s.dim(1).unwrap(), Dim::UNKNOWN);
    assert_eq!(
        s.dim(3).unwrap_err(),
        ShapeError::DimIndex { index: 3, rank: 3 }
    );
    assert_eq!(
        s.dim(-4).unwrap_err(),
        ShapeError::DimIndex { index: -4, rank: 3 }
    );
    assert_eq!(Shape::unknown().dim(100).unwrap(), Dim::UNKNOWN);
    assert!(!s.is_fully_defined());
    assert_eq!(s.num_elements(), None);
    assert_eq!(sh("[2,5,3]").num_elements(), Some(30));
    assert_eq!(Shape::scalar().num_elements(), Some(1));
    assert_eq!(sh("[2,5]").to_known_dims(), Some(vec![2, 5]));
    assert_eq!(s.to_known_dims(), None);
    assert_eq!(
        Shape::from(Tensor::zeros(DataType::DtFloat, [3, 4]).unwrap().shape()),
        sh("[3,4]")
    );
}

#[test]
fn shape_merge_and_compatibility() {
    assert_eq!(sh("[2,?]").merge(&sh("[?,3]")).unwrap(), sh("[2,3]"));
    assert_eq!(sh("?").merge(&sh("[?,3]")).unwrap(), sh("[?,3]"));
    assert_eq!(sh("[1]").merge(&sh("?")).unwrap(), sh("[1]"));
    let e = sh("[2,3]").merge(&sh("[2,4]")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Dimension 1 in both shapes must be equal, but are 3 and 4. Shapes are [2,3] and [2,4]."
    );
    assert!(matches!(
        e,
        ShapeError::ShapeMismatch {
            index: 1,
            a: 3,
            b: 4,
            ..
        }
    ));
    let e = sh("[2]").merge(&sh("[2,1]")).unwrap_err();
    assert_eq!(e, ShapeError::RankMismatch { a: 1, b: 2 });
    assert_eq!(e.to_string(), "Shapes must be equal rank, but are 1 and 2");

    assert!(sh("[2,?]").is_compatible(&sh("[?,3]")));
    assert!(sh("?").is_compatible(&sh("[1,2,3]")));
    assert!(!sh("[2,3]").is_compatible(&sh("[2,4]")));
    assert!(!sh("[2]").is_compatible(&sh("[2,1]")));
}

#[test]
fn shape_rank_constraints() {
    assert_eq!(sh("?").with_rank(2).unwrap(), sh("[?,?]"));
    assert_eq!(sh("[1,2]").with_rank(2).unwrap(), sh("[1,2]"));
    let e = sh("[1,2,3]").with_rank(2).unwrap_err();
    assert_eq!(
        e,
        ShapeError::Rank {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(e.to_string(), "Shape must be rank 2 but is rank 3");

    assert_eq!(sh("?").with_rank_at_least(2).unwrap(), sh("?"));
    assert_eq!(sh("[1,2,3]").with_rank_at_least(2).unwrap(), sh("[1,2,3]"));
    let e = sh("[1]").with_rank_at_least(2).unwrap_err();
    assert_eq!(e.to_string(), "Shape must be at least rank 2 but is rank 1");

    assert_eq!(sh("?").with_rank_at_most(1).unwrap(), sh("?"));
    assert_eq!(sh("[]").with_rank_at_most(1).unwrap(), sh("[]"));
    let e = sh("[1,2]").with_rank_at_most(1).unwrap_err();
    assert_eq!(e, ShapeError::RankAtMost { max: 1, found: 2 });
    assert_eq!(e.to_string(), "Shape must be at most rank 1 but is rank 2");
}

#[test]
fn shape_concatenate_subshape_replace() {
    assert_eq!(sh("[1,2]").concatenate(&sh("[?]")), sh("[1,2,?]"));
    assert_eq!(sh("[1,2]").concatenate(&sh("?")), sh("?"));
    assert_eq!(sh("[]").concatenate(&sh("[3]")), sh("[3]"));

    let s = sh("[1,2,3,4]");
    assert_eq!(s.subshape(1, 3).unwrap(), sh("[2,3]"));
    assert_eq!(s.subshape(0, -1).unwrap(), sh("[1,2,3]"));
    assert_eq!(s.subshape(-2, i64::MAX).unwrap(), sh("[3,4]"));
    assert_eq!(s.subshape_from(2).unwrap(), sh("[3,4]"));
    assert_eq!(s.subshape(0, 10).unwrap(), s);
    assert_eq!(s.subshape(7, 10).unwrap(), sh("[]"));
    assert_eq!(
        s.subshape(-5, 2).unwrap_err(),
        ShapeError::Subshape {
            start: -5,
            end: 2,
            rank: 4
        }
    );
    assert!(s.subshape(3, 1).is_err());
    assert!(s.subshape(0, -5).is_err());
    assert_eq!(sh("?").subshape(1, 2).unwrap(), sh("?"));

    assert_eq!(s.replace_dim(1, 9).unwrap(), sh("[1,9,3,4]"));
    assert_eq!(s.replace_dim(-1, Dim::UNKNOWN).unwrap(), sh("[1,2,3,?]"));
    assert_eq!(
        s.replace_dim(4, 1).unwrap_err(),
        ShapeError::DimIndex { index: 4, rank: 4 }
    );
    assert_eq!(sh("?").replace_dim(0, 1).unwrap(), sh("?"));
}

#[test]
fn shape_proto_round_trip() {
    for text in ["?", "[]", "[2,?,3]", "[0]"] {
        let s = sh(text);
        assert_eq!(Shape::from_proto(&s.to_proto()).unwrap(), s, "{text}");
    }
    let unknown = sh("?").to_proto();
    assert!(unknown.unknown_rank && unknown.dim.is_empty());
    let partial = sh("[2,?]").to_proto();
    assert!(!partial.unknown_rank);
    assert_eq!(
        partial.dim.iter().map(|d| d.size).collect::<Vec<_>>(),
        [2, -1]
    );

    let bad = TensorShapeProto {
        dim: vec![
            ProtoDim {
                size: 3,
                name: String::new(),
            },
            ProtoDim {
                size: -2,
                name: String::new(),
            },
        ],
        unknown_rank: false,
    };
    let e = Shape::from_proto(&bad).unwrap_err();
    assert_eq!(
        e,
        ShapeError::InvalidDim {
            index: 1,
            value: -2
        }
    );
    assert_eq!(e.to_string(), "Dimension 1 must be >= -1, but is -2");
}

#[test]
fn shape_broadcast() {
    let b = |x: &str, y: &str| sh(x).broadcast(&sh(y)).map(|s| s.to_string());
    assert_eq!(b("[4,1]", "[1,5]").unwrap(), "[4,5]");
    assert_eq!(b("[2,3]", "[3]").unwrap(), "[2,3]");
    assert_eq!(b("[3]", "[2,1,3]").unwrap(), "[2,1,3]");
    assert_eq!(b("[]", "[2,3]").unwrap(), "[2,3]");
    assert_eq!(b("[?,3]", "[2,1]").unwrap(), "[2,3]");
    assert_eq!(b("[?]", "[?]").unwrap(), "[?]");
    assert_eq!(b("[1]", "[?]").unwrap(), "[?]");
    assert_eq!(b("[?]", "[5]").unwrap(), "[5]");
    assert_eq!(b("[0]", "[?]").unwrap(), "[?]");
    assert_eq!(b("[0]", "[1]").unwrap(), "[0]");
    assert_eq!(b("?", "[2,3]").unwrap(), "?");
    let e = sh("[2,3]").broadcast(&sh("[4,3]")).unwrap_err();
    assert!(
        matches!(
            e,
            ShapeError::Broadcast {
                index: 0,
                a: 2,
                b: 4,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "Dimensions must be equal, but are 2 and 4: shapes [2,3] and [4,3] cannot be \
         broadcast (dimension 0 of the result)"
    );
}

// ---------------------------------------------------------------- context

#[test]
fn context_reads_attrs_with_defaults() {
    let op_def = OpRegistry::global().look_up_op_def("Conv2D").unwrap();
    let node = node(
        "Conv2D",
        2,
        &[
            ("T", AttrValue::from(DataType::DtFloat)),
            ("strides", AttrValue::from([1, 2, 2, 1])),
            ("padding", AttrValue::from("SAME")),
        ],
    );
    let inputs = [sh("?"), sh("?")];
    let ctx = InferenceContext::new(&node, op_def, &inputs, &[]).unwrap();
    assert_eq!(ctx.node_name(), "conv2d");
    assert_eq!(ctx.op_name(), "Conv2D");
    assert_eq!(ctx.num_inputs(), 2);
    assert_eq!(ctx.num_outputs(), 1);
    assert_eq!(ctx.attr::<&[i64]>("strides").unwrap(), &[1, 2, 2, 1]);
    assert_eq!(ctx.attr::<&str>("padding").unwrap(), "SAME");
    assert_eq!(
        ctx.attr::<registry_core::proto::DataType>("T").unwrap(),
        DataType::DtFloat
    );
    // Defaults from the OpDef.
    assert_eq!(ctx.attr::<&str>("data_format").unwrap(), "NHWC");
    assert!(ctx.attr::<bool>("use_cudnn_on_gpu").unwrap());
    assert_eq!(ctx.attr::<&[i64]>("dilations").unwrap(), &[1, 1, 1, 1]);
    assert_eq!(
        ctx.attr::<&[i64]>("explicit_paddings").unwrap(),
        &[] as &[i64]
    );
    assert_eq!(ctx.input_range("filter"), Some(1..2));
    assert!(ctx.input_tensor(1).unwrap().is_none());

    // Missing and mistyped attrs name the node and the attr.
    let e = ctx.attr::<i64>("nope").unwrap_err();
    assert!(
        matches!(e.kind(), ShapeError::MissingAttr { attr } if attr == "nope"),
        "{e}"
    );
    assert_eq!(e.node(), Some("conv2d"));
    assert!(
        e.to_string().starts_with(
            "Attr 'nope' is missing: the node does not set it and the op has no default for \
         '{{node conv2d}} = Conv2D[T=DT_FLOAT, data_format=\"NHWC\", dilations=[1, 1, 1, 1], \
         explicit_paddings=[], padding=\"SAME\", strides=[1, 2, 2, 1], use_cudnn_on_gpu=true]\
         (in0, in1)' with input shapes: ?, ?."
        ),
        "{e}"
    );
    let e = ctx.attr::<i64>("padding").unwrap_err();
    assert!(
        matches!(e.kind(), ShapeError::AttrKind { attr, expected: "int", found: "string" } if attr == "padding"),
        "{e}"
    );
    assert!(matches!(
        ctx.attr::<f32>("T").unwrap_err().kind(),
        ShapeError::AttrKind { .. }
    ));
    assert!(matches!(
        ctx.attr::<Shape>("strides").unwrap_err().kind(),
        ShapeError::AttrKind { .. }
    ));
    assert!(matches!(
        ctx.attr::<&registry_core::proto::TensorProto>("T")
            .unwrap_err()
            .kind(),
        ShapeError::AttrKind { .. }
    ));
    let e = ctx.input(2).unwrap_err();
    assert!(
        matches!(e.kind(), ShapeError::InputIndex { index: 2, count: 2 }),
        "{e}"
    );
    assert!(ctx.input_tensor(5).is_err());
}

#[test]
fn context_float_attr_and_outputs() {
    let op_def = OpRegistry::global()
        .look_up_op_def("FusedBatchNormV3")
        .unwrap();
    let n = node("FusedBatchNormV3", 5, &[("epsilon", AttrValue::from(0.5))]);
    let inputs = vec![sh("?"); 5];
    let mut ctx = InferenceContext::new(&n, op_def, &inputs, &[]).unwrap();
    assert_eq!(ctx.attr::<f32>("epsilon").unwrap(), 0.5);
    assert_eq!(ctx.attr::<f32>("exponential_avg_factor").unwrap(), 1.0);
    assert_eq!(ctx.num_outputs(), 6);
    assert!(ctx.output(0).is_none());
    ctx.set_output(0, sh("[1]")).unwrap();
    assert_eq!(ctx.output(0), Some(&sh("[1]")));
    let e = ctx.set_output(6, sh("[]")).unwrap_err();
    assert!(
        matches!(e.kind(), ShapeError::OutputIndex { index: 6, count: 6 }),
        "{e}"
    );
    // Outputs left unset are an error.
    let e = ctx.into_outputs().unwrap_err();
    assert_eq!(
        e.to_string(),
        "The shape function of op 'FusedBatchNormV3' did not set output 1 ('batch_mean') \
         of node 'fusedbatchnormv3'"
    );
}

#[test]
fn context_checks_counts_and_op() {
    let op = OpRegistry::global().look_up("MatMul").unwrap();
    let n = node("MatMul", 2, &[]);
    let e = op.infer_shapes(&n, &[sh("?")], &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Node 'matmul' (op 'MatMul') has 2 inputs, but 1 input shapes were given"
    );
    let t = scalar(1);
    let e = op
        .infer_shapes(&n, &[sh("?"), sh("?")], &[Some(&t)])
        .unwrap_err();
    assert!(matches!(
        e,
        ShapeError::InputCount {
            what: "constants",
            expected: 2,
            found: 1,
            ..
        }
    ));
    let abs = OpRegistry::global().look_up("Abs").unwrap();
    let e = abs.infer_shapes(&n, &[sh("?"), sh("?")], &[]).unwrap_err();
    assert!(matches!(e, ShapeError::NodeDef(_)), "{e}");
    // AddN without N: the number of inputs is unknowable.
    let addn = OpRegistry::global().look_up("AddN").unwrap();
    let e = addn
        .infer_shapes(&node("AddN", 2, &[]), &[sh("?"), sh("?")], &[])
        .unwrap_err();
    assert!(matches!(e, ShapeError::NodeDef(_)), "{e}");
}

#[test]
fn ops_without_shape_fn_and_custom_shape_fns() {
    let registry = OpRegistry::new();
    registry
        .register(
            OpSpec::new("Plain").input("x: float").output("y: float"),
            None,
        )
        .unwrap();
    let op = registry.look_up("Plain").unwrap();
    let e = op
        .infer_shapes(&node("Plain", 1, &[]), &[sh("[1]")], &[])
        .unwrap_err();
    assert_eq!(
        e,
        ShapeError::NoShapeFn {
            node: "plain".into(),
            op: "Plain".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "No shape inference function exists for op 'Plain' (node 'plain')"
    );

    // A custom shape function: plain errors are placed in the node.
    fn vector_only(c: &mut InferenceContext) -> Result<(), ShapeError> {
        let s = c.input(0)?.with_rank(1)?;
        c.set_output(0, s.concatenate(&Shape::vector(2)))
    }
    let n = node("Plain", 1, &[]);
    let out = infer_shapes(op.op_def(), vector_only, &n, &[sh("[3]")], &[]).unwrap();
    assert_eq!(out, [sh("[3,2]")]);
    let e = infer_shapes(op.op_def(), vector_only, &n, &[sh("[3,1]")], &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Shape must be rank 1 but is rank 2 for '{{node plain}} = Plain[](in0)' with input shapes: [3,1]."
    );
    assert!(matches!(
        e.kind(),
        ShapeError::Rank {
            expected: 1,
            found: 2
        }
    ));
    assert!(e.input().is_none());

    fn forgets(_: &mut InferenceContext) -> Result<(), ShapeError> {
        Ok(())
    }
    let e = infer_shapes(op.op_def(), forgets, &n, &[sh("[3]")], &[]).unwrap_err();
    assert!(
        matches!(e, ShapeError::OutputNotSet { index: 0, .. }),
        "{e}"
    );
}

#[test]
fn error_messages_name_node_op_input_and_shapes() {
    let e = err(
        "MatMul",
        &[("T", AttrValue::from(DataType::DtFloat))],
        &["[2,3,4]", "[3,4]"],
        &[],
    );
    assert_eq!(
        e.to_string(),
        "Shape must be rank 2 but is rank 3 for input 0 ('a') of '{{node matmul}} = \
         MatMul[T=DT_FLOAT, grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](in0, in1)' \
         with input shapes: [2,3,4], [3,4]."
    );
    let label = e.input().unwrap();
    assert_eq!((label.index, label.arg.as_str()), (0, "a"));
    assert!(matches!(
        e.kind(),
        ShapeError::Rank {
            expected: 2,
            found: 3
        }
    ));

    // List inputs are labelled with their position.
    let e = err("AddN", &[], &["[2]", "[3]", "[2]"], &[]);
    let label = e.input().unwrap();
    assert_eq!((label.index, label.arg.as_str()), (1, "inputs[1]"));
}

// ---------------------------------------------------------------- element-wise

#[test]
fn unchanged_shape_ops() {
    for op in [
        "Abs", "Exp", "Floor", "Log", "Neg", "Rsqrt", "Sigmoid", "Sqrt", "Square", "Tanh", "Relu",
        "Identity", "Cast",
    ] {
        for s in ["[2,?,3]", "?", "[]"] {
            assert_eq!(out(op, &[], &[s], &[]), s, "{op}");
        }
    }
}

#[test]
fn softmax_needs_rank_one() {
    assert_eq!(out("Softmax", &[], &["[2,10]"], &[]), "[2,10]");
    assert_eq!(out("Softmax", &[], &["?"], &[]), "?");
    let e = err("Softmax", &[], &["[]"], &[]);
    assert_eq!(e.kind(), &ShapeError::RankAtLeast { min: 1, found: 0 });
}

#[test]
fn broadcast_binary_ops() {
    for op in [
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "FloorDiv",
        "FloorMod",
        "Maximum",
        "Minimum",
        "Pow",
        "SquaredDifference",
        "Greater",
        "Equal",
        "LogicalAnd",
    ] {
        assert_eq!(out(op, &[], &["[4,1]", "[1,5]"], &[]), "[4,5]", "{op}");
        assert_eq!(out(op, &[], &["[2,3]", "[]"], &[]), "[2,3]", "{op}");
        assert_eq!(out(op, &[], &["[?,3]", "[2,1]"], &[]), "[2,3]", "{op}");
        assert_eq!(out(op, &[], &["[?,1]", "[?,4]"], &[]), "[?,4]", "{op}");
        assert_eq!(out(op, &[], &["?", "[4]"], &[]), "?", "{op}");
        let e = err(op, &[], &["[2,3]", "[4,3]"], &[]);
        assert!(
            matches!(
                e.kind(),
                ShapeError::Broadcast {
                    index: 0,
                    a: 2,
                    b: 4,
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn equal_without_incompatible_shape_error() {
    let attrs = [("incompatible_shape_error", AttrValue::from(false))];
    assert_eq!(out("Equal", &attrs, &["[2,3]", "[4,3]"], &[]), "[]");
    assert_eq!(out("Equal", &attrs, &["[5]", "[?]"], &[]), "?");
    assert_eq!(out("Equal", &attrs, &["[4,1]", "[5]"], &[]), "[4,5]");
    let strict = [("incompatible_shape_error", AttrValue::from(true))];
    assert!(run("Equal", &strict, &["[2,3]", "[4,3]"], &[]).is_err());
}

#[test]
fn add_n_merges_inputs() {
    assert_eq!(out("AddN", &[], &["[2,?]", "[?,3]", "?"], &[]), "[2,3]");
    assert_eq!(out("AddN", &[], &["?"], &[]), "?");
    let e = err("AddN", &[], &["[2,3]", "[2,4]"], &[]);
    assert!(
        matches!(
            e.kind(),
            ShapeError::ShapeMismatch {
                index: 1,
                a: 3,
                b: 4,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn no_op_has_no_outputs() {
    assert_eq!(run("NoOp", &[], &[], &[]).unwrap(), Vec::<Shape>::new());
}

// ---------------------------------------------------------------- matmul, bias

#[test]
fn matmul_shapes() {
    assert_eq!(out("MatMul", &[], &["[8,16]", "[16,10]"], &[]), "[8,10]");
    assert_eq!(
        out(
            "MatMul",
            &[("transpose_a", AttrValue::from(true))],
            &["[16,8]", "[16,10]"],
            &[]
        ),
        "[8,10]"
    );
    assert_eq!(
        out(
            "MatMul",
            &[("transpose_b", AttrValue::from(true))],
            &["[8,16]", "[10,16]"],
            &[]
        ),
        "[8,10]"
    );
    let both = [
        ("transpose_a", AttrValue::from(true)),
        ("transpose_b", AttrValue::from(true)),
    ];
    assert_eq!(out("MatMul", &both, &["[16,8]", "[10,16]"], &[]), "[8,10]");
    assert_eq!(out("MatMul", &[], &["?", "[16,?]"], &[]), "[?,?]");
    assert_eq!(out("MatMul", &[], &["[?,?]", "[3,4]"], &[]), "[?,4]");
    let e = err("MatMul", &[], &["[8,16]", "[15,10]"], &[]);
    assert_eq!(e.kind(), &ShapeError::DimMismatch { a: 16, b: 15 });
    assert_eq!(e.input().unwrap().index, 1);
    let e = err("MatMul", &[], &["[8,16]", "[16]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 2,
            found: 1
        }
    );
}

#[test]
fn bias_add_shapes() {
    assert_eq!(out("BiasAdd", &[], &["[2,3,4]", "[4]"], &[]), "[2,3,4]");
    assert_eq!(out("BiasAdd", &[], &["[2,3,?]", "[4]"], &[]), "[2,3,4]");
    assert_eq!(out("BiasAdd", &[], &["?", "[4]"], &[]), "?");
    let nchw = [("data_format", AttrValue::from("NCHW"))];
    assert_eq!(
        out("BiasAdd", &nchw, &["[2,?,5,5]", "[4]"], &[]),
        "[2,4,5,5]"
    );
    let e = err("BiasAdd", &[], &["[2,3,4]", "[3]"], &[]);
    assert_eq!(e.kind(), &ShapeError::DimMismatch { a: 4, b: 3 });
    let e = err("BiasAdd", &nchw, &["[2,4]", "[4]"], &[]);
    assert_eq!(e.kind(), &ShapeError::RankAtLeast { min: 3, found: 2 });
    let e = err("BiasAdd", &[], &["[4]", "[4]"], &[]);
    assert_eq!(e.kind(), &ShapeError::RankAtLeast { min: 2, found: 1 });
    let e = err("BiasAdd", &[], &["[2,4]", "[1,4]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 1,
            found: 2
        }
    );
}

// ---------------------------------------------------------------- reductions

#[test]
fn reductions_with_known_axes() {
    for op in ["Sum", "Mean", "Max"] {
        let keep = [("keep_dims", AttrValue::from(true))];
        assert_eq!(
            out(op, &[], &["[4,6]", "[1]"], &[None, Some(i32s(&[1]))]),
            "[4]",
            "{op}"
        );
        assert_eq!(
            out(op, &[], &["[4,6]", "[1]"], &[None, Some(i32s(&[-1]))]),
            "[4]",
            "{op}"
        );
        assert_eq!(
            out(op, &[], &["[4,6]", "[]"], &[None, Some(scalar(0))]),
            "[6]",
            "{op}"
        );
        assert_eq!(
            out(op, &keep, &["[4,6]", "[1]"], &[None, Some(i64s(&[1]))]),
            "[4,1]",
            "{op}"
        );
        assert_eq!(
            out(op, &[], &["[4,6]", "[2]"], &[None, Some(i32s(&[0, 1]))]),
            "[]",
            "{op}"
        );
        assert_eq!(
            out(op, &keep, &["[4,?]", "[2]"], &[None, Some(i32s(&[1, 0]))]),
            "[1,1]",
            "{op}"
        );
        assert_eq!(
            out(
                op,
                &[],
                &["[4,?,3]", "[3]"],
                &[None, Some(i32s(&[0, -3, 2]))]
            ),
            "[?]",
            "{op}"
        );
        assert_eq!(
            out(op, &[], &["[4,6]", "[0]"], &[None, Some(i32s(&[]))]),
            "[4,6]",
            "{op}"
        );
    }
}

#[test]
fn reductions_with_unknown_axes_or_rank() {
    let keep = [("keep_dims", AttrValue::from(true))];
    assert_eq!(out("Sum", &keep, &["[4,6]", "[1]"], &[]), "[?,?]");
    assert_eq!(out("Sum", &[], &["[4,6]", "[1]"], &[]), "?");
    assert_eq!(
        out("Sum", &keep, &["?", "[1]"], &[None, Some(i32s(&[0]))]),
        "?"
    );
    assert_eq!(
        out("Mean", &[], &["?", "[1]"], &[None, Some(i32s(&[0]))]),
        "?"
    );
}

#[test]
fn reduction_errors() {
    let e = err("Sum", &[], &["[4,6]", "[1]"], &[None, Some(i32s(&[2]))]);
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "reduction dimension",
            value: 2,
            min: -2,
            max: 2
        }
    );
    assert!(e.to_string().starts_with(
        "Invalid reduction dimension 2: it must be in the range [-2, 2) for input 1 ('reduction_indices')"
    ), "{e}");
    let e = err("Max", &[], &["[4,6]", "[1]"], &[None, Some(i32s(&[-3]))]);
    assert!(matches!(
        e.kind(),
        ShapeError::AxisOutOfRange { value: -3, .. }
    ));
    let e = err("Mean", &[], &["[4,6]", "[1,1]"], &[]);
    assert_eq!(e.kind(), &ShapeError::RankAtMost { max: 1, found: 2 });
    // Axes must be integers.
    let f = Tensor::from_vec([1], vec![1.0f32]).unwrap();
    let e = err("Sum", &[], &["[4,6]", "[1]"], &[None, Some(f)]);
    assert!(
        matches!(e.kind(), ShapeError::InvalidConstant { input: 1, .. }),
        "{e}"
    );
}

#[test]
fn arg_max_shapes() {
    assert_eq!(
        out("ArgMax", &[], &["[8,10]", "[]"], &[None, Some(scalar(1))]),
        "[8]"
    );
    assert_eq!(
        out(
            "ArgMax",
            &[],
            &["[8,10,3]", "[]"],
            &[None, Some(scalar(-2))]
        ),
        "[8,3]"
    );
    assert_eq!(out("ArgMax", &[], &["[8,10,3]", "[]"], &[]), "[?,?]");
    assert_eq!(
        out("ArgMax", &[], &["[8]", "[]"], &[None, Some(scalar(0))]),
        "[]"
    );
    assert_eq!(
        out("ArgMax", &[], &["?", "[]"], &[None, Some(scalar(0))]),
        "?"
    );
    let e = err("ArgMax", &[], &["[8,10]", "[]"], &[None, Some(scalar(2))]);
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "dimension",
            value: 2,
            min: -2,
            max: 2
        }
    );
    let e = err("ArgMax", &[], &["[8,10]", "[1]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 0,
            found: 1
        }
    );
}

// ---------------------------------------------------------------- conv, pool

fn conv_attrs(strides: &[i64], padding: &str) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("strides", AttrValue::from(strides)),
        ("padding", AttrValue::from(padding)),
    ]
}

#[test]
fn conv2d_shapes() {
    let same = conv_attrs(&[1, 1, 1, 1], "SAME");
    assert_eq!(
        out("Conv2D", &same, &["[2,8,8,3]", "[3,3,3,4]"], &[]),
        "[2,8,8,4]"
    );
    let same2 = conv_attrs(&[1, 2, 2, 1], "SAME");
    assert_eq!(
        out("Conv2D", &same2, &["[2,9,8,3]", "[3,3,3,4]"], &[]),
        "[2,5,4,4]"
    );
    let valid2 = conv_attrs(&[1, 2, 2, 1], "VALID");
    assert_eq!(
        out("Conv2D", &valid2, &["[2,8,8,3]", "[3,3,3,4]"], &[]),
        "[2,3,3,4]"
    );
    let mut dilated = conv_attrs(&[1, 1, 1, 1], "VALID");
    dilated.push(("dilations", AttrValue::from([1, 2, 2, 1])));
    assert_eq!(
        out("Conv2D", &dilated, &["[2,8,8,3]", "[3,3,3,4]"], &[]),
        "[2,4,4,4]"
    );
    let mut nchw = conv_attrs(&[1, 1, 2, 2], "VALID");
    nchw.push(("data_format", AttrValue::from("NCHW")));
    assert_eq!(
        out("Conv2D", &nchw, &["[2,3,8,8]", "[3,3,3,4]"], &[]),
        "[2,4,3,3]"
    );
    let mut explicit = conv_attrs(&[1, 1, 1, 1], "EXPLICIT");
    explicit.push((
        "explicit_paddings",
        AttrValue::from([0, 0, 1, 1, 2, 2, 0, 0]),
    ));
    assert_eq!(
        out("Conv2D", &explicit, &["[2,8,8,3]", "[3,3,3,4]"], &[]),
        "[2,8,10,4]"
    );
    // Unknowns propagate.
    assert_eq!(
        out("Conv2D", &same, &["[?,8,?,3]", "[3,3,?,?]"], &[]),
        "[?,8,?,?]"
    );
    assert_eq!(out("Conv2D", &same, &["?", "?"], &[]), "[?,?,?,?]");
    // Grouped convolution: 6 input channels, filter depth 3 (2 groups).
    assert_eq!(
        out("Conv2D", &same, &["[1,4,4,6]", "[1,1,3,4]"], &[]),
        "[1,4,4,4]"
    );
}

#[test]
fn conv2d_errors() {
    let same = conv_attrs(&[1, 1, 1, 1], "SAME");
    let e = err("Conv2D", &same, &["[2,8,8,4]", "[3,3,3,4]"], &[]);
    assert_eq!(
        e.kind().to_string(),
        "Depth of input (4) is not a multiple of input depth of filter (3)"
    );
    let e = err("Conv2D", &same, &["[1,4,4,6]", "[1,1,3,3]"], &[]);
    assert_eq!(
        e.kind().to_string(),
        "Depth of output (3) is not a multiple of the number of groups (2)"
    );
    let e = err("Conv2D", &same, &["[2,8,8]", "[3,3,3,4]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 4,
            found: 3
        }
    );
    let e = err(
        "Conv2D",
        &conv_attrs(&[1, 1, 1], "SAME"),
        &["[2,8,8,3]", "[3,3,3,4]"],
        &[],
    );
    assert!(
        matches!(e.kind(), ShapeError::InvalidAttr { attr, .. } if attr == "strides"),
        "{e}"
    );
    assert!(
        e.to_string().contains(
            "Conv2D on data format NHWC requires the stride attribute to contain 4 values, \
                 but got: 3"
        ),
        "{e}"
    );
    let e = err(
        "Conv2D",
        &conv_attrs(&[1, 0, 1, 1], "SAME"),
        &["[2,8,8,3]", "[3,3,3,4]"],
        &[],
    );
    assert_eq!(e.kind().to_string(), "Stride must be > 0, but got 0");
    let e = err(
        "Conv2D",
        &conv_attrs(&[1, 1, 1, 1], "VALID"),
        &["[2,2,8,3]", "[3,3,3,4]"],
        &[],
    );
    assert_eq!(e.kind(), &ShapeError::NegativeDim { a: 2, b: 3 });
    let mut explicit_valid = conv_attrs(&[1, 1, 1, 1], "VALID");
    explicit_valid.push((
        "explicit_paddings",
        AttrValue::from([0, 0, 1, 1, 1, 1, 0, 0]),
    ));
    let e = err("Conv2D", &explicit_valid, &["[2,8,8,3]", "[3,3,3,4]"], &[]);
    assert!(
        matches!(e.kind(), ShapeError::InvalidAttr { attr, .. } if attr == "explicit_paddings")
    );
    assert!(
        e.to_string().contains(
            "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"
        ),
        "the kernels' (TF's CheckValidPadding) message: {e}"
    );
    let mut dilations = conv_attrs(&[1, 1, 1, 1], "SAME");
    dilations.push(("dilations", AttrValue::from([1, 1])));
    let e = err("Conv2D", &dilations, &["[2,8,8,3]", "[3,3,3,4]"], &[]);
    assert!(
        e.to_string()
            .contains("Conv2D requires the dilation attribute to contain 4 values, but got: 2"),
        "{e}"
    );
    let mut vect_c = conv_attrs(&[1, 1, 1, 1], "SAME");
    vect_c.push(("data_format", AttrValue::from("NCHW_VECT_C")));
    let e = err("Conv2D", &vect_c, &["[2,1,8,8,4]", "[3,3,3,4]"], &[]);
    assert!(
        e.to_string()
            .contains("Conv2D does not support data format 'NCHW_VECT_C'"),
        "{e}"
    );
    let mut bad_explicit = conv_attrs(&[1, 1, 1, 1], "EXPLICIT");
    bad_explicit.push((
        "explicit_paddings",
        AttrValue::from([1, 0, 1, 1, 1, 1, 0, 0]),
    ));
    let e = err("Conv2D", &bad_explicit, &["[2,8,8,3]", "[3,3,3,4]"], &[]);
    assert!(
        e.kind()
            .to_string()
            .contains("Nonzero explicit padding in the batch or depth"),
        "{e}"
    );
}

#[test]
fn max_pool_shapes_and_errors() {
    let attrs = |k: &[i64], s: &[i64], p: &str| {
        vec![
            ("ksize", AttrValue::from(k)),
            ("strides", AttrValue::from(s)),
            ("padding", AttrValue::from(p)),
        ]
    };
    let a = attrs(&[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
    assert_eq!(out("MaxPool", &a, &["[2,8,8,4]"], &[]), "[2,4,4,4]");
    assert_eq!(out("MaxPool", &a, &["[2,9,?,4]"], &[]), "[2,4,?,4]");
    let a = attrs(&[1, 3, 3, 1], &[1, 3, 3, 1], "SAME");
    assert_eq!(out("MaxPool", &a, &["[2,8,7,4]"], &[]), "[2,3,3,4]");
    let mut a = attrs(&[1, 1, 2, 2], &[1, 1, 2, 2], "VALID");
    a.push(("data_format", AttrValue::from("NCHW")));
    assert_eq!(out("MaxPool", &a, &["[2,4,8,6]"], &[]), "[2,4,4,3]");
    // Pooling over the depth.
    let a = attrs(&[1, 1, 1, 2], &[1, 1, 1, 2], "VALID");
    assert_eq!(out("MaxPool", &a, &["[2,8,8,4]"], &[]), "[2,8,8,2]");
    // NCHW_VECT_C: [N, C/4, H, W, 4].
    let mut a = attrs(&[1, 1, 2, 2], &[1, 1, 2, 2], "VALID");
    a.push(("data_format", AttrValue::from("NCHW_VECT_C")));
    assert_eq!(out("MaxPool", &a, &["[2,2,8,8,4]"], &[]), "[2,2,4,4,4]");
    let e = err("MaxPool", &a, &["[2,2,8,8,3]"], &[]);
    assert!(
        e.to_string().contains("VECT_C dimension must be 4 or 32"),
        "{e}"
    );
    let mut a = attrs(&[1, 2, 2, 1], &[1, 1, 1, 1], "EXPLICIT");
    a.push((
        "explicit_paddings",
        AttrValue::from([0, 0, 1, 0, 1, 1, 0, 0]),
    ));
    assert_eq!(out("MaxPool", &a, &["[1,4,4,1]"], &[]), "[1,4,5,1]");

    let e = err(
        "MaxPool",
        &attrs(&[1, 2, 2], &[1, 2, 2, 1], "VALID"),
        &["[2,8,8,4]"],
        &[],
    );
    assert!(
        e.to_string()
            .contains("requires the ksize attribute to contain 4 values, but got: 3"),
        "{e}"
    );
    let e = err(
        "MaxPool",
        &attrs(&[1, 2, 2, 1], &[1, 2, 2, 1], "VALID"),
        &["[8,8,4]"],
        &[],
    );
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 4,
            found: 3
        }
    );
    let e = err(
        "MaxPool",
        &attrs(&[1, 9, 2, 1], &[1, 1, 1, 1], "VALID"),
        &["[2,8,8,4]"],
        &[],
    );
    assert_eq!(e.kind(), &ShapeError::NegativeDim { a: 8, b: 9 });
}

// ---------------------------------------------------------------- concat, pack

#[test]
fn concat_v2_shapes() {
    let ax = |v: i32| vec![None, None, Some(scalar(v))];
    assert_eq!(
        out("ConcatV2", &[], &["[2,3]", "[2,4]", "[]"], &ax(1)),
        "[2,7]"
    );
    assert_eq!(
        out("ConcatV2", &[], &["[2,3]", "[2,4]", "[]"], &ax(-1)),
        "[2,7]"
    );
    assert_eq!(
        out("ConcatV2", &[], &["[4,6]", "[?,6]", "[]"], &ax(0)),
        "[?,6]"
    );
    assert_eq!(
        out("ConcatV2", &[], &["[4,?]", "[4,6]", "[]"], &ax(0)),
        "[8,6]"
    );
    assert_eq!(
        out("ConcatV2", &[], &["[4,6]", "?", "[]"], &ax(-2)),
        "[?,6]"
    );
    assert_eq!(
        out(
            "ConcatV2",
            &[],
            &["[1,2]", "[1,3]", "[1,4]", "[]"],
            &[None, None, None, Some(scalar(1))]
        ),
        "[1,9]"
    );
    let axis64 = vec![None, None, Some(Tensor::scalar(1i64))];
    assert_eq!(
        out("ConcatV2", &[], &["[2,3]", "[2,4]", "[]"], &axis64),
        "[2,7]"
    );
    // Unknown axis: the rank is known.
    assert_eq!(out("ConcatV2", &[], &["?", "[2,4]", "[]"], &[]), "[?,?]");
    assert_eq!(out("ConcatV2", &[], &["?", "?", "[]"], &[]), "?");
}

#[test]
fn concat_v2_errors() {
    let ax = |v: i32| vec![None, None, Some(scalar(v))];
    let e = err("ConcatV2", &[], &["[2,3]", "[3,4]", "[]"], &ax(1));
    assert!(
        matches!(
            e.kind(),
            ShapeError::ShapeMismatch {
                index: 0,
                a: 2,
                b: 3,
                ..
            }
        ),
        "{e}"
    );
    let e = err("ConcatV2", &[], &["[2,3]", "[2,4]", "[]"], &ax(2));
    assert_eq!(e.kind(), &ShapeError::RankAtLeast { min: 3, found: 2 });
    let e = err("ConcatV2", &[], &["[2,3]", "[2,4]", "[]"], &ax(-3));
    assert_eq!(e.kind(), &ShapeError::RankAtLeast { min: 3, found: 2 });
    let e = err("ConcatV2", &[], &["[]", "[]", "[]"], &[]);
    assert_eq!(
        e.kind().to_string(),
        "Can't concatenate scalars (use tf.stack instead)"
    );
    let e = err("ConcatV2", &[], &["[2,3]", "[2]", "[]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 2,
            found: 1
        }
    );
    let e = err("ConcatV2", &[], &["[2,3]", "[2,3]", "[1]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 0,
            found: 1
        }
    );
}

#[test]
fn pack_shapes() {
    let three = ["[3,5]", "[3,?]", "?"];
    assert_eq!(out("Pack", &[], &three, &[]), "[3,3,5]");
    assert_eq!(
        out("Pack", &[("axis", AttrValue::from(1))], &three, &[]),
        "[3,3,5]"
    );
    assert_eq!(
        out("Pack", &[("axis", AttrValue::from(2))], &three, &[]),
        "[3,5,3]"
    );
    assert_eq!(
        out(
            "Pack",
            &[("axis", AttrValue::from(-1))],
            &["[3,5]", "[3,5]"],
            &[]
        ),
        "[3,5,2]"
    );
    assert_eq!(
        out(
            "Pack",
            &[("axis", AttrValue::from(-3))],
            &["[3,5]", "[3,5]"],
            &[]
        ),
        "[2,3,5]"
    );
    assert_eq!(out("Pack", &[], &["[]", "[]"], &[]), "[2]");
    assert_eq!(out("Pack", &[], &["?", "?"], &[]), "?");
    let e = err(
        "Pack",
        &[("axis", AttrValue::from(3))],
        &["[3,5]", "[3,5]"],
        &[],
    );
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "axis",
            value: 3,
            min: -3,
            max: 3
        }
    );
    let e = err("Pack", &[], &["[3,5]", "[3,4]"], &[]);
    assert!(matches!(e.kind(), ShapeError::ShapeMismatch { .. }), "{e}");
}

// ---------------------------------------------------------------- reshape, transpose

#[test]
fn reshape_shapes() {
    let shape = |v: &[i32]| vec![None, Some(i32s(v))];
    assert_eq!(
        out("Reshape", &[], &["[4,6]", "[2]"], &shape(&[3, 8])),
        "[3,8]"
    );
    assert_eq!(
        out("Reshape", &[], &["[4,6]", "[2]"], &shape(&[-1, 12])),
        "[2,12]"
    );
    assert_eq!(
        out("Reshape", &[], &["[4,6]", "[3]"], &shape(&[2, -1, 3])),
        "[2,4,3]"
    );
    assert_eq!(
        out("Reshape", &[], &["[4,6]", "[1]"], &shape(&[-1])),
        "[24]"
    );
    assert_eq!(out("Reshape", &[], &["[1]", "[0]"], &shape(&[])), "[]");
    assert_eq!(
        out(
            "Reshape",
            &[],
            &["[4,6]", "[2]"],
            &[None, Some(i64s(&[-1, 8]))]
        ),
        "[3,8]"
    );
    // Unknown input dims.
    assert_eq!(
        out("Reshape", &[], &["[?,6]", "[2]"], &shape(&[-1, 3])),
        "[?,3]"
    );
    assert_eq!(
        out("Reshape", &[], &["[?,6]", "[2]"], &shape(&[3, 4])),
        "[3,4]"
    );
    assert_eq!(
        out("Reshape", &[], &["[?,6]", "[2]"], &shape(&[-1, 6])),
        "[?,6]"
    );
    assert_eq!(
        out("Reshape", &[], &["?", "[2]"], &shape(&[-1, 6])),
        "[?,6]"
    );
    assert_eq!(
        out("Reshape", &[], &["[?,?]", "[2]"], &shape(&[-1, 6])),
        "[?,6]"
    );
    // Zero elements: the -1 cannot be inferred.
    assert_eq!(
        out("Reshape", &[], &["[0,6]", "[2]"], &shape(&[0, -1])),
        "[0,?]"
    );
    // Unknown shape value: as many unknown dims as it has elements.
    assert_eq!(out("Reshape", &[], &["[4,6]", "[3]"], &[]), "[?,?,?]");
    assert_eq!(out("Reshape", &[], &["[4,6]", "[?]"], &[]), "?");
    assert_eq!(out("Reshape", &[], &["[4,6]", "?"], &[]), "?");
}

#[test]
fn reshape_errors() {
    let shape = |v: &[i32]| vec![None, Some(i32s(v))];
    let e = err("Reshape", &[], &["[4,6]", "[2]"], &shape(&[5, 5]));
    assert_eq!(
        e.kind(),
        &ShapeError::Reshape {
            elements: 24,
            shape: sh("[5,5]"),
            shape_elements: 25
        }
    );
    assert_eq!(
        e.to_string(),
        "Cannot reshape a tensor with 24 elements to shape [5,5] (25 elements) for \
         '{{node reshape}} = Reshape[Tshape=DT_INT32](in0, in1)' with input shapes: [4,6], [2]."
    );
    let e = err("Reshape", &[], &["[4,6]", "[2]"], &shape(&[5, -1]));
    assert_eq!(
        e.kind(),
        &ShapeError::ReshapeNotDivisible {
            elements: 24,
            shape: sh("[5,?]"),
            known: 5
        }
    );
    let e = err("Reshape", &[], &["[?,5]", "[2]"], &shape(&[3, 4]));
    assert_eq!(
        e.kind(),
        &ShapeError::NotEvenlyDivisible {
            dividend: 12,
            divisor: 5
        }
    );
    let e = err("Reshape", &[], &["[4,6]", "[2]"], &shape(&[-2, 12]));
    assert_eq!(
        e.kind(),
        &ShapeError::InvalidDim {
            index: 0,
            value: -2
        }
    );
    let e = err("Reshape", &[], &["[4,6]", "[2,1]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 1,
            found: 2
        }
    );
    let two_d = Tensor::from_vec([1, 2], vec![4i32, 6]).unwrap();
    let e = err("Reshape", &[], &["[4,6]", "[2]"], &[None, Some(two_d)]);
    assert!(
        matches!(e.kind(), ShapeError::InvalidConstant { input: 1, .. }),
        "{e}"
    );
}

#[test]
fn transpose_shapes() {
    let perm = |v: &[i32]| vec![None, Some(i32s(v))];
    assert_eq!(
        out("Transpose", &[], &["[3,8]", "[2]"], &perm(&[1, 0])),
        "[8,3]"
    );
    assert_eq!(
        out("Transpose", &[], &["[2,3,4]", "[3]"], &perm(&[2, 0, 1])),
        "[4,2,3]"
    );
    assert_eq!(
        out("Transpose", &[], &["[2,?,4]", "[3]"], &perm(&[-1, -2, 0])),
        "[4,?,2]"
    );
    assert_eq!(out("Transpose", &[], &["[2,3,4]", "[3]"], &[]), "[?,?,?]");
    assert_eq!(out("Transpose", &[], &["?", "[3]"], &[]), "[?,?,?]");
    assert_eq!(
        out("Transpose", &[], &["?", "[?]"], &perm(&[1, 0])),
        "[?,?]"
    );
    assert_eq!(out("Transpose", &[], &["?", "?"], &[]), "?");
    assert_eq!(out("Transpose", &[], &["?", "[1]"], &[]), "?");
}

#[test]
fn transpose_errors() {
    let perm = |v: &[i32]| vec![None, Some(i32s(v))];
    let e = err("Transpose", &[], &["[3,8]", "[2]"], &perm(&[2, 0]));
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "perm dim",
            value: 2,
            min: -2,
            max: 2
        }
    );
    let e = err("Transpose", &[], &["[3,8]", "[2]"], &perm(&[1, 1]));
    assert_eq!(e.kind().to_string(), "1 is duplicated in perm");
    let e = err("Transpose", &[], &["[3,8]", "[3]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::DimValue {
            expected: 2,
            found: 3
        }
    );
    let e = err("Transpose", &[], &["[3,8]", "[?]"], &perm(&[1, 0, 2]));
    assert!(
        matches!(e.kind(), ShapeError::InvalidConstant { .. }),
        "{e}"
    );
}

// ---------------------------------------------------------------- slicing

#[test]
fn slice_shapes() {
    let c = |b: &[i32], s: &[i32]| vec![None, Some(i32s(b)), Some(i32s(s))];
    assert_eq!(
        out("Slice", &[], &["[3,5]", "[2]", "[2]"], &c(&[1, 1], &[2, 4])),
        "[2,4]"
    );
    assert_eq!(
        out(
            "Slice",
            &[],
            &["[3,5]", "[2]", "[2]"],
            &c(&[1, 2], &[-1, -1])
        ),
        "[2,3]"
    );
    assert_eq!(
        out(
            "Slice",
            &[],
            &["[3,?]", "[2]", "[2]"],
            &c(&[0, 2], &[1, -1])
        ),
        "[1,?]"
    );
    // Unknown begin: -1 sizes are unknown.
    let sizes_only = vec![None, None, Some(i32s(&[2, -1]))];
    assert_eq!(
        out("Slice", &[], &["[3,5]", "[2]", "[2]"], &sizes_only),
        "[2,?]"
    );
    // Unknown sizes: partial knowledge of them.
    let begin_only = vec![None, Some(i32s(&[0, 0])), None];
    assert_eq!(
        out("Slice", &[], &["[3,5]", "[2]", "[2]"], &begin_only),
        "[?,?]"
    );
    assert_eq!(out("Slice", &[], &["[3,5]", "[?]", "[?]"], &[]), "[?,?]");
    assert_eq!(out("Slice", &[], &["?", "[?]", "[?]"], &[]), "?");
    let int64 = vec![None, Some(i64s(&[1])), Some(i64s(&[-1]))];
    assert_eq!(
        out(
            "Slice",
            &[("Index", AttrValue::from(DataType::DtInt64))],
            &["[7]", "[1]", "[1]"],
            &int64
        ),
        "[6]"
    );
}

#[test]
fn slice_errors() {
    let c = |b: &[i32], s: &[i32]| vec![None, Some(i32s(b)), Some(i32s(s))];
    let e = err("Slice", &[], &["[3,5]", "[2]", "[2]"], &c(&[1, 1], &[3, 4]));
    assert_eq!(
        e.kind().to_string(),
        "Expected size[0] in [0, 2], but got 3"
    );
    let e = err(
        "Slice",
        &[],
        &["[3,5]", "[2]", "[2]"],
        &c(&[4, 0], &[-1, 1]),
    );
    assert_eq!(
        e.kind().to_string(),
        "Expected begin[0] in [0, 3], but got 4"
    );
    let e = err(
        "Slice",
        &[],
        &["[3,5]", "[2]", "[2]"],
        &c(&[0, 0], &[-2, 1]),
    );
    assert!(
        e.kind()
            .to_string()
            .contains("sizes vector cannot be < -1, but was -2"),
        "{e}"
    );
    let e = err("Slice", &[], &["[3,5]", "[3]", "[3]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 3,
            found: 2
        }
    );
    let e = err("Slice", &[], &["[3,5]", "[2]", "[3]"], &[]);
    assert!(matches!(e.kind(), ShapeError::ShapeMismatch { .. }), "{e}");
}

fn ss(
    input: &str,
    begin: Option<&[i32]>,
    end: Option<&[i32]>,
    strides: &[i32],
    masks: [i64; 5],
) -> Result<Vec<Shape>, ShapeError> {
    let names = [
        "begin_mask",
        "end_mask",
        "ellipsis_mask",
        "new_axis_mask",
        "shrink_axis_mask",
    ];
    let attrs: Vec<_> = names
        .iter()
        .zip(masks)
        .map(|(n, m)| (*n, AttrValue::from(m)))
        .collect();
    let attrs: Vec<_> = attrs
        .into_iter()
        .chain([("Index", AttrValue::from(DataType::DtInt32))])
        .collect();
    let spec = format!("[{}]", strides.len());
    run(
        "StridedSlice",
        &attrs,
        &[input, &spec, &spec, &spec],
        &[None, begin.map(i32s), end.map(i32s), Some(i32s(strides))],
    )
}

fn ss_out(
    input: &str,
    begin: Option<&[i32]>,
    end: Option<&[i32]>,
    strides: &[i32],
    masks: [i64; 5],
) -> String {
    ss(input, begin, end, strides, masks).unwrap_or_else(|e| panic!("{e}"))[0].to_string()
}

fn ss_err(
    input: &str,
    begin: Option<&[i32]>,
    end: Option<&[i32]>,
    strides: &[i32],
    masks: [i64; 5],
) -> String {
    ss(input, begin, end, strides, masks)
        .unwrap_err()
        .kind()
        .to_string()
}

#[test]
fn strided_slice_shapes() {
    let none = [0; 5];
    // x[2:8:2]
    assert_eq!(ss_out("[10]", Some(&[2]), Some(&[8]), &[2], none), "[3]");
    // x[::-1]
    assert_eq!(
        ss_out("[10]", Some(&[0]), Some(&[0]), &[-1], [1, 1, 0, 0, 0]),
        "[10]"
    );
    // x[8:2:-3]
    assert_eq!(ss_out("[10]", Some(&[8]), Some(&[2]), &[-3], none), "[2]");
    // x[-3:] clamps, x[5:100]
    assert_eq!(
        ss_out("[10]", Some(&[-3]), Some(&[0]), &[1], [0, 1, 0, 0, 0]),
        "[3]"
    );
    assert_eq!(ss_out("[10]", Some(&[5]), Some(&[100]), &[1], none), "[5]");
    // x[7:2] is empty
    assert_eq!(ss_out("[10]", Some(&[7]), Some(&[2]), &[1], none), "[0]");
    // x[1] (shrink), x[-1]
    assert_eq!(
        ss_out("[5,6]", Some(&[1]), Some(&[2]), &[1], [0, 0, 0, 0, 1]),
        "[6]"
    );
    assert_eq!(
        ss_out("[5,6]", Some(&[-1]), Some(&[0]), &[1], [0, 0, 0, 0, 1]),
        "[6]"
    );
    // x[:, 1:3] on [2,4,4,3] via begin_mask
    assert_eq!(
        ss_out(
            "[2,4,4,3]",
            Some(&[0, 1]),
            Some(&[0, 3]),
            &[1, 1],
            [1, 1, 0, 0, 0]
        ),
        "[2,2,4,3]"
    );
    // x[..., tf.newaxis, 1:3] on [2,3,4]
    assert_eq!(
        ss_out(
            "[2,3,4]",
            Some(&[0, 0, 1]),
            Some(&[0, 0, 3]),
            &[1, 1, 1],
            [0, 0, 1, 2, 0]
        ),
        "[2,3,1,2]"
    );
    // x[tf.newaxis, ..., 0] on [2,3,4]
    assert_eq!(
        ss_out(
            "[2,3,4]",
            Some(&[0, 0, 0]),
            Some(&[0, 0, 1]),
            &[1, 1, 1],
            [0, 0, 2, 1, 4]
        ),
        "[1,2,3]"
    );
    // x[1, ..., 2] on [5,6,7,8]: dense shrink of dims 0 and 3.
    assert_eq!(
        ss_out(
            "[5,6,7,8]",
            Some(&[1, 0, 2]),
            Some(&[2, 0, 3]),
            &[1, 1, 1],
            [0, 0, 2, 0, 5]
        ),
        "[6,7]"
    );
    // Unknown dims: shrinking one gives nothing, slicing it unknown.
    assert_eq!(
        ss_out(
            "[?,4]",
            Some(&[0, 1]),
            Some(&[1, 3]),
            &[1, 1],
            [0, 0, 0, 0, 1]
        ),
        "[2]"
    );
    assert_eq!(
        ss_out("[?,4]", Some(&[0, 1]), Some(&[1, 3]), &[1, 1], none),
        "[?,2]"
    );
    // Unknown begin/end: the masks still decide some dims.
    assert_eq!(ss_out("[5,6]", None, None, &[1, 1], [2, 2, 0, 0, 1]), "[6]");
    assert_eq!(
        ss_out("[5,6]", None, None, &[1, -1], [0, 0, 0, 0, 0]),
        "[?,?]"
    );
    assert_eq!(
        ss_out("[5,6]", None, None, &[1, -2], [2, 2, 0, 0, 0]),
        "[?,3]"
    );
    // x[tf.newaxis, :1] with begin unknown: the ellipsis keeps dimension 1.
    assert_eq!(
        ss_out("[5,6]", None, Some(&[1, 1]), &[1, 1], [0, 0, 0, 1, 0]),
        "[1,?,6]"
    );
    // Unknown strides or input rank: unknown.
    let attrs = [("Index", AttrValue::from(DataType::DtInt32))];
    assert_eq!(
        out("StridedSlice", &attrs, &["[5,6]", "[2]", "[2]", "[2]"], &[]),
        "?"
    );
    assert_eq!(
        out(
            "StridedSlice",
            &attrs,
            &["?", "[1]", "[1]", "[1]"],
            &[None, None, None, Some(i32s(&[1]))]
        ),
        "?"
    );
}

#[test]
fn strided_slice_errors() {
    assert_eq!(
        ss_err("[10]", Some(&[0]), Some(&[5]), &[0], [0; 5]),
        "strides[0] must be non-zero"
    );
    assert_eq!(
        ss_err("[5,6]", Some(&[7]), Some(&[8]), &[1], [0, 0, 0, 0, 1]),
        "slice index 7 of dimension 0 out of bounds."
    );
    assert_eq!(
        ss_err("[5,6]", Some(&[-6]), Some(&[0]), &[1], [0, 0, 0, 0, 1]),
        "slice index -1 of dimension 0 out of bounds."
    );
    assert_eq!(
        ss_err(
            "[5,6]",
            Some(&[0, 0]),
            Some(&[1, 1]),
            &[1, 1],
            [0, 0, 3, 0, 0]
        ),
        "Multiple ellipses in slice spec not allowed"
    );
    assert_eq!(
        ss_err("[5]", Some(&[0, 0]), Some(&[1, 1]), &[1, 1], [0; 5]),
        "Index out of range using input dim 1; input has only 1 dims"
    );
    assert_eq!(
        ss_err("[]", Some(&[0]), Some(&[1]), &[1], [0; 5]),
        "Attempting to slice scalar input."
    );
    assert_eq!(
        ss_err("[5]", Some(&[1]), Some(&[2]), &[-1], [0, 0, 0, 0, 1]),
        "only stride 1 allowed on non-range indexing."
    );
    // begin, end and strides of different lengths.
    let attrs = [("Index", AttrValue::from(DataType::DtInt32))];
    let e = err("StridedSlice", &attrs, &["[5,6]", "[2]", "[3]", "[2]"], &[]);
    assert!(matches!(e.kind(), ShapeError::ShapeMismatch { .. }), "{e}");
    let e = err(
        "StridedSlice",
        &attrs,
        &["[5,6]", "[2]", "[2]", "[2]"],
        &[
            None,
            Some(i32s(&[0])),
            Some(i32s(&[1, 1])),
            Some(i32s(&[1, 1])),
        ],
    );
    assert!(matches!(e.kind(), ShapeError::StridedSlice { .. }), "{e}");
    // The length of the spec unknown: TF gives up (unknown shape).
    let unknown_len = run(
        "StridedSlice",
        &attrs,
        &["[5,6]", "[?]", "[?]", "[?]"],
        &[None, None, None, Some(i32s(&[1, 1]))],
    );
    assert_eq!(unknown_len.unwrap(), [Shape::unknown()]);
    let e = err(
        "StridedSlice",
        &attrs,
        &["[5,6]", "[2,1]", "[2]", "[2]"],
        &[],
    );
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 1,
            found: 2
        }
    );
}

// ---------------------------------------------------------------- dims

#[test]
fn expand_dims_shapes() {
    let dim = |d: i32| vec![None, Some(scalar(d))];
    assert_eq!(out("ExpandDims", &[], &["[2,3]", "[]"], &dim(0)), "[1,2,3]");
    assert_eq!(out("ExpandDims", &[], &["[2,3]", "[]"], &dim(1)), "[2,1,3]");
    assert_eq!(out("ExpandDims", &[], &["[2,3]", "[]"], &dim(2)), "[2,3,1]");
    assert_eq!(
        out("ExpandDims", &[], &["[2,3]", "[]"], &dim(-1)),
        "[2,3,1]"
    );
    assert_eq!(
        out("ExpandDims", &[], &["[2,3]", "[]"], &dim(-3)),
        "[1,2,3]"
    );
    assert_eq!(
        out("ExpandDims", &[], &["[]", "[1]"], &[None, Some(i32s(&[0]))]),
        "[1]"
    );
    assert_eq!(out("ExpandDims", &[], &["[2,3]", "[]"], &[]), "?");
    assert_eq!(out("ExpandDims", &[], &["?", "[]"], &dim(0)), "?");
    let e = err("ExpandDims", &[], &["[2,3]", "[]"], &dim(3));
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "dim",
            value: 3,
            min: -3,
            max: 3
        }
    );
    let e = err("ExpandDims", &[], &["[2,3]", "[]"], &dim(-4));
    assert!(matches!(
        e.kind(),
        ShapeError::AxisOutOfRange { value: -4, .. }
    ));
    let e = err(
        "ExpandDims",
        &[],
        &["[2,3]", "[2]"],
        &[None, Some(i32s(&[0, 1]))],
    );
    assert!(
        matches!(e.kind(), ShapeError::InvalidConstant { input: 1, .. }),
        "{e}"
    );
}

#[test]
fn squeeze_shapes() {
    let dims = |d: &[i64]| vec![("squeeze_dims", AttrValue::from(d))];
    assert_eq!(out("Squeeze", &[], &["[1,2,1,3]"], &[]), "[2,3]");
    assert_eq!(out("Squeeze", &dims(&[0]), &["[1,2,1,3]"], &[]), "[2,1,3]");
    assert_eq!(out("Squeeze", &dims(&[-2]), &["[1,2,1,3]"], &[]), "[1,2,3]");
    assert_eq!(out("Squeeze", &dims(&[0, 2]), &["[1,2,1,3]"], &[]), "[2,3]");
    assert_eq!(out("Squeeze", &dims(&[1]), &["[2,?,3]"], &[]), "[2,3]");
    assert_eq!(out("Squeeze", &dims(&[0]), &["[1,?,3]"], &[]), "[?,3]");
    assert_eq!(out("Squeeze", &[], &["[1,?,3]"], &[]), "?");
    assert_eq!(out("Squeeze", &[], &["?"], &[]), "?");
    assert_eq!(out("Squeeze", &[], &["[1,1]"], &[]), "[]");
    let e = err("Squeeze", &dims(&[1]), &["[1,2,1,3]"], &[]);
    assert_eq!(e.kind(), &ShapeError::Squeeze { index: 1, size: 2 });
    assert!(
        e.to_string()
            .starts_with("Can not squeeze dim[1], expected a dimension of 1, got 2"),
        "{e}"
    );
    let e = err("Squeeze", &dims(&[4]), &["[1,2,1,3]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "squeeze_dims entry",
            value: 4,
            min: -4,
            max: 4
        }
    );
}

#[test]
fn tile_shapes() {
    let m = |v: &[i32]| vec![None, Some(i32s(v))];
    assert_eq!(out("Tile", &[], &["[2,3]", "[2]"], &m(&[2, 4])), "[4,12]");
    assert_eq!(out("Tile", &[], &["[5]", "[1]"], &m(&[3])), "[15]");
    assert_eq!(out("Tile", &[], &["[?,3]", "[2]"], &m(&[0, 1])), "[0,3]");
    assert_eq!(out("Tile", &[], &["[?,3]", "[2]"], &m(&[2, 1])), "[?,3]");
    assert_eq!(out("Tile", &[], &["[2,3]", "[2]"], &[]), "[?,?]");
    assert_eq!(out("Tile", &[], &["?", "[2]"], &m(&[2, 3])), "[?,?]");
    assert_eq!(out("Tile", &[], &["?", "[?]"], &[]), "?");
    let e = err("Tile", &[], &["[2,3]", "[3]"], &m(&[1, 2, 3]));
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 2,
            found: 3
        }
    );
    let e = err("Tile", &[], &["[2,3]", "[3]"], &[]);
    assert!(
        matches!(
            e.kind(),
            ShapeError::Rank { .. } | ShapeError::ShapeMismatch { .. }
        ),
        "{e}"
    );
}

#[test]
fn pad_shapes() {
    let p = |v: &[i32]| {
        vec![
            None,
            Some(Tensor::from_vec([v.len() / 2, 2], v.to_vec()).unwrap()),
        ]
    };
    assert_eq!(
        out("Pad", &[], &["[3,5]", "[2,2]"], &p(&[1, 0, 1, 2])),
        "[4,8]"
    );
    assert_eq!(
        out("Pad", &[], &["[?,5]", "[2,2]"], &p(&[1, 1, 0, 0])),
        "[?,5]"
    );
    assert_eq!(out("Pad", &[], &["?", "[2,2]"], &p(&[1, 1, 0, 0])), "[?,?]");
    let p64 = vec![None, Some(Tensor::from_vec([1, 2], vec![2i64, 3]).unwrap())];
    assert_eq!(
        out(
            "Pad",
            &[("Tpaddings", AttrValue::from(DataType::DtInt64))],
            &["[4]", "[1,2]"],
            &p64
        ),
        "[9]"
    );
    assert_eq!(out("Pad", &[], &["[3,5]", "[2,2]"], &[]), "[?,?]");
    assert_eq!(out("Pad", &[], &["[3,5]", "[?,2]"], &[]), "[?,?]");
    assert_eq!(out("Pad", &[], &["?", "[?,2]"], &[]), "?");
    let e = err("Pad", &[], &["[3,5]", "[2,2]"], &p(&[1, -1, 0, 0]));
    assert_eq!(
        e.kind(),
        &ShapeError::Negative {
            what: "Paddings",
            value: -1
        }
    );
    let e = err("Pad", &[], &["[3,5]", "[3,2]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 3,
            found: 2
        }
    );
    let e = err("Pad", &[], &["[3,5]", "[2,3]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::DimValue {
            expected: 2,
            found: 3
        }
    );
}

#[test]
fn one_hot_shapes() {
    let depth = |d: i32| vec![None, Some(scalar(d)), None, None];
    assert_eq!(
        out("OneHot", &[], &["[5]", "[]", "[]", "[]"], &depth(4)),
        "[5,4]"
    );
    assert_eq!(
        out(
            "OneHot",
            &[("axis", AttrValue::from(0))],
            &["[5]", "[]", "[]", "[]"],
            &depth(4)
        ),
        "[4,5]"
    );
    assert_eq!(
        out(
            "OneHot",
            &[("axis", AttrValue::from(1))],
            &["[2,3]", "[]", "[]", "[]"],
            &depth(4)
        ),
        "[2,4,3]"
    );
    assert_eq!(
        out("OneHot", &[], &["[2,?]", "[]", "[]", "[]"], &[]),
        "[2,?,?]"
    );
    assert_eq!(out("OneHot", &[], &["?", "[]", "[]", "[]"], &depth(4)), "?");
    let e = err(
        "OneHot",
        &[("axis", AttrValue::from(2))],
        &["[5]", "[]", "[]", "[]"],
        &depth(4),
    );
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "axis",
            value: 2,
            min: -2,
            max: 2
        }
    );
    let e = err(
        "OneHot",
        &[("axis", AttrValue::from(-2))],
        &["[5]", "[]", "[]", "[]"],
        &depth(4),
    );
    assert!(
        matches!(e.kind(), ShapeError::InvalidAttr { attr, .. } if attr == "axis"),
        "{e}"
    );
    let e = err("OneHot", &[], &["[5]", "[]", "[]", "[]"], &depth(-1));
    assert!(
        matches!(e.kind(), ShapeError::Negative { value: -1, .. }),
        "{e}"
    );
    let e = err("OneHot", &[], &["[5]", "[1]", "[]", "[]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 0,
            found: 1
        }
    );
    let e = err("OneHot", &[], &["[5]", "[]", "[2]", "[]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 0,
            found: 1
        }
    );
}

#[test]
fn gather_v2_shapes() {
    let axis = |a: i32| vec![None, None, Some(scalar(a))];
    assert_eq!(
        out("GatherV2", &[], &["[3,5]", "[5]", "[]"], &axis(1)),
        "[3,5]"
    );
    assert_eq!(
        out("GatherV2", &[], &["[3,5]", "[2,2]", "[]"], &axis(1)),
        "[3,2,2]"
    );
    assert_eq!(
        out("GatherV2", &[], &["[3,5]", "[2,2]", "[]"], &axis(0)),
        "[2,2,5]"
    );
    assert_eq!(
        out("GatherV2", &[], &["[3,5]", "[4]", "[]"], &axis(-1)),
        "[3,4]"
    );
    assert_eq!(
        out("GatherV2", &[], &["[3,5]", "[]", "[]"], &axis(0)),
        "[5]"
    );
    let b1 = [("batch_dims", AttrValue::from(1))];
    assert_eq!(
        out("GatherV2", &b1, &["[3,5,4]", "[3,2]", "[]"], &axis(1)),
        "[3,2,4]"
    );
    assert_eq!(
        out("GatherV2", &b1, &["[?,5,4]", "[3,2]", "[]"], &axis(1)),
        "[3,2,4]"
    );
    let bm1 = [("batch_dims", AttrValue::from(-1))];
    assert_eq!(
        out("GatherV2", &bm1, &["[3,5,4]", "[3,2]", "[]"], &axis(2)),
        "[3,5,2]"
    );
    // Unknown axis: only the rank.
    assert_eq!(
        out("GatherV2", &[], &["[3,5]", "[2,2]", "[]"], &[]),
        "[?,?,?]"
    );
    assert_eq!(
        out("GatherV2", &b1, &["[3,5,4]", "[3,2]", "[]"], &[]),
        "[?,?,?]"
    );
    assert_eq!(out("GatherV2", &[], &["?", "[2]", "[]"], &axis(0)), "?");
}

#[test]
fn gather_v2_errors() {
    let axis = |a: i32| vec![None, None, Some(scalar(a))];
    let e = err("GatherV2", &[], &["[3,5]", "[5]", "[]"], &axis(2));
    assert_eq!(
        e.kind(),
        &ShapeError::AxisOutOfRange {
            what: "axis",
            value: 2,
            min: -2,
            max: 2
        }
    );
    let e = err("GatherV2", &[], &["[]", "[5]", "[]"], &axis(0));
    assert_eq!(e.kind(), &ShapeError::RankAtLeast { min: 1, found: 0 });
    let b2 = [("batch_dims", AttrValue::from(2))];
    let e = err("GatherV2", &b2, &["[3,5,4]", "[3,5]", "[]"], &axis(1));
    assert_eq!(
        e.kind().to_string(),
        "batch_dims (2) must be less than or equal to axis (1)"
    );
    let e = err("GatherV2", &b2, &["[3,5,4]", "[3]", "[]"], &axis(2));
    assert!(
        matches!(
            e.kind(),
            ShapeError::AxisOutOfRange {
                what: "batch_dims",
                ..
            }
        ),
        "{e}"
    );
    let b1 = [("batch_dims", AttrValue::from(1))];
    let e = err("GatherV2", &b1, &["[3,5,4]", "[4,2]", "[]"], &axis(1));
    assert!(matches!(e.kind(), ShapeError::ShapeMismatch { .. }), "{e}");
    let e = err("GatherV2", &[], &["[3,5]", "[5]", "[1]"], &[]);
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 0,
            found: 1
        }
    );
}

// ---------------------------------------------------------------- nn

#[test]
fn fused_batch_norm_v3_shapes() {
    let inference = [("is_training", AttrValue::from(false))];
    let outs = run(
        "FusedBatchNormV3",
        &inference,
        &["[2,4,4,?]", "[3]", "[?]", "[3]", "[3]"],
        &[],
    )
    .unwrap();
    let text: Vec<String> = outs.iter().map(Shape::to_string).collect();
    assert_eq!(text, ["[2,4,4,3]", "[3]", "[3]", "[3]", "[3]", "?"]);
    // Training (exponential_avg_factor 1): mean and variance are not read.
    let outs = run(
        "FusedBatchNormV3",
        &[],
        &["[2,4,4,3]", "[3]", "[3]", "[0]", "[0]"],
        &[],
    )
    .unwrap();
    assert_eq!(outs[0], sh("[2,4,4,3]"));
    assert_eq!(outs[4], sh("[3]"));
    // NCHW: channels are dimension 1; 5-D formats.
    let nchw = [("data_format", AttrValue::from("NCHW"))];
    let outs = run(
        "FusedBatchNormV3",
        &nchw,
        &["[2,3,4,4]", "[?]", "[?]", "[?]", "[?]"],
        &[],
    )
    .unwrap();
    assert_eq!(
        (outs[0].to_string(), outs[1].to_string()),
        ("[2,3,4,4]".into(), "[3]".into())
    );
    let ndhwc = [("data_format", AttrValue::from("NDHWC"))];
    let outs = run(
        "FusedBatchNormV3",
        &ndhwc,
        &["[2,4,4,4,?]", "[5]", "[5]", "[5]", "[5]"],
        &[],
    )
    .unwrap();
    assert_eq!(outs[0], sh("[2,4,4,4,5]"));
    let ncdhw = [("data_format", AttrValue::from("NCDHW"))];
    let outs = run(
        "FusedBatchNormV3",
        &ncdhw,
        &["[2,?,4,4,4]", "[5]", "[5]", "[5]", "[5]"],
        &[],
    )
    .unwrap();
    assert_eq!(outs[0], sh("[2,5,4,4,4]"));
    let chwn = [("data_format", AttrValue::from("CHWN"))];
    let e = err(
        "FusedBatchNormV3",
        &chwn,
        &["[2,3,4,4]", "[3]", "[3]", "[3]", "[3]"],
        &[],
    );
    assert!(
        e.to_string().contains("Invalid data format string: CHWN"),
        "{e}"
    );
    let outs = run("FusedBatchNormV3", &[], &["?", "?", "?", "?", "?"], &[]).unwrap();
    assert_eq!(outs[0], sh("[?,?,?,?]"));
    assert_eq!(outs[1], sh("[?]"));

    let e = err(
        "FusedBatchNormV3",
        &inference,
        &["[2,4,4,3]", "[3]", "[3]", "[4]", "[3]"],
        &[],
    );
    assert_eq!(e.kind(), &ShapeError::DimMismatch { a: 3, b: 4 });
    assert_eq!(e.input().unwrap().arg, "mean");
    let e = err(
        "FusedBatchNormV3",
        &[],
        &["[2,4,3]", "[3]", "[3]", "[3]", "[3]"],
        &[],
    );
    assert_eq!(
        e.kind(),
        &ShapeError::Rank {
            expected: 4,
            found: 3
        }
    );
    let avg = [("exponential_avg_factor", AttrValue::from(0.5))];
    let e = err(
        "FusedBatchNormV3",
        &avg,
        &["[2,4,4,3]", "[3]", "[3]", "[0]", "[3]"],
        &[],
    );
    assert_eq!(e.kind(), &ShapeError::DimMismatch { a: 3, b: 0 });
}

// ---------------------------------------------------------------- select

#[test]
fn select_shapes() {
    assert_eq!(
        out("Select", &[], &["[3,5]", "[3,5]", "[3,5]"], &[]),
        "[3,5]"
    );
    assert_eq!(out("Select", &[], &["[3]", "[3,5]", "[?,5]"], &[]), "[3,5]");
    assert_eq!(out("Select", &[], &["[]", "[3,?]", "[?,5]"], &[]), "[3,5]");
    assert_eq!(out("Select", &[], &["?", "[3,5]", "?"], &[]), "[3,5]");
    assert_eq!(
        out("Select", &[], &["[?,?]", "[3,5]", "[3,5]"], &[]),
        "[3,5]"
    );
    let e = err("Select", &[], &["[4]", "[3,5]", "[3,5]"], &[]);
    assert!(matches!(e.kind(), ShapeError::ShapeMismatch { .. }), "{e}");
    assert_eq!(e.input().unwrap().arg, "condition");
    let e = err("Select", &[], &["[3,4]", "[3,5]", "[3,5]"], &[]);
    assert!(
        matches!(e.kind(), ShapeError::ShapeMismatch { index: 1, .. }),
        "{e}"
    );
    let e = err("Select", &[], &["[3,5]", "[3,5]", "[3,4]"], &[]);
    assert_eq!(e.input().unwrap().arg, "e");
    let e = err("Select", &[], &["[2]", "[]", "[]"], &[]);
    assert_eq!(e.kind(), &ShapeError::RankMismatch { a: 0, b: 1 });
}

#[test]
fn select_v2_broadcasts_three() {
    assert_eq!(
        out("SelectV2", &[], &["[3,1]", "[1,5]", "[]"], &[]),
        "[3,5]"
    );
    assert_eq!(out("SelectV2", &[], &["[]", "[3,5]", "[5]"], &[]), "[3,5]");
    assert_eq!(
        out("SelectV2", &[], &["[2,1,1]", "[4,1]", "[5]"], &[]),
        "[2,4,5]"
    );
    assert_eq!(out("SelectV2", &[], &["?", "[3,5]", "[5]"], &[]), "?");
    let e = err("SelectV2", &[], &["[4]", "[3,5]", "[5]"], &[]);
    assert!(
        matches!(e.kind(), ShapeError::Broadcast { a: 4, b: 5, .. }),
        "{e}"
    );
}

// ---------------------------------------------------------------- const, placeholder

#[test]
fn const_and_placeholder() {
    let t = Tensor::from_vec([2, 3], vec![0f32; 6]).unwrap();
    let attrs = [
        ("value", AttrValue::from(t.to_proto())),
        ("dtype", AttrValue::from(DataType::DtFloat)),
    ];
    assert_eq!(out("Const", &attrs, &[], &[]), "[2,3]");
    let s = Tensor::scalar(1.5f64);
    assert_eq!(
        out(
            "Const",
            &[("value", AttrValue::from(s.to_proto()))],
            &[],
            &[]
        ),
        "[]"
    );
    let no_shape = AttrValue::from(TensorProto {
        dtype: DataType::DtInt32 as i32,
        int_val: vec![3],
        ..Default::default()
    });
    assert_eq!(out("Const", &[("value", no_shape)], &[], &[]), "[]");
    let partial = AttrValue::from(TensorProto {
        dtype: DataType::DtInt32 as i32,
        tensor_shape: Some(sh("[2,?]").to_proto()),
        ..Default::default()
    });
    let e = err("Const", &[("value", partial)], &[], &[]);
    assert!(
        matches!(e.kind(), ShapeError::InvalidAttr { attr, .. } if attr == "value"),
        "{e}"
    );
    let e = err("Const", &[], &[], &[]);
    assert!(
        matches!(e.kind(), ShapeError::MissingAttr { attr } if attr == "value"),
        "{e}"
    );
    let e = err("Const", &[("value", AttrValue::from(3))], &[], &[]);
    assert!(
        matches!(
            e.kind(),
            ShapeError::AttrKind {
                expected: "tensor",
                found: "int",
                ..
            }
        ),
        "{e}"
    );

    let p = |s: &str| {
        out(
            "Placeholder",
            &[("shape", AttrValue::from(sh(s).to_proto()))],
            &[],
            &[],
        )
    };
    assert_eq!(p("[?,16]"), "[?,16]");
    assert_eq!(p("[]"), "[]");
    assert_eq!(p("?"), "?");
    // The default shape attr has unknown rank.
    assert_eq!(
        out(
            "Placeholder",
            &[("dtype", AttrValue::from(DataType::DtFloat))],
            &[],
            &[]
        ),
        "?"
    );
}

// ---------------------------------------------------------------- every op

use opreg_standard_ops::NAMES as STANDARD_OPS;

#[test]
fn every_standard_op_has_a_shape_function() {
    let registry = OpRegistry::global();
    for name in STANDARD_OPS {
        let op = registry.look_up(name).unwrap_or_else(|e| panic!("{e}"));
        assert!(op.shape_fn().is_some(), "{name} has no shape function");
    }
}

/// Every standard op's shape function, on inputs of unknown shape and no
/// constants, returns one shape per output and never fails (but where TF's
/// own needs a known input: the block shape's size of SpaceToBatchND and
/// BatchToSpaceND).
#[test]
fn every_standard_op_accepts_unknown_inputs() {
    let registry = OpRegistry::global();
    for name in STANDARD_OPS {
        let op = registry.look_up(name).unwrap();
        let mut attrs: Vec<(&str, AttrValue)> = vec![("N", AttrValue::from(2))];
        match name {
            "Conv2D" => attrs.extend(conv_attrs(&[1, 1, 1, 1], "SAME")),
            "MaxPool" => {
                attrs.extend(conv_attrs(&[1, 1, 1, 1], "SAME"));
                attrs.push(("ksize", AttrValue::from([1, 2, 2, 1])));
            }
            "Const" => attrs.push(("value", AttrValue::from(scalar(1).to_proto()))),
            _ => {}
        }
        let mut attrs: Vec<_> = attrs
            .into_iter()
            .filter(|(k, _)| op.op_def().attr.iter().any(|a| a.name == *k))
            .collect();
        // Other count and type-list attrs without a default (`num_split`,
        // IdentityN's `T`): two of them.
        for attr in &op.op_def().attr {
            if attr.default_value.is_some() || attrs.iter().any(|(k, _)| *k == attr.name) {
                continue;
            }
            // Windows (`ksize`, `strides`) of ones, 5 values for the 3-D
            // ops; the first allowed string (`padding`, `mode`), or an
            // equation of two inputs.
            let allowed_string = || {
                attr.allowed_values
                    .as_ref()
                    .and_then(|v| v.value.as_ref())
                    .and_then(|v| match v {
                        registry_core::proto::attr_value::Value::List(l) => l.s.first().cloned(),
                        _ => None,
                    })
            };
            match attr.r#type.as_str() {
                "int" => attrs.push((&attr.name, AttrValue::from(2))),
                "list(type)" => attrs.push((&attr.name, AttrValue::from([DataType::DtFloat; 2]))),
                "list(int)" if name.ends_with("3D") => {
                    attrs.push((&attr.name, AttrValue::from([1i64; 5])))
                }
                "list(int)" => attrs.push((&attr.name, AttrValue::from([1i64; 4]))),
                "string" if attr.name == "equation" => {
                    attrs.push((&attr.name, AttrValue::from("ij,jk->ik")))
                }
                "string" => {
                    if let Some(first) = allowed_string() {
                        let text = String::from_utf8_lossy(&first).into_owned();
                        attrs.push((&attr.name, AttrValue::from(text.as_str())));
                    }
                }
                _ => {}
            }
        }
        let n = node(name, 0, &attrs);
        let (inputs, outputs) =
            registry_core::node_def::name_ranges_for_node(&n, op.op_def()).unwrap();
        let num_inputs = inputs.values().map(|r| r.end).max().unwrap_or(0);
        let num_outputs = outputs.values().map(|r| r.end).max().unwrap_or(0);
        let mut shapes = vec![Shape::unknown(); num_inputs];
        if matches!(name, "SpaceToBatchND" | "BatchToSpaceND") {
            // TF's `SpaceToBatchShapeHelper` fails unless `block_shape` is
            // a vector of known size (the test data holds TF's error).
            shapes[1] = Shape::new([Dim::new(2)]);
        }
        let out = op
            .infer_shapes(&n, &shapes, &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.len(), num_outputs, "{name}");
    }
}

// ---------------------------------------------------------------- robustness

/// A run-time registered op with a shape function written against the
/// context's API.
#[test]
fn runtime_registered_op_with_shape_fn() {
    fn same_shape(ctx: &mut InferenceContext) -> Result<(), ShapeError> {
        for i in 0..ctx.num_outputs() {
            let s = ctx.input(i)?.clone();
            ctx.set_output(i, s)?;
        }
        Ok(())
    }
    let registry = OpRegistry::new();
    let spec = OpSpec::new("Square")
        .input("x: T")
        .output("y: T")
        .attr("T: {float, int32}");
    registry.register(spec, Some(same_shape)).unwrap();
    let data = registry.look_up("Square").unwrap();
    let shape_fn = data.shape_fn().unwrap();
    let node = NodeDef {
        name: "sq".into(),
        op: "Square".into(),
        ..Default::default()
    };
    let inputs = [Shape::from([2])];
    let mut ctx = InferenceContext::new(&node, data.op_def(), &inputs, &[]).unwrap();
    ctx.run(shape_fn).unwrap();
    assert_eq!(ctx.into_outputs().unwrap(), inputs);
}

/// A small deterministic generator (xorshift) for the robustness test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

const EXTREMES: [i64; 14] = [
    i64::MIN,
    -(1 << 40),
    -5,
    -2,
    -1,
    0,
    1,
    2,
    3,
    4,
    31,
    64,
    1 << 62,
    i64::MAX,
];

fn random_shape(rng: &mut Rng) -> Shape {
    if rng.below(6) == 0 {
        return Shape::unknown();
    }
    let rank = rng.below(6);
    Shape::new((0..rank).map(|_| match rng.below(8) {
        0 => Dim::UNKNOWN,
        1 => Dim::new(0),
        2 => Dim::new(1),
        3 => Dim::new(i64::MAX),
        _ => Dim::new(rng.below(6) as i64 + 1),
    }))
}

fn random_ints(rng: &mut Rng) -> Vec<i64> {
    let len = rng.below(7);
    (0..len)
        .map(|_| {
            if rng.below(3) == 0 {
                rng.pick(&EXTREMES)
            } else {
                rng.below(5) as i64 - 1
            }
        })
        .collect()
}

fn random_tensor(rng: &mut Rng) -> Tensor {
    let values = random_ints(rng);
    let n = values.len();
    let dims: Vec<usize> = match rng.below(4) {
        0 if n == 1 => vec![],
        1 if n.is_multiple_of(2) => vec![n / 2, 2],
        _ => vec![n],
    };
    match rng.below(4) {
        0 => Tensor::from_vec(dims, values).unwrap(),
        1 => Tensor::from_vec(dims, values.iter().map(|&v| v as f32).collect::<Vec<_>>()).unwrap(),
        _ => Tensor::from_vec(dims, values.iter().map(|&v| v as i32).collect::<Vec<_>>()).unwrap(),
    }
}

fn random_attr(rng: &mut Rng) -> AttrValue {
    let strings = [
        "NHWC",
        "NCHW",
        "NCHW_VECT_C",
        "NDHWC",
        "SAME",
        "VALID",
        "EXPLICIT",
        "x",
    ];
    match rng.below(9) {
        0 => AttrValue::from(rng.pick(&EXTREMES)),
        1 => AttrValue::from(rng.below(8) as i64 - 1),
        2 => AttrValue::from(rng.below(2) == 0),
        3 => AttrValue::from(rng.pick(&[0.0, 1.0, 0.5, f32::NAN])),
        4 | 5 => AttrValue::from(rng.pick(&strings)),
        6 => AttrValue::from(random_ints(rng)),
        7 => AttrValue::from(random_shape(rng).to_proto()),
        _ => AttrValue::from(random_tensor(rng).to_proto()),
    }
}

/// Shape functions never panic, whatever the attrs, input shapes and
/// constant values (malformed, extreme, of the wrong kind): they return a
/// shape or an error.
#[test]
fn shape_functions_never_panic() {
    let registry = OpRegistry::global();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut outcomes = [0usize; 2];
    for name in STANDARD_OPS {
        let op = registry.look_up(name).unwrap();
        for case in 0..1500 {
            let mut attrs: Vec<(String, AttrValue)> = Vec::new();
            for def in &op.op_def().attr {
                match (def.name.as_str(), rng.below(3)) {
                    ("N", _) => attrs.push(("N".into(), AttrValue::from(rng.below(4) as i64 + 1))),
                    (_, 0) => {} // the default, if any
                    (name, _) => attrs.push((name.into(), random_attr(&mut rng))),
                }
            }
            let attrs: Vec<(&str, AttrValue)> =
                attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let n = node(name, 0, &attrs);
            let Ok((inputs, _)) = registry_core::node_def::name_ranges_for_node(&n, op.op_def())
            else {
                continue;
            };
            let count = inputs.values().map(|r| r.end).max().unwrap_or(0);
            let shapes: Vec<Shape> = (0..count).map(|_| random_shape(&mut rng)).collect();
            let tensors: Vec<Option<Tensor>> = (0..count)
                .map(|_| (rng.below(2) == 0).then(|| random_tensor(&mut rng)))
                .collect();
            let constants: Vec<Option<&Tensor>> = tensors.iter().map(Option::as_ref).collect();
            let result = std::panic::catch_unwind(|| op.infer_shapes(&n, &shapes, &constants));
            match result {
                Ok(r) => outcomes[usize::from(r.is_ok())] += 1,
                Err(_) => panic!(
                    "{name} case {case} panicked: attrs {attrs:?}, shapes {shapes:?}, constants {tensors:?}"
                ),
            }
        }
    }
    // Both outcomes occur plenty.
    assert!(outcomes[0] > 1000 && outcomes[1] > 1000, "{outcomes:?}");
}
