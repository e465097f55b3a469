//! `Shape`, `ShapeN`, `Size`, `Rank`, `Fill`, `ZerosLike`, `OnesLike`, `Range` and
//! `BroadcastTo` run through `create_op_kernel`. Every value and message
//! checked here is what TensorFlow 2.21's CPU kernel gave for the same
//! inputs (eager `tf.raw_ops` calls), or, for large tensors, what a naive
//! index loop in this file computes.

use crate::common;

use common::{invalid, kernel, run, s, strs, strt, t, try_run, vals};

use registry_core::create_op_kernel;
use registry_core::kernel::KernelError;
use registry_core::proto::{AttrValue, DataType};
use registry_core::tensor::{Complex64, Complex128, Tensor, TensorElement, bf16, f16};

// ---------------------------------------------------------------- helpers

fn out_type(dtype: DataType) -> (&'static str, AttrValue) {
    ("out_type", AttrValue::from(dtype))
}

// ---------------------------------------------------------------- ShapeN, Size, Rank

#[test]
fn shape_shape_n_size_and_rank_values() {
    kernels_cpu::link();
    let z = |d: &[usize]| Tensor::zeros(DataType::DtFloat, d).unwrap();
    let out = try_run("ShapeN", vec![z(&[2, 3]), z(&[]), z(&[0, 4, 1])], &[]).unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(vals::<i32>(&out[0]), [2, 3]);
    assert_eq!(out[1].dims(), &[0]);
    assert_eq!(vals::<i32>(&out[2]), [0, 4, 1]);
    let out = try_run(
        "ShapeN",
        vec![strt(&[2], &["a", "b"])],
        &[out_type(DataType::DtInt64)],
    )
    .unwrap();
    assert_eq!(vals::<i64>(&out[0]), [2]);

    let shape = run("Shape", vec![z(&[2, 0, 3])], &[]);
    assert_eq!(
        (shape.dtype(), vals::<i32>(&shape)),
        (DataType::DtInt32, vec![2, 0, 3])
    );
    let shape = run(
        "Shape",
        vec![strt(&[], &["s"])],
        &[out_type(DataType::DtInt64)],
    );
    assert_eq!((shape.dims(), vals::<i64>(&shape)), (&[0][..], vec![]));
    assert_eq!(vals::<i32>(&run("Size", vec![z(&[2, 0, 3])], &[])), [0]);
    let size = run(
        "Size",
        vec![strt(&[3], &["a", "b", "c"])],
        &[out_type(DataType::DtInt64)],
    );
    assert_eq!((size.dims(), vals::<i64>(&size)), (&[][..], vec![3]));
    assert_eq!(vals::<i32>(&run("Rank", vec![z(&[2, 0, 3])], &[])), [3]);
    assert_eq!(vals::<i32>(&run("Rank", vec![s(1.0f64)], &[])), [0]);
}

#[test]
fn shape_and_size_refuse_values_an_int32_cannot_hold() {
    kernels_cpu::link();
    // Zero-element tensors with huge dimensions (TF's messages).
    let big = Tensor::zeros(DataType::DtFloat, [1 << 31, 0]).unwrap();
    let edge = Tensor::zeros(DataType::DtFloat, [3, (1 << 31) - 1, 0]).unwrap();
    let ok = Tensor::zeros(DataType::DtFloat, [(1 << 31) - 2, 0]).unwrap();
    assert_eq!(
        invalid("Shape", vec![big.clone()], &[]),
        "Shape output type is 32-bit  but dim 0 is 2147483648"
    );
    let two31 = Tensor::zeros(DataType::DtFloat, [(1 << 31) - 1, 0]).unwrap();
    assert_eq!(
        invalid("Shape", vec![two31], &[]),
        "Shape output type is 32-bit  but dim 0 is 2147483647"
    );
    let out = run("Shape", vec![big.clone()], &[out_type(DataType::DtInt64)]);
    assert_eq!(vals::<i64>(&out), [1 << 31, 0]);
    assert_eq!(
        invalid("ShapeN", vec![ok.clone(), edge.clone()], &[]),
        "ShapeN output type is 32-bit but shape 1 dim 1 is 2147483647"
    );
    let out = try_run("ShapeN", vec![big.clone()], &[out_type(DataType::DtInt64)]).unwrap();
    assert_eq!(vals::<i64>(&out[0]), [1 << 31, 0]);
    let out = try_run("ShapeN", vec![ok], &[]).unwrap();
    assert_eq!(vals::<i32>(&out[0]), [i32::MAX - 1, 0]);
    // Size counts elements: none here.
    assert_eq!(vals::<i32>(&run("Size", vec![big], &[])), [0]);
}

// ---------------------------------------------------------------- Fill

#[test]
fn fill_values() {
    kernels_cpu::link();
    let out = run("Fill", vec![t(&[2], &[2i64, 3]), s(1.5f32)], &[]);
    assert_eq!((out.dims(), vals::<f32>(&out)), (&[2, 3][..], vec![1.5; 6]));
    // A value given as a vector of one element.
    let out = run("Fill", vec![t(&[1], &[2i32]), strt(&[1], &["xy"])], &[]);
    assert_eq!(strs(&out), ["xy", "xy"]);
    let out = run("Fill", vec![t(&[1], &[3i32]), s(-7i8)], &[]);
    assert_eq!(vals::<i8>(&out), [-7, -7, -7]);
    let c = Complex64::new(1.0, 2.0);
    assert_eq!(
        vals::<Complex64>(&run("Fill", vec![t(&[1], &[2i32]), s(c)], &[])),
        [c, c]
    );
    // Dims given as a scalar (legacy), empty dims (a scalar), empty output.
    assert_eq!(run("Fill", vec![s(3i32), s(true)], &[]).dims(), &[3]);
    let out = run("Fill", vec![t::<i32>(&[0], &[]), s(3i32)], &[]);
    assert_eq!((out.dims(), vals::<i32>(&out)), (&[][..], vec![3]));
    let out = run(
        "Fill",
        vec![t(&[3], &[2i32, 0, 3]), strt(&[], &["ab"])],
        &[],
    );
    assert_eq!(out.dims(), &[2, 0, 3]);
    // Quantized values are moved as bytes.
    let mut q = Tensor::zeros(DataType::DtQuint16, []).unwrap();
    q.as_mut_bytes().unwrap().copy_from_slice(&[0x34, 0x12]);
    let out = run("Fill", vec![t(&[1], &[2i32]), q], &[]);
    assert_eq!(out.as_bytes().unwrap(), &[0x34, 0x12, 0x34, 0x12]);
    // Large enough to fill in parallel.
    let out = run(
        "Fill",
        vec![t(&[2], &[300i32, 301]), s(f16::from_f32(-0.5))],
        &[],
    );
    assert!(vals::<f16>(&out).iter().all(|&v| v == f16::from_f32(-0.5)));
    assert_eq!(out.num_elements(), 300 * 301);
}

#[test]
fn fill_errors_match_tf() {
    kernels_cpu::link();
    let cases = [
        (t(&[2], &[2i32, -1]), s(1.0f32), "Dimension -1 must be >= 0"),
        (t(&[2], &[2i64, -3]), s(1.0f32), "Dimension -3 must be >= 0"),
        (
            t(&[1, 2], &[2i32, 1]),
            s(1.0f32),
            "dims must represent a vector, got shape [1,2]",
        ),
        (
            t(&[1], &[2i32]),
            t(&[2], &[1.0f32, 2.0]),
            "value must represent a scalar, got shape [2]",
        ),
        (
            t(&[1], &[2i32]),
            t(&[1, 1], &[1.0f32]),
            "value must represent a scalar, got shape [1,1]",
        ),
        (
            t(&[2], &[1i64 << 40, 1 << 40]),
            s(1.0f32),
            "Shape [1099511627776,1099511627776] would have more than 2**63 - 1 elements",
        ),
    ];
    for (dims, value, msg) in cases {
        assert_eq!(invalid("Fill", vec![dims, value], &[]), msg);
    }
}

// ---------------------------------------------------------------- ZerosLike, OnesLike

#[test]
fn zeros_like_values() {
    kernels_cpu::link();
    assert_eq!(
        strs(&run("ZerosLike", vec![strt(&[2], &["a", "bc"])], &[])),
        ["", ""]
    );
    let out = run("ZerosLike", vec![t(&[1, 2], &[1.5f32, -2.0])], &[]);
    assert_eq!(
        (out.dims(), vals::<f32>(&out)),
        (&[1, 2][..], vec![0.0, 0.0])
    );
    assert_eq!(
        vals::<bool>(&run("ZerosLike", vec![t(&[2], &[true, false])], &[])),
        [false, false]
    );
    let x = Tensor::from_vec([200, 200], vec![7i64; 40_000]).unwrap();
    let out = run("ZerosLike", vec![x.clone()], &[]);
    assert!(vals::<i64>(&out).iter().all(|&v| v == 0));
    assert!(
        vals::<i64>(&x).iter().all(|&v| v == 7),
        "the input was overwritten"
    );
}

#[test]
fn ones_like_values() {
    kernels_cpu::link();
    let b = bf16::from_f32;
    let out = run("OnesLike", vec![t(&[1, 2], &[b(1.5), b(-2.0)])], &[]);
    assert_eq!(
        (out.dims(), vals::<bf16>(&out)),
        (&[1, 2][..], vec![b(1.0); 2])
    );
    let z = Complex128::new(0.0, 3.0);
    assert_eq!(
        vals::<Complex128>(&run("OnesLike", vec![t(&[2], &[z, z])], &[])),
        [Complex128::new(1.0, 0.0); 2]
    );
    assert_eq!(
        vals::<bool>(&run("OnesLike", vec![t(&[2], &[false; 2])], &[])),
        [true; 2]
    );
    assert_eq!(
        vals::<u64>(&run("OnesLike", vec![t(&[1], &[7u64])], &[])),
        [1]
    );
    assert_eq!(
        run(
            "OnesLike",
            vec![Tensor::zeros(DataType::DtFloat, [0, 3]).unwrap()],
            &[]
        )
        .dims(),
        &[0, 3]
    );
    // A shared input is not overwritten; a unique one is reused.
    let x = Tensor::from_vec([300, 200], vec![5i32; 60_000]).unwrap();
    let out = run("OnesLike", vec![x.clone()], &[]);
    assert!(vals::<i32>(&out).iter().all(|&v| v == 1));
    assert!(vals::<i32>(&x).iter().all(|&v| v == 5));
    let before = x.as_bytes().unwrap().as_ptr();
    let k = kernel("OnesLike", std::slice::from_ref(&x), &[]);
    let out = k.compute([x]).unwrap().remove(0);
    assert_eq!(out.as_bytes().unwrap().as_ptr(), before);
    // No OnesLike of strings (TF has none either).
    let node = common::node("ZerosLike", &[DataType::DtString], &[]);
    assert!(create_op_kernel("CPU", &node).is_ok());
}

// ---------------------------------------------------------------- Range

fn range<T: TensorElement>(start: T, limit: T, delta: T) -> Result<Tensor, KernelError> {
    try_run("Range", vec![s(start), s(limit), s(delta)], &[]).map(|mut v| v.remove(0))
}

#[test]
fn range_values_match_tf() {
    kernels_cpu::link();
    // Element i is start + T(i) * delta in the type, as TF computes it
    // (not a running sum: -0.09999999999999964, not -0.09999999999999987).
    let out = range(0.1f32, 1.000_000_1, 0.3).unwrap();
    assert_eq!(vals::<f32>(&out), [0.1, 0.4, 0.700_000_05, 1.0]);
    let out = range(2.0f64, -1.0, -0.7).unwrap();
    assert_eq!(
        vals::<f64>(&out),
        [
            2.0,
            1.3,
            0.600_000_000_000_000_1,
            -0.099_999_999_999_999_64,
            -0.799_999_999_999_999_8
        ]
    );
    let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
    let out = range(f16::from_f32(1.0), f16::from_f32(2.0), f16::from_f32(0.1)).unwrap();
    assert_eq!(
        vals::<f16>(&out),
        h(&[
            1.0,
            1.099_609_4,
            1.200_195_3,
            1.299_804_7,
            1.400_390_6,
            1.5,
            1.599_609_4,
            1.699_218_8,
            1.799_804_7,
            1.900_390_6
        ])
    );
    let b = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
    let out = range(
        bf16::from_f32(1.0),
        bf16::from_f32(2.0),
        bf16::from_f32(0.1),
    )
    .unwrap();
    assert_eq!(
        vals::<bf16>(&out),
        b(&[
            1.0,
            1.101_562_5,
            1.203_125,
            1.296_875,
            1.398_437_5,
            1.5,
            1.601_562_5,
            1.703_125,
            1.796_875,
            1.906_25
        ])
    );
    // T(i) rounds: 2049 is 2048 in half, 257 is 256 in bfloat16.
    let out = range(f16::from_f32(0.0), f16::from_f32(3000.0), f16::ONE).unwrap();
    assert_eq!(out.num_elements(), 3000);
    assert_eq!(
        vals::<f16>(&out)[2047..2053],
        h(&[2047.0, 2048.0, 2048.0, 2050.0, 2052.0, 2052.0])
    );
    let out = range(bf16::ONE, bf16::from_f32(600.0), bf16::ONE).unwrap();
    assert_eq!(
        vals::<bf16>(&out)[255..262],
        b(&[256.0, 256.0, 256.0, 260.0, 260.0, 260.0, 260.0])
    );
    let out = range(0.5f32, 2e7, 1.0).unwrap();
    assert_eq!(out.num_elements(), 20_000_000);
    assert_eq!(
        vals::<f32>(&out)[16_777_215..16_777_220],
        [
            16_777_216.0,
            16_777_216.0,
            16_777_216.0,
            16_777_218.0,
            16_777_220.0
        ]
    );
    let out = range(i32::MIN, i32::MAX, 1 << 30).unwrap();
    assert_eq!(vals::<i32>(&out), [i32::MIN, -(1 << 30), 0, 1 << 30]);
    let out = range(i64::MIN, i64::MAX, i64::MAX).unwrap();
    assert_eq!(vals::<i64>(&out), [i64::MIN, -1, i64::MAX - 1]);
    let out = range(i32::MAX - 4, i32::MAX, 3).unwrap();
    assert_eq!(vals::<i32>(&out), [i32::MAX - 4, i32::MAX - 1]);
    assert_eq!(range(3i64, 3, -1).unwrap().dims(), &[0]);
    // Bounds given as vectors of one element (legacy).
    let out = try_run("Range", vec![t(&[1], &[1i32]), s(4i32), s(1i32)], &[]).unwrap();
    assert_eq!(vals::<i32>(&out[0]), [1, 2, 3]);
}

#[test]
fn range_errors_match_tf() {
    kernels_cpu::link();
    let e = |r: Result<Tensor, KernelError>| match r {
        Err(KernelError::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    let h = f16::from_f32;
    assert_eq!(
        e(range(h(1.5), h(0.1), h(1.0))),
        "Requires start <= limit when delta > 0: 1.5/0.0999756"
    );
    assert_eq!(e(range(h(1.0), h(3.0), h(0.0))), "Requires delta != 0: 0");
    assert_eq!(e(range(1i32, 3, 0)), "Requires delta != 0: 0");
    assert_eq!(
        e(range(1i64, 3, -1)),
        "Requires start >= limit when delta < 0: 1/3"
    );
    assert_eq!(
        e(range(5i32, 1, 1)),
        "Requires start <= limit when delta > 0: 5/1"
    );
    assert_eq!(
        e(range(1.5f64, 0.1, 1.0)),
        "Requires start <= limit when delta > 0: 1.5/0.1"
    );
    assert_eq!(
        e(range(f32::NAN, 1.0, 1.0)),
        "Requires start <= limit when delta > 0: nan/1"
    );
    assert_eq!(
        e(range(1.234_567_9e-7_f32, 0.0, 1.0)),
        "Requires start <= limit when delta > 0: 1.23457e-07/0"
    );
    let too_large = "Requires ((limit - start) / delta) <= 9223372036854775807";
    assert_eq!(e(range(0.0f32, f32::INFINITY, 1.0)), too_large);
    assert_eq!(e(range(0.0f32, 1e19, 1.0)), too_large);
    assert_eq!(e(range(i64::MIN, i64::MAX, 1)), too_large);
    let shape_err = |inputs: Vec<Tensor>| invalid("Range", inputs, &[]);
    assert_eq!(
        shape_err(vec![s(0i32), s(5i32), t(&[2], &[2i32, 3])]),
        "delta must be a scalar, not shape [2]"
    );
    assert_eq!(
        shape_err(vec![s(0i32), t(&[1, 1], &[5i32]), s(2i32)]),
        "limit must be a scalar, not shape [1,1]"
    );
    // Too large to allocate: an error, not an abort.
    assert!(range(0.0f32, 1e18, 1.0).is_err());
}

// ---------------------------------------------------------------- BroadcastTo

fn broadcast_to(x: Tensor, shape: &[i32]) -> Result<Tensor, KernelError> {
    try_run("BroadcastTo", vec![x, t(&[shape.len()], shape)], &[]).map(|mut v| v.remove(0))
}

#[test]
fn broadcast_to_values_match_tf() {
    kernels_cpu::link();
    let out = broadcast_to(t(&[2, 1], &[1i32, 2]), &[2, 2, 3]).unwrap();
    assert_eq!(out.dims(), &[2, 2, 3]);
    assert_eq!(vals::<i32>(&out), [1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2]);
    let out = try_run(
        "BroadcastTo",
        vec![strt(&[2], &["a", "b"]), t(&[2], &[2i64, 2])],
        &[],
    )
    .unwrap();
    assert_eq!(strs(&out[0]), ["a", "b", "a", "b"]);
    let out = broadcast_to(t(&[1, 3], &[1.5f32, 2.5, 3.5]), &[2, 3]).unwrap();
    assert_eq!(vals::<f32>(&out), [1.5, 2.5, 3.5, 1.5, 2.5, 3.5]);
    assert_eq!(
        broadcast_to(t(&[2, 1], &[1i8, 2]), &[2, 0]).unwrap().dims(),
        &[2, 0]
    );
    assert_eq!(
        vals::<bool>(&broadcast_to(t(&[1], &[true]), &[3]).unwrap()),
        [true; 3]
    );
    assert_eq!(
        vals::<i32>(&broadcast_to(s(5i32), &[2, 3]).unwrap()),
        [5; 6]
    );
    assert_eq!(broadcast_to(t(&[1], &[1i32]), &[0]).unwrap().dims(), &[0]);
    assert_eq!(
        broadcast_to(Tensor::zeros(DataType::DtFloat, [1, 0]).unwrap(), &[3, 0])
            .unwrap()
            .dims(),
        &[3, 0]
    );
    // The same shape: the input itself.
    let x = Tensor::from_vec([64], vec![3u16; 64]).unwrap();
    let out = broadcast_to(x.clone(), &[64]).unwrap();
    assert!(out.shares_buffer_with(&x));
}

#[test]
fn broadcast_to_large_matches_a_naive_loop() {
    kernels_cpu::link();
    // [7, 1, 33, 1] to [3, 7, 50, 33, 4]: 138,600 elements, filled in parallel.
    let in_dims = [7usize, 1, 33, 1];
    let out_dims = [3usize, 7, 50, 33, 4];
    let n: usize = in_dims.iter().product();
    let x = Tensor::from_vec(in_dims, (0..n as i64).collect()).unwrap();
    let out = broadcast_to(x, &out_dims.map(|d| d as i32)).unwrap();
    let got = vals::<i64>(&out);
    let mut want = Vec::with_capacity(got.len());
    for a in 0..3 {
        for b in 0..7 {
            for c in 0..50 {
                for d in 0..33 {
                    for e in 0..4 {
                        let _ = (a, c, e);
                        want.push((b * 33 + d) as i64);
                    }
                }
            }
        }
    }
    assert_eq!(got, want);
}

#[test]
fn broadcast_to_errors_match_tf() {
    kernels_cpu::link();
    let e = |r: Result<Tensor, KernelError>| match r {
        Err(KernelError::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    let v3 = || t(&[3], &[1i32, 2, 3]);
    assert_eq!(
        e(broadcast_to(v3(), &[2, 1])),
        "Unable to broadcast tensor of shape [3] to tensor of shape [2,1]"
    );
    assert_eq!(
        e(broadcast_to(v3(), &[6])),
        "Incompatible shapes: [3] vs. [6]"
    );
    assert_eq!(
        e(broadcast_to(v3(), &[2, 0])),
        "Incompatible shapes: [3] vs. [2,0]"
    );
    assert_eq!(
        e(broadcast_to(v3(), &[1])),
        "Unable to broadcast tensor of shape [3] to tensor of shape [1]"
    );
    assert_eq!(
        e(broadcast_to(
            Tensor::zeros(DataType::DtFloat, [0]).unwrap(),
            &[1]
        )),
        "Unable to broadcast tensor of shape [0] to tensor of shape [1]"
    );
    assert_eq!(
        e(broadcast_to(t(&[1, 3], &[1i32, 2, 3]), &[3])),
        "Rank of input (2) must be no greater than rank of output shape (1)."
    );
    assert_eq!(e(broadcast_to(v3(), &[2, -3])), "Dimension -3 must be >= 0");
    assert_eq!(
        invalid("BroadcastTo", vec![v3(), t(&[1, 2], &[2i32, 2])], &[]),
        "shape must be a vector of {int32,int64}, got shape [1,2]"
    );
}
