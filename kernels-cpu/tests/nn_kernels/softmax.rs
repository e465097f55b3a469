//! Softmax over the last dimension: values against an f64 reference for
//! every type, stability with large logits, infinities, ranks 1 to 3, a
//! large threaded input, empty inputs and TF's error.
//!
//! Tolerances: f32 `abs 1e-7 + rel 1e-6` (exp within 1-2 ulp), f64 `1e-15`,
//! half `abs 1e-4 + rel 1e-3` and bfloat16 `abs 1e-3 + rel 8e-3` (computed
//! in f32, one rounding).

use registry_core::proto::{DataType, NodeDef};

use super::support::*;

fn softmax(t: DataType) -> NodeDef {
    node("Softmax", &[t], &[])
}

/// Row-wise softmax in f64.
fn reference(x: &[f64], classes: usize) -> Vec<f64> {
    x.chunks(classes)
        .flat_map(|row| {
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = row.iter().map(|v| (v - m).exp()).collect();
            let s: f64 = e.iter().sum();
            e.into_iter().map(move |v| v / s)
        })
        .collect()
}

const TYPES: [(DataType, f64, f64); 4] = [
    (DataType::DtFloat, 1e-7, 1e-6),
    (DataType::DtDouble, 1e-15, 1e-15),
    (DataType::DtHalf, 1e-4, 1e-3),
    (DataType::DtBfloat16, 1e-3, 8e-3),
];

#[test]
fn rows_by_hand_and_reference() {
    for (t, abs, rel) in TYPES {
        // [1, 2, 3]: e^-2, e^-1, 1 over their sum.
        let out = run(&softmax(t), vec![tensor(t, &[3], &[1.0, 2.0, 3.0])]).unwrap();
        let s = (-2f64).exp() + (-1f64).exp() + 1.0;
        assert_close(
            &values(&out[0]),
            &[(-2f64).exp() / s, (-1f64).exp() / s, 1.0 / s],
            abs,
            rel,
        );
        // Rank 3, rows of 5.
        let x = values(&tensor(
            t,
            &[2, 3, 5],
            &pseudo_random(30, 3)
                .iter()
                .map(|v| v * 4.0)
                .collect::<Vec<_>>(),
        ));
        let out = run(&softmax(t), vec![tensor(t, &[2, 3, 5], &x)]).unwrap();
        assert_eq!(out[0].dims(), &[2, 3, 5]);
        assert_close(&values(&out[0]), &reference(&x, 5), abs, rel);
    }
}

#[test]
fn large_logits_are_stable_and_infinities_follow_tensorflow() {
    let t = DataType::DtFloat;
    let out = run(
        &softmax(t),
        vec![tensor(t, &[2, 2], &[1000.0, 1001.0, -1000.0, -1000.0])],
    )
    .unwrap();
    let a = 1.0 / (1.0 + 1f64.exp());
    assert_close(&values(&out[0]), &[a, 1.0 - a, 0.5, 0.5], 1e-7, 1e-6);
    // -inf gets 0; a row with +inf or NaN is NaN (inf - inf).
    let out = run(
        &softmax(t),
        vec![tensor(
            t,
            &[3, 2],
            &[f64::NEG_INFINITY, 0.0, f64::INFINITY, 0.0, f64::NAN, 1.0],
        )],
    )
    .unwrap();
    let y = values(&out[0]);
    assert_eq!(&y[..2], &[0.0, 1.0]);
    assert!(y[2..].iter().all(|v| v.is_nan()), "{y:?}");
}

#[test]
fn large_input_uses_threads() {
    let (rows, classes) = (4000, 37);
    let x: Vec<f64> = pseudo_random(rows * classes, 9)
        .iter()
        .map(|v| v * 10.0)
        .collect();
    for (t, abs, rel) in TYPES {
        let xs = values(&tensor(t, &[rows, classes], &x));
        let out = run(&softmax(t), vec![tensor(t, &[rows, classes], &xs)]).unwrap();
        assert_close(&values(&out[0]), &reference(&xs, classes), abs, rel);
    }
}

#[test]
fn empty_inputs_and_errors() {
    let t = DataType::DtHalf;
    let out = run(&softmax(t), vec![tensor(t, &[0, 5], &[])]).unwrap();
    assert_eq!(out[0].dims(), &[0, 5]);
    let out = run(&softmax(t), vec![tensor(t, &[3, 0], &[])]).unwrap();
    assert_eq!(out[0].dims(), &[3, 0]);
    let msg = run_err(
        &softmax(DataType::DtFloat),
        vec![registry_core::tensor::Tensor::scalar(1.0f32)],
    );
    assert_eq!(msg, "logits must have >= 1 dimension, got []");
    let err = run(
        &softmax(DataType::DtFloat),
        vec![tensor(DataType::DtDouble, &[2], &[1.0, 2.0])],
    )
    .unwrap_err();
    assert!(matches!(
        err,
        registry_core::kernel::KernelError::InputDtype { .. }
    ));
}
