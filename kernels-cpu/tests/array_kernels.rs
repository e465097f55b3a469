//! The array kernels (Const, Placeholder, Identity, NoOp, Reshape,
//! ExpandDims, Squeeze, Transpose, ConcatV2, Pack, Slice, StridedSlice,
//! GatherV2, Tile, Pad, OneHot) run through `create_op_kernel`, with values
//! computed by hand (or by a naive index loop in this file) over several
//! dtypes: f32, i64, bool, string, qint8, half and more.

use crate::common;

use registry_core::create_op_kernel;
use registry_core::kernel::{KernelError, KernelInstance};
use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{AttrValue, DataType, NodeDef, TensorShapeProto};
use registry_core::tensor::{INLINE_CAPACITY, Tensor, f16};

// ---------------------------------------------------------------- helpers

/// A node of `op` for inputs of the dtypes of `inputs` ([`common::node`]).
fn node_for(op: &str, inputs: &[Tensor], attrs: &[(&str, AttrValue)]) -> NodeDef {
    let dtypes: Vec<DataType> = inputs.iter().map(Tensor::dtype).collect();
    common::node(op, &dtypes, attrs)
}

fn kernel(op: &str, inputs: &[Tensor], attrs: &[(&str, AttrValue)]) -> KernelInstance {
    let node = node_for(op, inputs, attrs);
    create_op_kernel("CPU", &node).unwrap_or_else(|e| panic!("{op}: {e}"))
}

fn try_run(
    op: &str,
    inputs: Vec<Tensor>,
    attrs: &[(&str, AttrValue)],
) -> Result<Tensor, KernelError> {
    let k = kernel(op, &inputs, attrs);
    let mut out = k.compute(inputs)?;
    assert_eq!(out.len(), 1);
    Ok(out.remove(0))
}

fn run(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)]) -> Tensor {
    try_run(op, inputs, attrs).unwrap_or_else(|e| panic!("{op}: {e}"))
}

fn err(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)]) -> String {
    match try_run(op, inputs, attrs) {
        Ok(t) => panic!("{op}: expected an error, got {t:?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_invalid(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)], msg: &str) {
    match try_run(op, inputs, attrs) {
        Err(KernelError::InvalidArgument(m)) => assert_eq!(m, msg),
        other => panic!("{op}: expected InvalidArgument({msg:?}), got {other:?}"),
    }
}

/// `out` holds `x`'s values without a copy of its buffer: the same buffer
/// when `x` is shared by reference count, or, for a tensor small enough to
/// be held by value (at most `INLINE_CAPACITY` bytes), an equal and
/// independent copy (small tensors are never shared).
fn assert_not_copied(out: &Tensor, x: &Tensor) {
    let inline = x.as_bytes().is_ok_and(|b| b.len() <= INLINE_CAPACITY);
    if inline {
        assert_eq!(out, x);
        assert!(!out.shares_buffer_with(x) && out.is_unique() && x.is_unique());
    } else {
        assert!(out.shares_buffer_with(x), "{x:?} was copied");
    }
}

fn f32t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}
fn i32t(shape: &[usize], v: &[i32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}
fn i64t(shape: &[usize], v: &[i64]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}
fn boolt(shape: &[usize], v: &[bool]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}
fn strt(shape: &[usize], v: &[&str]) -> Tensor {
    Tensor::from_strings(shape, v.iter().map(|s| s.as_bytes().to_vec()).collect()).unwrap()
}
fn q8t(shape: &[usize], v: &[i8]) -> Tensor {
    let mut t = Tensor::zeros(DataType::DtQint8, shape).unwrap();
    for (b, x) in t.as_mut_bytes().unwrap().iter_mut().zip(v) {
        *b = x.to_le_bytes()[0];
    }
    t
}
fn f16t(shape: &[usize], v: &[f32]) -> Tensor {
    let v: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
    Tensor::from_slice(shape, &v).unwrap()
}
fn iota_f32(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    f32t(shape, &(0..n).map(|i| i as f32).collect::<Vec<_>>())
}
fn iota_i64(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    i64t(shape, &(0..n as i64).collect::<Vec<_>>())
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}
fn i64s(t: &Tensor) -> Vec<i64> {
    t.as_slice::<i64>().unwrap().to_vec()
}
fn i32s(t: &Tensor) -> Vec<i32> {
    t.as_slice::<i32>().unwrap().to_vec()
}
fn bools(t: &Tensor) -> Vec<bool> {
    t.as_slice::<bool>().unwrap().to_vec()
}
fn strs(t: &Tensor) -> Vec<String> {
    t.as_strings()
        .unwrap()
        .iter()
        .map(|s| String::from_utf8(s.clone()).unwrap())
        .collect()
}
fn q8s(t: &Tensor) -> Vec<i8> {
    assert_eq!(t.dtype(), DataType::DtQint8);
    t.as_bytes()
        .unwrap()
        .iter()
        .map(|&b| i8::from_le_bytes([b]))
        .collect()
}
fn f16s(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f16>()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect()
}

/// Row-major strides.
fn strides_of(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// The multi-index of flat index `i` in `dims`.
fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        idx[d] = i % dims[d];
        i /= dims[d];
    }
    idx
}

// ---------------------------------------------------------------- Const, Placeholder, Identity, NoOp

fn const_node(value: &Tensor, dtype: DataType) -> NodeDef {
    NodeDefBuilder::new("c", "Const")
        .attr("dtype", dtype)
        .attr("value", value.to_proto())
        .finalize()
        .unwrap()
}

#[test]
fn const_outputs_its_value_for_every_dtype() {
    kernels_cpu::link();
    let values = [
        f32t(&[2, 2], &[1.0, -2.5, 3.0, 0.5]),
        f32t(&[5], &[1.0, -2.5, 3.0, 0.5, 9.0]),
        i64t(&[3], &[i64::MIN, 0, i64::MAX]),
        boolt(&[2], &[true, false]),
        strt(&[2], &["a", "bc"]),
        q8t(&[3], &[-128, 0, 127]),
        f16t(&[1], &[1.5]),
        Tensor::scalar(7u16),
    ];
    for value in values {
        let k = create_op_kernel("CPU", &const_node(&value, value.dtype())).unwrap();
        let a = k.compute([]).unwrap();
        let b = k.compute([]).unwrap();
        assert_eq!(a[0], value);
        // Built once: every run shares the same buffer (small values are
        // copied out of the kernel instead).
        assert_not_copied(&a[0], &b[0]);
    }
}

#[test]
fn const_rejects_a_value_of_another_dtype() {
    kernels_cpu::link();
    let node = const_node(&f32t(&[1], &[1.0]), DataType::DtInt32);
    let e = create_op_kernel("CPU", &node).unwrap_err().to_string();
    assert!(
        e.contains("Type mismatch between value (float) and dtype (int32)"),
        "{e}"
    );
}

fn placeholder(dtype: DataType, shape: Option<&[i64]>) -> String {
    let mut node = NodeDefBuilder::new("x", "Placeholder").attr("dtype", dtype);
    if let Some(dims) = shape {
        node = node.attr("shape", TensorShapeProto::from_sizes(dims));
    }
    let node = node.finalize().unwrap();
    let k = create_op_kernel("CPU", &node).unwrap();
    match k.compute([]) {
        Err(KernelError::InvalidArgument(m)) => m,
        other => panic!("{other:?}"),
    }
}

#[test]
fn placeholder_fails_asking_for_a_feed() {
    kernels_cpu::link();
    assert_eq!(
        placeholder(DataType::DtFloat, Some(&[2, 3])),
        "You must feed a value for placeholder tensor 'x' with dtype float and shape [2,3]"
    );
    assert_eq!(
        placeholder(DataType::DtInt64, Some(&[-1, 3])),
        "You must feed a value for placeholder tensor 'x' with dtype int64 and shape [?,3]"
    );
    assert_eq!(
        placeholder(DataType::DtString, None),
        "You must feed a value for placeholder tensor 'x' with dtype string"
    );
    assert_eq!(
        placeholder(DataType::DtBool, Some(&[])),
        "You must feed a value for placeholder tensor 'x' with dtype bool"
    );
}

#[test]
fn identity_forwards_without_copying() {
    kernels_cpu::link();
    for x in [
        f32t(&[2], &[1.0, 2.0]),
        f32t(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        strt(&[2], &["p", "q"]),
        boolt(&[1], &[true]),
        q8t(&[2], &[-1, 1]),
        Tensor::zeros(DataType::DtFloat, [0, 3]).unwrap(),
    ] {
        let out = run("Identity", vec![x.clone()], &[]);
        assert_eq!(out, x);
        assert_not_copied(&out, &x);
    }
    // Wrong dtype for the node: checked by KernelInstance::compute.
    let k = kernel("Identity", &[f32t(&[1], &[1.0])], &[]);
    assert!(matches!(
        k.compute([i32t(&[1], &[1])]),
        Err(KernelError::InputDtype { index: 0, .. })
    ));
}

#[test]
fn no_op_has_no_outputs() {
    kernels_cpu::link();
    let node = NodeDefBuilder::new("noop", "NoOp").finalize().unwrap();
    let k = create_op_kernel("CPU", &node).unwrap();
    assert!(k.compute([]).unwrap().is_empty());
}

// ---------------------------------------------------------------- Reshape, ExpandDims, Squeeze

#[test]
fn reshape_infers_minus_one_and_shares_the_buffer() {
    kernels_cpu::link();
    let x = iota_f32(&[4, 6]);
    let out = run("Reshape", vec![x.clone(), i32t(&[2], &[-1, 12])], &[]);
    assert_eq!(out.dims(), &[2, 12]);
    assert_eq!(f32s(&out), f32s(&x));
    assert!(out.shares_buffer_with(&x));
    // int64 shape, strings.
    let s = strt(&[2, 2], &["a", "b", "c", "d"]);
    let out = run("Reshape", vec![s, i64t(&[3], &[1, -1, 1])], &[]);
    assert_eq!(out.dims(), &[1, 4, 1]);
    assert_eq!(strs(&out), ["a", "b", "c", "d"]);
    // A scalar shape input means a vector (legacy), [] a scalar.
    let out = run("Reshape", vec![i64t(&[1, 1], &[5]), i32t(&[], &[1])], &[]);
    assert_eq!(out.dims(), &[1]);
    let out = run("Reshape", vec![i64t(&[1, 1], &[5]), i32t(&[0], &[])], &[]);
    assert_eq!(out.dims(), &[] as &[usize]);
    assert_eq!(i64s(&out), [5]);
}

#[test]
fn reshape_with_zero_sized_dims() {
    kernels_cpu::link();
    let z = Tensor::zeros(DataType::DtBool, [0, 3]).unwrap();
    let out = run("Reshape", vec![z.clone(), i32t(&[2], &[-1, 0])], &[]);
    assert_eq!(out.dims(), &[3, 0]);
    let out = run("Reshape", vec![z.clone(), i32t(&[3], &[3, -1, 0])], &[]);
    assert_eq!(out.dims(), &[3, 1, 0]);
    let out = run("Reshape", vec![z, i32t(&[2], &[-1, 3])], &[]);
    assert_eq!(out.dims(), &[0, 3]);
}

#[test]
fn reshape_errors_match_tensorflow() {
    kernels_cpu::link();
    let x = iota_f32(&[2, 3]);
    assert_invalid(
        "Reshape",
        vec![x.clone(), i32t(&[2], &[-1, -1])],
        &[],
        "Only one input size may be -1, not both 0 and 1",
    );
    assert_invalid(
        "Reshape",
        vec![x.clone(), i32t(&[2], &[2, 2])],
        &[],
        "Input to reshape is a tensor with 6 values, but the requested shape has 4",
    );
    assert_invalid(
        "Reshape",
        vec![x.clone(), i32t(&[2], &[-1, 4])],
        &[],
        "Input to reshape is a tensor with 6 values, but the requested shape requires a \
         multiple of 4",
    );
    assert_invalid(
        "Reshape",
        vec![x.clone(), i64t(&[2], &[3, -2])],
        &[],
        "Size 1 must be non-negative, not -2",
    );
    assert_invalid(
        "Reshape",
        vec![x.clone(), i32t(&[1, 2], &[3, 2])],
        &[],
        "sizes input must be 1-D, not [1,2]",
    );
    // Huge dimensions: an error, not an abort.
    assert_invalid(
        "Reshape",
        vec![x, i64t(&[3], &[1 << 40, 1 << 40, 1 << 40])],
        &[],
        "Shape [1099511627776, 1099511627776, 1099511627776] has too many elements",
    );
}

#[test]
fn expand_dims_inserts_a_one() {
    kernels_cpu::link();
    let x = iota_f32(&[2, 3]);
    for (dim, want) in [
        (0, vec![1, 2, 3]),
        (1, vec![2, 1, 3]),
        (2, vec![2, 3, 1]),
        (-1, vec![2, 3, 1]),
        (-3, vec![1, 2, 3]),
    ] {
        let out = run("ExpandDims", vec![x.clone(), i32t(&[], &[dim])], &[]);
        assert_eq!(out.dims(), want.as_slice(), "dim {dim}");
        assert!(out.shares_buffer_with(&x));
    }
    // int64 dim given as a 1-element vector; bool and scalar input.
    let out = run(
        "ExpandDims",
        vec![boolt(&[], &[true]), i64t(&[1], &[0])],
        &[],
    );
    assert_eq!(out.dims(), &[1]);
    assert_eq!(bools(&out), [true]);
    assert_invalid(
        "ExpandDims",
        vec![x.clone(), i32t(&[], &[3])],
        &[],
        "Tried to expand dim index 3 for tensor with 2 dimensions.",
    );
    assert_invalid(
        "ExpandDims",
        vec![x.clone(), i32t(&[], &[-4])],
        &[],
        "Tried to expand dim index -4 for tensor with 2 dimensions.",
    );
    assert_invalid(
        "ExpandDims",
        vec![x, i32t(&[2], &[0, 1])],
        &[],
        "'dim' must be a tensor with a single value",
    );
}

#[test]
fn squeeze_removes_ones() {
    kernels_cpu::link();
    let x = iota_i64(&[1, 3, 1, 2]);
    let out = run("Squeeze", vec![x.clone()], &[]);
    assert_eq!(out.dims(), &[3, 2]);
    assert!(out.shares_buffer_with(&x));
    let out = run("Squeeze", vec![x.clone()], &[("squeeze_dims", [2].into())]);
    assert_eq!(out.dims(), &[1, 3, 2]);
    let out = run(
        "Squeeze",
        vec![x.clone()],
        &[("squeeze_dims", [-4, -2].into())],
    );
    assert_eq!(out.dims(), &[3, 2]);
    assert_eq!(i64s(&out), (0..6).collect::<Vec<_>>());
    let out = run("Squeeze", vec![strt(&[1, 1], &["z"])], &[]);
    assert_eq!(out.dims(), &[] as &[usize]);
    assert_invalid(
        "Squeeze",
        vec![x.clone()],
        &[("squeeze_dims", [1].into())],
        "Can not squeeze dim[1], expected a dimension of 1, got 3",
    );
    assert_invalid(
        "Squeeze",
        vec![x],
        &[("squeeze_dims", [4].into())],
        "Tried to squeeze dim index 4 for tensor with 4 dimensions.",
    );
}

#[test]
fn shape_ops_on_empty_tensors() {
    kernels_cpu::link();
    let e = Tensor::zeros(DataType::DtString, [0, 1, 3]).unwrap();
    let out = run("ExpandDims", vec![e.clone(), i32t(&[], &[-1])], &[]);
    assert_eq!(out.dims(), &[0, 1, 3, 1]);
    let out = run("Squeeze", vec![e.clone()], &[]);
    assert_eq!(out.dims(), &[0, 3]);
    let out = run("Squeeze", vec![e.clone()], &[("squeeze_dims", [1].into())]);
    assert_eq!(out.dims(), &[0, 3]);
    let out = strided(e, &[0, 0, 1], &[0, 0, 3], &[1, 1, 1], [3, 3, 0, 0, 0]).unwrap();
    assert_eq!(out.dims(), &[0, 1, 2]);
}

// ---------------------------------------------------------------- Transpose

/// Naive transpose of an i64 iota: out[i] = in[Σ idx_out[k] · stride_in[perm[k]]].
fn naive_transpose(dims: &[usize], perm: &[usize]) -> Vec<i64> {
    let in_strides = strides_of(dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let n: usize = dims.iter().product();
    (0..n)
        .map(|i| {
            let idx = unravel(i, &out_dims);
            idx.iter()
                .zip(perm)
                .map(|(&x, &p)| x * in_strides[p])
                .sum::<usize>() as i64
        })
        .collect()
}

#[test]
fn transpose_small_cases() {
    kernels_cpu::link();
    let x = f32t(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run("Transpose", vec![x, i32t(&[2], &[1, 0])], &[]);
    assert_eq!(out.dims(), &[3, 2]);
    assert_eq!(f32s(&out), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // Strings, bools and half (TF's Transpose has no quantized types).
    let s = strt(&[2, 2], &["a", "b", "c", "d"]);
    let out = run("Transpose", vec![s, i64t(&[2], &[1, 0])], &[]);
    assert_eq!(strs(&out), ["a", "c", "b", "d"]);
    let b = boolt(&[1, 2, 2], &[true, true, false, false]);
    let out = run("Transpose", vec![b, i32t(&[3], &[2, 0, 1])], &[]);
    assert_eq!(out.dims(), &[2, 1, 2]);
    assert_eq!(bools(&out), [true, false, true, false]);
    let h = f16t(&[2, 2], &[0.5, 1.5, 2.5, 3.5]);
    let out = run("Transpose", vec![h, i32t(&[2], &[1, 0])], &[]);
    assert_eq!(f16s(&out), [0.5, 2.5, 1.5, 3.5]);
}

#[test]
fn transpose_general_against_a_naive_loop() {
    kernels_cpu::link();
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3, 4], &[2, 0, 1]),
        (&[2, 3, 4], &[1, 0, 2]),
        (&[2, 3, 4], &[0, 2, 1]),
        (&[2, 3, 4], &[2, 1, 0]),
        (&[3, 1, 4, 5], &[3, 2, 1, 0]),
        (&[2, 3, 4, 5, 2], &[4, 2, 0, 3, 1]),
        // Large enough for the parallel and tiled paths.
        (&[300, 200], &[1, 0]),
        (&[3, 70, 190], &[0, 2, 1]),
        (&[40, 30, 50], &[2, 1, 0]),
        (&[20, 30, 60], &[1, 0, 2]),
        (&[7, 33, 65, 3], &[3, 1, 2, 0]),
    ];
    for &(dims, perm) in cases {
        let perm_t = i64t(
            &[perm.len()],
            &perm.iter().map(|&p| p as i64).collect::<Vec<_>>(),
        );
        let out = run("Transpose", vec![iota_i64(dims), perm_t], &[]);
        let want_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        assert_eq!(out.dims(), want_dims.as_slice());
        assert_eq!(i64s(&out), naive_transpose(dims, perm), "{dims:?} {perm:?}");
    }
    // Same with 1-byte and 16-byte elements (other unit widths).
    let dims = [50, 70, 3];
    let n = 50 * 70 * 3;
    let x = Tensor::from_vec(dims, (0..n).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap();
    let out = run("Transpose", vec![x, i32t(&[3], &[2, 1, 0])], &[]);
    let want: Vec<u8> = naive_transpose(&dims, &[2, 1, 0])
        .iter()
        .map(|&i| (i % 251) as u8)
        .collect();
    assert_eq!(out.as_slice::<u8>().unwrap(), want.as_slice());
    use registry_core::tensor::Complex128;
    let x = Tensor::from_vec(
        [130, 300],
        (0..39000)
            .map(|i| Complex128::new(i as f64, -(i as f64)))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let out = run("Transpose", vec![x, i32t(&[2], &[1, 0])], &[]);
    let got = out.as_slice::<Complex128>().unwrap();
    for (i, v) in naive_transpose(&[130, 300], &[1, 0]).iter().enumerate() {
        assert_eq!(got[i], Complex128::new(*v as f64, -(*v as f64)));
    }
}

#[test]
fn transpose_shares_when_the_order_is_unchanged() {
    kernels_cpu::link();
    let x = iota_f32(&[2, 3]);
    let out = run("Transpose", vec![x.clone(), i32t(&[2], &[0, 1])], &[]);
    assert!(out.shares_buffer_with(&x));
    // Moving only a dimension of size 1 is a reshape.
    let x = iota_f32(&[1, 4, 5]);
    let out = run("Transpose", vec![x.clone(), i32t(&[3], &[1, 0, 2])], &[]);
    assert_eq!(out.dims(), &[4, 1, 5]);
    assert!(out.shares_buffer_with(&x));
    assert_eq!(f32s(&out), f32s(&x));
    // Empty and scalar.
    let out = run(
        "Transpose",
        vec![
            Tensor::zeros(DataType::DtFloat, [0, 3]).unwrap(),
            i32t(&[2], &[1, 0]),
        ],
        &[],
    );
    assert_eq!(out.dims(), &[3, 0]);
    let out = run(
        "Transpose",
        vec![Tensor::scalar(3.0f32), i32t(&[0], &[])],
        &[],
    );
    assert_eq!(f32s(&out), [3.0]);
}

#[test]
fn transpose_validates_the_permutation() {
    kernels_cpu::link();
    let x = iota_f32(&[1, 2, 3, 4]);
    assert_invalid(
        "Transpose",
        vec![x.clone(), i32t(&[4], &[0, 1, 3, 3])],
        &[],
        "2 is missing from {0,1,3,3}.",
    );
    assert_invalid(
        "Transpose",
        vec![x.clone(), i32t(&[4], &[0, 1, 4, 2])],
        &[],
        "4 is out of range [0 .. 4)",
    );
    assert_invalid(
        "Transpose",
        vec![x.clone(), i64t(&[4], &[0, -1, 2, 3])],
        &[],
        "-1 is out of range [0 .. 4)",
    );
    assert_invalid(
        "Transpose",
        vec![x.clone(), i32t(&[3], &[0, 1, 2])],
        &[],
        "transpose expects a vector of size 4. But input(1) is a vector of size 3",
    );
    assert_invalid(
        "Transpose",
        vec![x, i32t(&[2, 2], &[0, 1, 2, 3])],
        &[],
        "perm must be rank 1, got shape [2,2]",
    );
}

// ---------------------------------------------------------------- ConcatV2, Pack

#[test]
fn concat_along_each_axis() {
    kernels_cpu::link();
    let a = f32t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let b = f32t(&[2, 1], &[5.0, 6.0]);
    let out = run("ConcatV2", vec![a.clone(), b, i32t(&[], &[1])], &[]);
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(f32s(&out), [1.0, 2.0, 5.0, 3.0, 4.0, 6.0]);
    let c = f32t(&[1, 2], &[7.0, 8.0]);
    let out = run("ConcatV2", vec![a.clone(), c, a, i64t(&[], &[-2])], &[]);
    assert_eq!(out.dims(), &[5, 2]);
    assert_eq!(
        f32s(&out),
        [1.0, 2.0, 3.0, 4.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0]
    );
    // Scalars concatenate into a vector along axis 0.
    let out = run(
        "ConcatV2",
        vec![i64t(&[], &[1]), i64t(&[], &[2]), i32t(&[], &[0])],
        &[],
    );
    assert_eq!(out.dims(), &[2]);
    assert_eq!(i64s(&out), [1, 2]);
}

#[test]
fn concat_strings_bools_quantized_and_empty() {
    kernels_cpu::link();
    let out = run(
        "ConcatV2",
        vec![
            strt(&[1, 2], &["a", "b"]),
            strt(&[1, 1], &["c"]),
            i32t(&[], &[-1]),
        ],
        &[],
    );
    assert_eq!(strs(&out), ["a", "b", "c"]);
    let out = run(
        "ConcatV2",
        vec![
            boolt(&[2], &[true, false]),
            boolt(&[1], &[true]),
            i32t(&[], &[0]),
        ],
        &[],
    );
    assert_eq!(bools(&out), [true, false, true]);
    let out = run(
        "ConcatV2",
        vec![
            q8t(&[2, 1], &[-5, 6]),
            q8t(&[2, 2], &[1, 2, 3, 4]),
            i32t(&[], &[1]),
        ],
        &[],
    );
    assert_eq!(q8s(&out), [-5, 1, 2, 6, 3, 4]);
    // An empty input contributes nothing; an all-empty output is fine.
    let empty = Tensor::zeros(DataType::DtInt64, [2, 0]).unwrap();
    let out = run(
        "ConcatV2",
        vec![empty.clone(), iota_i64(&[2, 2]), i32t(&[], &[1])],
        &[],
    );
    assert_eq!(i64s(&out), [0, 1, 2, 3]);
    let out = run("ConcatV2", vec![empty.clone(), empty, i32t(&[], &[1])], &[]);
    assert_eq!(out.dims(), &[2, 0]);
}

#[test]
fn concat_large_parallel() {
    kernels_cpu::link();
    // Many rows (row chunks) and few long rows (parallel piece copies).
    for (rows, ca, cb) in [(600, 70, 50), (2, 40000, 30000)] {
        let a = iota_i64(&[rows, ca]);
        let b = i64t(
            &[rows, cb],
            &(0..(rows * cb) as i64).map(|v| -v).collect::<Vec<_>>(),
        );
        let out = run("ConcatV2", vec![a, b, i32t(&[], &[1])], &[]);
        let got = i64s(&out);
        for r in 0..rows {
            for c in 0..ca + cb {
                let want = if c < ca {
                    (r * ca + c) as i64
                } else {
                    -((r * cb + c - ca) as i64)
                };
                assert_eq!(got[r * (ca + cb) + c], want);
            }
        }
    }
}

#[test]
fn concat_errors_match_tensorflow() {
    kernels_cpu::link();
    assert_invalid(
        "ConcatV2",
        vec![iota_f32(&[2, 3]), iota_f32(&[2, 4]), i32t(&[], &[0])],
        &[],
        "ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,3] vs. shape[1] = \
         [2,4]",
    );
    assert_invalid(
        "ConcatV2",
        vec![iota_f32(&[2, 3]), iota_f32(&[6]), i32t(&[], &[0])],
        &[],
        "ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. shape[1] = [6]",
    );
    assert_invalid(
        "ConcatV2",
        vec![iota_f32(&[2, 3]), iota_f32(&[2, 3]), i32t(&[], &[2])],
        &[],
        "ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 2",
    );
    assert_invalid(
        "ConcatV2",
        vec![iota_f32(&[2, 3]), iota_f32(&[2, 3]), i32t(&[1], &[0])],
        &[],
        "axis tensor should be a scalar integer, but got shape [1]",
    );
}

#[test]
fn pack_stacks_along_a_new_axis() {
    kernels_cpu::link();
    let a = i64t(&[2], &[1, 2]);
    let b = i64t(&[2], &[3, 4]);
    let c = i64t(&[2], &[5, 6]);
    let out = run("Pack", vec![a.clone(), b.clone(), c.clone()], &[]);
    assert_eq!(out.dims(), &[3, 2]);
    assert_eq!(i64s(&out), [1, 2, 3, 4, 5, 6]);
    let out = run("Pack", vec![a.clone(), b.clone(), c], &[("axis", 1.into())]);
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(i64s(&out), [1, 3, 5, 2, 4, 6]);
    let out = run(
        "Pack",
        vec![strt(&[2], &["a", "b"]), strt(&[2], &["c", "d"])],
        &[("axis", (-1).into())],
    );
    assert_eq!(strs(&out), ["a", "c", "b", "d"]);
    let out = run("Pack", vec![q8t(&[1], &[-3]), q8t(&[1], &[4])], &[]);
    assert_eq!(q8s(&out), [-3, 4]);
    // N = 1 is a reshape.
    let out = run("Pack", vec![a.clone()], &[("axis", 1.into())]);
    assert_eq!(out.dims(), &[2, 1]);
    assert_not_copied(&out.reshape([2]).unwrap(), &a);
    let long = i64t(&[3], &[1, 2, 3]);
    let out = run("Pack", vec![long.clone()], &[("axis", 1.into())]);
    assert_eq!(out.dims(), &[3, 1]);
    assert!(out.shares_buffer_with(&long));
    // Empty.
    let e = Tensor::zeros(DataType::DtBool, [0]).unwrap();
    let out = run("Pack", vec![e.clone(), e], &[]);
    assert_eq!(out.dims(), &[2, 0]);
    assert_invalid(
        "Pack",
        vec![a.clone(), i64t(&[3], &[1, 2, 3])],
        &[],
        "Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]",
    );
    assert_invalid(
        "Pack",
        vec![a, b],
        &[("axis", 2.into())],
        "axis = 2 not in [-2, 2)",
    );
}

// ---------------------------------------------------------------- Slice

#[test]
fn slice_takes_a_block() {
    kernels_cpu::link();
    let x = iota_f32(&[3, 4]);
    let out = run(
        "Slice",
        vec![x.clone(), i32t(&[2], &[1, 1]), i32t(&[2], &[2, -1])],
        &[],
    );
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(f32s(&out), [5.0, 6.0, 7.0, 9.0, 10.0, 11.0]);
    let s = strt(&[2, 3], &["a", "b", "c", "d", "e", "f"]);
    let out = run(
        "Slice",
        vec![s, i64t(&[2], &[0, 2]), i64t(&[2], &[2, 1])],
        &[],
    );
    assert_eq!(strs(&out), ["c", "f"]);
    let b = boolt(&[4], &[true, false, false, true]);
    let out = run("Slice", vec![b, i32t(&[1], &[3]), i32t(&[1], &[1])], &[]);
    assert_eq!(bools(&out), [true]);
    let q = q8t(&[2, 2], &[1, -2, 3, -4]);
    let out = run(
        "Slice",
        vec![q, i32t(&[2], &[0, 1]), i32t(&[2], &[-1, 1])],
        &[],
    );
    assert_eq!(q8s(&out), [-2, -4]);
    // The whole input: shared.
    let out = run(
        "Slice",
        vec![x.clone(), i32t(&[2], &[0, 0]), i32t(&[2], &[-1, 4])],
        &[],
    );
    assert!(out.shares_buffer_with(&x));
    // Empty slice and empty input.
    let out = run(
        "Slice",
        vec![x.clone(), i32t(&[2], &[3, 0]), i32t(&[2], &[0, 4])],
        &[],
    );
    assert_eq!(out.dims(), &[0, 4]);
    let e = Tensor::zeros(DataType::DtFloat, [0, 2]).unwrap();
    let out = run(
        "Slice",
        vec![e, i32t(&[2], &[0, 1]), i32t(&[2], &[0, 1])],
        &[],
    );
    assert_eq!(out.dims(), &[0, 1]);
    // Large: parallel rows.
    let x = iota_i64(&[400, 300]);
    let out = run(
        "Slice",
        vec![x, i32t(&[2], &[10, 7]), i32t(&[2], &[380, 250])],
        &[],
    );
    let got = i64s(&out);
    for r in 0..380 {
        for c in 0..250 {
            assert_eq!(got[r * 250 + c], ((r + 10) * 300 + c + 7) as i64);
        }
    }
}

#[test]
fn slice_errors_match_tensorflow() {
    kernels_cpu::link();
    let x = iota_f32(&[3, 4]);
    assert_invalid(
        "Slice",
        vec![x.clone(), i32t(&[2], &[0, 5]), i32t(&[2], &[1, 1])],
        &[],
        "Expected begin[1] in [0, 4], but got 5",
    );
    assert_invalid(
        "Slice",
        vec![x.clone(), i32t(&[2], &[1, 1]), i32t(&[2], &[3, 1])],
        &[],
        "Expected size[0] in [0, 2], but got 3",
    );
    assert_invalid(
        "Slice",
        vec![x.clone(), i32t(&[2], &[0, -1]), i32t(&[2], &[1, 1])],
        &[],
        "Expected begin[1] in [0, 4], but got -1",
    );
    assert_invalid(
        "Slice",
        vec![x.clone(), i32t(&[1], &[0]), i32t(&[2], &[1, 1])],
        &[],
        "Expected begin and size arguments to be 1-D tensors of size 2, but got shapes [1] and \
         [2] instead.",
    );
    let e = Tensor::zeros(DataType::DtFloat, [0, 2]).unwrap();
    assert_invalid(
        "Slice",
        vec![e, i32t(&[2], &[1, 0]), i32t(&[2], &[0, 1])],
        &[],
        "Expected begin[0] == 0 (got 1) and size[0] == 0 (got 0) when input.dim_size(0) == 0",
    );
    // Huge sizes do not overflow.
    assert_invalid(
        "Slice",
        vec![x, i64t(&[2], &[1, 0]), i64t(&[2], &[i64::MAX, 1])],
        &[],
        &format!("Expected size[0] in [0, 2], but got {}", i64::MAX),
    );
}

// ---------------------------------------------------------------- StridedSlice

fn strided(
    x: Tensor,
    begin: &[i32],
    end: &[i32],
    strides: &[i32],
    masks: [i64; 5],
) -> Result<Tensor, KernelError> {
    let n = begin.len();
    let names = [
        "begin_mask",
        "end_mask",
        "ellipsis_mask",
        "new_axis_mask",
        "shrink_axis_mask",
    ];
    let attrs: Vec<(&str, AttrValue)> = names
        .iter()
        .zip(masks)
        .map(|(k, v)| (*k, v.into()))
        .collect();
    try_run(
        "StridedSlice",
        vec![x, i32t(&[n], begin), i32t(&[n], end), i32t(&[n], strides)],
        &attrs,
    )
}

/// Python's `list[b:e:s]` on 0..n.
fn py_slice(n: i64, b: Option<i64>, e: Option<i64>, s: i64) -> Vec<i64> {
    let norm = |x: i64| if x < 0 { x + n } else { x };
    let mut out = Vec::new();
    if s > 0 {
        let b = b.map_or(0, |b| norm(b).clamp(0, n));
        let e = e.map_or(n, |e| norm(e).clamp(0, n));
        let mut i = b;
        while i < e {
            out.push(i);
            i += s;
        }
    } else {
        let b = b.map_or(n - 1, |b| norm(b).clamp(-1, n - 1));
        let e = e.map_or(-1, |e| norm(e).clamp(-1, n - 1));
        let mut i = b;
        while i > e {
            out.push(i);
            i += s;
        }
    }
    out
}

#[test]
fn strided_slice_one_dimension_like_python() {
    kernels_cpu::link();
    let n = 7i64;
    let x = iota_i64(&[7]);
    let bounds = [
        None,
        Some(-9),
        Some(-3),
        Some(-1),
        Some(0),
        Some(2),
        Some(5),
        Some(7),
        Some(10),
    ];
    for s in [-3, -2, -1, 1, 2, 3] {
        for b in bounds {
            for e in bounds {
                let masks = [i64::from(b.is_none()), i64::from(e.is_none()), 0, 0, 0];
                let out = strided(
                    x.clone(),
                    &[b.unwrap_or(0) as i32],
                    &[e.unwrap_or(0) as i32],
                    &[s as i32],
                    masks,
                )
                .unwrap();
                assert_eq!(i64s(&out), py_slice(n, b, e, s), "[{b:?}:{e:?}:{s}]");
            }
        }
    }
}

#[test]
fn strided_slice_masks() {
    kernels_cpu::link();
    let x = iota_f32(&[2, 3, 4]);
    // x[1] (shrink): shape [3, 4].
    let out = strided(x.clone(), &[1], &[2], &[1], [0, 0, 0, 0, 1]).unwrap();
    assert_eq!(out.dims(), &[3, 4]);
    assert_eq!(f32s(&out), (12..24).map(|v| v as f32).collect::<Vec<_>>());
    // x[-1, :, ::-2]: shape [3, 2].
    let out = strided(
        x.clone(),
        &[-1, 0, 0],
        &[0, 0, 0],
        &[1, 1, -2],
        [6, 6, 0, 0, 1],
    )
    .unwrap();
    assert_eq!(out.dims(), &[3, 2]);
    assert_eq!(f32s(&out), [15.0, 13.0, 19.0, 17.0, 23.0, 21.0]);
    // x[..., 1] (ellipsis then shrink): shape [2, 3].
    let out = strided(x.clone(), &[0, 1], &[0, 2], &[1, 1], [0, 0, 1, 0, 2]).unwrap();
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(f32s(&out), [1.0, 5.0, 9.0, 13.0, 17.0, 21.0]);
    // x[:, tf.newaxis, 1:3] : shape [2, 1, 2, 4].
    let out = strided(
        x.clone(),
        &[0, 0, 1],
        &[0, 0, 3],
        &[1, 1, 1],
        [1, 1, 0, 2, 0],
    )
    .unwrap();
    assert_eq!(out.dims(), &[2, 1, 2, 4]);
    let want: Vec<f32> = [4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23]
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(f32s(&out), want);
    // x[tf.newaxis, ..., tf.newaxis]: shape [1, 2, 3, 4, 1], the whole input.
    let out = strided(
        x.clone(),
        &[0, 0, 0],
        &[0, 0, 0],
        &[1, 1, 1],
        [0, 0, 2, 5, 0],
    )
    .unwrap();
    assert_eq!(out.dims(), &[1, 2, 3, 4, 1]);
    assert!(out.shares_buffer_with(&x));
    // x[0, -1, -1]: a scalar.
    let out = strided(
        x.clone(),
        &[0, -1, -1],
        &[1, 0, 0],
        &[1, 1, 1],
        [0, 0, 0, 0, 7],
    )
    .unwrap();
    assert_eq!(out.dims(), &[] as &[usize]);
    assert_eq!(f32s(&out), [11.0]);
    // Out-of-range begin/end are clamped: x[-100:100, 5:1:-1, ::3].
    let out = strided(
        x.clone(),
        &[-100, 5, 0],
        &[100, 1, 0],
        &[1, -1, 3],
        [4, 4, 0, 0, 0],
    )
    .unwrap();
    assert_eq!(out.dims(), &[2, 1, 2]);
    assert_eq!(f32s(&out), [8.0, 11.0, 20.0, 23.0]);
    // Empty: x[:, 2:1].
    let out = strided(x, &[0, 2], &[0, 1], &[1, 1], [1, 1, 0, 0, 0]).unwrap();
    assert_eq!(out.dims(), &[2, 0, 4]);
}

#[test]
fn strided_slice_dtypes_and_index_types() {
    kernels_cpu::link();
    let s = strt(&[4], &["a", "b", "c", "d"]);
    let out = strided(s, &[0], &[0], &[-1], [1, 1, 0, 0, 0]).unwrap();
    assert_eq!(strs(&out), ["d", "c", "b", "a"]);
    let b = boolt(&[2, 2], &[true, false, false, false]);
    let out = strided(b, &[0, 0], &[0, 1], &[1, 1], [1, 1, 0, 0, 2]).unwrap();
    assert_eq!(bools(&out), [true, false]);
    let q = q8t(&[5], &[1, 2, 3, 4, 5]);
    let out = strided(q, &[1], &[5], &[2], [0, 0, 0, 0, 0]).unwrap();
    assert_eq!(q8s(&out), [2, 4]);
    let h = f16t(&[3], &[1.0, 2.0, 3.0]);
    let out = strided(h, &[-1], &[0], &[-1], [0, 1, 0, 0, 0]).unwrap();
    assert_eq!(f16s(&out), [3.0, 2.0, 1.0]);
    // int64 and int16 begin/end/strides.
    for idx in [DataType::DtInt64, DataType::DtInt16] {
        let vec = |v: &[i64]| match idx {
            DataType::DtInt64 => i64t(&[v.len()], v),
            _ => Tensor::from_vec([v.len()], v.iter().map(|&x| x as i16).collect::<Vec<_>>())
                .unwrap(),
        };
        let out = run(
            "StridedSlice",
            vec![
                iota_i64(&[3, 4]),
                vec(&[2, 3]),
                vec(&[0, 0]),
                vec(&[-1, -2]),
            ],
            &[],
        );
        assert_eq!(out.dims(), &[2, 2]);
        assert_eq!(i64s(&out), [11, 9, 7, 5]);
    }
    // Large, strided rows (parallel path): x[::2, ::-3].
    let x = iota_i64(&[800, 300]);
    let out = strided(x, &[0, 0], &[0, 0], &[2, -3], [3, 3, 0, 0, 0]).unwrap();
    assert_eq!(out.dims(), &[400, 100]);
    let got = i64s(&out);
    for r in 0..400 {
        for c in 0..100 {
            assert_eq!(got[r * 100 + c], (2 * r * 300 + 299 - 3 * c) as i64);
        }
    }
}

#[test]
fn strided_slice_errors_match_tensorflow() {
    kernels_cpu::link();
    let x = iota_f32(&[3, 4]);
    let e = strided(x.clone(), &[5], &[6], &[1], [0, 0, 0, 0, 1]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("slice index 5 of dimension 0 out of bounds.")
    );
    let e = strided(x.clone(), &[-5], &[0], &[1], [0, 0, 0, 0, 1]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("slice index -2 of dimension 0 out of bounds.")
    );
    let e = strided(x.clone(), &[0, 0], &[1, 1], &[1, 0], [0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("strides[1] must be non-zero")
    );
    let e = strided(x.clone(), &[0], &[1], &[-1], [0, 0, 0, 0, 1]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("only stride 1 allowed on non-range indexing.")
    );
    let e = strided(
        x.clone(),
        &[0, 0, 0],
        &[1, 1, 1],
        &[1, 1, 1],
        [0, 0, 0, 0, 0],
    )
    .unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument(
            "Index out of range using input dim 2; input has only 2 dims"
        )
    );
    let e = strided(x.clone(), &[0, 0], &[1, 1], &[1, 1], [0, 0, 3, 0, 0]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("Multiple ellipses in slice spec not allowed")
    );
    let e = strided(Tensor::scalar(1.0f32), &[0], &[1], &[1], [0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("Attempting to slice scalar input.")
    );
    let e = err(
        "StridedSlice",
        vec![
            x,
            i32t(&[2], &[0, 0]),
            i32t(&[1], &[1]),
            i32t(&[2], &[1, 1]),
        ],
        &[],
    );
    assert_eq!(
        e,
        "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [2], [1], \
         and [2] instead."
    );
}

// ---------------------------------------------------------------- GatherV2

fn gather(
    params: Tensor,
    indices: Tensor,
    axis: i64,
    batch_dims: i64,
) -> Result<Tensor, KernelError> {
    try_run(
        "GatherV2",
        vec![params, indices, i64t(&[], &[axis])],
        &[("batch_dims", batch_dims.into())],
    )
}

#[test]
fn gather_along_axes() {
    kernels_cpu::link();
    let p = iota_f32(&[3, 4]);
    let out = gather(p.clone(), i32t(&[2], &[2, 0]), 0, 0).unwrap();
    assert_eq!(out.dims(), &[2, 4]);
    assert_eq!(f32s(&out), [8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0]);
    let out = gather(p.clone(), i64t(&[2, 2], &[3, 0, 1, 1]), -1, 0).unwrap();
    assert_eq!(out.dims(), &[3, 2, 2]);
    assert_eq!(
        f32s(&out),
        [3.0, 0.0, 1.0, 1.0, 7.0, 4.0, 5.0, 5.0, 11.0, 8.0, 9.0, 9.0]
    );
    // Scalar index drops the axis; int16 indices.
    let idx = Tensor::scalar(1i16);
    let out = gather(p.clone(), idx, 1, 0).unwrap();
    assert_eq!(out.dims(), &[3]);
    assert_eq!(f32s(&out), [1.0, 5.0, 9.0]);
    // Strings, bools, qint8.
    let out = gather(
        strt(&[3], &["x", "y", "z"]),
        i32t(&[4], &[2, 2, 0, 1]),
        0,
        0,
    )
    .unwrap();
    assert_eq!(strs(&out), ["z", "z", "x", "y"]);
    let out = gather(boolt(&[2], &[false, true]), i32t(&[3], &[1, 0, 1]), 0, 0).unwrap();
    assert_eq!(bools(&out), [true, false, true]);
    let out = gather(q8t(&[2, 2], &[1, 2, 3, 4]), i32t(&[1], &[1]), 1, 0).unwrap();
    assert_eq!(q8s(&out), [2, 4]);
    // Empty indices.
    let out = gather(p.clone(), i32t(&[0], &[]), 1, 0).unwrap();
    assert_eq!(out.dims(), &[3, 0]);
    // Batch dims: out[b, n] = params[b, idx[b, n]].
    let out = gather(iota_i64(&[2, 3]), i32t(&[2, 2], &[2, 0, 1, 1]), 1, 1).unwrap();
    assert_eq!(out.dims(), &[2, 2]);
    assert_eq!(i64s(&out), [2, 0, 4, 4]);
    let out = gather(iota_i64(&[2, 3, 2]), i32t(&[2, 1], &[2, 0]), 1, -1).unwrap();
    assert_eq!(out.dims(), &[2, 1, 2]);
    assert_eq!(i64s(&out), [4, 5, 6, 7]);
    // Large (parallel rows of one element).
    let p = iota_i64(&[100_000]);
    let idx: Vec<i32> = (0..50_000).map(|i| (i * 7919) % 100_000).collect();
    let out = gather(p, i32t(&[50_000], &idx), 0, 0).unwrap();
    assert_eq!(
        i64s(&out),
        idx.iter().map(|&i| i64::from(i)).collect::<Vec<_>>()
    );
}

#[test]
fn gather_errors_match_tensorflow() {
    kernels_cpu::link();
    let p = iota_f32(&[5]);
    let e = gather(p.clone(), i32t(&[3], &[0, 7, 9]), 0, 0).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("indices[1] = 7 is not in [0, 5)")
    );
    let e = gather(p.clone(), i64t(&[2, 2], &[0, 1, -1, 2]), 0, 0).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("indices[1,0] = -1 is not in [0, 5)")
    );
    let e = gather(p.clone(), Tensor::scalar(5i32), 0, 0).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("indices = 5 is not in [0, 5)")
    );
    let e = gather(p.clone(), i32t(&[1], &[0]), 1, 0).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("Shape must be at least rank 2 but is rank 1")
    );
    let e = gather(Tensor::scalar(1.0f32), i32t(&[1], &[0]), 0, 0).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("params must be at least 1 dimensional")
    );
    let e = gather(iota_f32(&[2, 3]), i32t(&[3, 1], &[0, 0, 0]), 1, 1).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("params.shape[0]: 2 should be equal to indices.shape[0]: 3")
    );
    let e = gather(iota_f32(&[2, 3]), i32t(&[2, 1], &[0, 0]), 0, 1).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("batch_dims (1) must be less than or equal to axis (0).")
    );
    let big = Tensor::zeros(DataType::DtUint8, [40_000]).unwrap();
    let e = gather(big, Tensor::from_vec([1], vec![0i16]).unwrap(), 0, 0).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument(
            "params.shape[0] too large for int16 indexing: 40000 > 32767"
        )
    );
    // Wrong index dtype for the node.
    let k = kernel(
        "GatherV2",
        &[p.clone(), i32t(&[1], &[0]), i32t(&[], &[0])],
        &[],
    );
    assert!(matches!(
        k.compute([p, i64t(&[1], &[0]), i32t(&[], &[0])]),
        Err(KernelError::InputDtype { index: 1, .. })
    ));
}

// ---------------------------------------------------------------- Tile

#[test]
fn tile_repeats_each_dimension() {
    kernels_cpu::link();
    let x = i32t(&[2, 2], &[1, 2, 3, 4]);
    let out = run("Tile", vec![x.clone(), i32t(&[2], &[2, 3])], &[]);
    assert_eq!(out.dims(), &[4, 6]);
    assert_eq!(
        i32s(&out),
        [
            1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4
        ]
    );
    let out = run("Tile", vec![strt(&[2], &["a", "b"]), i64t(&[1], &[2])], &[]);
    assert_eq!(strs(&out), ["a", "b", "a", "b"]);
    let out = run(
        "Tile",
        vec![boolt(&[2, 1], &[true, false]), i32t(&[2], &[1, 3])],
        &[],
    );
    assert_eq!(bools(&out), [true, true, true, false, false, false]);
    let out = run(
        "Tile",
        vec![q8t(&[1, 2], &[-1, 2]), i32t(&[2], &[2, 1])],
        &[],
    );
    assert_eq!(q8s(&out), [-1, 2, -1, 2]);
    // Zero multiple: empty; all ones and scalars: shared.
    let out = run("Tile", vec![x.clone(), i32t(&[2], &[0, 2])], &[]);
    assert_eq!(out.dims(), &[0, 4]);
    for x in [x.clone(), iota_i64(&[3, 2])] {
        let out = run("Tile", vec![x.clone(), i32t(&[2], &[1, 1])], &[]);
        assert_not_copied(&out, &x);
    }
    let s = Tensor::scalar(2.5f32);
    let out = run("Tile", vec![s.clone(), i32t(&[0], &[])], &[]);
    assert_not_copied(&out, &s);
    // Large: compare with a naive loop.
    let dims = [3, 70, 5];
    let mults = [4, 2, 60];
    let out = run("Tile", vec![iota_i64(&dims), i32t(&[3], &mults)], &[]);
    let out_dims: Vec<usize> = dims
        .iter()
        .zip(mults)
        .map(|(&d, m)| d * m as usize)
        .collect();
    assert_eq!(out.dims(), out_dims.as_slice());
    let in_strides = strides_of(&dims);
    let got = i64s(&out);
    for (i, &v) in got.iter().enumerate() {
        let idx = unravel(i, &out_dims);
        let want: usize = idx
            .iter()
            .zip(&dims)
            .zip(&in_strides)
            .map(|((&x, &d), &s)| (x % d) * s)
            .sum();
        assert_eq!(v, want as i64);
    }
}

#[test]
fn tile_errors_match_tensorflow() {
    kernels_cpu::link();
    let x = iota_f32(&[2, 2]);
    assert_invalid(
        "Tile",
        vec![x.clone(), i32t(&[2], &[1, -1])],
        &[],
        "Expected multiples[1] >= 0, but got -1",
    );
    assert_invalid(
        "Tile",
        vec![x.clone(), i32t(&[3], &[1, 1, 1])],
        &[],
        "Expected multiples argument to be a vector of length 2 but got length 3",
    );
    assert_invalid(
        "Tile",
        vec![x.clone(), i32t(&[1, 2], &[1, 1])],
        &[],
        "Expected multiples to be 1-D, but got shape [1,2]",
    );
    // Huge multiples: an error, not an abort.
    let e = err("Tile", vec![x, i64t(&[2], &[1 << 40, 1 << 40])], &[]);
    assert!(e.contains("overflow"), "{e}");
}

// ---------------------------------------------------------------- Pad

#[test]
fn pad_with_zeros() {
    kernels_cpu::link();
    let x = f32t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let out = run("Pad", vec![x.clone(), i32t(&[2, 2], &[1, 0, 0, 2])], &[]);
    assert_eq!(out.dims(), &[3, 4]);
    assert_eq!(
        f32s(&out),
        [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0]
    );
    let out = run("Pad", vec![strt(&[1], &["s"]), i64t(&[1, 2], &[1, 1])], &[]);
    assert_eq!(strs(&out), ["", "s", ""]);
    let out = run(
        "Pad",
        vec![boolt(&[1, 1], &[true]), i32t(&[2, 2], &[0, 1, 1, 0])],
        &[],
    );
    assert_eq!(bools(&out), [false, true, false, false]);
    let out = run(
        "Pad",
        vec![q8t(&[2], &[-7, 7]), i32t(&[1, 2], &[0, 1])],
        &[],
    );
    assert_eq!(q8s(&out), [-7, 7, 0]);
    let out = run("Pad", vec![f16t(&[1], &[1.5]), i32t(&[1, 2], &[2, 0])], &[]);
    assert_eq!(f16s(&out), [0.0, 0.0, 1.5]);
    // Inner dimension unpadded (merged with the outer one), rank 3.
    let out = run(
        "Pad",
        vec![iota_i64(&[2, 2, 2]), i32t(&[3, 2], &[0, 1, 1, 0, 0, 0])],
        &[],
    );
    assert_eq!(out.dims(), &[3, 3, 2]);
    assert_eq!(
        i64s(&out),
        [0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0]
    );
    // No padding: shared. Empty input padded: zeros.
    for x in [x.clone(), iota_i64(&[3, 2])] {
        let out = run("Pad", vec![x.clone(), i32t(&[2, 2], &[0, 0, 0, 0])], &[]);
        assert_not_copied(&out, &x);
    }
    let e = Tensor::zeros(DataType::DtInt64, [0, 2]).unwrap();
    let out = run("Pad", vec![e, i32t(&[2, 2], &[1, 1, 0, 0])], &[]);
    assert_eq!(i64s(&out), [0, 0, 0, 0]);
    // Large: parallel rows.
    let out = run(
        "Pad",
        vec![iota_i64(&[200, 200]), i32t(&[2, 2], &[3, 1, 2, 5])],
        &[],
    );
    assert_eq!(out.dims(), &[204, 207]);
    let got = i64s(&out);
    for r in 0..204 {
        for c in 0..207 {
            let inside = (3..203).contains(&r) && (2..202).contains(&c);
            let want = if inside {
                ((r - 3) * 200 + c - 2) as i64
            } else {
                0
            };
            assert_eq!(got[r * 207 + c], want);
        }
    }
}

#[test]
fn pad_errors_match_tensorflow() {
    kernels_cpu::link();
    let x = iota_f32(&[2, 2]);
    assert_invalid(
        "Pad",
        vec![x.clone(), i32t(&[2, 2], &[0, -1, 0, 0])],
        &[],
        "Paddings must be non-negative: 0 -1",
    );
    assert_invalid(
        "Pad",
        vec![x.clone(), i32t(&[2, 3], &[0; 6])],
        &[],
        "paddings must be a matrix with 2 columns: [2,3]",
    );
    assert_invalid(
        "Pad",
        vec![x.clone(), i32t(&[1, 2], &[0, 0])],
        &[],
        "The first dimension of paddings must be the rank of inputs[1,2] [2,2]",
    );
    let e = err(
        "Pad",
        vec![x, i64t(&[2, 2], &[1 << 40, 0, 1 << 40, 0])],
        &[],
    );
    assert!(e.contains("overflow"), "{e}");
}

// ---------------------------------------------------------------- OneHot

fn one_hot(
    indices: Tensor,
    depth: i32,
    on: Tensor,
    off: Tensor,
    axis: i64,
) -> Result<Tensor, KernelError> {
    try_run(
        "OneHot",
        vec![indices, Tensor::scalar(depth), on, off],
        &[("axis", axis.into())],
    )
}

#[test]
fn one_hot_axes_and_out_of_range_indices() {
    kernels_cpu::link();
    let on = Tensor::scalar(1.0f32);
    let off = Tensor::scalar(0.0f32);
    // Index 3 is out of [0, 3) and -1 too: all-off rows.
    let idx = i64t(&[4], &[0, 2, 3, -1]);
    let out = one_hot(idx.clone(), 3, on.clone(), off.clone(), -1).unwrap();
    assert_eq!(out.dims(), &[4, 3]);
    assert_eq!(
        f32s(&out),
        [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    let out = one_hot(idx, 3, on.clone(), off.clone(), 0).unwrap();
    assert_eq!(out.dims(), &[3, 4]);
    assert_eq!(
        f32s(&out),
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    );
    // 2-D indices, axis 1: out[p, d, s].
    let idx = i32t(&[2, 2], &[1, 0, 0, 1]);
    let out = one_hot(idx, 2, Tensor::scalar(5i64), Tensor::scalar(-1i64), 1).unwrap();
    assert_eq!(out.dims(), &[2, 2, 2]);
    assert_eq!(i64s(&out), [-1, 5, 5, -1, 5, -1, -1, 5]);
    // uint8 / int8 indices, bool and string values.
    let idx = Tensor::from_vec([3], vec![2u8, 0, 200]).unwrap();
    let out = one_hot(idx, 3, Tensor::scalar(true), Tensor::scalar(false), -1).unwrap();
    assert_eq!(
        bools(&out),
        [false, false, true, true, false, false, false, false, false]
    );
    let idx = Tensor::from_vec([2], vec![-3i8, 1]).unwrap();
    let out = one_hot(
        idx,
        2,
        Tensor::scalar_string("on"),
        Tensor::scalar_string("off"),
        -1,
    )
    .unwrap();
    assert_eq!(strs(&out), ["off", "off", "off", "on"]);
    // Depth 0 and empty indices.
    let out = one_hot(i64t(&[2], &[0, 1]), 0, on.clone(), off.clone(), -1).unwrap();
    assert_eq!(out.dims(), &[2, 0]);
    let out = one_hot(i64t(&[0], &[]), 3, on.clone(), off.clone(), -1).unwrap();
    assert_eq!(out.dims(), &[0, 3]);
    // Large: parallel blocks.
    let idx: Vec<i64> = (0..20_000).map(|i| i % 7).collect();
    let out = one_hot(i64t(&[20_000], &idx), 5, on, off, -1).unwrap();
    let got = f32s(&out);
    for (i, &v) in idx.iter().enumerate() {
        for d in 0..5 {
            assert_eq!(got[i * 5 + d], if v == d as i64 { 1.0 } else { 0.0 });
        }
    }
}

#[test]
fn one_hot_errors_match_tensorflow() {
    kernels_cpu::link();
    let on = Tensor::scalar(1.0f32);
    let off = Tensor::scalar(0.0f32);
    let idx = i64t(&[2], &[0, 1]);
    let e = one_hot(idx.clone(), -1, on.clone(), off.clone(), -1).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("depth must be non-negative, got: -1")
    );
    let e = one_hot(idx.clone(), 2, on.clone(), off.clone(), 2).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("Expected axis to be -1 or between [0, 2).  But received: 2")
    );
    let e = one_hot(idx.clone(), 2, f32t(&[1], &[1.0]), off.clone(), -1).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("on_value must be a scalar, but got: [1]")
    );
    let e = try_run("OneHot", vec![idx, i32t(&[1], &[2]), on, off], &[]).unwrap_err();
    assert_eq!(
        e,
        KernelError::invalid_argument("depth must be a scalar, but got: [1]")
    );
}

/// float8 tensors (one byte per element, as TF holds them) move through
/// the array kernels TF registers them for on CPU, bit for bit.
#[test]
fn float8_values_move_bit_for_bit() {
    for dtype in [DataType::DtFloat8E4m3fn, DataType::DtFloat8E5m2] {
        let f8 = |shape: &[usize], v: &[u8]| {
            let mut t = Tensor::zeros(dtype, shape).unwrap();
            t.as_mut_bytes().unwrap().copy_from_slice(v);
            t
        };
        let x = f8(&[2, 3], &[0x38, 0xb8, 0x40, 0x7f, 0x80, 0x01]);
        let out = run("Transpose", vec![x.clone(), i32t(&[2], &[1, 0])], &[]);
        assert_eq!(out.dtype(), dtype);
        assert_eq!(
            out.as_bytes().unwrap(),
            &[0x38, 0x7f, 0xb8, 0x80, 0x40, 0x01]
        );
        let both = run(
            "ConcatV2",
            vec![x.clone(), f8(&[1, 3], &[1, 2, 3]), i32t(&[], &[0])],
            &[("N", 2i64.into())],
        );
        assert_eq!(
            both.as_bytes().unwrap(),
            &[0x38, 0xb8, 0x40, 0x7f, 0x80, 0x01, 1, 2, 3]
        );
    }
}
