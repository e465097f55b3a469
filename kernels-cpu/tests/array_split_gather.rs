//! `Split`, `SplitV`, `Unpack`, `ReverseV2`, `GatherNd`, `MatrixBandPart`
//! and `TopKV2` run through `create_op_kernel`. Small cases hold the values
//! and messages TensorFlow 2.21's CPU kernels gave for the same inputs
//! (eager `tf.raw_ops` calls); large ones (filled in parallel) are checked
//! against naive index loops in this file.

use crate::common;

use common::{invalid, run_all, s, shaped, strs, strt, t, try_run, vals};

use registry_core::create_op_kernel;
use registry_core::kernel::KernelError;
use registry_core::proto::{AttrValue, DataType};
use registry_core::tensor::{Tensor, f16};

// ---------------------------------------------------------------- helpers

/// `[2, 3, 4]` holding 0..24 (TF's `tf.reshape(tf.range(24), [2, 3, 4])`).
fn x24() -> Tensor {
    t(&[2, 3, 4], &(0..24).collect::<Vec<i32>>())
}

fn attr(name: &'static str, v: i64) -> (&'static str, AttrValue) {
    (name, AttrValue::from(v))
}

// ---------------------------------------------------------------- Split, SplitV, Unpack

#[test]
fn split_values_match_tf() {
    kernels_cpu::link();
    let out = run_all("Split", vec![s(1i32), x24()], &[attr("num_split", 3)]);
    assert_eq!(
        shaped(&out[0]),
        (vec![2, 1, 4], vec![0, 1, 2, 3, 12, 13, 14, 15])
    );
    assert_eq!(
        shaped(&out[1]),
        (vec![2, 1, 4], vec![4, 5, 6, 7, 16, 17, 18, 19])
    );
    assert_eq!(
        shaped(&out[2]),
        (vec![2, 1, 4], vec![8, 9, 10, 11, 20, 21, 22, 23])
    );
    // One part: the input itself.
    let x = x24();
    let out = run_all("Split", vec![s(-1i32), x.clone()], &[attr("num_split", 1)]);
    assert_eq!(out[0], x);
    // Strings, along the last axis.
    let out = run_all(
        "Split",
        vec![s(1i32), strt(&[2, 2], &["a", "b", "c", "d"])],
        &[attr("num_split", 2)],
    );
    assert_eq!(
        (strs(&out[0]), strs(&out[1])),
        (
            vec!["a".into(), "c".into()],
            vec!["b".to_string(), "d".into()]
        )
    );
}

#[test]
fn split_errors_match_tf() {
    kernels_cpu::link();
    let n = |v| [attr("num_split", v)];
    assert_eq!(
        invalid("Split", vec![s(2i32), x24()], &n(3)),
        "Number of ways to split should evenly divide the split dimension, but got split_dim 2 \
         (size = 4) and num_split 3"
    );
    assert_eq!(
        invalid("Split", vec![s(3i32), x24()], &n(2)),
        "-input rank(-3) <= split_dim < input rank (3), but got 3"
    );
    assert_eq!(
        invalid("Split", vec![s(-4i32), x24()], &n(2)),
        "-input rank(-3) <= split_dim < input rank (3), but got -4"
    );
    assert_eq!(
        invalid("Split", vec![t(&[1], &[1i32]), x24()], &n(3)),
        "split_dim must be a scalar but has rank 1"
    );
    assert_eq!(
        invalid("Split", vec![s(0i32), s(1.0f32)], &n(1)),
        "-input rank(-0) <= split_dim < input rank (0), but got 0"
    );
}

#[test]
fn split_v_values_match_tf() {
    kernels_cpu::link();
    let n3 = [attr("num_split", 3)];
    let out = run_all("SplitV", vec![x24(), t(&[3], &[1i64, -1, 1]), s(2i32)], &n3);
    assert_eq!(shaped(&out[0]), (vec![2, 3, 1], vec![0, 4, 8, 12, 16, 20]));
    assert_eq!(
        shaped(&out[1]),
        (
            vec![2, 3, 2],
            vec![1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22]
        )
    );
    assert_eq!(shaped(&out[2]), (vec![2, 3, 1], vec![3, 7, 11, 15, 19, 23]));
    // int8 sizes, a negative split_dim.
    let out = run_all("SplitV", vec![x24(), t(&[3], &[1i8, 2, 1]), s(-1i32)], &n3);
    assert_eq!(shaped(&out[0]).1, [0, 4, 8, 12, 16, 20]);
    // An empty part.
    let out = run_all(
        "SplitV",
        vec![x24(), t(&[2], &[2i32, 0]), s(0i32)],
        &[attr("num_split", 2)],
    );
    assert_eq!(out[0], x24());
    assert_eq!(out[1].dims(), &[0, 3, 4]);
}

#[test]
fn split_v_errors_match_tf() {
    kernels_cpu::link();
    let n3 = [attr("num_split", 3)];
    let e = |sizes: Tensor, dim: Tensor, n: &[(&str, AttrValue)]| {
        invalid("SplitV", vec![x24(), sizes, dim], n)
    };
    assert_eq!(
        e(t(&[3], &[1i32, -1, -1]), s(2i32), &n3),
        "There can only be one -1 in the input."
    );
    assert_eq!(
        e(t(&[2], &[1i32, 2]), s(2i32), &n3),
        "size of the split_tensor must be 1-D and have the same elements as outputs got 1 -D \
         and 2 elements"
    );
    assert_eq!(
        e(t(&[1, 3], &[1i32, 2, 1]), s(2i32), &n3),
        "size of the split_tensor must be 1-D and have the same elements as outputs got 2 -D \
         and 3 elements"
    );
    let determined = "Determined shape must either match input shape along split_dim exactly if \
                      fully specified, or be less than the size of the input along split_dim if \
                      not fully specified.  Got: 5";
    assert_eq!(e(t(&[3], &[1i32, 2, 2]), s(2i32), &n3), determined);
    assert_eq!(e(t(&[3], &[1i32, 4, -1]), s(2i32), &n3), determined);
    assert_eq!(
        e(t(&[1], &[3i32]), s(2i32), &[attr("num_split", 1)]),
        "If there is only one output, it must have the same size as the input. Input size: 4 \
         output size: 3"
    );
    assert_eq!(
        e(t(&[3], &[1i32, 2, 1]), s(3i32), &n3),
        "-input rank(-3) <= split_dim < input rank (3), but got 3"
    );
    assert_eq!(
        e(t(&[3], &[1i32, 2, 1]), t(&[2], &[2i32, 1]), &n3),
        "split_dim_tensor must have exactly one element."
    );
    assert_eq!(
        e(t(&[3], &[5i32, -2, 1]), s(2i32), &n3),
        "Split size at index 1 must be >= 0. Got: -2"
    );
}

#[test]
fn unpack_values_match_tf() {
    kernels_cpu::link();
    let out = run_all("Unpack", vec![x24()], &[attr("num", 3), attr("axis", 1)]);
    assert_eq!(
        shaped(&out[0]),
        (vec![2, 4], vec![0, 1, 2, 3, 12, 13, 14, 15])
    );
    assert_eq!(
        shaped(&out[2]),
        (vec![2, 4], vec![8, 9, 10, 11, 20, 21, 22, 23])
    );
    let out = run_all("Unpack", vec![x24()], &[attr("num", 4), attr("axis", -1)]);
    assert_eq!(shaped(&out[3]), (vec![2, 3], vec![3, 7, 11, 15, 19, 23]));
    let z = Tensor::zeros(DataType::DtFloat, [0, 2]).unwrap();
    assert!(run_all("Unpack", vec![z], &[attr("num", 0)]).is_empty());
    let out = run_all("Unpack", vec![strt(&[2], &["p", "q"])], &[attr("num", 2)]);
    assert_eq!(
        (out[0].dims(), strs(&out[1])),
        (&[][..], vec!["q".to_string()])
    );
    assert_eq!(
        invalid("Unpack", vec![x24()], &[attr("num", 2), attr("axis", 1)]),
        "Input shape axis 1 must equal 2, got shape [2,3,4]"
    );
    assert_eq!(
        invalid("Unpack", vec![x24()], &[attr("num", 3), attr("axis", 3)]),
        "axis = 3 not in [-3, 3)"
    );
    assert_eq!(
        invalid("Unpack", vec![s(1.0f32)], &[attr("num", 1)]),
        "axis = 0 not in [0, 0)"
    );
}

#[test]
fn large_splits_match_a_naive_loop() {
    kernels_cpu::link();
    // [30, 40, 50] split along 1 into sizes 7, 0, 33: 60,000 elements.
    let dims = [30usize, 40, 50];
    let x: Vec<i64> = (0..60_000).collect();
    let out = run_all(
        "SplitV",
        vec![t(&dims, &x), t(&[3], &[7i64, 0, -1]), s(1i32)],
        &[attr("num_split", 3)],
    );
    for (part, (start, size)) in out.iter().zip([(0usize, 7usize), (7, 0), (7, 33)]) {
        assert_eq!(part.dims(), &[30, size, 50]);
        let mut want = Vec::new();
        for a in 0..30 {
            for b in start..start + size {
                for c in 0..50 {
                    want.push(x[(a * 40 + b) * 50 + c]);
                }
            }
        }
        assert_eq!(vals::<i64>(part), want);
    }
    let out = run_all(
        "Unpack",
        vec![t(&dims, &x)],
        &[attr("num", 50), attr("axis", 2)],
    );
    for (c, part) in out.iter().enumerate() {
        let want: Vec<i64> = (0..1200).map(|ab| x[ab * 50 + c]).collect();
        assert_eq!(vals::<i64>(part), want);
    }
}

// ---------------------------------------------------------------- ReverseV2

#[test]
fn reverse_v2_matches_tf() {
    kernels_cpu::link();
    let out = run_all("ReverseV2", vec![x24(), t(&[2], &[0i32, 2])], &[]);
    assert_eq!(
        vals::<i32>(&out[0]),
        [
            15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8
        ]
    );
    let out = run_all(
        "ReverseV2",
        vec![strt(&[3], &["a", "b", "c"]), t(&[1], &[0i64])],
        &[],
    );
    assert_eq!(strs(&out[0]), ["c", "b", "a"]);
    let x = x24();
    assert_eq!(
        run_all("ReverseV2", vec![x.clone(), t::<i32>(&[0], &[])], &[])[0],
        x
    );
    // A scalar or empty input is returned whatever the axes.
    assert_eq!(
        run_all("ReverseV2", vec![s(5.0f32), t(&[1], &[7i32])], &[])[0],
        s(5.0f32)
    );
    let z = Tensor::zeros(DataType::DtFloat, [0, 3]).unwrap();
    assert_eq!(
        run_all("ReverseV2", vec![z, t(&[1], &[9i32])], &[])[0].dims(),
        &[0, 3]
    );
    assert_eq!(
        invalid("ReverseV2", vec![x24(), t(&[1], &[3i32])], &[]),
        "'axis'[0] = 3 is out of valid range [0, 2"
    );
    assert_eq!(
        invalid("ReverseV2", vec![x24(), t(&[2], &[1i32, -2])], &[]),
        "axis 1 specified more than once."
    );
    assert_eq!(
        invalid("ReverseV2", vec![x24(), t(&[1, 1], &[0i32])], &[]),
        "'dims' must be 1-dimension, not 2"
    );
    let nine = Tensor::zeros(DataType::DtFloat, [1; 9]).unwrap();
    assert!(matches!(
        try_run("ReverseV2", vec![nine, t(&[1], &[0i32])], &[]),
        Err(KernelError::Unimplemented(m)) if m == "reverse is not implemented for tensors of rank > 8."
    ));
}

#[test]
fn large_reverse_matches_a_naive_loop() {
    kernels_cpu::link();
    let dims = [20usize, 30, 70];
    let x: Vec<f32> = (0..42_000).map(|i| i as f32).collect();
    for axes in [vec![2i32], vec![0], vec![0, 1, 2], vec![1, -1]] {
        let out = run_all(
            "ReverseV2",
            vec![t(&dims, &x), t(&[axes.len()], &axes)],
            &[],
        );
        let rev = |d: i32| axes.iter().any(|&a| a == d || a + 3 == d);
        let mut want = Vec::with_capacity(x.len());
        for a in 0..20 {
            for b in 0..30 {
                for c in 0..70 {
                    let a = if rev(0) { 19 - a } else { a };
                    let b = if rev(1) { 29 - b } else { b };
                    let c = if rev(2) { 69 - c } else { c };
                    want.push(x[(a * 30 + b) * 70 + c]);
                }
            }
        }
        assert_eq!(vals::<f32>(&out[0]), want, "axes {axes:?}");
    }
}

// ---------------------------------------------------------------- GatherNd

#[test]
fn gather_nd_values_match_tf() {
    kernels_cpu::link();
    let out = run_all("GatherNd", vec![x24(), t(&[2, 2], &[1i32, 2, 0, 0])], &[]);
    assert_eq!(
        shaped(&out[0]),
        (vec![2, 4], vec![20, 21, 22, 23, 0, 1, 2, 3])
    );
    let out = run_all("GatherNd", vec![x24(), t(&[1, 2, 1], &[1i64, 0])], &[]);
    assert_eq!(out[0].dims(), &[1, 2, 3, 4]);
    assert_eq!(vals::<i32>(&out[0])[..4], [12, 13, 14, 15]);
    // Index vectors of length 0: all of params per row.
    let out = run_all(
        "GatherNd",
        vec![x24(), Tensor::zeros(DataType::DtInt32, [2, 0]).unwrap()],
        &[],
    );
    assert_eq!(out[0].dims(), &[2, 2, 3, 4]);
    assert_eq!(vals::<i32>(&out[0])[24..], vals::<i32>(&x24())[..]);
    let out = run_all(
        "GatherNd",
        vec![strt(&[2], &["a", "b"]), t(&[3, 1], &[1i16, 0, 1])],
        &[],
    );
    assert_eq!(strs(&out[0]), ["b", "a", "b"]);
    let z = Tensor::zeros(DataType::DtFloat, [0, 3]).unwrap();
    let none = Tensor::zeros(DataType::DtInt32, [0, 1]).unwrap();
    assert_eq!(run_all("GatherNd", vec![z, none], &[])[0].dims(), &[0, 3]);
    // IGNORE leaves zeros for bad index vectors.
    let ignore = [("bad_indices_policy", AttrValue::from("IGNORE"))];
    let out = run_all(
        "GatherNd",
        vec![x24(), t(&[3, 2], &[1i32, 3, 0, 1, 5, 0])],
        &ignore,
    );
    assert_eq!(vals::<i32>(&out[0]), [0, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0]);
}

#[test]
fn gather_nd_errors_match_tf() {
    kernels_cpu::link();
    // The node is named "n" (TF names it after the op in eager mode).
    assert_eq!(
        invalid("GatherNd", vec![x24(), t(&[1, 2], &[1i32, 3])], &[]),
        "indices[0] = [1, 3] does not index into param shape [2,3,4], node name: n"
    );
    let error = [("bad_indices_policy", AttrValue::from("ERROR"))];
    assert_eq!(
        invalid(
            "GatherNd",
            vec![x24(), t(&[1, 1, 3], &[1i64, 2, 5])],
            &error
        ),
        "indices[0,0] = [1, 2, 5] does not index into param shape [2,3,4], node name: n"
    );
    assert_eq!(
        invalid("GatherNd", vec![x24(), t(&[1, 2], &[-1i32, 2])], &[]),
        "indices[0] = [-1, 2] does not index into param shape [2,3,4], node name: n"
    );
    // Several bad vectors: the last one (TF on one thread).
    assert_eq!(
        invalid(
            "GatherNd",
            vec![
                x24(),
                t(&[2, 2, 3], &[1i32, 2, 5, 0, 0, 0, 1, 1, 1, 0, 3, 0])
            ],
            &[]
        ),
        "indices[1,1] = [0, 3, 0] does not index into param shape [2,3,4], node name: n"
    );
    assert_eq!(
        invalid("GatherNd", vec![s(5i32), t(&[1], &[0i32])], &[]),
        "params must be at least a vector"
    );
    assert_eq!(
        invalid("GatherNd", vec![x24(), s(0i32)], &[]),
        "indices must be at least a vector"
    );
    assert_eq!(
        invalid("GatherNd", vec![x24(), t(&[1, 4], &[1i32, 2, 3, 4])], &[]),
        "index innermost dimension length must be <= params rank; saw: 4 vs. 3"
    );
    assert_eq!(
        invalid(
            "GatherNd",
            vec![
                Tensor::zeros(DataType::DtFloat, [0, 3]).unwrap(),
                t(&[1, 1], &[0i32])
            ],
            &[]
        ),
        "Requested more than 0 entries, but params is empty.  Params shape: [0,3]"
    );
    assert_eq!(
        invalid(
            "GatherNd",
            vec![
                Tensor::zeros(DataType::DtFloat, [200, 200]).unwrap(),
                t(&[1, 2], &[1i16, 3])
            ],
            &[]
        ),
        "params.NumElements() too large for int16 indexing: 40000 > 32767"
    );
    assert_eq!(
        invalid(
            "GatherNd",
            vec![
                Tensor::zeros(DataType::DtFloat, [1; 8]).unwrap(),
                t(&[1, 8], &[0i32; 8])
            ],
            &[]
        ),
        "Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested rank: 8"
    );
    // A policy TF has no CPU kernel for.
    let node = common::node(
        "GatherNd",
        &[DataType::DtInt32, DataType::DtInt32],
        &[("bad_indices_policy", AttrValue::from("BOGUS"))],
    );
    assert!(create_op_kernel("CPU", &node).is_err());
}

#[test]
fn large_gather_nd_matches_a_naive_loop() {
    kernels_cpu::link();
    let params: Vec<f32> = (0..40 * 30 * 20).map(|i| i as f32).collect();
    let n = 5000;
    let idx: Vec<i64> = (0..n).flat_map(|i| [(i * 7) % 40, (i * 13) % 30]).collect();
    let out = run_all(
        "GatherNd",
        vec![t(&[40, 30, 20], &params), t(&[n as usize, 2], &idx)],
        &[],
    );
    let mut want = Vec::new();
    for i in 0..n as usize {
        let (a, b) = (idx[2 * i] as usize, idx[2 * i + 1] as usize);
        want.extend_from_slice(&params[(a * 30 + b) * 20..(a * 30 + b + 1) * 20]);
    }
    assert_eq!(vals::<f32>(&out[0]), want);
}

// ---------------------------------------------------------------- MatrixBandPart

fn m34() -> Tensor {
    t(&[3, 4], &(1..=12).map(|i| i as f32).collect::<Vec<_>>())
}

#[test]
fn matrix_band_part_matches_tf() {
    kernels_cpu::link();
    let band =
        |l: Tensor, u: Tensor| vals::<f32>(&run_all("MatrixBandPart", vec![m34(), l, u], &[])[0]);
    assert_eq!(
        band(s(1i64), s(0i64)),
        [1., 0., 0., 0., 5., 6., 0., 0., 0., 10., 11., 0.]
    );
    assert_eq!(
        band(s(-1i32), s(1i32)),
        [1., 2., 0., 0., 5., 6., 7., 0., 9., 10., 11., 12.]
    );
    let all: Vec<f32> = (1..=12).map(|i| i as f32).collect();
    assert_eq!(band(s(3i32), s(4i32)), all);
    assert_eq!(band(s(-5i32), s(-7i32)), all);
    let out = run_all(
        "MatrixBandPart",
        vec![t(&[2, 2], &[true; 4]), s(0i64), s(0i64)],
        &[],
    );
    assert_eq!(vals::<bool>(&out[0]), [true, false, false, true]);
    let e = |l: Tensor, u: Tensor| invalid("MatrixBandPart", vec![m34(), l, u], &[]);
    assert_eq!(
        e(s(4i32), s(1i32)),
        "num_lower must be negative or less or equal to number of rows (3) got: 4"
    );
    assert_eq!(
        e(s(1i32), s(5i32)),
        "num_upper must be negative or less or equal to number of columns (4) got: 5"
    );
    assert_eq!(
        e(t(&[1], &[1i32]), s(1i32)),
        "num_lower must be scalar, got shape [1]"
    );
    assert_eq!(
        e(s(1i32), t(&[1], &[1i32])),
        "num_upper must be scalar, got shape [1]"
    );
    assert_eq!(
        invalid(
            "MatrixBandPart",
            vec![t(&[2], &[1.0f32, 2.0]), s(1i32), s(1i32)],
            &[]
        ),
        "input must be at least 2-dim, received shape: [2]"
    );
}

#[test]
fn large_matrix_band_part_matches_a_naive_loop() {
    kernels_cpu::link();
    let (b, m, n) = (6usize, 70usize, 90usize);
    let x: Vec<i64> = (0..(b * m * n) as i64).collect();
    for (lower, upper) in [(3i64, 5i64), (0, -1), (-1, 0), (69, 0)] {
        let out = run_all(
            "MatrixBandPart",
            vec![t(&[b, m, n], &x), s(lower), s(upper)],
            &[],
        );
        let want: Vec<i64> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (row, col) = ((i / n % m) as i64, (i % n) as i64);
                let keep = (lower < 0 || row - col <= lower) && (upper < 0 || col - row <= upper);
                if keep { v } else { 0 }
            })
            .collect();
        assert_eq!(vals::<i64>(&out[0]), want, "{lower} {upper}");
    }
}

// ---------------------------------------------------------------- TopKV2

fn top_k(x: Tensor, k: Tensor, attrs: &[(&str, AttrValue)]) -> (Tensor, Tensor) {
    let mut out = run_all("TopKV2", vec![x, k], attrs);
    let indices = out.remove(1);
    (out.remove(0), indices)
}

fn unsorted() -> [(&'static str, AttrValue); 1] {
    [("sorted", AttrValue::from(false))]
}

#[test]
fn top_k_v2_matches_tf() {
    kernels_cpu::link();
    let x = || {
        t(
            &[2, 8],
            &[
                3f32, 1., 4., 1., 5., 9., 2., 6., 5., 3., 5., 8., 9., 7., 9., 3.,
            ],
        )
    };
    let (v, i) = top_k(x(), s(3i32), &[]);
    assert_eq!(v.dims(), &[2, 3]);
    assert_eq!(vals::<f32>(&v), [9., 6., 5., 9., 9., 8.]);
    assert_eq!(vals::<i32>(&i), [5, 7, 4, 4, 6, 3]);
    let (v, i) = top_k(x(), s(3i32), &unsorted());
    assert_eq!(vals::<f32>(&v), [5., 9., 6., 8., 9., 9.]);
    assert_eq!(vals::<i32>(&i), [4, 5, 7, 3, 4, 6]);
    let (_, i) = top_k(x(), s(8i32), &unsorted());
    assert_eq!(
        vals::<i32>(&i),
        [5, 7, 4, 2, 0, 6, 1, 3, 4, 6, 3, 5, 0, 2, 1, 7]
    );
    let (v, i) = top_k(x(), s(1i32), &[]);
    assert_eq!(
        (vals::<f32>(&v), vals::<i32>(&i)),
        (vec![9., 9.], vec![5, 4])
    );
    let (v, i) = top_k(x(), s(0i32), &[]);
    assert_eq!((v.dims(), i.dims()), (&[2, 0][..], &[2, 0][..]));
    // int8 values, int16 k and indices.
    let (v, i) = top_k(
        t(&[4], &[1i8, 2, 2, 1]),
        s(2i16),
        &[("index_type", AttrValue::from(DataType::DtInt16))],
    );
    assert_eq!((vals::<i8>(&v), vals::<i16>(&i)), (vec![2, 2], vec![1, 2]));
    let (v, i) = top_k(
        t(&[1, 3], &[3u64, 1, 2]),
        s(2i64),
        &[("index_type", AttrValue::from(DataType::DtInt64))],
    );
    assert_eq!((vals::<u64>(&v), vals::<i64>(&i)), (vec![3, 2], vec![0, 2]));
    let (v, i) = top_k(t(&[3], &[-0.0f32, 0.0, -0.0]), s(2i32), &[]);
    assert_eq!(vals::<i32>(&i), [0, 1]);
    assert!(vals::<f32>(&v)[0].is_sign_negative());
    let (v, _) = top_k(
        Tensor::zeros(DataType::DtFloat, [0, 5]).unwrap(),
        s(2i32),
        &[],
    );
    assert_eq!(v.dims(), &[0, 2]);
}

#[test]
fn top_k_v2_orders_nans_as_tf() {
    kernels_cpu::link();
    let nan = f32::NAN;
    let z = || t(&[5], &[1., nan, 3., nan, 2.]);
    let (v, i) = top_k(z(), s(3i32), &[]);
    assert_eq!(vals::<i32>(&i), [1, 2, 4]);
    assert!(vals::<f32>(&v)[0].is_nan());
    let (_, i) = top_k(z(), s(5i32), &[]);
    assert_eq!(vals::<i32>(&i), [2, 0, 1, 3, 4]);
    let (v, i) = top_k(z(), s(1i32), &[]);
    assert_eq!((vals::<f32>(&v), vals::<i32>(&i)), (vec![2.], vec![4]));
    let (_, i) = top_k(t(&[3], &[nan, 1., 3.]), s(1i32), &[]);
    assert_eq!(vals::<i32>(&i), [2]);
    // TF 2.21 on longer rows (k == 1: Eigen's packets of 8 floats).
    let row = [
        2., 3., 4., 4., 5., nan, 0., nan, 5., 1., 0., 3., 4., 4., 4., 3., 0., 5., 2., 5., 4.,
    ];
    let (_, i) = top_k(t(&[21], &row), s(19i32), &unsorted());
    assert_eq!(
        vals::<i32>(&i),
        [
            6, 9, 11, 18, 0, 12, 14, 15, 1, 19, 4, 5, 8, 13, 2, 3, 7, 17, 20
        ]
    );
    let row = [
        2., 4., 4., 1., 0., 2., 3., 2., 3., 0., 5., 3., nan, nan, 2., 1., 1., 3., 2., nan, 1.,
    ];
    let (_, i) = top_k(t(&[21], &row), s(1i32), &[]);
    assert_eq!(vals::<i32>(&i), [10]);
    let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
    let mut p: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    p[7] = nan;
    let (_, i) = top_k(t(&[8], &h(&p)), s(1i32), &[]);
    assert_eq!(vals::<i32>(&i), [6]);
}

#[test]
fn top_k_v2_errors_match_tf() {
    kernels_cpu::link();
    let x = || t(&[2, 8], &[0f32; 16]);
    let e =
        |x: Tensor, k: Tensor, attrs: &[(&str, AttrValue)]| invalid("TopKV2", vec![x, k], attrs);
    assert_eq!(
        e(x(), s(9i32), &[]),
        "input must have at least k columns. Had 8, needed 9"
    );
    assert_eq!(e(x(), s(-1i32), &[]), "Need k >= 0, got -1");
    assert_eq!(
        e(x(), t(&[1], &[1i32]), &[]),
        "k must be scalar, got shape [1]"
    );
    assert_eq!(
        e(s(1.0f32), s(0i32), &[]),
        "input must be >= 1-D, got shape []"
    );
    let i16_index = [("index_type", AttrValue::from(DataType::DtInt16))];
    assert_eq!(
        e(
            Tensor::zeros(DataType::DtFloat, [40000, 2]).unwrap(),
            s(1i32),
            &i16_index
        ),
        "First dimension of flattened input must be <= 32767, got 40000"
    );
    assert_eq!(
        e(
            Tensor::zeros(DataType::DtFloat, [2, 32768]).unwrap(),
            s(1i32),
            &i16_index
        ),
        "Second dimension of flattened input must be <= 32767, got 32768"
    );
}

#[test]
fn large_top_k_matches_a_stable_sort() {
    kernels_cpu::link();
    // 300 rows of 200 values with many ties: sorted results are a stable
    // descending sort (lower index first among equals).
    let (rows, cols) = (300usize, 200usize);
    let x: Vec<i32> = (0..rows * cols)
        .map(|i| ((i * 7919) % 101) as i32)
        .collect();
    for k in [1usize, 17, 200] {
        let (v, i) = top_k(t(&[rows, cols], &x), s(k as i32), &[]);
        let (v, i) = (vals::<i32>(&v), vals::<i32>(&i));
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let mut order: Vec<usize> = (0..cols).collect();
            order.sort_by(|&a, &b| row[b].cmp(&row[a]));
            let want: Vec<i32> = order[..k].iter().map(|&c| c as i32).collect();
            assert_eq!(&i[r * k..(r + 1) * k], &want[..], "row {r} k {k}");
            let want_v: Vec<i32> = order[..k].iter().map(|&c| row[c]).collect();
            assert_eq!(&v[r * k..(r + 1) * k], &want_v[..]);
        }
    }
}
