//! The GPU reductions against the CPU kernels on several shapes (rows,
//! columns, full, scattered axes, long reductions split in parts, empty
//! inputs and outputs, keep_dims), dtypes and NaN inputs: integers and
//! Max/ArgMax exactly; float sums and means within a tolerance (the GPU
//! adds in another order). Skips, saying so, without a GPU.
#![cfg(feature = "cuda")]

use std::sync::Arc;

use kernels_cuda::gpu::GpuDevice;
use registry_core::create_op_kernel;
use registry_core::device::Device;
use registry_core::proto::attr_value::Value;
use registry_core::proto::{AttrValue, DataType, NodeDef};
use registry_core::tensor::{Tensor, bf16, f16};

fn gpu() -> Option<Arc<GpuDevice>> {
    kernels_cpu::link();
    kernels_cuda::link();
    match GpuDevice::get() {
        Ok(dev) => Some(dev),
        Err(_) => {
            eprintln!("skipped: {}", kernels_cuda::gpu_available().unwrap_err());
            None
        }
    }
}

fn ty(t: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(t as i32)),
    }
}

fn node(op: &str, t: DataType, idx: DataType, extra: &[(&str, AttrValue)]) -> NodeDef {
    let mut n = NodeDef {
        name: "n".into(),
        op: op.into(),
        input: vec!["x".into(), "axes".into()],
        ..Default::default()
    };
    n.attr.insert("T".into(), ty(t));
    n.attr.insert("Tidx".into(), ty(idx));
    for (k, v) in extra {
        n.attr.insert((*k).to_owned(), v.clone());
    }
    n
}

/// Values `k / 4` for small random `k` (sums are exact in f32), with NaN
/// now and then when `nans`; integers are large enough for int32 sums to
/// wrap.
fn values(dtype: DataType, shape: &[usize], seed: u64, nans: bool) -> Tensor {
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
        DataType::DtFloat => Tensor::from_vec(shape, f.iter().map(|&v| v as f32).collect()),
        DataType::DtDouble => Tensor::from_vec(shape, f),
        DataType::DtHalf => Tensor::from_vec(shape, f.iter().map(|&v| f16::from_f64(v)).collect()),
        DataType::DtBfloat16 => {
            Tensor::from_vec(shape, f.iter().map(|&v| bf16::from_f64(v)).collect())
        }
        DataType::DtInt32 => Tensor::from_vec(
            shape,
            (0..n).map(|_| (next() >> 20) as i32).collect::<Vec<i32>>(),
        ),
        DataType::DtInt64 => Tensor::from_vec(
            shape,
            (0..n)
                .map(|_| (next() % 2001) as i64 - 1000)
                .collect::<Vec<i64>>(),
        ),
        DataType::DtBool => Tensor::from_vec(shape, (0..n).map(|_| next() % 3 == 0).collect()),
        other => panic!("no values for {other:?}"),
    }
    .unwrap()
}

/// The outputs as f64 (exactly, for the dtypes here).
fn as_f64(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DataType::DtFloat => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect(),
        DataType::DtDouble => t.as_slice::<f64>().unwrap().to_vec(),
        DataType::DtHalf => t
            .as_slice::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_f64())
            .collect(),
        DataType::DtBfloat16 => t
            .as_slice::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_f64())
            .collect(),
        DataType::DtInt32 => t
            .as_slice::<i32>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect(),
        DataType::DtInt64 => t
            .as_slice::<i64>()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect(),
        other => panic!("no comparison for {other:?}"),
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
    let cpu = create_op_kernel("CPU", node).unwrap_or_else(|e| panic!("{what}: CPU: {e}"));
    let gpu = create_op_kernel("GPU", node).unwrap_or_else(|e| panic!("{what}: GPU: {e}"));
    let want = cpu.compute([x.clone(), axes.clone()]);
    let got = gpu.compute([dev.upload(x).unwrap(), axes.clone()]);
    let (want, got) = match (want, got) {
        (Ok(w), Ok(g)) => (w.into_iter().next().unwrap(), g.into_iter().next().unwrap()),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{what}");
            return;
        }
        (a, b) => panic!("{what}: CPU gave {a:?}, GPU gave {b:?}"),
    };
    let got = got.to_host().unwrap();
    assert_eq!(got.dtype(), want.dtype(), "{what}");
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (w, g) = (as_f64(&want), as_f64(&got));
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
fn sum_mean_max_match_cpu() {
    let Some(dev) = gpu() else { return };
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
                let x = values(dt, shape, k as u64, true);
                for keep in [false, true] {
                    let keep_attr = AttrValue {
                        value: Some(Value::B(keep)),
                    };
                    let n = node(op, dt, DataType::DtInt32, &[("keep_dims", keep_attr)]);
                    compare(&dev, &n, &x, &axes32(axes), tolerance(op, dt));
                }
            }
            // int64 axes, given as a scalar.
            let x = values(dt, &[6, 8], 99, false);
            let n = node(op, dt, DataType::DtInt64, &[]);
            compare(&dev, &n, &x, &Tensor::scalar(-1i64), tolerance(op, dt));
        }
    }
}

#[test]
fn arg_max_matches_cpu() {
    let Some(dev) = gpu() else { return };
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
                let x = values(dt, shape, k as u64, true);
                let n = node("ArgMax", dt, DataType::DtInt32, &[("output_type", ty(out))]);
                compare(&dev, &n, &x, &Tensor::scalar(dim), 0.0);
            }
        }
    }
}
