//! FusedBatchNormV3: inference and training by hand (NHWC, NCHW, 5-D),
//! exponential averaging, half/bfloat16 `x`, the six outputs, empty inputs
//! and TF's errors.
//!
//! Tolerances: f32 `abs 1e-6 + rel 1e-5` (rsqrt and summation order);
//! half `abs 2e-3 + rel 1e-3`, bfloat16 `abs 1.6e-2 + rel 8e-3` (one
//! rounding of y).

use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::{Tensor, TensorShape};

use super::support::*;

/// The type of scale, offset, mean and variance.
const U: DataType = DataType::DtFloat;

fn bn(t: DataType, training: bool, format: &str, epsilon: f32, factor: f32) -> NodeDef {
    node(
        "FusedBatchNormV3",
        &[t, U, U, U, U],
        &[
            ("is_training", training.into()),
            ("data_format", format.into()),
            ("epsilon", epsilon.into()),
            ("exponential_avg_factor", factor.into()),
        ],
    )
}

fn vec1(v: &[f64]) -> Tensor {
    tensor(DataType::DtFloat, &[v.len()], v)
}

#[test]
fn inference_by_hand() {
    // Two channels, NHWC [1, 1, 2, 2]: x = [[1, 10], [3, 20]].
    let x = [1.0, 10.0, 3.0, 20.0];
    let (scale, offset, mean, var) = ([2.0, 0.5], [1.0, -1.0], [2.0, 15.0], [4.0, 25.0]);
    let eps = 0.001;
    let expected: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = i % 2;
            (v - mean[c]) * scale[c] / (var[c] + f64::from(eps)).sqrt() + offset[c]
        })
        .collect();
    for (t, abs, rel) in [
        (DataType::DtFloat, 1e-6, 1e-5),
        (DataType::DtHalf, 2e-3, 1e-3),
        (DataType::DtBfloat16, 1.6e-2, 8e-3),
    ] {
        let out = run(
            &bn(t, false, "NHWC", eps, 1.0),
            vec![
                tensor(t, &[1, 1, 2, 2], &x),
                vec1(&scale),
                vec1(&offset),
                vec1(&mean),
                vec1(&var),
            ],
        )
        .unwrap();
        assert_eq!(out.len(), 6);
        assert_eq!(out[0].dtype(), t);
        assert_close(&values(&out[0]), &expected, abs, rel);
        assert_eq!(values(&out[1]), mean);
        assert_eq!(values(&out[2]), var);
        assert_eq!(out[5].shape(), &TensorShape::scalar());
        assert_eq!(values(&out[5]), [0.0]);
    }
    // NCHW [1, 2, 1, 2]: the same numbers, channel-major.
    let x_nchw = [1.0, 3.0, 10.0, 20.0];
    let out = run(
        &bn(DataType::DtFloat, false, "NCHW", eps, 1.0),
        vec![
            tensor(DataType::DtFloat, &[1, 2, 1, 2], &x_nchw),
            vec1(&scale),
            vec1(&offset),
            vec1(&mean),
            vec1(&var),
        ],
    )
    .unwrap();
    assert_close(
        &values(&out[0]),
        &[expected[0], expected[2], expected[1], expected[3]],
        1e-6,
        1e-5,
    );
}

#[test]
fn training_computes_batch_moments() {
    // One channel holding 1, 2, 3, 4: mean 2.5, biased variance 1.25,
    // Bessel-corrected 1.25 * 4 / 3.
    let x = [1.0, 2.0, 3.0, 4.0];
    let eps = 1e-3f32;
    let inv_std = 1.0 / (1.25 + f64::from(eps)).sqrt();
    let y: Vec<f64> = x.iter().map(|v| (v - 2.5) * inv_std * 2.0 + 0.5).collect();
    for (format, shape) in [
        ("NHWC", [1, 2, 2, 1]),
        ("NCHW", [1, 1, 2, 2]),
        ("NHWC", [4, 1, 1, 1]),
    ] {
        let out = run(
            &bn(DataType::DtFloat, true, format, eps, 1.0),
            vec![
                tensor(DataType::DtFloat, &shape, &x),
                vec1(&[2.0]),
                vec1(&[0.5]),
                vec1(&[]),
                vec1(&[]),
            ],
        )
        .unwrap();
        assert_close(&values(&out[0]), &y, 1e-6, 1e-5);
        assert_close(&values(&out[1]), &[2.5], 0.0, 1e-7);
        assert_close(&values(&out[2]), &[1.25 * 4.0 / 3.0], 0.0, 1e-6);
        assert_close(&values(&out[3]), &[2.5], 0.0, 1e-7);
        assert_close(&values(&out[4]), &[1.25], 0.0, 1e-7);
        assert_eq!(values(&out[5]), [0.0]);
    }
}

#[test]
fn training_with_exponential_average_and_two_channels() {
    // NHWC [2, 1, 1, 2]: channel 0 holds 1, 3; channel 1 holds 10, 30.
    let x = [1.0, 10.0, 3.0, 30.0];
    let (old_mean, old_var) = ([0.0, 100.0], [1.0, 50.0]);
    let out = run(
        &bn(DataType::DtFloat, true, "NHWC", 0.0, 0.25),
        vec![
            tensor(DataType::DtFloat, &[2, 1, 1, 2], &x),
            vec1(&[1.0, 1.0]),
            vec1(&[0.0, 0.0]),
            vec1(&old_mean),
            vec1(&old_var),
        ],
    )
    .unwrap();
    // Batch: means 2 and 20, biased variances 1 and 100 (Bessel x2).
    assert_close(&values(&out[0]), &[-1.0, -1.0, 1.0, 1.0], 1e-6, 1e-6);
    assert_close(
        &values(&out[1]),
        &[0.75 * 0.0 + 0.25 * 2.0, 0.75 * 100.0 + 0.25 * 20.0],
        0.0,
        1e-6,
    );
    assert_close(
        &values(&out[2]),
        &[0.75 * 1.0 + 0.25 * 2.0, 0.75 * 50.0 + 0.25 * 200.0],
        0.0,
        1e-6,
    );
    assert_close(&values(&out[3]), &[2.0, 20.0], 0.0, 1e-7);
    assert_close(&values(&out[4]), &[1.0, 100.0], 0.0, 1e-7);
}

/// Per-channel training normalisation in f64 for a channels-last array.
fn train_reference(x: &[f64], c: usize, eps: f64) -> Vec<f64> {
    let n = x.len() / c;
    let mean: Vec<f64> = (0..c)
        .map(|ch| x.iter().skip(ch).step_by(c).sum::<f64>() / n as f64)
        .collect();
    let var: Vec<f64> = (0..c)
        .map(|ch| {
            x.iter()
                .skip(ch)
                .step_by(c)
                .map(|v| (v - mean[ch]).powi(2))
                .sum::<f64>()
                / n as f64
        })
        .collect();
    x.iter()
        .enumerate()
        .map(|(i, v)| (v - mean[i % c]) / (var[i % c] + eps).sqrt())
        .collect()
}

#[test]
fn large_and_five_dimensional_inputs() {
    let c = 6;
    let dims = [3, 4, 5, 40, c]; // NDHWC, 14400 elements per... 2400 rows
    let n: usize = dims.iter().product();
    let x: Vec<f64> = values(&tensor(
        DataType::DtFloat,
        &dims,
        &pseudo_random(n, 21)
            .iter()
            .map(|v| v * 3.0 + 1.0)
            .collect::<Vec<_>>(),
    ));
    let ones = vec1(&[1.0; 6]);
    let zeros = vec1(&[0.0; 6]);
    let out = run(
        &bn(DataType::DtFloat, true, "NDHWC", 1e-3, 1.0),
        vec![
            tensor(DataType::DtFloat, &dims, &x),
            ones.clone(),
            zeros.clone(),
            vec1(&[]),
            vec1(&[]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &dims);
    assert_close(&values(&out[0]), &train_reference(&x, c, 1e-3), 1e-5, 1e-5);
    // The same data as NCDHW (channels second) gives the same statistics.
    let mut x_first = vec![0.0; n];
    let rows = n / c;
    let per_image = rows / dims[0];
    for (i, &v) in x.iter().enumerate() {
        let (row, ch) = (i / c, i % c);
        let (img, rest) = (row / per_image, row % per_image);
        x_first[(img * c + ch) * per_image + rest] = v;
    }
    let out2 = run(
        &bn(DataType::DtFloat, true, "NCDHW", 1e-3, 1.0),
        vec![
            tensor(DataType::DtFloat, &[3, c, 4, 5, 40], &x_first),
            ones,
            zeros,
            vec1(&[]),
            vec1(&[]),
        ],
    )
    .unwrap();
    assert_close(&values(&out2[1]), &values(&out[1]), 1e-6, 1e-6);
    assert_close(&values(&out2[2]), &values(&out[2]), 1e-6, 1e-6);
}

#[test]
fn empty_input_gives_nan_moments() {
    let out = run(
        &bn(DataType::DtFloat, true, "NHWC", 1e-3, 1.0),
        vec![
            tensor(DataType::DtFloat, &[0, 2, 2, 3], &[]),
            vec1(&[1.0; 3]),
            vec1(&[0.0; 3]),
            vec1(&[]),
            vec1(&[]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[0, 2, 2, 3]);
    assert!(
        values(&out[1])
            .iter()
            .chain(&values(&out[2]))
            .all(|v| v.is_nan())
    );
    assert_eq!(out[1].dims(), &[3]);
}

#[test]
fn errors_use_tensorflow_messages() {
    let k = bn(DataType::DtFloat, false, "NHWC", 1e-3, 1.0);
    let x = tensor(DataType::DtFloat, &[1, 1, 2, 3], &[1.0; 6]);
    let c3 = vec1(&[1.0; 3]);
    assert_eq!(
        run_err(
            &k,
            vec![
                tensor(DataType::DtFloat, &[2, 3], &[1.0; 6]),
                c3.clone(),
                c3.clone(),
                c3.clone(),
                c3.clone()
            ]
        ),
        "input must be 4 or 5-dimensional[2,3]"
    );
    assert_eq!(
        run_err(
            &k,
            vec![
                x.clone(),
                tensor(DataType::DtFloat, &[1, 3], &[1.0; 3]),
                c3.clone(),
                c3.clone(),
                c3.clone()
            ]
        ),
        "scale must be 1-dimensional[1,3]"
    );
    assert_eq!(
        run_err(
            &k,
            vec![
                x.clone(),
                vec1(&[1.0; 2]),
                c3.clone(),
                c3.clone(),
                c3.clone()
            ]
        ),
        "scale must have the same number of elements as the channels of x, got 2 and 3"
    );
    assert_eq!(
        run_err(
            &k,
            vec![
                x.clone(),
                c3.clone(),
                c3.clone(),
                vec1(&[1.0; 2]),
                c3.clone()
            ]
        ),
        "When is_training=false, mean must have the same number of elements as the channels of x, got 2 and 3"
    );
    let ema = bn(DataType::DtFloat, true, "NHWC", 1e-3, 0.5);
    assert_eq!(
        run_err(
            &ema,
            vec![x.clone(), c3.clone(), c3.clone(), c3.clone(), vec1(&[])]
        ),
        "When exponential_avg_factor != 1, variance must have the same number of elements as the channels of x, got 0 and 3"
    );
    let err = run(
        &k,
        vec![
            x,
            c3.clone(),
            c3.clone(),
            c3.clone(),
            tensor(DataType::DtDouble, &[3], &[1.0; 3]),
        ],
    )
    .unwrap_err();
    assert!(matches!(
        err,
        registry_core::kernel::KernelError::InputDtype { index: 4, .. }
    ));
}
