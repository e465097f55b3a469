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
fn shape_shape_n_size_and_rank() {
    let n = [("N", AttrValue::from(3))];
    assert_eq!(
        run("ShapeN", &n, &["[2,?]", "?", "[]"], &[]).unwrap(),
        ["[2]", "[?]", "[0]"]
    );
    let out_type = [("out_type", AttrValue::from(DataType::DtInt64))];
    assert_eq!(out("Shape", &[], &["[2,?]"], &[]), "[2]");
    assert_eq!(out("Shape", &out_type, &["?"], &[]), "[?]");
    assert_eq!(out("Shape", &[], &["[]"], &[]), "[0]");
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

// ---------------------------------------------------------------- Split, SplitV, Unpack

fn num_split(n: i64) -> [(&'static str, AttrValue); 1] {
    [("num_split", AttrValue::from(n))]
}

fn split_out(n: i64, value: &str, split_dim: Option<Tensor>) -> Vec<String> {
    run("Split", &num_split(n), &["[]", value], &[split_dim, None])
        .unwrap_or_else(|e| panic!("Split {value}: {e}"))
}

fn split_err(n: i64, value: &str, dim_shape: &str, split_dim: Option<Tensor>) -> String {
    err(
        "Split",
        &num_split(n),
        &[dim_shape, value],
        &[split_dim, None],
    )
}

#[test]
fn split_shapes_and_errors() {
    assert_eq!(split_out(3, "[2,6,3]", scalar_t(1i32)), ["[2,2,3]"; 3]);
    assert_eq!(split_out(3, "[2,6,3]", scalar_t(-1i32)), ["[2,6,1]"; 3]);
    assert_eq!(split_out(2, "[2,7]", None), ["[?,?]"; 2]);
    assert_eq!(split_out(2, "?", None), ["?"; 2]);
    assert_eq!(split_out(2, "?", scalar_t(-1i32)), ["?"; 2]);
    assert_eq!(split_out(2, "?", scalar_t(2i32)), ["?"; 2]);
    assert_eq!(split_out(2, "[?,7]", scalar_t(0i32)), ["[?,7]"; 2]);
    assert_eq!(split_out(1, "[4,6]", scalar_t(0i32)), ["[4,6]"]);
    assert_eq!(
        split_err(3, "[2,7]", "[]", scalar_t(1i32)),
        "Dimension size must be evenly divisible by 3 but is 7\n\tNumber of ways to split \
         should evenly divide the split dimension"
    );
    assert_eq!(
        split_err(2, "[2,7]", "[]", scalar_t(3i32)),
        "Dimension size, given by scalar input 3 must be in range [-2, 2)"
    );
    assert_eq!(
        split_err(2, "[2,7]", "[]", scalar_t(-3i32)),
        "Dimension size, given by scalar input -3 must be in range [-2, 2)"
    );
    assert_eq!(
        split_err(1, "[]", "[]", scalar_t(0i32)),
        "Dimension size, given by scalar input 0 must be in range [-0, 0)"
    );
    assert_eq!(
        split_err(2, "[4,7]", "[1]", vec_t(&[0i32])),
        "Input must be scalar but has rank 1"
    );
    // A rank-1 split_dim of unknown value is not checked (TF's neither).
    let out = run("Split", &num_split(2), &["[2]", "[4,6]"], &[]).unwrap();
    assert_eq!(out, ["[?,?]"; 2]);
}

fn split_v(
    n: i64,
    value: &str,
    sizes: Option<Tensor>,
    dim: Option<Tensor>,
) -> Result<Vec<String>, ShapeError> {
    let size_shape = match &sizes {
        Some(t) => format!("{}", Shape::from(t.shape())),
        None => format!("[{n}]"),
    };
    let dim_shape = match &dim {
        Some(t) => format!("{}", Shape::from(t.shape())),
        None => "[]".to_owned(),
    };
    run(
        "SplitV",
        &num_split(n),
        &[value, &size_shape, &dim_shape],
        &[None, sizes, dim],
    )
}

fn split_v_err(n: i64, value: &str, sizes: Option<Tensor>, dim: Option<Tensor>) -> String {
    match split_v(n, value, sizes, dim) {
        Ok(shapes) => panic!("SplitV {value}: expected an error, got {shapes:?}"),
        Err(e) => {
            assert_eq!(e.node(), Some("splitv"), "{e}");
            e.kind().to_string()
        }
    }
}

#[test]
fn split_v_shapes() {
    let ok = |n, v, s, d| split_v(n, v, s, d).unwrap();
    assert_eq!(
        ok(3, "[2,6]", vec_t(&[1i32, -1, 2]), scalar_t(1i32)),
        ["[2,1]", "[2,3]", "[2,2]"]
    );
    assert_eq!(
        ok(3, "[2,?]", vec_t(&[1i32, -1, 2]), scalar_t(1i32)),
        ["[2,1]", "[2,?]", "[2,2]"]
    );
    assert_eq!(
        ok(3, "[2,?]", vec_t(&[4i32, -1, 3]), scalar_t(1i32)),
        ["[2,4]", "[2,?]", "[2,3]"]
    );
    assert_eq!(
        ok(3, "[2,6]", vec_t(&[1i64, -1, 2]), scalar_t(-1i32)),
        ["[2,1]", "[2,3]", "[2,2]"]
    );
    assert_eq!(ok(1, "[2,6]", vec_t(&[6i32]), scalar_t(1i32)), ["[2,6]"]);
    assert_eq!(ok(3, "[2,6]", None, scalar_t(1i32)), ["[2,?]"; 3]);
    assert_eq!(ok(3, "[2,6]", None, None), ["[?,?]"; 3]);
    assert_eq!(ok(2, "?", vec_t(&[1i32, 2]), scalar_t(0i32)), ["?"; 2]);
    // TF reads an unknown split_dim as -1 (the last dimension) once the
    // sizes are known.
    assert_eq!(ok(2, "[3,?]", vec_t(&[5i32, -1]), None), ["[3,5]", "[3,?]"]);
    assert_eq!(
        ok(2, "[3,4,?]", vec_t(&[1i32, 3]), None),
        ["[3,4,1]", "[3,4,3]"]
    );
    assert_eq!(
        ok(3, "[3,4]", vec_t(&[1i32, 2, -1]), None),
        ["[3,1]", "[3,2]", "[3,1]"]
    );
    // int8 sizes (TF's shape function aborts the process on them).
    let int8 = Some(Tensor::from_vec([3], vec![1i8, 2, 3]).unwrap());
    assert_eq!(
        ok(3, "[2,6]", int8, scalar_t(1i32)),
        ["[2,1]", "[2,2]", "[2,3]"]
    );
}

#[test]
fn split_v_errors() {
    let e = split_v_err;
    assert_eq!(
        e(1, "[]", vec_t(&[1i32]), scalar_t(0i32)),
        "Can't split scalars"
    );
    assert_eq!(
        e(2, "[]", vec_t(&[1i32, 2]), vec_t(&[1i32])),
        "Can't split scalars"
    );
    assert_eq!(
        e(2, "?", vec_t(&[1i32, 2]), vec_t(&[1i32])),
        "Input must be scalar but has rank 1"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, 2]), scalar_t(1i32)),
        "Length of size_splits should be equal to num_outputs"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, -1, -1]), scalar_t(1i32)),
        "size_splits can only have one -1"
    );
    assert_eq!(
        e(3, "[2,?]", vec_t(&[1i32, -1, -1]), scalar_t(1i32)),
        "size_splits can only have one -1"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, 2, 2]), scalar_t(1i32)),
        "can't split axis of size 6 into pieces of size [1,2,2]"
    );
    assert_eq!(
        e(1, "[2,6]", vec_t(&[5i32]), scalar_t(1i32)),
        "can't split axis of size 6 into pieces of size [5]"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, 2, 3]), scalar_t(0i32)),
        "can't split axis of size 2 into pieces of size [1,2,3]"
    );
    assert_eq!(
        e(2, "[3,4]", vec_t(&[1i32, 2]), None),
        "can't split axis of size 4 into pieces of size [1,2]"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, 9, -1]), scalar_t(1i32)),
        "Split size at index 2 must be >= 0. Got: -4"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, -2, 7]), scalar_t(1i32)),
        "Split size at index 1 must be >= 0. Got: -2"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[4i32, -1, 3]), scalar_t(1i32)),
        "Split size at index 1 must be >= 0. Got: -1"
    );
    assert_eq!(
        e(3, "[2,?]", vec_t(&[1i64, -2, 2]), scalar_t(-1i32)),
        "Split size at index 1 must be >= 0. Got: -2"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, 2, 3]), scalar_t(2i32)),
        "Dimension size, given by scalar input 2 must be in range [-2, 2)"
    );
    assert_eq!(
        e(3, "[2,6]", vec_t(&[1i32, 2, 3]), scalar_t(-3i32)),
        "Dimension size, given by scalar input -3 must be in range [-2, 2)"
    );
    // Sizes that are not a vector (TF's shape function aborts on them).
    let matrix = Some(Tensor::from_vec([1, 3], vec![1i32, 2, 3]).unwrap());
    assert_eq!(
        e(3, "[2,6]", matrix, scalar_t(1i32)),
        "Shape must be rank 1 but is rank 2"
    );
}

fn unpack(num: i64, axis: i64, value: &str) -> Result<Vec<String>, ShapeError> {
    let attrs = [
        ("num", AttrValue::from(num)),
        ("axis", AttrValue::from(axis)),
    ];
    run("Unpack", &attrs, &[value], &[])
}

#[test]
fn unpack_shapes_and_errors() {
    assert_eq!(unpack(3, 0, "[3,2]").unwrap(), ["[2]"; 3]);
    assert_eq!(unpack(2, -1, "[3,2]").unwrap(), ["[3]"; 2]);
    assert_eq!(unpack(4, 0, "[?,2]").unwrap(), ["[2]"; 4]);
    assert_eq!(unpack(2, 0, "?").unwrap(), ["?"; 2]);
    assert!(unpack(0, 0, "[0,2]").unwrap().is_empty());
    let e = |num, axis, value| unpack(num, axis, value).unwrap_err().kind().to_string();
    assert_eq!(e(2, 0, "[3,2]"), "Dimension must be 2 but is 3");
    assert_eq!(e(3, 2, "[3,2]"), "Invalid axis: 2; must be in [-2,2)");
    assert_eq!(e(3, -3, "[3,2]"), "Invalid axis: -3; must be in [-2,2)");
    assert_eq!(e(0, 0, "[]"), "Invalid axis: 0; must be in [0,0)");
}

// ---------------------------------------------------------------- ReverseV2

#[test]
fn reverse_v2_shapes_and_errors() {
    let axis = |v: &[i32]| vec![None, vec_t(v)];
    assert_eq!(
        out("ReverseV2", &[], &["[3,2]", "[1]"], &axis(&[0])),
        "[3,2]"
    );
    assert_eq!(out("ReverseV2", &[], &["?", "[1]"], &axis(&[5])), "?");
    let tidx = [("Tidx", AttrValue::from(DataType::DtInt64))];
    assert_eq!(
        out(
            "ReverseV2",
            &tidx,
            &["[?,2]", "[1]"],
            &[None, vec_t(&[1i64])]
        ),
        "[?,2]"
    );
    assert_eq!(
        err("ReverseV2", &[], &["[3,2]", "[1]"], &axis(&[2])),
        "'axis'[0] = 2 is out of valid range [0, 1"
    );
    assert_eq!(
        err("ReverseV2", &[], &["[3,2]", "[1]"], &axis(&[-3])),
        "'axis'[0] = -3 is out of valid range [0, 1"
    );
    assert_eq!(
        err("ReverseV2", &[], &["[]", "[1]"], &axis(&[0])),
        "'axis'[0] = 0 is out of valid range [0, -1"
    );
    assert_eq!(
        err("ReverseV2", &[], &["[3,2]", "[2]"], &axis(&[0, -2])),
        "axis 0 specified more than once."
    );
    assert_eq!(
        err("ReverseV2", &[], &["[3,2]", "[2,2]"], &[]),
        "Shape must be rank 1 but is rank 2"
    );
    assert_eq!(
        err("ReverseV2", &[], &["[1,1,1,1,1,1,1,1,1]", "[1]"], &[]),
        "reverse does not work on tensors with more than 8 dimensions"
    );
}

// ---------------------------------------------------------------- GatherNd

#[test]
fn gather_nd_shapes_and_errors() {
    assert_eq!(
        out("GatherNd", &[], &["[1,?,3,?]", "[?,0]"], &[]),
        "[?,1,?,3,?]"
    );
    assert_eq!(out("GatherNd", &[], &["[1,?,3,?]", "[?,4]"], &[]), "[?]");
    assert_eq!(out("GatherNd", &[], &["[1,2,3]", "[5,2]"], &[]), "[5,3]");
    assert_eq!(out("GatherNd", &[], &["?", "[5,2]"], &[]), "?");
    assert_eq!(out("GatherNd", &[], &["[2,3]", "[5,?]"], &[]), "?");
    assert_eq!(out("GatherNd", &[], &["[2,3]", "?"], &[]), "?");
    assert_eq!(out("GatherNd", &[], &["[]", "[3,0]"], &[]), "[3]");
    let ignore = [("bad_indices_policy", AttrValue::from("IGNORE"))];
    assert_eq!(out("GatherNd", &ignore, &["[2,3]", "[2,1]"], &[]), "[2,3]");
    assert_eq!(
        err("GatherNd", &[], &["[1,2,3]", "[4]"], &[]),
        "indices.shape[-1] must be <= params.rank, but saw indices shape: [4] and params \
         shape: [1,2,3]"
    );
    assert_eq!(
        err("GatherNd", &[], &["[2,3]", "[]"], &[]),
        "Shape must be at least rank 1 but is rank 0"
    );
}

// ---------------------------------------------------------------- MatrixBandPart, TopKV2

#[test]
fn matrix_band_part_keeps_the_input_shape() {
    // TF's shape function does not check the rank (the kernel does).
    let one = [scalar_t(1i64), scalar_t(1i64)];
    assert_eq!(
        out(
            "MatrixBandPart",
            &[],
            &["[3]", "[]", "[]"],
            &[None, one[0].clone(), one[1].clone()]
        ),
        "[3]"
    );
    assert_eq!(
        out("MatrixBandPart", &[], &["[2,3]", "[2]", "[]"], &[]),
        "[2,3]"
    );
    assert_eq!(out("MatrixBandPart", &[], &["?", "[]", "[]"], &[]), "?");
}

fn top_k(input: &str, k_shape: &str, k: Option<Tensor>) -> Result<Vec<String>, ShapeError> {
    run("TopKV2", &[], &[input, k_shape], &[None, k])
}

#[test]
fn top_k_v2_shapes_and_errors() {
    assert_eq!(top_k("[2,5]", "[]", scalar_t(3i32)).unwrap(), ["[2,3]"; 2]);
    assert_eq!(top_k("[2,?]", "[]", scalar_t(6i32)).unwrap(), ["[2,6]"; 2]);
    assert_eq!(top_k("[2,5]", "[]", None).unwrap(), ["[2,?]"; 2]);
    assert_eq!(top_k("?", "[]", scalar_t(3i32)).unwrap(), ["?"; 2]);
    let attrs = [
        ("Tk", AttrValue::from(DataType::DtInt64)),
        ("index_type", AttrValue::from(DataType::DtInt16)),
    ];
    let out = run("TopKV2", &attrs, &["[5]", "[]"], &[None, scalar_t(2i64)]).unwrap();
    assert_eq!(out, ["[2]"; 2]);
    let e = |input, k_shape, k| match top_k(input, k_shape, k) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e.kind().to_string(),
    };
    assert_eq!(
        e("[2,5]", "[]", scalar_t(6i32)),
        "input must have last dimension >= k = 6 but is 5"
    );
    assert_eq!(
        e("[]", "[]", scalar_t(3i32)),
        "Shape must be at least rank 1 but is rank 0"
    );
    assert_eq!(
        e("[5]", "[]", scalar_t(-1i32)),
        "Dimension size, given by scalar input 1, must be non-negative but is -1"
    );
    assert_eq!(
        e("[5]", "[1]", vec_t(&[1i32])),
        "Input must be scalar but has rank 1"
    );
}
