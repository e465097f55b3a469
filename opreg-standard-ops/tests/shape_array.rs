//! Shape functions of the array ops added to the standard set (identities,
//! shapes, fills, ranges, broadcasts, splits, gathers, top-k, ...), with
//! partial shapes, constant inputs and errors. Every expected shape and
//! message here is what TensorFlow 2.21's shape inference gave for the same
//! node (a graph-mode `tf.raw_ops` call with placeholders and constants).

use registry_core::OpRegistry;
use registry_core::proto::{AttrValue, DataType, NodeDef};
use registry_core::shape::{Dim, Shape, ShapeError};
use registry_core::tensor::{Tensor, TensorElement, bf16, f16};

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

fn vec_t<T: TensorElement>(v: &[T]) -> Option<Tensor> {
    Some(Tensor::from_slice([v.len()], v).unwrap())
}

fn scalar_t<T: TensorElement>(v: T) -> Option<Tensor> {
    Some(Tensor::scalar(v))
}

/// Runs the registered shape function of `op` on a node with `attrs` and
/// inputs of shapes `inputs` (TF's notation) and values `constants`.
fn run(
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: &[&str],
    constants: &[Option<Tensor>],
) -> Result<Vec<String>, ShapeError> {
    opreg_standard_ops::link();
    let data = OpRegistry::global().look_up(op).unwrap();
    let node = node(op, inputs.len(), attrs);
    let shapes: Vec<Shape> = inputs.iter().map(|s| sh(s)).collect();
    let constants: Vec<Option<&Tensor>> = constants.iter().map(Option::as_ref).collect();
    data.infer_shapes(&node, &shapes, &constants)
        .map(|out| out.iter().map(ToString::to_string).collect())
}

/// The single output of `op`, as text.
fn out(
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: &[&str],
    constants: &[Option<Tensor>],
) -> String {
    let shapes =
        run(op, attrs, inputs, constants).unwrap_or_else(|e| panic!("{op} {inputs:?}: {e}"));
    assert_eq!(shapes.len(), 1, "{op}: {shapes:?}");
    shapes[0].clone()
}

/// The error of `op`, placed in its node; returns its message (the plain
/// error's).
fn err(
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: &[&str],
    constants: &[Option<Tensor>],
) -> String {
    match run(op, attrs, inputs, constants) {
        Ok(shapes) => panic!("{op} {inputs:?}: expected an error, got {shapes:?}"),
        Err(e) => {
            assert_eq!(e.node(), Some(op.to_lowercase().as_str()), "{e}");
            e.kind().to_string()
        }
    }
}

fn types(list: &[DataType]) -> AttrValue {
    AttrValue::from(list.to_vec())
}

// ---------------------------------------------------------------- identities

#[test]
fn identities_keep_their_input_shapes() {
    for op in [
        "StopGradient",
        "PreventGradient",
        "Snapshot",
        "ZerosLike",
        "OnesLike",
    ] {
        assert_eq!(out(op, &[], &["[1,?]"], &[]), "[1,?]", "{op}");
        assert_eq!(out(op, &[], &["?"], &[]), "?", "{op}");
    }
    let message = [("message", AttrValue::from("no gradient"))];
    assert_eq!(out("PreventGradient", &message, &["[3]"], &[]), "[3]");
    let t = [(
        "T",
        types(&[DataType::DtFloat, DataType::DtInt32, DataType::DtString]),
    )];
    assert_eq!(
        run("IdentityN", &t, &["[2,?]", "?", "[]"], &[]).unwrap(),
        ["[2,?]", "?", "[]"]
    );
}

// ---------------------------------------------------------------- Shape, ShapeN, Size, Rank

#[test]
fn shape_n_size_and_rank() {
    let n = [("N", AttrValue::from(3))];
    assert_eq!(
        run("ShapeN", &n, &["[2,?]", "?", "[]"], &[]).unwrap(),
        ["[2]", "[?]", "[0]"]
    );
    let out_type = [("out_type", AttrValue::from(DataType::DtInt64))];
    assert_eq!(out("Size", &out_type, &["[2,?]"], &[]), "[]");
    assert_eq!(out("Size", &[], &["?"], &[]), "[]");
    assert_eq!(out("Rank", &[], &["?"], &[]), "[]");
}

// ---------------------------------------------------------------- Fill

#[test]
fn fill_shapes() {
    assert_eq!(
        out("Fill", &[], &["[2]", "[]"], &[vec_t(&[2i32, 3]), None]),
        "[2,3]"
    );
    assert_eq!(
        out("Fill", &[], &["[0]", "[]"], &[vec_t::<i32>(&[]), None]),
        "[]"
    );
    assert_eq!(out("Fill", &[], &["[3]", "[]"], &[]), "[?,?,?]");
    assert_eq!(out("Fill", &[], &["[3]", "?"], &[]), "[?,?,?]");
    assert_eq!(out("Fill", &[], &["[?]", "[]"], &[]), "?");
    assert_eq!(out("Fill", &[], &["?", "[]"], &[]), "?");
    let i64_index = [("index_type", AttrValue::from(DataType::DtInt64))];
    assert_eq!(
        out(
            "Fill",
            &i64_index,
            &["[2]", "[]"],
            &[vec_t(&[4i64, 0]), None]
        ),
        "[4,0]"
    );
}

#[test]
fn fill_errors() {
    assert_eq!(
        err("Fill", &[], &["[2]", "[]"], &[vec_t(&[2i32, -1]), None]),
        "Fill dimensions must be >= 0"
    );
    let i64_index = [("index_type", AttrValue::from(DataType::DtInt64))];
    assert_eq!(
        err(
            "Fill",
            &i64_index,
            &["[2]", "[]"],
            &[vec_t(&[2i64, -1]), None]
        ),
        "Fill dimensions must be >= 0"
    );
    // Below -1, TF refuses the value as a shape before its own check.
    assert_eq!(
        err("Fill", &[], &["[2]", "[]"], &[vec_t(&[2i32, -3]), None]),
        "Dimension 1 must be >= -1, but is -3"
    );
    assert_eq!(
        err("Fill", &[], &["[2,2]", "[]"], &[]),
        "Shape must be rank 1 but is rank 2"
    );
    assert_eq!(
        err("Fill", &[], &["[]", "[]"], &[]),
        "Shape must be rank 1 but is rank 0"
    );
    assert_eq!(
        err("Fill", &[], &["[2]", "[1]"], &[]),
        "Shape must be rank 0 but is rank 1"
    );
}

// ---------------------------------------------------------------- BroadcastTo

#[test]
fn broadcast_to_shapes() {
    let to = |v: &[i32]| vec![None, vec_t(v)];
    assert_eq!(
        out("BroadcastTo", &[], &["[2,1]", "[3]"], &to(&[3, 2, 4])),
        "[3,2,4]"
    );
    assert_eq!(
        out("BroadcastTo", &[], &["[]", "[2]"], &to(&[2, 3])),
        "[2,3]"
    );
    assert_eq!(
        out("BroadcastTo", &[], &["?", "[2]"], &to(&[3, -1])),
        "[3,?]"
    );
    assert_eq!(
        out("BroadcastTo", &[], &["[2,3]", "[2]"], &to(&[-1, 3])),
        "[2,3]"
    );
    assert_eq!(
        out("BroadcastTo", &[], &["[4,1]", "[2]"], &to(&[-1, -1])),
        "[4,?]"
    );
    assert_eq!(
        out("BroadcastTo", &[], &["[?]", "[2]"], &to(&[2, 5])),
        "[2,5]"
    );
    // A dimension of 0 is left to the kernel.
    assert_eq!(out("BroadcastTo", &[], &["[0]", "[1]"], &to(&[5])), "[5]");
    // Unknown values: the input's dimensions above 1 fill in.
    assert_eq!(out("BroadcastTo", &[], &["[?,3]", "[2]"], &[]), "[?,3]");
    assert_eq!(out("BroadcastTo", &[], &["[1,3]", "[3]"], &[]), "[?,?,3]");
    assert_eq!(out("BroadcastTo", &[], &["[2,3]", "?"], &[]), "?");
    assert_eq!(out("BroadcastTo", &[], &["[4,1]", "[?]"], &[]), "?");
}

#[test]
fn broadcast_to_errors() {
    let to = |v: &[i32]| vec![None, vec_t(v)];
    assert_eq!(
        err("BroadcastTo", &[], &["[3]", "[1]"], &to(&[6])),
        "Dimensions must be equal, but are 3 and 6"
    );
    assert_eq!(
        err("BroadcastTo", &[], &["[2]", "[1]"], &to(&[0])),
        "Dimensions must be equal, but are 2 and 0"
    );
    assert_eq!(
        err("BroadcastTo", &[], &["[2,3]", "[1]"], &to(&[3])),
        "Shape must be at most rank 1 but is rank 2"
    );
    assert_eq!(
        err("BroadcastTo", &[], &["[4,1]", "[1]"], &[]),
        "Shape must be at most rank 1 but is rank 2"
    );
    assert_eq!(
        err("BroadcastTo", &[], &["[2,3]", "[2]"], &to(&[-2, 3])),
        "Dimension 0 must be >= -1, but is -2"
    );
    assert_eq!(
        err("BroadcastTo", &[], &["[2,3]", "[2,2]"], &[]),
        "Shape must be rank 1 but is rank 2"
    );
}

// ---------------------------------------------------------------- Range

fn tidx(dtype: DataType) -> [(&'static str, AttrValue); 1] {
    [("Tidx", AttrValue::from(dtype))]
}

fn range_out<T: TensorElement>(dtype: DataType, s: T, l: T, d: T) -> String {
    let c = [scalar_t(s), scalar_t(l), scalar_t(d)];
    out("Range", &tidx(dtype), &["[]", "[]", "[]"], &c)
}

fn range_err<T: TensorElement>(dtype: DataType, s: T, l: T, d: T) -> String {
    let c = [scalar_t(s), scalar_t(l), scalar_t(d)];
    err("Range", &tidx(dtype), &["[]", "[]", "[]"], &c)
}

#[test]
fn range_shapes() {
    use DataType::*;
    assert_eq!(range_out(DtInt32, 1i32, 10, 3), "[3]");
    assert_eq!(range_out(DtInt8, -100i8, 100, 1), "[200]");
    assert_eq!(range_out(DtInt16, 1i16, 10, 3), "[3]");
    assert_eq!(range_out(DtInt32, i32::MIN, i32::MAX, 1), "[4294967295]");
    assert_eq!(range_out(DtInt32, 3i32, -5, -3), "[3]");
    assert_eq!(range_out(DtInt64, 1i64, 10, 3), "[3]");
    assert_eq!(range_out(DtUint16, 1u16, 10, 3), "[3]");
    assert_eq!(range_out(DtUint32, 0u32, u32::MAX, 7), "[613566757]");
    assert_eq!(range_out(DtUint64, 0u64, u64::MAX, 1 << 62), "[4]");
    assert_eq!(range_out(DtFloat, 0.1f32, 1.000_000_1, 0.3), "[4]");
    assert_eq!(range_out(DtFloat, 3.0f32, 1.0, -0.5), "[4]");
    assert_eq!(range_out(DtDouble, 1.0f64, 10.0, 3.0), "[3]");
    let b = bf16::from_f32;
    assert_eq!(range_out(DtBfloat16, b(1.0), b(10.0), b(3.0)), "[3]");
    // TF casts a NaN size to a negative dimension: unknown here.
    assert_eq!(range_out(DtFloat, 0.0f32, f32::NAN, 1.0), "[?]");
    // Unknown values.
    let c = [scalar_t(1i32), None, scalar_t(1i32)];
    assert_eq!(out("Range", &[], &["[]", "?", "[]"], &c), "[?]");
    let h = tidx(DtHalf);
    assert_eq!(out("Range", &h, &["[]", "[]", "[]"], &[]), "[?]");
}

#[test]
fn range_errors() {
    use DataType::*;
    assert_eq!(
        range_err(DtInt32, 5i32, 1, 1),
        "Requires start <= limit when delta > 0: 5/1"
    );
    assert_eq!(
        range_err(DtFloat, 3.0f32, 1.0, 0.5),
        "Requires start <= limit when delta > 0: 3/1"
    );
    assert_eq!(
        range_err(DtInt64, 1i64, 3, -1),
        "Requires start >= limit when delta < 0: 1/3"
    );
    assert_eq!(range_err(DtInt32, 1i32, 3, 0), "Requires delta != 0");
    assert_eq!(range_err(DtDouble, 1.0f64, 1.0, 0.0), "Requires delta != 0");
    assert_eq!(
        range_err(DtUint64, u64::MAX, 0, 1),
        "Requires start <= limit when delta > 0: 18446744073709551615/0"
    );
    assert_eq!(
        range_err(DtUint64, 0u64, u64::MAX, 1),
        "Requires ((limit - start) / delta) <= 9223372036854775807"
    );
    assert_eq!(
        range_err(DtFloat, 0.0f32, 1e20, 1e-10),
        "Requires ((limit - start) / delta) <= 9223372036854775807"
    );
    let b = bf16::from_f32;
    assert_eq!(
        range_err(DtBfloat16, b(1.5), b(0.1), b(1.0)),
        "Requires start <= limit when delta > 0: 1.5/0.100098"
    );
    assert_eq!(
        range_err(DtDouble, 1e-7f64, 0.0, 1.0),
        "Requires start <= limit when delta > 0: 1e-07/0"
    );
    // TF's shape function has no case for half (its kernel has).
    let h = f16::from_f32;
    assert_eq!(
        range_err(DtHalf, h(1.0), h(10.0), h(3.0)),
        "Unsupported dtype19"
    );
    // Scalars only.
    let c = [None, scalar_t(1.0f32), scalar_t(0.5f32)];
    assert_eq!(
        err("Range", &tidx(DtFloat), &["[2]", "[]", "[]"], &c),
        "Shape must be rank 0 but is rank 1"
    );
    assert_eq!(
        err("Range", &tidx(DtFloat), &["[]", "[]", "[1,1]"], &[]),
        "Shape must be rank 0 but is rank 2"
    );
}
