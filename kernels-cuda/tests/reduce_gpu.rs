//! The GPU reductions against the CPU kernels on several shapes (rows,
//! columns, full, scattered axes, long reductions split in parts, empty
//! inputs and outputs, keep_dims), dtypes and NaN inputs: integers and
//! Max/ArgMax exactly; float sums and means within a tolerance (the GPU
//! adds in another order). Ignored unless asked for with
//! `--ignored` (they need a GPU).
#![cfg(feature = "cuda")]

use crate::common;

use common::{compute_on_gpu, gpu, node, run_cpu, tensor, upload, values};
use opreg_cuda::GpuDevice;
use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::Tensor;

/// Values `k / 4` for small random `k` (sums are exact in f32), with NaN
/// now and then when `nans`; integers are large enough for int32 sums to
/// wrap.
fn sample(dtype: DataType, shape: &[usize], seed: u64, nans: bool) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let f: Vec<f64> = (0..n)
        .map(|_| {
            let r = next();
            if nans && r % 97 == 0 {
                f64::NAN
            } else {
                ((r >> 8) % 81) as f64 / 4.0 - 10.0
            }
        })
        .collect();
    match dtype {
        DataType::DtInt32 => Tensor::from_vec(
            shape,
            (0..n).map(|_| (next() >> 20) as i32).collect::<Vec<i32>>(),
        )
        .unwrap(),
        DataType::DtInt64 => Tensor::from_vec(
            shape,
            (0..n)
                .map(|_| (next() % 2001) as i64 - 1000)
                .collect::<Vec<i64>>(),
        )
        .unwrap(),
        DataType::DtBool => {
            Tensor::from_vec(shape, (0..n).map(|_| next() % 3 == 0).collect()).unwrap()
        }
        _ => tensor(dtype, shape, &f),
    }
}

/// Runs the node on both devices and compares (`tolerance` relative, 0 for
/// exact; NaN must match NaN).
fn compare(dev: &GpuDevice, node: &NodeDef, x: &Tensor, axes: &Tensor, tolerance: f64) {
    let what = format!(
        "{} {:?} over {:?} of {}",
        node.op,
        x.dtype(),
        axes,
        x.shape()
    );
    let inputs = [x.clone(), axes.clone()];
    let want = run_cpu(node, &inputs);
    let got = compute_on_gpu(node, upload(dev, &inputs, &[1]));
    let (want, got) = match (want, got) {
        (Ok(w), Ok(g)) => (w.into_iter().next().unwrap(), g.into_iter().next().unwrap()),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{what}");
            return;
        }
        (a, b) => panic!("{what}: CPU gave {a:?}, GPU gave {b:?}"),
    };
    assert_eq!(got.dtype(), want.dtype(), "{what}");
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (w, g) = (values(&want), values(&got));
    for (i, (a, b)) in w.iter().zip(&g).enumerate() {
        let ok = (a.is_nan() && b.is_nan())
            || a == b
            || (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1.0);
        assert!(ok, "{what}: element {i}: CPU {a}, GPU {b}");
    }
}

const DTYPES: [DataType; 6] = [
    DataType::DtFloat,
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtDouble,
    DataType::DtInt32,
    DataType::DtInt64,
];

fn tolerance(op: &str, dt: DataType) -> f64 {
    match (op, dt) {
        ("Max", _) | (_, DataType::DtInt32 | DataType::DtInt64) => 0.0,
        (_, DataType::DtHalf) => 1e-3,
        (_, DataType::DtBfloat16) => 1e-2,
        (_, DataType::DtFloat) => 1e-5,
        _ => 1e-12,
    }
}

fn axes32(v: &[i32]) -> Tensor {
    Tensor::from_slice([v.len()], v).unwrap()
}

#[test]
#[ignore = "needs a GPU"]
fn sum_mean_max_match_cpu() {
    let dev = gpu();
    let cases: &[(&[usize], &[i32])] = &[
        (&[7, 33], &[1]),
        (&[7, 33], &[0]),
        (&[7, 33], &[0, 1]),
        (&[7, 33], &[]),
        (&[4, 5, 6], &[1]),
        (&[4, 5, 6], &[0, 2]),
        (&[4, 5, 6], &[-1, 0, -1]),
        (&[2, 3, 4, 5], &[1, 3]),
        (&[2, 1, 3, 1, 5], &[1, 4]),
        (&[3, 0], &[1]),
        (&[0, 3], &[1]),
        (&[0, 3], &[0]),
        (&[], &[]),
        (&[300, 200], &[0]),
        (&[300, 200], &[1]),
        (&[70_000, 3], &[0]),
        (&[2, 100_000], &[1]),
        (&[5], &[1]),
    ];
    for op in ["Sum", "Mean", "Max"] {
        for &dt in &DTYPES {
            for (k, &(shape, axes)) in cases.iter().enumerate() {
                let x = sample(dt, shape, k as u64, true);
                for keep in [false, true] {
                    let n = node(op, &[dt, DataType::DtInt32], &[("keep_dims", keep.into())]);
                    compare(&dev, &n, &x, &axes32(axes), tolerance(op, dt));
                }
            }
            // int64 axes, given as a scalar.
            let x = sample(dt, &[6, 8], 99, false);
            let n = node(op, &[dt, DataType::DtInt64], &[]);
            compare(&dev, &n, &x, &Tensor::scalar(-1i64), tolerance(op, dt));
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn arg_max_matches_cpu() {
    let dev = gpu();
    let cases: &[(&[usize], i32)] = &[
        (&[7, 33], 1),
        (&[7, 33], 0),
        (&[4, 5, 6], 1),
        (&[4, 5, 6], -1),
        (&[1000], 0),
        (&[3, 5000], 1),
        (&[5000, 3], 0),
        (&[2, 0], 0),
        (&[2, 0], 1),
        (&[0, 4], 1),
        (&[3], 1),
    ];
    for &dt in DTYPES.iter().chain(&[DataType::DtBool]) {
        for out in [DataType::DtInt32, DataType::DtInt64] {
            for (k, &(shape, dim)) in cases.iter().enumerate() {
                let x = sample(dt, shape, k as u64, true);
                let n = node(
                    "ArgMax",
                    &[dt, DataType::DtInt32],
                    &[("output_type", out.into())],
                );
                compare(&dev, &n, &x, &Tensor::scalar(dim), 0.0);
            }
        }
    }
}
