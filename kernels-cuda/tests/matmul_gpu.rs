//! MatMul, BatchMatMulV2, BatchMatMulV3 and Einsum on the GPU (cuBLAS)
//! against the CPU kernels: every transpose (adjoint) combination,
//! half/bfloat16/float/double, batch broadcasting (strided and per-matrix
//! products), empty and `k = 0` products, Einsum's equation forms
//! (contractions, summed labels, diagonals, repeated output labels,
//! broadcasting, more than 8 dimensions), and TF's shape errors. Each test
//! is ignored unless asked for with `--ignored` (it needs a GPU).
#![cfg(all(feature = "cuda", feature = "linalg"))]

use crate::common;

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

// ---- BatchMatMulV2, BatchMatMulV3 ----

fn batch_matmul(op: &str, t: DataType, adj_x: bool, adj_y: bool) -> NodeDef {
    let mut attrs = vec![("adj_x", adj_x.into()), ("adj_y", adj_y.into())];
    if op == "BatchMatMulV3" {
        attrs.push(("Tout", t.into()));
    }
    node(op, &[t, t], &attrs)
}

/// `[.., rows, cols]` with the last two swapped when `adj`.
fn matrices(batch: &[usize], rows: usize, cols: usize, adj: bool) -> Vec<usize> {
    let mut shape = batch.to_vec();
    if adj {
        shape.extend([cols, rows]);
    } else {
        shape.extend([rows, cols]);
    }
    shape
}

#[test]
#[ignore = "needs a GPU"]
fn batch_matmul_matches_cpu_for_every_broadcast_adjoint_and_type() {
    let dev = gpu();
    // (x's batch dims, y's batch dims): the same batches (one strided
    // call), a single matrix on either side (stride 0), and broadcasts
    // that need one product per output matrix.
    let batches: [(&[usize], &[usize]); 7] = [
        (&[3], &[3]),
        (&[2, 3], &[2, 3]),
        (&[], &[4]),
        (&[4], &[]),
        (&[1, 1], &[2, 3]),
        (&[3, 1], &[1, 4]),
        (&[2, 1], &[2, 5]),
    ];
    for op in ["BatchMatMulV2", "BatchMatMulV3"] {
        for t in [
            DataType::DtFloat,
            DataType::DtDouble,
            DataType::DtHalf,
            DataType::DtBfloat16,
        ] {
            for (s, (xb, yb)) in batches.iter().enumerate() {
                for (m, k, n) in [(3, 5, 4), (1, 1, 1), (17, 33, 9)] {
                    for (adj_x, adj_y) in
                        [(false, false), (true, false), (false, true), (true, true)]
                    {
                        let xs = matrices(xb, m, k, adj_x);
                        let ys = matrices(yb, k, n, adj_y);
                        let nx = xs.iter().product();
                        let ny = ys.iter().product();
                        let x = tensor(t, &xs, &pseudo_random(nx, 2 * s as u64 + 1));
                        let y = tensor(t, &ys, &pseudo_random(ny, 2 * s as u64 + 2));
                        let node = batch_matmul(op, t, adj_x, adj_y);
                        let cpu = if op == "BatchMatMulV3" && t == DataType::DtHalf {
                            // TF 2.21 registers no half BatchMatMulV3 on
                            // the CPU: the reference is the float product
                            // of the same (half) values.
                            let f = DataType::DtFloat;
                            let reference = batch_matmul(op, f, adj_x, adj_y);
                            let xf = tensor(f, &xs, &values(&x));
                            let yf = tensor(f, &ys, &values(&y));
                            let product = run_cpu(&reference, &[xf, yf]).unwrap();
                            vec![tensor(t, product[0].dims(), &values(&product[0]))]
                        } else {
                            run_cpu(&node, &[x.clone(), y.clone()]).unwrap()
                        };
                        let gpu = run_gpu(&dev, &node, &[x, y]).unwrap();
                        assert_eq!(gpu[0].dtype(), t);
                        assert_eq!(gpu[0].dims(), cpu[0].dims(), "{op} {xs:?} {ys:?}");
                        let (abs, rel) = tolerance(t);
                        assert_close(&values(&gpu[0]), &values(&cpu[0]), (abs * k as f64, rel));
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn batch_matmul_known_product_and_empty_cases() {
    let dev = gpu();
    let t = DataType::DtFloat;
    // Two batches: [[1, 2], [3, 4]] · I and · 2I.
    let x = tensor(t, &[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
    let y = tensor(t, &[2, 2, 2], &[1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0]);
    let out = run_gpu(
        &dev,
        &batch_matmul("BatchMatMulV2", t, false, false),
        &[x, y],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[2, 2, 2]);
    assert_eq!(values(&out[0]), [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]);
    for op in ["BatchMatMulV2", "BatchMatMulV3"] {
        for (xs, ys, out_shape) in [
            // k = 0: zeros.
            (vec![3, 2, 0], vec![3, 0, 4], vec![3, 2, 4]),
            // An empty batch, an empty matrix.
            (vec![0, 2, 3], vec![3, 4], vec![0, 2, 4]),
            (vec![2, 0, 3], vec![2, 3, 4], vec![2, 0, 4]),
        ] {
            let nx = xs.iter().product();
            let ny = ys.iter().product();
            let x = tensor(t, &xs, &pseudo_random(nx, 7));
            let y = tensor(t, &ys, &pseudo_random(ny, 8));
            let out = run_gpu(&dev, &batch_matmul(op, t, false, false), &[x, y]).unwrap();
            assert_eq!(out[0].dims(), out_shape.as_slice());
            assert!(values(&out[0]).iter().all(|&v| v == 0.0));
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn batch_matmul_errors_match_cpu() {
    let dev = gpu();
    let t = DataType::DtFloat;
    for (xs, ys) in [
        (vec![3], vec![3, 3]),
        (vec![2, 3], vec![4]),
        (vec![2, 3, 4], vec![3, 4, 5]),
        (vec![2, 3, 4], vec![2, 5, 6]),
    ] {
        let nx = xs.iter().product();
        let ny = ys.iter().product();
        let x = tensor(t, &xs, &pseudo_random(nx, 9));
        let y = tensor(t, &ys, &pseudo_random(ny, 10));
        for op in ["BatchMatMulV2", "BatchMatMulV3"] {
            let node = batch_matmul(op, t, false, false);
            let cpu = run_cpu(&node, &[x.clone(), y.clone()])
                .unwrap_err()
                .to_string();
            let gpu = run_gpu(&dev, &node, &[x.clone(), y.clone()])
                .unwrap_err()
                .to_string();
            assert_eq!(gpu, cpu);
        }
    }
}

// ---- Einsum ----

/// Runs Einsum with `equation` on both devices: the same output, within
/// `terms` (the products summed into each output element) roundings of
/// the dtype, or the same error.
#[cfg(all(feature = "array", feature = "reduce"))]
fn check_einsum(
    dev: &opreg_cuda::GpuDevice,
    t: DataType,
    equation: &str,
    shapes: &[&[usize]],
    terms: usize,
) {
    let inputs: Vec<_> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let n = s.iter().product();
            tensor(t, s, &pseudo_random(n, 11 * i as u64 + terms as u64))
        })
        .collect();
    let node = node(
        "Einsum",
        &vec![t; inputs.len()],
        &[("equation", equation.into())],
    );
    let what = format!("Einsum {equation} {shapes:?} {t:?}");
    match (run_cpu(&node, &inputs), run_gpu(dev, &node, &inputs)) {
        (Ok(cpu), Ok(gpu)) => {
            assert_eq!(gpu[0].dtype(), t, "{what}");
            assert_eq!(gpu[0].dims(), cpu[0].dims(), "{what}");
            let (abs, rel) = tolerance(t);
            assert_close(
                &values(&gpu[0]),
                &values(&cpu[0]),
                (abs * terms.max(1) as f64, rel),
            );
        }
        (Err(cpu), Err(gpu)) => assert_eq!(gpu.to_string(), cpu.to_string(), "{what}"),
        (cpu, gpu) => panic!("{what}: CPU {cpu:?}, GPU {gpu:?}"),
    }
}

#[test]
#[ignore = "needs a GPU"]
#[cfg(all(feature = "array", feature = "reduce"))]
fn einsum_matches_cpu() {
    let dev = gpu();
    // (equation, input shapes, products summed per output element).
    let cases: &[(&str, &[&[usize]], usize)] = &[
        // Contractions through the batched GEMM.
        ("ij,jk->ik", &[&[3, 5], &[5, 4]], 5),
        ("ij,kj->ki", &[&[17, 33], &[9, 33]], 33),
        ("bij,bjk->bik", &[&[2, 3, 4], &[2, 4, 5]], 4),
        ("bij,bkj->bki", &[&[3, 4, 6], &[3, 5, 6]], 6),
        ("bij,jk->bik", &[&[2, 3, 4], &[4, 5]], 4),
        ("abij,bjk->bkai", &[&[2, 3, 4, 5], &[3, 5, 6]], 5),
        ("i,j->ij", &[&[4], &[6]], 1),
        ("i,i->", &[&[40], &[40]], 40),
        ("ij,ij->ij", &[&[3, 4], &[3, 4]], 1),
        ("ij,ij->", &[&[3, 4], &[3, 4]], 12),
        // Broadcast batch dimensions, of different ranks.
        ("...ij,...jk->...ik", &[&[2, 1, 3, 4], &[5, 4, 6]], 4),
        ("...ij,jk->...ik", &[&[2, 3, 3, 4], &[4, 2]], 4),
        ("bi...,bi...->b...", &[&[2, 3, 1, 4], &[2, 3, 5, 1]], 3),
        // Labels only one operand has, summed out first.
        ("ijz,jk->ik", &[&[3, 4, 6], &[4, 5]], 24),
        ("ij,jkz->i", &[&[3, 4], &[4, 5, 2]], 40),
        // Diagonals of repeated input labels.
        ("ii,ij->ij", &[&[3, 3], &[3, 4]], 1),
        ("iij,jk->ik", &[&[3, 3, 4], &[4, 2]], 4),
        // One operand: transposes, sums, diagonals, traces.
        ("ij->ji", &[&[3, 4]], 1),
        ("ij->ij", &[&[3, 4]], 1),
        ("ijk->kij", &[&[2, 3, 4]], 1),
        ("ij->i", &[&[3, 50]], 50),
        ("ij->j", &[&[50, 3]], 50),
        ("ij->", &[&[7, 9]], 63),
        ("ii->i", &[&[5, 5]], 1),
        ("ii->", &[&[5, 5]], 5),
        ("iji->j", &[&[3, 4, 3]], 3),
        ("...ii->...i", &[&[2, 4, 4]], 1),
        // Repeated output labels: a diagonal of a zero output.
        ("ij->iij", &[&[2, 3]], 1),
        ("i->ii", &[&[4]], 1),
        ("ij,jk->iik", &[&[2, 3], &[3, 4]], 3),
        // More than eight dimensions that do not merge.
        ("abcdefghi->ihgfedcba", &[&[2, 2, 2, 2, 2, 2, 2, 2, 2]], 1),
        // Empty tensors: empty outputs, and sums over empty labels.
        ("ij,jk->ik", &[&[3, 0], &[0, 4]], 1),
        ("ij,jk->ik", &[&[0, 5], &[5, 4]], 1),
        ("ij->", &[&[0, 3]], 1),
        ("ij->j", &[&[0, 3]], 1),
        ("ij->ji", &[&[0, 3]], 1),
        // TF's errors.
        ("ij,jk->ik", &[&[2, 3], &[4, 5]], 1),
        ("ij,jk->ik", &[&[2, 3, 1], &[3, 5]], 1),
        ("ij->kj", &[&[2, 3]], 1),
        ("...ij,...jk->...ik", &[&[2, 3, 4], &[3, 4, 5]], 1),
    ];
    for t in [
        DataType::DtFloat,
        DataType::DtDouble,
        DataType::DtHalf,
        DataType::DtBfloat16,
    ] {
        for (equation, shapes, terms) in cases {
            check_einsum(&dev, t, equation, shapes, *terms);
        }
    }
}
