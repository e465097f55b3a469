//! `PadV2`, `MirrorPad`, `SpaceToBatchND`, `BatchToSpaceND`, `DepthToSpace`
//! and `SpaceToDepth` run through `create_op_kernel`: the examples of TF's
//! op documentation, round trips large enough to be filled in parallel,
//! and bad inputs refused with TF's messages (no panics).

use crate::common;

use common::{invalid, run, shaped, t, try_run};

use registry_core::kernel::KernelError;
use registry_core::proto::AttrValue;
use registry_core::tensor::Tensor;

fn iota(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    t(shape, &(0..n).map(|i| i as i32).collect::<Vec<_>>())
}

fn mode(m: &str) -> [(&'static str, AttrValue); 1] {
    [("mode", AttrValue::from(m))]
}

fn block(b: i64) -> [(&'static str, AttrValue); 1] {
    [("block_size", AttrValue::from(b))]
}

#[test]
fn pad_v2_fills_with_the_constant() {
    let x = t(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let p = t(&[2, 2], &[1i32, 0, 0, 2]);
    let y = run("PadV2", vec![x, p, Tensor::scalar(9.0f32)], &[]);
    assert_eq!(y.dims(), &[3, 5]);
    assert_eq!(
        y.as_slice::<f32>().unwrap(),
        &[9., 9., 9., 9., 9., 1., 2., 3., 9., 9., 4., 5., 6., 9., 9.]
    );
    // An empty input padded: all constant.
    let x = t(&[0, 2], &[] as &[i32]);
    let p = t(&[2, 2], &[1i64, 1, 0, 0]);
    let y = run("PadV2", vec![x, p, Tensor::scalar(7i32)], &[]);
    assert_eq!(shaped(&y), (vec![2, 2], vec![7; 4]));
    let e = invalid(
        "PadV2",
        vec![
            iota(&[2, 3]),
            t(&[2, 2], &[1i32, 1, 1, 1]),
            t(&[2], &[0i32, 0]),
        ],
        &[],
    );
    assert_eq!(e, "constant_values must be a scalar. Found: [2]");
    let e = invalid(
        "PadV2",
        vec![iota(&[2, 3]), t(&[1, 2], &[1i32, 1]), Tensor::scalar(0i32)],
        &[],
    );
    assert_eq!(
        e,
        "The first dimension of paddings must be the rank of inputs[1,2] [2,3]"
    );
}

#[test]
fn mirror_pad_matches_tf_examples() {
    // TF's MirrorPad documentation.
    let x = t(&[2, 3], &[1i32, 2, 3, 4, 5, 6]);
    let p = t(&[2, 2], &[1i32, 1, 2, 2]);
    let y = run("MirrorPad", vec![x.clone(), p.clone()], &mode("REFLECT"));
    assert_eq!(
        shaped(&y),
        (
            vec![4, 7],
            vec![
                6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1
            ]
        )
    );
    let y = run("MirrorPad", vec![x.clone(), p], &mode("SYMMETRIC"));
    assert_eq!(
        shaped(&y),
        (
            vec![4, 7],
            vec![
                2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5
            ]
        )
    );
    // Only the outer dimension padded: whole rows are mirrored.
    let y = run(
        "MirrorPad",
        vec![x.clone(), t(&[2, 2], &[0i64, 1, 0, 0])],
        &mode("REFLECT"),
    );
    assert_eq!(shaped(&y), (vec![3, 3], vec![1, 2, 3, 4, 5, 6, 1, 2, 3]));
    let e = invalid(
        "MirrorPad",
        vec![iota(&[3, 4]), t(&[2, 2], &[3i32, 0, 0, 0])],
        &mode("REFLECT"),
    );
    assert_eq!(
        e,
        "paddings must be less than the dimension size: 3, 0 not less than 3"
    );
    let e = invalid(
        "MirrorPad",
        vec![iota(&[3, 4]), t(&[2, 2], &[0i32, 4, 0, 0])],
        &mode("SYMMETRIC"),
    );
    assert_eq!(
        e,
        "paddings must be no greater than the dimension size: 0, 4 greater than 3"
    );
    let e = invalid(
        "MirrorPad",
        vec![iota(&[3, 4]), t(&[2, 2], &[-1i32, 0, 0, 0])],
        &mode("REFLECT"),
    );
    assert_eq!(e, "paddings must be non-negative: -1 0");
    match try_run(
        "MirrorPad",
        vec![iota(&[1; 6]), t(&[6, 2], &[0i32; 12])],
        &mode("REFLECT"),
    ) {
        Err(KernelError::Unimplemented(m)) => assert_eq!(m, "inputs rank not in [0,5]: 6"),
        other => panic!("expected Unimplemented, got {other:?}"),
    }
}

#[test]
fn space_to_batch_and_back_match_tf_examples() {
    // TF's SpaceToBatchND documentation, example (4).
    let x = t(&[2, 2, 4, 1], &(1..=16).collect::<Vec<i32>>());
    let b = t(&[2], &[2i32, 2]);
    let p = t(&[2, 2], &[0i32, 0, 2, 0]);
    let y = run("SpaceToBatchND", vec![x.clone(), b.clone(), p.clone()], &[]);
    assert_eq!(
        shaped(&y),
        (
            vec![8, 1, 3, 1],
            vec![
                0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16
            ]
        )
    );
    let back = run("BatchToSpaceND", vec![y, b, p], &[]);
    assert_eq!(shaped(&back), shaped(&x));
}

#[test]
fn large_round_trips_are_exact() {
    // Large enough to be filled in parallel.
    let x = iota(&[2, 64, 64, 8]);
    let b = t(&[2], &[4i64, 2]);
    let p = t(&[2, 2], &[2i32, 2, 0, 0]);
    let y = run("SpaceToBatchND", vec![x.clone(), b.clone(), p.clone()], &[]);
    assert_eq!(y.dims(), &[16, 17, 32, 8]);
    let back = run("BatchToSpaceND", vec![y, b, p], &[]);
    assert_eq!(shaped(&back), shaped(&x));
    let d = run("SpaceToDepth", vec![x.clone()], &block(4));
    assert_eq!(d.dims(), &[2, 16, 16, 128]);
    let s = run("DepthToSpace", vec![d], &block(4));
    assert_eq!(shaped(&s), shaped(&x));
    let m = run(
        "MirrorPad",
        vec![x.clone(), t(&[4, 2], &[0i32, 0, 3, 3, 0, 0, 1, 1])],
        &mode("REFLECT"),
    );
    assert_eq!(m.dims(), &[2, 70, 64, 10]);
    let v = m.as_slice::<i32>().unwrap();
    let xv = x.as_slice::<i32>().unwrap();
    // Output (n, h, w, c) reads input (n, reflect(h - 3), w, reflect(c - 1)).
    let reflect = |i: i64, n: i64| {
        let i = if i < 0 { -i } else { i };
        if i >= n { 2 * (n - 1) - i } else { i }
    };
    for (o, &got) in v.iter().enumerate() {
        let c = (o % 10) as i64;
        let w = (o / 10) % 64;
        let h = ((o / 640) % 70) as i64;
        let n = o / (640 * 70);
        let (hi, ci) = (reflect(h - 3, 64) as usize, reflect(c - 1, 8) as usize);
        assert_eq!(got, xv[((n * 64 + hi) * 64 + w) * 8 + ci], "at {o}");
    }
}

#[test]
fn depth_to_space_matches_tf_examples() {
    let y = run(
        "DepthToSpace",
        vec![t(&[1, 1, 1, 4], &[1i32, 2, 3, 4])],
        &block(2),
    );
    assert_eq!(shaped(&y), (vec![1, 2, 2, 1], vec![1, 2, 3, 4]));
    // TF's DepthToSpace documentation: [1, 2, 2, 4] -> [1, 4, 4, 1].
    let x = t(&[1, 2, 2, 4], &(1..=16).collect::<Vec<i32>>());
    let y = run("DepthToSpace", vec![x.clone()], &block(2));
    assert_eq!(
        shaped(&y),
        (
            vec![1, 4, 4, 1],
            vec![1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16]
        )
    );
    let back = run("SpaceToDepth", vec![y], &block(2));
    assert_eq!(shaped(&back), shaped(&x));
}

#[test]
fn bad_inputs_are_refused_with_tf_messages() {
    let x = iota(&[1, 2, 3, 2]);
    let b = t(&[2], &[2i32, 2]);
    let zeros = t(&[2, 2], &[0i32; 4]);
    assert_eq!(
        invalid(
            "SpaceToBatchND",
            vec![x.clone(), b.clone(), zeros.clone()],
            &[]
        ),
        "padded_shape[1]=3 is not divisible by block_shape[1]=2"
    );
    assert_eq!(
        invalid(
            "SpaceToBatchND",
            vec![x.clone(), b.clone(), t(&[2, 3], &[0i32; 6])],
            &[]
        ),
        "paddings should have shape [2, 2] instead of [2,3]"
    );
    assert_eq!(
        invalid(
            "SpaceToBatchND",
            vec![x.clone(), t(&[2], &[0i32, 1]), zeros.clone()],
            &[]
        ),
        "All values in block_shape must be positive, got value, 0 at index 0."
    );
    assert_eq!(
        invalid(
            "SpaceToBatchND",
            vec![iota(&[4, 4]), b.clone(), zeros.clone()],
            &[]
        ),
        "input rank should be >= 3 instead of 2"
    );
    assert_eq!(
        invalid(
            "BatchToSpaceND",
            vec![iota(&[9, 2, 3, 1]), b.clone(), zeros.clone()],
            &[]
        ),
        "Input batch dimension (9) is not divisible by product of block sizes (4)"
    );
    assert_eq!(
        invalid(
            "BatchToSpaceND",
            vec![iota(&[8, 2, 3, 1]), b.clone(), t(&[2, 2], &[3i32, 2, 0, 0])],
            &[]
        ),
        "cropped_shape[0]=-1 must be non-negative"
    );
    assert_eq!(
        invalid(
            "BatchToSpaceND",
            vec![iota(&[8, 2, 3, 1]), b, t(&[2], &[0i32, 0])],
            &[]
        ),
        "crops should have shape [2, 2] instead of [2]"
    );
    assert_eq!(
        invalid("DepthToSpace", vec![iota(&[1, 2, 2, 6])], &block(2)),
        "Input depth dimension 6 should be divisible by: 4"
    );
    assert_eq!(
        invalid("SpaceToDepth", vec![iota(&[1, 3, 4, 2])], &block(2)),
        "Image width 4 and height 3 should be divisible by block_size: 2"
    );
    assert_eq!(
        invalid("SpaceToDepth", vec![iota(&[4, 6, 2])], &block(2)),
        "Input rank should be: 4 instead of: 3"
    );
    let nchw = [
        ("block_size", AttrValue::from(2i64)),
        ("data_format", AttrValue::from("NCHW")),
    ];
    assert_eq!(
        invalid("DepthToSpace", vec![iota(&[1, 4, 2, 2])], &nchw),
        "Only NHWC data_format supported on CPU. Got NCHW"
    );
}
