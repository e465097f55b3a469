//! The GPU nn kernels against the CPU kernels: Relu, LeakyRelu, BiasAdd,
//! Softmax, LogSoftmax,
//! MaxPool, AvgPool, Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput and
//! FusedBatchNormV3 on a few shapes and dtypes,
//! including empty tensors, NCHW (compared through host transposes where
//! the CPU kernel is NHWC-only) and TF's errors. Each test is ignored
//! unless asked for with `--ignored` (it needs a GPU).
#![cfg(all(feature = "cuda", feature = "nn"))]

use crate::common;

use common::{
    assert_close, compute_on_gpu, gpu, node, pseudo_random, run_cpu, run_gpu, tensor, upload,
    values,
};
use opreg_cuda::GpuDevice;
use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::Tensor;

use DataType::{DtBfloat16, DtDouble, DtFloat, DtHalf, DtInt32};

// ---- support ----

fn random(dtype: DataType, shape: &[usize], seed: u64) -> Tensor {
    tensor(dtype, shape, &pseudo_random(shape.iter().product(), seed))
}

/// Tolerance (abs, rel) per dtype for one rounding of the result.
fn tolerance(t: DataType) -> (f64, f64) {
    match t {
        DtDouble => (1e-12, 1e-12),
        DtFloat => (2e-6, 2e-5),
        DtHalf => (2e-3, 2e-3),
        DtBfloat16 => (1.6e-2, 1.6e-2),
        _ => (0.0, 0.0),
    }
}

/// Compares every output of `node` on the GPU with the CPU kernel's.
#[track_caller]
fn compare(dev: &GpuDevice, node: &NodeDef, inputs: &[Tensor], tol: (f64, f64)) -> Vec<Tensor> {
    let cpu = run_cpu(node, inputs).unwrap();
    let gpu = run_gpu(dev, node, inputs).unwrap();
    assert_eq!(cpu.len(), gpu.len());
    for (c, g) in cpu.iter().zip(&gpu) {
        assert_eq!(c.dtype(), g.dtype());
        assert_eq!(c.dims(), g.dims());
        assert_close(&values(g), &values(c), tol);
    }
    gpu
}

/// NHWC -> NCHW of a 4-D tensor (on the host).
fn to_nchw(t: &Tensor) -> Tensor {
    let &[n, h, w, c] = t.dims() else {
        panic!("not 4-D")
    };
    let v = values(t);
    let mut out = Vec::with_capacity(v.len());
    for b in 0..n {
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    out.push(v[((b * h + y) * w + x) * c + ch]);
                }
            }
        }
    }
    tensor(t.dtype(), &[n, c, h, w], &out)
}

/// Attr lists given in NHWC order, in NCHW order.
fn nchw_list(v: &[i64; 4]) -> [i64; 4] {
    [v[0], v[3], v[1], v[2]]
}

// ---- Relu ----

#[test]
#[ignore = "needs a GPU"]
fn relu_matches_cpu_with_nan_and_negative_zero() {
    let dev = gpu();
    for t in [DtHalf, DtBfloat16, DtFloat, DtDouble] {
        let n = node("Relu", &[t], &[]);
        let mut v = pseudo_random(1000, 1);
        v.extend([f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY]);
        let x = tensor(t, &[v.len()], &v);
        let out = compare(&dev, &n, &[x], (0.0, 0.0));
        let got = values(&out[0]);
        let len = got.len();
        assert!(got[len - 5].is_nan());
        // TF 2.21's CPU answers: +0 for float and double, -0 for half and
        // bfloat16 (tests/data/tf-numerics).
        let half_width = matches!(t, DtHalf | DtBfloat16);
        assert!(
            got[len - 4] == 0.0 && got[len - 4].is_sign_negative() == half_width,
            "Relu(-0) for {t:?}"
        );
        assert_eq!(got[len - 2], f64::INFINITY);
        assert_eq!(got[len - 1], 0.0);
        // Empty.
        let out = run_gpu(&dev, &n, &[tensor(t, &[0, 3], &[])]).unwrap();
        assert_eq!(out[0].dims(), &[0, 3]);
    }
}

#[test]
#[ignore = "needs a GPU"]
fn leaky_relu_matches_cpu() {
    let dev = gpu();
    for t in [DtHalf, DtBfloat16, DtFloat, DtDouble] {
        // alpha below 1, negative, above 1, and one half and bfloat16
        // round (0.1).
        for alpha in [0.2f32, -0.5, 1.5, 0.1] {
            let n = node("LeakyRelu", &[t], &[("alpha", alpha.into())]);
            let mut v = pseudo_random(1000, 3);
            v.extend([f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY]);
            let x = tensor(t, &[v.len()], &v);
            let out = compare(&dev, &n, &[x], (0.0, 0.0));
            let got = values(&out[0]);
            assert!(got[got.len() - 5].is_nan(), "LeakyRelu(NaN) for {t:?}");
            let out = run_gpu(&dev, &n, &[tensor(t, &[0, 3], &[])]).unwrap();
            assert_eq!(out[0].dims(), &[0, 3]);
        }
    }
}

// ---- BiasAdd ----

#[test]
#[ignore = "needs a GPU"]
fn bias_add_matches_cpu() {
    let dev = gpu();
    for t in [DtHalf, DtBfloat16, DtFloat, DtDouble] {
        for (format, shape, channels) in [
            ("NHWC", vec![2, 3, 4, 5], 5),
            ("NCHW", vec![2, 3, 4, 5], 3),
            ("NHWC", vec![7, 9], 9),
            ("NCHW", vec![7, 9], 9),
            ("NCHW", vec![2, 3, 2, 2, 2], 3),
            ("NHWC", vec![0, 4], 4),
        ] {
            let n = node("BiasAdd", &[t, t], &[("data_format", format.into())]);
            let x = random(t, &shape, 2);
            let bias = random(t, &[channels], 3);
            compare(&dev, &n, &[x, bias], (0.0, 0.0));
        }
    }
    // int32 wraps.
    let n = node("BiasAdd", &[DtInt32; 2], &[]);
    let x = Tensor::from_vec([2, 2], vec![i32::MAX, -5, 7, i32::MIN]).unwrap();
    let bias = Tensor::from_vec([2], vec![1, -1]).unwrap();
    let out = compare(&dev, &n, &[x, bias], (0.0, 0.0));
    assert_eq!(
        out[0].as_slice::<i32>().unwrap(),
        &[i32::MIN, -6, 8, i32::MAX]
    );
}

#[test]
#[ignore = "needs a GPU"]
fn bias_add_errors_match_cpu() {
    let dev = gpu();
    let n = node("BiasAdd", &[DtFloat; 2], &[]);
    for (x, bias) in [
        (random(DtFloat, &[4], 1), random(DtFloat, &[4], 2)),
        (random(DtFloat, &[2, 4], 1), random(DtFloat, &[3], 2)),
        (random(DtFloat, &[2, 4], 1), random(DtFloat, &[1, 4], 2)),
    ] {
        let cpu = run_cpu(&n, &[x.clone(), bias.clone()])
            .unwrap_err()
            .to_string();
        let gpu = run_gpu(&dev, &n, &[x, bias]).unwrap_err().to_string();
        assert_eq!(gpu, cpu);
    }
}

// ---- Softmax ----

#[test]
#[ignore = "needs a GPU"]
fn softmax_matches_cpu() {
    let dev = gpu();
    for (op, t) in ["Softmax", "LogSoftmax"]
        .into_iter()
        .flat_map(|op| [DtHalf, DtBfloat16, DtFloat, DtDouble].map(|t| (op, t)))
    {
        let n = node(op, &[t], &[]);
        for shape in [
            vec![3, 7],
            vec![2, 3, 300],
            vec![5],
            vec![1000, 2],
            vec![0, 4],
            vec![4, 0],
        ] {
            let count: usize = shape.iter().product();
            let v: Vec<f64> = pseudo_random(count, 4).iter().map(|x| x * 8.0).collect();
            compare(&dev, &n, &[tensor(t, &shape, &v)], tolerance(t));
        }
        // Rows with -inf (ignored), NaN and +inf (NaN rows).
        let inf = f64::INFINITY;
        let v = [1.0, -inf, 2.0, f64::NAN, 1.0, 0.0, inf, 1.0, 3.0];
        compare(&dev, &n, &[tensor(t, &[3, 3], &v)], tolerance(t));
    }
}

// ---- MaxPool ----

fn max_pool(
    t: DataType,
    format: &str,
    ksize: [i64; 4],
    strides: [i64; 4],
    padding: &str,
    explicit: &[i64],
) -> NodeDef {
    node(
        "MaxPool",
        &[t],
        &[
            ("ksize", ksize.into()),
            ("strides", strides.into()),
            ("padding", padding.into()),
            ("explicit_paddings", explicit.into()),
            ("data_format", format.into()),
        ],
    )
}

/// ksize, strides (NHWC order), padding, explicit paddings (NHWC order).
type PoolCase = ([i64; 4], [i64; 4], &'static str, Vec<i64>);

/// NHWC-ordered explicit paddings in NCHW order.
fn explicit_to_nchw(explicit: &[i64]) -> Vec<i64> {
    if explicit.is_empty() {
        return vec![];
    }
    let p: Vec<[i64; 2]> = explicit.chunks(2).map(|c| [c[0], c[1]]).collect();
    [p[0], p[3], p[1], p[2]].concat()
}

#[test]
#[ignore = "needs a GPU"]
fn max_pool_matches_cpu_nhwc_and_nchw() {
    let dev = gpu();
    let cases: [PoolCase; 5] = [
        ([1, 2, 2, 1], [1, 2, 2, 1], "VALID", vec![]),
        ([1, 3, 3, 1], [1, 2, 2, 1], "SAME", vec![]),
        ([1, 2, 3, 1], [1, 1, 2, 1], "SAME", vec![]),
        (
            [1, 3, 2, 1],
            [1, 2, 1, 1],
            "EXPLICIT",
            vec![0, 0, 1, 2, 0, 1, 0, 0],
        ),
        ([1, 1, 1, 1], [1, 3, 3, 1], "VALID", vec![]),
    ];
    for t in [DtHalf, DtBfloat16, DtFloat, DtDouble] {
        for (ksize, strides, padding, explicit) in &cases {
            for shape in [[2, 7, 6, 3], [1, 4, 4, 1], [0, 4, 4, 2]] {
                let x = random(t, &shape, 5);
                let nhwc = max_pool(t, "NHWC", *ksize, *strides, padding, explicit);
                let cpu = run_cpu(&nhwc, std::slice::from_ref(&x)).unwrap();
                let gpu = run_gpu(&dev, &nhwc, std::slice::from_ref(&x)).unwrap();
                assert_eq!(gpu[0].dims(), cpu[0].dims());
                assert_eq!(values(&gpu[0]), values(&cpu[0]));
                // NCHW: the CPU kernel is NHWC-only; compare with its
                // output transposed.
                let explicit_nchw = explicit_to_nchw(explicit);
                let nchw = max_pool(
                    t,
                    "NCHW",
                    nchw_list(ksize),
                    nchw_list(strides),
                    padding,
                    &explicit_nchw,
                );
                let gpu = run_gpu(&dev, &nchw, &[to_nchw(&x)]).unwrap();
                let expected = to_nchw(&cpu[0]);
                assert_eq!(gpu[0].dims(), expected.dims());
                assert_eq!(values(&gpu[0]), values(&expected));
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn max_pool_ignores_nan_and_starts_from_lowest() {
    let dev = gpu();
    let n = max_pool(DtFloat, "NHWC", [1, 2, 1, 1], [1, 2, 1, 1], "VALID", &[]);
    let inf = f64::INFINITY;
    let x = tensor(
        DtFloat,
        &[1, 6, 1, 1],
        &[f64::NAN, 1.0, -inf, -inf, 2.0, f64::NAN],
    );
    let out = compare(&dev, &n, &[x], (0.0, 0.0));
    assert_eq!(values(&out[0]), [1.0, f64::from(f32::MIN), 2.0]);
}

// ---- Conv2D ----

#[allow(clippy::too_many_arguments)]
fn conv(
    t: DataType,
    format: &str,
    strides: [i64; 4],
    dilations: [i64; 4],
    padding: &str,
    explicit: &[i64],
) -> NodeDef {
    node(
        "Conv2D",
        &[t, t],
        &[
            ("strides", strides.into()),
            ("dilations", dilations.into()),
            ("padding", padding.into()),
            ("explicit_paddings", explicit.into()),
            ("data_format", format.into()),
        ],
    )
}

/// Input (NHWC), filter (HWIO), strides, dilations (NHWC order), padding,
/// explicit paddings (NHWC order).
type ConvCase = (
    [usize; 4],
    [usize; 4],
    [i64; 4],
    [i64; 4],
    &'static str,
    Vec<i64>,
);

#[test]
#[ignore = "needs a GPU"]
fn conv2d_matches_cpu_nhwc_and_nchw() {
    let dev = gpu();
    // (input NHWC, filter HWIO, strides, dilations, padding, explicit NHWC).
    let cases: Vec<ConvCase> = vec![
        (
            [2, 7, 6, 3],
            [3, 3, 3, 4],
            [1, 1, 1, 1],
            [1; 4],
            "SAME",
            vec![],
        ),
        (
            [2, 7, 6, 3],
            [2, 4, 3, 5],
            [1, 1, 1, 1],
            [1; 4],
            "SAME",
            vec![],
        ),
        (
            [1, 9, 8, 2],
            [3, 2, 2, 3],
            [1, 2, 3, 1],
            [1; 4],
            "VALID",
            vec![],
        ),
        (
            [1, 8, 8, 4],
            [3, 3, 4, 2],
            [1, 2, 2, 1],
            [1; 4],
            "SAME",
            vec![],
        ),
        (
            [1, 9, 9, 2],
            [3, 3, 2, 2],
            [1, 1, 1, 1],
            [1, 2, 2, 1],
            "SAME",
            vec![],
        ),
        (
            [2, 5, 6, 3],
            [2, 2, 3, 4],
            [1, 1, 1, 1],
            [1; 4],
            "EXPLICIT",
            vec![0, 0, 1, 2, 3, 0, 0, 0],
        ),
        // Grouped: input depth 6, filter depth 2 (3 groups), 6 outputs.
        (
            [1, 5, 5, 6],
            [3, 3, 2, 6],
            [1, 1, 1, 1],
            [1; 4],
            "SAME",
            vec![],
        ),
        (
            [1, 4, 4, 3],
            [1, 1, 3, 8],
            [1, 1, 1, 1],
            [1; 4],
            "VALID",
            vec![],
        ),
        // Matrix products on cuBLAS in NHWC (cuDNN in NCHW): 1x1 SAME, a
        // filter as large as the input at strides 2 and 3; and a strided
        // 1x1, which is not one.
        (
            [2, 6, 5, 16],
            [1, 1, 16, 24],
            [1, 1, 1, 1],
            [1; 4],
            "SAME",
            vec![],
        ),
        (
            [3, 4, 5, 2],
            [4, 5, 2, 7],
            [1, 2, 3, 1],
            [1; 4],
            "VALID",
            vec![],
        ),
        (
            [1, 6, 6, 4],
            [1, 1, 4, 8],
            [1, 2, 2, 1],
            [1; 4],
            "SAME",
            vec![],
        ),
    ];
    for t in [DtFloat, DtDouble, DtHalf] {
        let (abs, rel) = match t {
            DtDouble => (1e-12, 1e-12),
            DtFloat => (1e-5, 1e-5),
            _ => (1e-2, 4e-3),
        };
        for (input, filter, strides, dilations, padding, explicit) in &cases {
            let x = random(t, input, 6);
            let w = random(t, filter, 7);
            let nhwc = conv(t, "NHWC", *strides, *dilations, padding, explicit);
            let cpu = run_cpu(&nhwc, &[x.clone(), w.clone()]).unwrap();
            let gpu = run_gpu(&dev, &nhwc, &[x.clone(), w.clone()]).unwrap();
            assert_eq!(gpu[0].dims(), cpu[0].dims());
            assert_close(&values(&gpu[0]), &values(&cpu[0]), (abs, rel));
            let explicit_nchw = explicit_to_nchw(explicit);
            let nchw = conv(
                t,
                "NCHW",
                nchw_list(strides),
                nchw_list(dilations),
                padding,
                &explicit_nchw,
            );
            let gpu = run_gpu(&dev, &nchw, &[to_nchw(&x), w]).unwrap();
            let expected = to_nchw(&cpu[0]);
            assert_eq!(gpu[0].dims(), expected.dims());
            assert_close(&values(&gpu[0]), &values(&expected), (abs, rel));
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn conv2d_empty_and_errors() {
    let dev = gpu();
    let n = conv(DtFloat, "NHWC", [1; 4], [1; 4], "SAME", &[]);
    // Empty batch, and an input with no channels (zeros).
    for (input, filter) in [([0, 4, 4, 2], [3, 3, 2, 3]), ([1, 4, 4, 0], [3, 3, 1, 3])] {
        let x = random(DtFloat, &input, 1);
        let w = random(DtFloat, &filter, 2);
        let cpu = run_cpu(&n, &[x.clone(), w.clone()]);
        let gpu = run_gpu(&dev, &n, &[x, w]);
        match (cpu, gpu) {
            (Ok(c), Ok(g)) => {
                assert_eq!(c[0].dims(), g[0].dims());
                assert_eq!(values(&c[0]), values(&g[0]));
            }
            (Err(c), Err(g)) => assert_eq!(g.to_string(), c.to_string()),
            (c, g) => panic!("CPU {c:?} vs GPU {g:?}"),
        }
    }
    for (input, filter) in [
        (vec![4, 4, 2], vec![3, 3, 2, 3]),
        (vec![1, 4, 4, 3], vec![3, 3, 2, 3]),
        (vec![1, 4, 4, 4], vec![3, 3, 2, 3]),
        (vec![1, 1, 1, 2], vec![3, 3, 2, 3]),
    ] {
        let v = conv(DtFloat, "NHWC", [1; 4], [1; 4], "VALID", &[]);
        let x = random(DtFloat, &input, 1);
        let w = random(DtFloat, &filter, 2);
        let cpu = run_cpu(&v, &[x.clone(), w.clone()])
            .unwrap_err()
            .to_string();
        let gpu = run_gpu(&dev, &v, &[x, w]).unwrap_err().to_string();
        assert_eq!(gpu, cpu);
    }
}

// ---- FusedBatchNormV3 ----

fn batch_norm(t: DataType, training: bool, format: &str, epsilon: f32, factor: f32) -> NodeDef {
    node(
        "FusedBatchNormV3",
        &[t, DtFloat, DtFloat, DtFloat, DtFloat],
        &[
            ("is_training", training.into()),
            ("data_format", format.into()),
            ("epsilon", epsilon.into()),
            ("exponential_avg_factor", factor.into()),
        ],
    )
}

#[test]
#[ignore = "needs a GPU"]
fn batch_norm_matches_cpu() {
    let dev = gpu();
    for t in [DtFloat, DtHalf, DtBfloat16] {
        let (abs, rel) = match t {
            DtFloat => (1e-5, 1e-5),
            DtHalf => (4e-3, 2e-3),
            _ => (3e-2, 1.6e-2),
        };
        for (format, shape, c) in [
            ("NHWC", vec![2, 5, 4, 3], 3),
            ("NCHW", vec![2, 3, 5, 4], 3),
            ("NHWC", vec![64, 1, 1, 300], 300),
            ("NCDHW", vec![2, 2, 3, 4, 5], 2),
            ("NDHWC", vec![2, 3, 4, 5, 2], 2),
            ("NCHW", vec![1, 4, 33, 20], 4),
        ] {
            for (training, factor) in [(false, 1.0), (true, 1.0), (true, 0.25)] {
                let n = batch_norm(t, training, format, 1e-3, factor);
                let x = tensor(
                    t,
                    &shape,
                    &pseudo_random(shape.iter().product(), 8)
                        .iter()
                        .map(|v| v * 3.0 + 1.0)
                        .collect::<Vec<_>>(),
                );
                let scale = random(DtFloat, &[c], 9);
                let offset = random(DtFloat, &[c], 10);
                let mean = random(DtFloat, &[c], 11);
                let var = tensor(
                    DtFloat,
                    &[c],
                    &pseudo_random(c, 12)
                        .iter()
                        .map(|v| v.abs() + 0.5)
                        .collect::<Vec<_>>(),
                );
                let out = compare(&dev, &n, &[x, scale, offset, mean, var], (abs, rel));
                assert_eq!(out.len(), 6);
                assert_eq!(out[5].dims(), &[] as &[usize]);
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn batch_norm_empty_and_errors() {
    let dev = gpu();
    let v3 = |c| random(DtFloat, &[c], 1);
    for training in [false, true] {
        let n = batch_norm(DtFloat, training, "NHWC", 1e-3, 1.0);
        let x = tensor(DtFloat, &[0, 2, 2, 3], &[]);
        let out = compare(&dev, &n, &[x, v3(3), v3(3), v3(3), v3(3)], (0.0, 0.0));
        assert!(values(&out[1]).iter().all(|v| v.is_nan()));
    }
    let n = batch_norm(DtFloat, false, "NHWC", 1e-3, 1.0);
    for inputs in [
        vec![random(DtFloat, &[2, 3, 3], 1), v3(3), v3(3), v3(3), v3(3)],
        vec![
            random(DtFloat, &[1, 2, 2, 3], 1),
            v3(2),
            v3(3),
            v3(3),
            v3(3),
        ],
        vec![
            random(DtFloat, &[1, 2, 2, 3], 1),
            v3(3),
            v3(3),
            v3(0),
            v3(3),
        ],
    ] {
        let cpu = run_cpu(&n, &inputs).unwrap_err().to_string();
        let gpu = run_gpu(&dev, &n, &inputs).unwrap_err().to_string();
        assert_eq!(gpu, cpu);
    }
}

// ---- AvgPool ----

fn avg_pool(
    t: DataType,
    format: &str,
    ksize: [i64; 4],
    strides: [i64; 4],
    padding: &str,
) -> NodeDef {
    node(
        "AvgPool",
        &[t],
        &[
            ("ksize", ksize.into()),
            ("strides", strides.into()),
            ("padding", padding.into()),
            ("data_format", format.into()),
        ],
    )
}

/// The tolerance of a sum of `n` terms of magnitude <= 1 (and its mean).
fn sum_tolerance(t: DataType, n: usize) -> (f64, f64) {
    let (abs, rel) = tolerance(t);
    (abs * n as f64, rel * n as f64)
}

#[test]
#[ignore = "needs a GPU"]
fn avg_pool_matches_cpu_nhwc_and_nchw() {
    let dev = gpu();
    // ksize, strides (NHWC order), padding: SAME with windows that pad one
    // more row or column after the input than before it, strides larger
    // than the window, windows larger than the input.
    let cases: [([i64; 4], [i64; 4], &str); 6] = [
        ([1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        ([1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
        ([1, 2, 3, 1], [1, 1, 2, 1], "SAME"),
        ([1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
        ([1, 1, 1, 1], [1, 3, 3, 1], "VALID"),
        ([1, 5, 5, 1], [1, 1, 1, 1], "SAME"),
    ];
    for t in [DtHalf, DtFloat, DtDouble] {
        for (ksize, strides, padding) in &cases {
            let window = (ksize[1] * ksize[2]) as usize;
            for shape in [[2, 7, 6, 3], [1, 4, 4, 1], [0, 4, 4, 2], [1, 3, 3, 0]] {
                let x = random(t, &shape, 8);
                let nhwc = avg_pool(t, "NHWC", *ksize, *strides, padding);
                let cpu = run_cpu(&nhwc, std::slice::from_ref(&x)).unwrap();
                let gpu = run_gpu(&dev, &nhwc, std::slice::from_ref(&x)).unwrap();
                assert_eq!(gpu[0].dims(), cpu[0].dims());
                assert_close(&values(&gpu[0]), &values(&cpu[0]), sum_tolerance(t, window));
                // NCHW: the CPU kernel is NHWC-only; compare with its
                // output transposed.
                let nchw = avg_pool(t, "NCHW", nchw_list(ksize), nchw_list(strides), padding);
                let gpu = run_gpu(&dev, &nchw, &[to_nchw(&x)]).unwrap();
                let expected = to_nchw(&cpu[0]);
                assert_eq!(gpu[0].dims(), expected.dims());
                assert_close(
                    &values(&gpu[0]),
                    &values(&expected),
                    sum_tolerance(t, window),
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn avg_pool_excludes_padding_and_reports_errors() {
    let dev = gpu();
    // 3x3 windows, SAME, over a 2x2 input of ones plus a corner 4: each
    // window covers the whole input, the mean of the 4 elements.
    let n = avg_pool(DtFloat, "NHWC", [1, 3, 3, 1], [1, 1, 1, 1], "SAME");
    let x = tensor(DtFloat, &[1, 2, 2, 1], &[1.0, 1.0, 1.0, 5.0]);
    let out = compare(&dev, &n, &[x], (0.0, 0.0));
    assert_eq!(values(&out[0]), [2.0; 4]);
    // TF's errors, as on the CPU: a 3-D input, pooling across depth.
    for (shape, ksize) in [
        (vec![4, 4, 2], [1, 2, 2, 1]),
        (vec![1, 4, 4, 4], [1, 1, 1, 2]),
    ] {
        let n = avg_pool(DtFloat, "NHWC", ksize, ksize, "VALID");
        let x = random(DtFloat, &shape, 9);
        let cpu = run_cpu(&n, std::slice::from_ref(&x))
            .unwrap_err()
            .to_string();
        let gpu = run_gpu(&dev, &n, &[x]).unwrap_err().to_string();
        assert_eq!(gpu, cpu);
    }
}

// ---- DepthwiseConv2dNative ----

fn depthwise(
    t: DataType,
    format: &str,
    strides: [i64; 4],
    padding: &str,
    explicit: &[i64],
) -> NodeDef {
    node(
        "DepthwiseConv2dNative",
        &[t, t],
        &[
            ("strides", strides.into()),
            ("padding", padding.into()),
            ("explicit_paddings", explicit.into()),
            ("data_format", format.into()),
        ],
    )
}

/// Input (NHWC), filter `[rows, cols, depth, multiplier]`, strides (NHWC
/// order), padding, explicit paddings (NHWC order).
type DepthwiseCase = ([usize; 4], [usize; 4], [i64; 4], &'static str, Vec<i64>);

#[test]
#[ignore = "needs a GPU"]
fn depthwise_conv_matches_cpu_nhwc_and_nchw() {
    let dev = gpu();
    let cases: Vec<DepthwiseCase> = vec![
        ([2, 7, 6, 3], [3, 3, 3, 1], [1, 1, 1, 1], "SAME", vec![]),
        ([2, 7, 6, 3], [3, 3, 3, 2], [1, 1, 1, 1], "SAME", vec![]),
        ([1, 9, 8, 4], [2, 4, 4, 3], [1, 2, 2, 1], "SAME", vec![]),
        ([1, 9, 9, 2], [3, 2, 2, 1], [1, 2, 2, 1], "VALID", vec![]),
        (
            [2, 5, 6, 3],
            [2, 2, 3, 2],
            [1, 1, 1, 1],
            "EXPLICIT",
            vec![0, 0, 1, 2, 3, 0, 0, 0],
        ),
        ([1, 4, 4, 8], [1, 1, 8, 1], [1, 1, 1, 1], "VALID", vec![]),
    ];
    for t in [DtFloat, DtDouble, DtHalf] {
        let (abs, rel) = match t {
            DtDouble => (1e-12, 1e-12),
            DtFloat => (1e-5, 1e-5),
            _ => (1e-2, 4e-3),
        };
        for (input, filter, strides, padding, explicit) in &cases {
            let x = random(t, input, 10);
            let w = random(t, filter, 11);
            let nhwc = depthwise(t, "NHWC", *strides, padding, explicit);
            let cpu = run_cpu(&nhwc, &[x.clone(), w.clone()]).unwrap();
            let gpu = run_gpu(&dev, &nhwc, &[x.clone(), w.clone()]).unwrap();
            assert_eq!(gpu[0].dims(), cpu[0].dims());
            assert_close(&values(&gpu[0]), &values(&cpu[0]), (abs, rel));
            let nchw = depthwise(
                t,
                "NCHW",
                nchw_list(strides),
                padding,
                &explicit_to_nchw(explicit),
            );
            let gpu = run_gpu(&dev, &nchw, &[to_nchw(&x), w]).unwrap();
            let expected = to_nchw(&cpu[0]);
            assert_eq!(gpu[0].dims(), expected.dims());
            assert_close(&values(&gpu[0]), &values(&expected), (abs, rel));
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn depthwise_conv_empty_and_errors_match_cpu() {
    let dev = gpu();
    let n = depthwise(DtFloat, "NHWC", [1; 4], "SAME", &[]);
    // Empty batch, multiplier 0: empty outputs.
    for (input, filter) in [([0, 4, 4, 2], [3, 3, 2, 1]), ([1, 4, 4, 2], [3, 3, 2, 0])] {
        let x = random(DtFloat, &input, 1);
        let w = random(DtFloat, &filter, 2);
        let cpu = run_cpu(&n, &[x.clone(), w.clone()]).unwrap();
        let gpu = run_gpu(&dev, &n, &[x, w]).unwrap();
        assert_eq!(gpu[0].dims(), cpu[0].dims());
    }
    // A 3-D input, depths that differ, unequal strides, dilations.
    let unequal = depthwise(DtFloat, "NHWC", [1, 1, 2, 1], "SAME", &[]);
    let dilated = node(
        "DepthwiseConv2dNative",
        &[DtFloat, DtFloat],
        &[
            ("strides", [1i64, 1, 1, 1].into()),
            ("padding", "SAME".into()),
            ("dilations", [1i64, 2, 2, 1].into()),
        ],
    );
    for (n, input, filter) in [
        (&n, vec![4, 4, 2], vec![3, 3, 2, 1]),
        (&n, vec![1, 4, 4, 3], vec![3, 3, 2, 1]),
        (&unequal, vec![1, 4, 4, 2], vec![3, 3, 2, 1]),
        (&dilated, vec![1, 4, 4, 2], vec![3, 3, 2, 1]),
    ] {
        let x = random(DtFloat, &input, 1);
        let w = random(DtFloat, &filter, 2);
        let cpu = run_cpu(n, &[x.clone(), w.clone()]).unwrap_err().to_string();
        let gpu = run_gpu(&dev, n, &[x, w]).unwrap_err().to_string();
        assert_eq!(gpu, cpu);
    }
}

// ---- Conv2DBackpropInput ----

fn backprop_input(
    t: DataType,
    format: &str,
    strides: [i64; 4],
    padding: &str,
    explicit: &[i64],
) -> NodeDef {
    node(
        "Conv2DBackpropInput",
        &[DtInt32, t, t],
        &[
            ("strides", strides.into()),
            ("padding", padding.into()),
            ("explicit_paddings", explicit.into()),
            ("data_format", format.into()),
        ],
    )
}

/// `input_sizes` as a host int32 tensor.
fn sizes(dims: &[usize]) -> Tensor {
    let v: Vec<i32> = dims.iter().map(|&d| d as i32).collect();
    Tensor::from_vec([v.len()], v).unwrap()
}

/// Runs `node` on the GPU with input 0 (`input_sizes`) kept in host memory.
fn run_gpu_host_sizes(
    dev: &GpuDevice,
    node: &NodeDef,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, registry_core::kernel::KernelError> {
    compute_on_gpu(node, upload(dev, inputs, &[0]))
}

/// Input (NHWC), filter (HWIO), strides (NHWC order), padding, explicit
/// paddings (NHWC order).
type BackpropCase = ([usize; 4], [usize; 4], [i64; 4], &'static str, Vec<i64>);

#[test]
#[ignore = "needs a GPU"]
fn conv2d_backprop_input_matches_cpu_nhwc_and_nchw() {
    let dev = gpu();
    // (input NHWC, filter HWIO, strides, padding, explicit NHWC): SAME with
    // asymmetric padding (even windows, strides), VALID, EXPLICIT.
    let cases: Vec<BackpropCase> = vec![
        ([2, 7, 6, 3], [3, 3, 3, 4], [1, 1, 1, 1], "SAME", vec![]),
        ([2, 7, 6, 3], [2, 4, 3, 5], [1, 1, 1, 1], "SAME", vec![]),
        ([1, 8, 8, 4], [3, 3, 4, 2], [1, 2, 2, 1], "SAME", vec![]),
        ([1, 9, 8, 2], [3, 2, 2, 3], [1, 2, 3, 1], "VALID", vec![]),
        (
            [2, 5, 6, 3],
            [2, 2, 3, 4],
            [1, 1, 1, 1],
            "EXPLICIT",
            vec![0, 0, 1, 2, 3, 0, 0, 0],
        ),
        ([1, 4, 4, 3], [1, 1, 3, 8], [1, 1, 1, 1], "VALID", vec![]),
    ];
    for t in [DtFloat, DtDouble, DtHalf] {
        let (abs, rel) = match t {
            DtDouble => (1e-12, 1e-12),
            DtFloat => (1e-5, 1e-5),
            _ => (2e-2, 8e-3),
        };
        for (input, filter, strides, padding, explicit) in &cases {
            let nhwc = backprop_input(t, "NHWC", *strides, padding, explicit);
            // The forward output's shape, from the CPU's Conv2D.
            let forward = conv(t, "NHWC", *strides, [1; 4], padding, explicit);
            let y = run_cpu(&forward, &[random(t, input, 1), random(t, filter, 2)]).unwrap();
            let dy = random(t, y[0].dims(), 12);
            let w = random(t, filter, 13);
            let inputs = [sizes(input), w.clone(), dy.clone()];
            let cpu = run_cpu(&nhwc, &inputs).unwrap();
            let gpu = run_gpu_host_sizes(&dev, &nhwc, &inputs).unwrap();
            assert_eq!(gpu[0].dims(), cpu[0].dims());
            assert_eq!(gpu[0].dims(), input);
            assert_close(&values(&gpu[0]), &values(&cpu[0]), (abs, rel));
            // The two spatial sizes only.
            let inputs = [sizes(&input[1..3]), w.clone(), dy.clone()];
            let gpu = run_gpu_host_sizes(&dev, &nhwc, &inputs).unwrap();
            assert_close(&values(&gpu[0]), &values(&cpu[0]), (abs, rel));
            // NCHW.
            let nchw = backprop_input(
                t,
                "NCHW",
                nchw_list(strides),
                padding,
                &explicit_to_nchw(explicit),
            );
            let nchw_sizes = [input[0], input[3], input[1], input[2]];
            let inputs = [sizes(&nchw_sizes), w, to_nchw(&dy)];
            let gpu = run_gpu_host_sizes(&dev, &nchw, &inputs).unwrap();
            let expected = to_nchw(&cpu[0]);
            assert_eq!(gpu[0].dims(), expected.dims());
            assert_close(&values(&gpu[0]), &values(&expected), (abs, rel));
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn conv2d_backprop_input_empty_and_errors_match_cpu() {
    let dev = gpu();
    let n = backprop_input(DtFloat, "NHWC", [1; 4], "SAME", &[]);
    // An empty batch: an empty gradient; no output channels: zeros.
    for (input, filter, dy) in [
        ([0, 4, 4, 2], [3, 3, 2, 3], [0, 4, 4, 3]),
        ([1, 4, 4, 2], [3, 3, 2, 0], [1, 4, 4, 0]),
    ] {
        let inputs = [
            sizes(&input),
            random(DtFloat, &filter, 1),
            random(DtFloat, &dy, 2),
        ];
        let cpu = run_cpu(&n, &inputs).unwrap();
        let gpu = run_gpu_host_sizes(&dev, &n, &inputs).unwrap();
        assert_eq!(gpu[0].dims(), cpu[0].dims());
        assert_eq!(values(&gpu[0]), values(&cpu[0]));
    }
    // TF's errors: input_sizes of 3 values, a 3-D filter, out_backprop of
    // the wrong size, a filter depth that is not the input's.
    for (input, filter, dy) in [
        (vec![1, 4, 4], vec![3, 3, 2, 3], vec![1, 4, 4, 3]),
        (vec![1, 4, 4, 2], vec![3, 3, 2], vec![1, 4, 4, 3]),
        (vec![1, 4, 4, 2], vec![3, 3, 2, 3], vec![1, 5, 4, 3]),
        (vec![1, 4, 4, 4], vec![3, 3, 2, 3], vec![1, 4, 4, 3]),
    ] {
        let inputs = [
            sizes(&input),
            random(DtFloat, &filter, 1),
            random(DtFloat, &dy, 2),
        ];
        let cpu = run_cpu(&n, &inputs).unwrap_err().to_string();
        let gpu = run_gpu_host_sizes(&dev, &n, &inputs)
            .unwrap_err()
            .to_string();
        assert_eq!(gpu, cpu);
    }
}
