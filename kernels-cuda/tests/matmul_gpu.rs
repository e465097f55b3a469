//! MatMul on the GPU (cuBLAS) against the CPU kernel: every transpose
//! combination, half/bfloat16/float/double, empty and `k = 0` products, and
//! TF's shape errors. Skipped, saying why, without a GPU.
#![cfg(all(feature = "cuda", feature = "linalg"))]

use std::sync::Arc;

use kernels_cuda::gpu::GpuDevice;
use registry_core::create_op_kernel;
use registry_core::device::Device;
use registry_core::kernel::KernelError;
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

fn matmul(t: DataType, transpose_a: bool, transpose_b: bool) -> NodeDef {
    let mut node = NodeDef {
        name: "matmul".into(),
        op: "MatMul".into(),
        input: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    let attr = |v| AttrValue { value: Some(v) };
    node.attr.insert("T".into(), attr(Value::Type(t as i32)));
    node.attr
        .insert("transpose_a".into(), attr(Value::B(transpose_a)));
    node.attr
        .insert("transpose_b".into(), attr(Value::B(transpose_b)));
    node
}

fn tensor(dtype: DataType, shape: &[usize], values: &[f64]) -> Tensor {
    let t = match dtype {
        DataType::DtFloat => Tensor::from_vec(shape, values.iter().map(|&v| v as f32).collect()),
        DataType::DtDouble => Tensor::from_vec(shape, values.to_vec()),
        DataType::DtHalf => {
            Tensor::from_vec(shape, values.iter().map(|&v| f16::from_f64(v)).collect())
        }
        DataType::DtBfloat16 => {
            Tensor::from_vec(shape, values.iter().map(|&v| bf16::from_f64(v)).collect())
        }
        other => panic!("unsupported dtype {other:?}"),
    };
    t.expect("shape and values agree")
}

fn values(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DataType::DtFloat => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&v| f64::from(v))
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
        other => panic!("unsupported dtype {other:?}"),
    }
}

/// Deterministic values in [-1, 1).
fn pseudo_random(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn run_cpu(node: &NodeDef, inputs: &[Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let kernel = create_op_kernel("CPU", node).expect("a CPU kernel");
    Ok(kernel
        .compute(inputs.iter().cloned())?
        .into_iter()
        .collect())
}

fn run_gpu(dev: &GpuDevice, node: &NodeDef, inputs: &[Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let kernel = create_op_kernel("GPU", node).expect("a GPU kernel");
    let on_gpu: Vec<Tensor> = inputs
        .iter()
        .map(|t| dev.upload(t).expect("upload"))
        .collect();
    let out = kernel.compute(on_gpu)?;
    Ok(out
        .iter()
        .map(|t| t.to_host().expect("read back"))
        .collect())
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

#[track_caller]
fn assert_close(actual: &[f64], expected: &[f64], (abs, rel): (f64, f64)) {
    assert_eq!(actual.len(), expected.len());
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a.is_nan() && e.is_nan()) || (a - e).abs() <= abs + rel * e.abs(),
            "element {i}: GPU {a}, CPU {e}"
        );
    }
}

#[test]
fn matches_cpu_for_every_transpose_and_type() {
    let Some(dev) = gpu() else { return };
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
fn known_product() {
    let Some(dev) = gpu() else { return };
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
fn empty_products() {
    let Some(dev) = gpu() else { return };
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
fn shape_errors_match_cpu() {
    let Some(dev) = gpu() else { return };
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
