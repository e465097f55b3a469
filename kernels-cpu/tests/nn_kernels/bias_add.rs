//! BiasAdd: every type by hand (wrapping integers), NHWC and NCHW at ranks
//! 2 to 5, in-place forwarding, empty inputs and TF's errors. Additions are
//! exact here (small values), so no tolerance.

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::{Complex64, Tensor};

use super::support::*;

fn bias_add(t: DataType, format: &str) -> NodeDef {
    node("BiasAdd", &[t, t], &[("data_format", format.into())])
}

const TYPES: [DataType; 14] = [
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtInt32,
    DataType::DtUint8,
    DataType::DtInt16,
    DataType::DtInt8,
    DataType::DtComplex64,
    DataType::DtInt64,
    DataType::DtBfloat16,
    DataType::DtUint16,
    DataType::DtComplex128,
    DataType::DtHalf,
    DataType::DtUint32,
    DataType::DtUint64,
];

#[test]
fn nhwc_and_nchw_for_every_type() {
    for t in TYPES {
        let x = tensor(t, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let bias = tensor(t, &[3], &[10.0, 20.0, 30.0]);
        let out = run(&bias_add(t, "NHWC"), vec![x, bias]).unwrap();
        assert_eq!(
            values(&out[0]),
            [11.0, 22.0, 33.0, 14.0, 25.0, 36.0],
            "{t:?}"
        );
        // NCHW [1, 2, 2, 2]: the bias follows dimension 1.
        let x = tensor(t, &[1, 2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        let bias = tensor(t, &[2], &[10.0, 20.0]);
        let out = run(&bias_add(t, "NCHW"), vec![x, bias]).unwrap();
        assert_eq!(out[0].dims(), &[1, 2, 2, 2]);
        assert_eq!(
            values(&out[0]),
            [11.0, 12.0, 13.0, 14.0, 25.0, 26.0, 27.0, 28.0],
            "{t:?}"
        );
    }
}

#[test]
fn ranks_and_layouts() {
    let t = DataType::DtFloat;
    // NCHW of rank 2: the channel dimension is 1 = the last.
    let out = run(
        &bias_add(t, "NCHW"),
        vec![
            tensor(t, &[2, 2], &[1.0, 2.0, 3.0, 4.0]),
            tensor(t, &[2], &[10.0, 20.0]),
        ],
    )
    .unwrap();
    assert_eq!(values(&out[0]), [11.0, 22.0, 13.0, 24.0]);
    // NHWC of rank 5.
    let x: Vec<f64> = (0..24).map(f64::from).collect();
    let out = run(
        &bias_add(t, "NHWC"),
        vec![
            tensor(t, &[1, 2, 2, 3, 2], &x),
            tensor(t, &[2], &[100.0, 200.0]),
        ],
    )
    .unwrap();
    let expected: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v + if i % 2 == 0 { 100.0 } else { 200.0 })
        .collect();
    assert_eq!(values(&out[0]), expected);
    // NCHW of rank 3: [2, 3, 2].
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    let out = run(
        &bias_add(t, "NCHW"),
        vec![
            tensor(t, &[2, 3, 2], &x),
            tensor(t, &[3], &[10.0, 20.0, 30.0]),
        ],
    )
    .unwrap();
    let expected: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v + 10.0 * ((i / 2) % 3 + 1) as f64)
        .collect();
    assert_eq!(values(&out[0]), expected);
}

#[test]
fn integers_wrap_and_complex_adds_both_parts() {
    let out = run(
        &bias_add(DataType::DtInt8, "NHWC"),
        vec![
            Tensor::from_vec([1, 2], vec![127i8, -128]).unwrap(),
            Tensor::from_vec([2], vec![1i8, -1]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(out[0].as_slice::<i8>().unwrap(), &[-128, 127]);
    let out = run(
        &bias_add(DataType::DtUint64, "NHWC"),
        vec![
            Tensor::from_vec([1, 1], vec![u64::MAX]).unwrap(),
            Tensor::from_vec([1], vec![2u64]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(out[0].as_slice::<u64>().unwrap(), &[1]);
    let out = run(
        &bias_add(DataType::DtComplex64, "NHWC"),
        vec![
            Tensor::from_vec([1, 1], vec![Complex64::new(1.0, 2.0)]).unwrap(),
            Tensor::from_vec([1], vec![Complex64::new(0.5, -3.0)]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(
        out[0].as_slice::<Complex64>().unwrap(),
        &[Complex64::new(1.5, -1.0)]
    );
}

#[test]
fn large_inputs_in_place_and_shared() {
    let t = DataType::DtFloat;
    let (rows, c) = (3000, 17);
    let x: Vec<f64> = (0..rows * c).map(|i| (i % 1000) as f64).collect();
    let bias: Vec<f64> = (0..c).map(|i| i as f64 * 0.5).collect();
    let expected: Vec<f64> = x.iter().enumerate().map(|(i, v)| v + bias[i % c]).collect();
    let k = kernel(&bias_add(t, "NHWC"));
    // Shared input: a new output, the input untouched.
    let shared = tensor(t, &[rows, c], &x);
    let out = k.compute([shared.clone(), tensor(t, &[c], &bias)]).unwrap();
    assert_eq!(values(&out[0]), expected);
    assert_eq!(values(&shared), x);
    // Unique input: computed in place (same buffer as the input had).
    let unique = tensor(t, &[rows, c], &x);
    let ptr = unique.as_bytes().unwrap().as_ptr();
    let out = k.compute([unique, tensor(t, &[c], &bias)]).unwrap();
    assert_eq!(out[0].as_bytes().unwrap().as_ptr(), ptr);
    assert_eq!(values(&out[0]), expected);
    // NCHW, large: [4, 17, 1000].
    let x: Vec<f64> = (0..4 * c * 1000).map(|i| (i % 777) as f64).collect();
    let out = run(
        &bias_add(t, "NCHW"),
        vec![tensor(t, &[4, c, 1000], &x), tensor(t, &[c], &bias)],
    )
    .unwrap();
    let expected: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v + bias[(i / 1000) % c])
        .collect();
    assert_eq!(values(&out[0]), expected);
}

#[test]
fn empty_inputs() {
    let t = DataType::DtDouble;
    let out = run(
        &bias_add(t, "NHWC"),
        vec![tensor(t, &[0, 3], &[]), tensor(t, &[3], &[1.0, 2.0, 3.0])],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[0, 3]);
    let out = run(
        &bias_add(t, "NHWC"),
        vec![tensor(t, &[4, 0], &[]), tensor(t, &[0], &[])],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[4, 0]);
}

#[test]
fn errors_use_tensorflow_messages() {
    let t = DataType::DtFloat;
    let k = bias_add(t, "NHWC");
    assert_eq!(
        run_err(
            &k,
            vec![tensor(t, &[3], &[1.0; 3]), tensor(t, &[3], &[1.0; 3])]
        ),
        "Input tensor must be at least 2D: [3]"
    );
    assert_eq!(
        run_err(
            &k,
            vec![tensor(t, &[2, 3], &[1.0; 6]), tensor(t, &[1, 3], &[1.0; 3])]
        ),
        "Biases must be 1D: [1,3]"
    );
    assert_eq!(
        run_err(
            &k,
            vec![tensor(t, &[2, 4], &[1.0; 8]), tensor(t, &[3], &[1.0; 3])]
        ),
        "Must provide as many biases as the last dimension of the input tensor: [3] vs. [2,4]"
    );
    assert_eq!(
        run_err(
            &bias_add(t, "NCHW"),
            vec![
                tensor(t, &[2, 4, 3], &[1.0; 24]),
                tensor(t, &[3], &[1.0; 3])
            ]
        ),
        "Must provide as many biases as the last dimension of the input tensor: [3] vs. [2,4,3]"
    );
    assert!(matches!(
        run(
            &k,
            vec![
                tensor(t, &[2, 3], &[1.0; 6]),
                tensor(DataType::DtInt32, &[3], &[1.0; 3])
            ]
        ),
        Err(KernelError::InputDtype { index: 1, .. })
    ));
}
