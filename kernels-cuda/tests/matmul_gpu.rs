//! MatMul on the GPU (cuBLAS) against the CPU kernel: every transpose
//! combination, half/bfloat16/float/double, empty and `k = 0` products, and
//! TF's shape errors. Each test is ignored unless asked
//! for with `--ignored` (it needs a GPU).
#![cfg(all(feature = "cuda", feature = "linalg"))]

mod common;

use common::{assert_close, gpu, node, pseudo_random, run_cpu, run_gpu, tensor, values};
use registry_core::proto::{DataType, NodeDef};

fn matmul(t: DataType, transpose_a: bool, transpose_b: bool) -> NodeDef {
    node(
        "MatMul",
        &[t, t],
        &[
            ("transpose_a", transpose_a.into()),
            ("transpose_b", transpose_b.into()),
        ],
    )
}

/// Tolerance (abs, rel) per dtype, relative to the magnitude of the sums.
fn tolerance(t: DataType) -> (f64, f64) {
    match t {
        DataType::DtDouble => (1e-12, 1e-12),
        DataType::DtFloat => (1e-5, 1e-5),
        DataType::DtHalf => (4e-3, 2e-3),
        _ => (3e-2, 1.6e-2),
    }
}

#[test]
#[ignore = "needs a GPU"]
fn matches_cpu_for_every_transpose_and_type() {
    let dev = gpu();
    for t in [
        DataType::DtFloat,
        DataType::DtDouble,
        DataType::DtHalf,
        DataType::DtBfloat16,
    ] {
        for (m, k, n) in [(3, 5, 4), (1, 1, 1), (33, 70, 65), (128, 64, 1)] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let a_shape = if ta { [k, m] } else { [m, k] };
                let b_shape = if tb { [n, k] } else { [k, n] };
                let a = tensor(t, &a_shape, &pseudo_random(m * k, 1));
                let b = tensor(t, &b_shape, &pseudo_random(k * n, 2));
                let node = matmul(t, ta, tb);
                let cpu = run_cpu(&node, &[a.clone(), b.clone()]).unwrap();
                let gpu = run_gpu(&dev, &node, &[a, b]).unwrap();
                assert_eq!(gpu[0].dtype(), t);
                assert_eq!(gpu[0].dims(), &[m, n]);
                let (abs, rel) = tolerance(t);
                // Sums of k products of magnitude <= 1.
                assert_close(&values(&gpu[0]), &values(&cpu[0]), (abs * k as f64, rel));
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn known_product() {
    let dev = gpu();
    // [[1, 2, 3], [4, 5, 6]] x [[7, 8], [9, 10], [11, 12]] = [[58, 64], [139, 154]].
    let a = tensor(DataType::DtFloat, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = tensor(
        DataType::DtFloat,
        &[3, 2],
        &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0],
    );
    let out = run_gpu(&dev, &matmul(DataType::DtFloat, false, false), &[a, b]).unwrap();
    assert_eq!(values(&out[0]), [58.0, 64.0, 139.0, 154.0]);
}

#[test]
#[ignore = "needs a GPU"]
fn empty_products() {
    let dev = gpu();
    for t in [DataType::DtFloat, DataType::DtHalf] {
        // k = 0: zeros of [m, n].
        let a = tensor(t, &[3, 0], &[]);
        let b = tensor(t, &[0, 4], &[]);
        let out = run_gpu(&dev, &matmul(t, false, false), &[a, b]).unwrap();
        assert_eq!(out[0].dims(), &[3, 4]);
        assert_eq!(values(&out[0]), vec![0.0; 12]);
        // m = 0 and n = 0: empty outputs.
        let a = tensor(t, &[0, 2], &[]);
        let b = tensor(t, &[2, 5], &pseudo_random(10, 3));
        let out = run_gpu(&dev, &matmul(t, false, false), &[a, b]).unwrap();
        assert_eq!(out[0].dims(), &[0, 5]);
        let a = tensor(t, &[2, 2], &pseudo_random(4, 4));
        let b = tensor(t, &[0, 2], &[]);
        let out = run_gpu(&dev, &matmul(t, false, true), &[a, b]).unwrap();
        assert_eq!(out[0].dims(), &[2, 0]);
    }
}

#[test]
#[ignore = "needs a GPU"]
fn shape_errors_match_cpu() {
    let dev = gpu();
    let t = DataType::DtFloat;
    for (a_shape, b_shape, ta, tb) in [
        (vec![2, 3], vec![2, 3], false, false),
        (vec![2, 3], vec![2, 3], true, true),
        (vec![2, 3, 1], vec![3, 1], false, false),
        (vec![2, 3], vec![3], false, false),
    ] {
        let na: usize = a_shape.iter().product();
        let nb: usize = b_shape.iter().product();
        let a = tensor(t, &a_shape, &pseudo_random(na, 5));
        let b = tensor(t, &b_shape, &pseudo_random(nb, 6));
        let node = matmul(t, ta, tb);
        let cpu = run_cpu(&node, &[a.clone(), b.clone()])
            .unwrap_err()
            .to_string();
        let gpu = run_gpu(&dev, &node, &[a, b]).unwrap_err().to_string();
        assert_eq!(gpu, cpu);
    }
}
