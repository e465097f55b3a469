//! Relu: every type by hand, NaN and signed zeros (TF's Eigen max keeps
//! NaN and -0.0), a large input (threaded), in place, empty. Exact.

use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::{Tensor, bf16, f16};

use super::support::*;

fn relu(t: DataType) -> NodeDef {
    node("Relu", &[t], &[])
}

#[test]
fn every_type_by_hand() {
    let signed = [
        DataType::DtFloat,
        DataType::DtDouble,
        DataType::DtInt32,
        DataType::DtInt16,
        DataType::DtInt8,
        DataType::DtInt64,
        DataType::DtBfloat16,
        DataType::DtHalf,
    ];
    for t in signed {
        let out = run(
            &relu(t),
            vec![tensor(t, &[2, 3], &[-3.0, -1.0, 0.0, 1.0, 2.0, 100.0])],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[2, 3]);
        assert_eq!(values(&out[0]), [0.0, 0.0, 0.0, 1.0, 2.0, 100.0], "{t:?}");
    }
    for t in [
        DataType::DtUint8,
        DataType::DtUint16,
        DataType::DtUint32,
        DataType::DtUint64,
    ] {
        let out = run(&relu(t), vec![tensor(t, &[3], &[0.0, 7.0, 200.0])]).unwrap();
        assert_eq!(values(&out[0]), [0.0, 7.0, 200.0], "{t:?}");
    }
    let out = run(
        &relu(DataType::DtInt32),
        vec![Tensor::from_vec([2], vec![i32::MIN, i32::MAX]).unwrap()],
    )
    .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[0, i32::MAX]);
}

#[test]
fn nan_infinities_and_signed_zero() {
    let x = [
        f32::NAN,
        -f32::NAN,
        f32::NEG_INFINITY,
        f32::INFINITY,
        -0.0,
        -1e-40,
    ];
    let out = run(
        &relu(DataType::DtFloat),
        vec![Tensor::from_slice([6], &x).unwrap()],
    )
    .unwrap();
    let y = out[0].as_slice::<f32>().unwrap();
    assert!(y[0].is_nan() && y[1].is_nan());
    assert_eq!(&y[2..4], &[0.0, f32::INFINITY]);
    // TF 2.21 answers +0 for float's -0 (tests/data/tf-numerics), and -0
    // for half's (below).
    assert!(y[4] == 0.0 && y[4].is_sign_positive(), "-0.0 becomes +0.0");
    assert!(
        y[5] == 0.0 && y[5].is_sign_positive(),
        "a negative denormal becomes +0"
    );
    let h = [
        f16::NAN,
        -f16::NAN,
        f16::NEG_INFINITY,
        f16::NEG_ZERO,
        f16::from_f32(-2.5),
        f16::MAX,
    ];
    let out = run(
        &relu(DataType::DtHalf),
        vec![Tensor::from_slice([6], &h).unwrap()],
    )
    .unwrap();
    let y = out[0].as_slice::<f16>().unwrap();
    assert!(y[0].is_nan() && y[1].is_nan());
    assert_eq!(y[2].to_bits(), 0);
    assert_eq!(y[3].to_bits(), f16::NEG_ZERO.to_bits());
    assert_eq!(&y[4..], &[f16::ZERO, f16::MAX]);
    let bf = [
        bf16::NAN,
        -bf16::NAN,
        bf16::NEG_INFINITY,
        bf16::from_f32(-1e-39),
        bf16::MIN_POSITIVE,
    ];
    let out = run(
        &relu(DataType::DtBfloat16),
        vec![Tensor::from_slice([5], &bf).unwrap()],
    )
    .unwrap();
    let y = out[0].as_slice::<bf16>().unwrap();
    assert!(y[0].is_nan() && y[1].is_nan());
    assert_eq!(&y[2..], &[bf16::ZERO, bf16::ZERO, bf16::MIN_POSITIVE]);
}

#[test]
fn large_input_in_place_or_copied() {
    let n = 100_003;
    let x: Vec<f64> = pseudo_random(n, 5);
    let expected: Vec<f64> = values(&tensor(DataType::DtFloat, &[n], &x))
        .iter()
        .map(|&v| v.max(0.0))
        .collect();
    let k = kernel(&relu(DataType::DtFloat));
    let shared = tensor(DataType::DtFloat, &[n], &x);
    let out = k.compute([shared.clone()]).unwrap();
    assert_eq!(values(&out[0]), expected);
    assert!(
        values(&shared).iter().any(|&v| v < 0.0),
        "shared input untouched"
    );
    let unique = tensor(DataType::DtFloat, &[n], &x);
    let ptr = unique.as_bytes().unwrap().as_ptr();
    let out = k.compute([unique]).unwrap();
    assert_eq!(
        out[0].as_bytes().unwrap().as_ptr(),
        ptr,
        "computed in place"
    );
    assert_eq!(values(&out[0]), expected);
}

#[test]
fn empty_and_scalar() {
    let out = run(
        &relu(DataType::DtInt64),
        vec![tensor(DataType::DtInt64, &[0, 4], &[])],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[0, 4]);
    let out = run(&relu(DataType::DtDouble), vec![Tensor::scalar(-2.0f64)]).unwrap();
    assert_eq!(out[0].dims(), &[] as &[usize]);
    assert_eq!(values(&out[0]), [0.0]);
}

#[test]
fn wrong_dtype_is_refused() {
    let err = run(
        &relu(DataType::DtFloat),
        vec![tensor(DataType::DtInt32, &[1], &[1.0])],
    )
    .unwrap_err();
    assert!(
        matches!(err, registry_core::kernel::KernelError::InputDtype { .. }),
        "{err}"
    );
}
