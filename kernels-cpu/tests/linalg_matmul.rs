//! MatMul through the public API: hand-computed products for every type,
//! transposes, wrapping integers, empty and huge shapes, TF's errors, a
//! single MatMul of TensorFlow's `cnn_f32` graph, and kernel coverage.
//!
//! Float tolerances (the summation order differs from TF's Eigen kernels
//! and from the f64 reference): f32 `abs 1e-4 + rel 1e-4` for k ≤ 200
//! (k·ε·max|a·b| ≈ 1e-5); f64 `1e-12`; half `abs 5e-3 + rel 2e-3` (products
//! summed in f32, one rounding to half: ½ ulp = 2⁻¹¹ relative); bfloat16
//! `abs 2e-2 + rel 8e-3` (one rounding: 2⁻⁸ relative). Hand cases are exact.
#![cfg(feature = "linalg")]

use crate::nn_support as support;

use registry_core::kernel::KernelError;
use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Complex128, Tensor};
use support::*;

fn matmul(t: DataType, transpose_a: bool, transpose_b: bool) -> registry_core::proto::NodeDef {
    node(
        "MatMul",
        &[t, t],
        &[
            ("transpose_a", transpose_a.into()),
            ("transpose_b", transpose_b.into()),
        ],
    )
}

const A: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // [2,3]
const B: [f64; 6] = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]; // [3,2]
const AB: [f64; 4] = [58.0, 64.0, 139.0, 154.0]; // by hand: 1·7+2·9+3·11 = 58, ...

/// Transposes a row-major `rows × cols` matrix.
fn transpose(v: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols)
        .flat_map(|j| (0..rows).map(move |i| v[i * cols + j]))
        .collect()
}

const ALL_TYPES: [DataType; 8] = [
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtComplex64,
    DataType::DtComplex128,
    DataType::DtInt32,
    DataType::DtInt64,
];

#[test]
fn two_by_three_times_three_by_two_every_type() {
    for t in ALL_TYPES {
        let out = run(
            &matmul(t, false, false),
            vec![tensor(t, &[2, 3], &A), tensor(t, &[3, 2], &B)],
        )
        .unwrap();
        assert_eq!(out[0].dtype(), t);
        assert_eq!(out[0].dims(), &[2, 2], "{t:?}");
        assert_eq!(values(&out[0]), AB, "{t:?}");
    }
}

#[test]
fn transposes_read_through_strides() {
    let at = transpose(&A, 2, 3); // [3,2]
    let bt = transpose(&B, 3, 2); // [2,3]
    for t in ALL_TYPES {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let a = if ta {
                tensor(t, &[3, 2], &at)
            } else {
                tensor(t, &[2, 3], &A)
            };
            let b = if tb {
                tensor(t, &[2, 3], &bt)
            } else {
                tensor(t, &[3, 2], &B)
            };
            let out = run(&matmul(t, ta, tb), vec![a, b]).unwrap();
            assert_eq!(out[0].dims(), &[2, 2]);
            assert_eq!(
                values(&out[0]),
                AB,
                "{t:?} transpose_a={ta} transpose_b={tb}"
            );
        }
    }
}

#[test]
fn complex_products_use_both_parts() {
    // [[1+2i, 3-i]] · [[3+4i], [2i]] = (1+2i)(3+4i) + (3-i)(2i) = (-5+10i) + (2+6i) = -3+16i
    let a = [Complex64::new(1.0, 2.0), Complex64::new(3.0, -1.0)];
    let b = [Complex64::new(3.0, 4.0), Complex64::new(0.0, 2.0)];
    let out = run(
        &matmul(DataType::DtComplex64, false, false),
        vec![
            Tensor::from_slice([1, 2], &a).unwrap(),
            Tensor::from_slice([2, 1], &b).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(
        out[0].as_slice::<Complex64>().unwrap(),
        &[Complex64::new(-3.0, 16.0)]
    );
    // transpose_b on complex128: no conjugation (TF's MatMul has none).
    let a = [Complex128::new(0.0, 1.0), Complex128::new(1.0, 1.0)];
    let b = [Complex128::new(0.0, 1.0), Complex128::new(2.0, 0.0)];
    let out = run(
        &matmul(DataType::DtComplex128, false, true),
        vec![
            Tensor::from_slice([1, 2], &a).unwrap(),
            Tensor::from_slice([1, 2], &b).unwrap(),
        ],
    )
    .unwrap();
    // i·i + (1+i)·2 = -1 + 2 + 2i = 1 + 2i
    assert_eq!(
        out[0].as_slice::<Complex128>().unwrap(),
        &[Complex128::new(1.0, 2.0)]
    );
}

#[test]
fn integers_wrap_like_tensorflow() {
    // [MAX, 1] · [2, 3]ᵀ = 2·MAX + 3, wrapping: 2·MAX = -2, so 1.
    let out = run(
        &matmul(DataType::DtInt32, false, false),
        vec![
            Tensor::from_vec([1, 2], vec![i32::MAX, 1]).unwrap(),
            Tensor::from_vec([2, 1], vec![2, 3]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[1]);
    let out = run(
        &matmul(DataType::DtInt64, true, false),
        vec![
            Tensor::from_vec([2, 1], vec![i64::MIN, -1]).unwrap(),
            Tensor::from_vec([2, 1], vec![-1, i64::MAX]).unwrap(),
        ],
    )
    .unwrap();
    // MIN·(-1) wraps to MIN; (-1)·MAX = -MAX; MIN - MAX wraps to 1.
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[1]);
}

/// A naive f64 product of row-major matrices (the independent reference).
fn naive(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    out
}

#[test]
fn random_products_match_a_naive_reference() {
    // Sizes with ragged edges; 300·200·150 crosses the threading threshold.
    for &(m, k, n) in &[
        (7, 5, 3),
        (67, 129, 45),
        (300, 150, 200),
        (1, 64, 33),
        (33, 64, 1),
    ] {
        for (t, abs, rel) in [
            (DataType::DtFloat, 1e-4, 1e-4),
            (DataType::DtDouble, 1e-12, 1e-12),
            (DataType::DtHalf, 5e-3, 2e-3),
            (DataType::DtBfloat16, 2e-2, 8e-3),
        ] {
            // Reference from the inputs as rounded to `t`.
            let a = values(&tensor(t, &[m, k], &pseudo_random(m * k, 1)));
            let bm = values(&tensor(t, &[k, n], &pseudo_random(k * n, 2)));
            let expected = naive(&a, &bm, m, k, n);
            for (ta, tb) in [(false, false), (true, true)] {
                let a_in = if ta {
                    tensor(t, &[k, m], &transpose(&a, m, k))
                } else {
                    tensor(t, &[m, k], &a)
                };
                let b_in = if tb {
                    tensor(t, &[n, k], &transpose(&bm, k, n))
                } else {
                    tensor(t, &[k, n], &bm)
                };
                let out = run(&matmul(t, ta, tb), vec![a_in, b_in]).unwrap();
                assert_eq!(out[0].dims(), &[m, n]);
                assert_close(&values(&out[0]), &expected, abs, rel);
            }
        }
    }
}

#[test]
fn random_integer_products_are_exact() {
    let (m, k, n) = (130, 150, 70); // 1.4M multiply-adds: the threaded path
    let a: Vec<f64> = pseudo_random(m * k, 3)
        .iter()
        .map(|v| (v * 100.0).round())
        .collect();
    let bm: Vec<f64> = pseudo_random(k * n, 4)
        .iter()
        .map(|v| (v * 100.0).round())
        .collect();
    let expected = naive(&a, &bm, m, k, n);
    for t in [DataType::DtInt32, DataType::DtInt64] {
        for (ta, tb) in [(false, false), (true, false), (false, true)] {
            let a_in = if ta {
                tensor(t, &[k, m], &transpose(&a, m, k))
            } else {
                tensor(t, &[m, k], &a)
            };
            let b_in = if tb {
                tensor(t, &[n, k], &transpose(&bm, k, n))
            } else {
                tensor(t, &[k, n], &bm)
            };
            let out = run(&matmul(t, ta, tb), vec![a_in, b_in]).unwrap();
            assert_eq!(values(&out[0]), expected, "{t:?} {ta} {tb}");
        }
    }
}

#[test]
fn empty_dimensions() {
    for t in ALL_TYPES {
        // k = 0: a [3,0] by [0,4] product is all zeros.
        let out = run(
            &matmul(t, false, false),
            vec![tensor(t, &[3, 0], &[]), tensor(t, &[0, 4], &[])],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[3, 4]);
        assert_eq!(values(&out[0]), vec![0.0; 12]);
        // m = 0 and n = 0: empty outputs.
        let out = run(
            &matmul(t, false, false),
            vec![tensor(t, &[0, 3], &[]), tensor(t, &[3, 2], &B)],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[0, 2]);
        let out = run(
            &matmul(t, true, false),
            vec![tensor(t, &[3, 2], &A), tensor(t, &[3, 0], &[])],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[2, 0]);
    }
}

#[test]
fn errors_use_tensorflow_messages() {
    let k = matmul(DataType::DtFloat, false, false);
    let f = |shape: &[usize]| {
        let n = shape.iter().product();
        tensor(DataType::DtFloat, shape, &vec![1.0; n])
    };
    assert_eq!(
        run_err(&k, vec![f(&[3]), f(&[3, 2])]),
        "In[0] is not a matrix. Instead it has shape [3]"
    );
    assert_eq!(
        run_err(&k, vec![f(&[3, 2]), f(&[2, 2, 1])]),
        "In[1] is not a matrix. Instead it has shape [2,2,1]"
    );
    assert_eq!(
        run_err(&k, vec![f(&[2, 3]), f(&[4, 5])]),
        "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]"
    );
    // With transposes the message still shows the shapes as given.
    assert_eq!(
        run_err(
            &matmul(DataType::DtFloat, true, true),
            vec![f(&[2, 3]), f(&[2, 3])]
        ),
        "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]"
    );
    assert!(matches!(
        run(
            &k,
            vec![f(&[2, 3]), tensor(DataType::DtDouble, &[3, 2], &B)]
        ),
        Err(KernelError::InputDtype { index: 1, .. })
    ));
    assert!(matches!(
        run(&k, vec![f(&[2, 3])]),
        Err(KernelError::InputCount { .. })
    ));
}

#[test]
fn huge_output_is_an_error_not_an_abort() {
    // [2^40, 0] · [0, 2^40] would have 2^80 elements.
    let huge = 1usize << 40;
    let a = Tensor::zeros(DataType::DtFloat, [huge, 0]).unwrap();
    let b = Tensor::zeros(DataType::DtFloat, [0, huge]).unwrap();
    let err = run(&matmul(DataType::DtFloat, false, false), vec![a, b]).unwrap_err();
    assert!(matches!(err, KernelError::Tensor(_)), "{err}");
    // [2^31, 0] · [0, 2^31]: the count fits, the memory does not.
    let big = 1usize << 31;
    let a = Tensor::zeros(DataType::DtInt64, [big, 0]).unwrap();
    let b = Tensor::zeros(DataType::DtInt64, [0, big]).unwrap();
    assert!(run(&matmul(DataType::DtInt64, false, false), vec![a, b]).is_err());
}

#[test]
fn cached_kernel_computes_repeatedly() {
    let k = kernel(&matmul(DataType::DtFloat, false, true));
    let a = tensor(DataType::DtFloat, &[2, 3], &A);
    let bt = tensor(DataType::DtFloat, &[2, 3], &transpose(&B, 3, 2));
    for _ in 0..3 {
        let out = k.compute([a.clone(), bt.clone()]).unwrap();
        assert_eq!(values(&out[0]), AB);
    }
    // The inputs were only read.
    assert_eq!(values(&a), A);
}

#[test]
fn matches_tensorflow_on_the_cnn_classifier_layer() {
    // cnn_f32: fc/matmul = Reshape(pool, [2, 64]) · fc/w, TF's values in io.json.
    let g = ref_graph("cnn_f32");
    let (_, pooled) = g.io_values("pool:0");
    let x = tensor(DataType::DtFloat, &[2, 64], &pooled);
    let w = g.constant("fc/w");
    let out = run(&g.node("fc/matmul"), vec![x, w]).unwrap();
    let (shape, expected) = g.io_values("fc/matmul:0");
    assert_eq!(out[0].dims(), shape.as_slice());
    assert_close(&values(&out[0]), &expected, 1e-5, 1e-5);
}

#[test]
fn every_tensorflow_cpu_type_has_a_kernel() {
    // tf_cpu_kernels.md: MatMul T in {bfloat16, complex128, complex64, double,
    // float, half, int16, int32, int64}.
    for t in ALL_TYPES {
        try_kernel(&matmul(t, false, false)).unwrap_or_else(|e| panic!("{t:?}: {e}"));
    }
    // TF registers an int16 kernel, but MatMul's OpDef does not allow int16
    // (in TF too), so no node can ever use it: the NodeDef is rejected.
    let int16 = with_t(matmul(DataType::DtFloat, false, false), DataType::DtInt16);
    let err = try_kernel(&int16).unwrap_err();
    assert!(err.to_string().contains("int16"), "{err}");
}
