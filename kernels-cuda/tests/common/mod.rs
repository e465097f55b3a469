//! What the GPU kernel tests share: the GPU, valid nodes built with
//! `NodeDefBuilder`, deterministic inputs, tensors to and from `f64`, and
//! running a node on the CPU and on the GPU.
//!
//! Every test that runs a kernel on the GPU is `#[ignore = "needs a GPU"]`:
//! `cargo test` reports it as ignored, never as passed, and
//! `scripts/gpu-verify.sh` runs them with `--ignored` on a GPU machine.
// Each test binary includes this module and uses only part of it.
#![allow(dead_code)]

use std::sync::Arc;

use opreg_cuda::GpuDevice;
use registry_core::create_op_kernel;
use registry_core::device::Device;
use registry_core::kernel::KernelError;
use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{AttrValue, DataType, NodeDef};
use registry_core::tensor::Tensor;

/// The GPU, with the CPU and GPU kernels linked; panics, saying why, when
/// there is none (the tests that call it are ignored unless asked for).
pub fn gpu() -> Arc<GpuDevice> {
    kernels_cpu::link();
    kernels_cuda::link();
    GpuDevice::get().unwrap_or_else(|e| panic!("this test needs a GPU: {e}"))
}

/// A node `n` of `op` whose inputs have `dtypes` (setting the type attrs
/// and `N` they imply), with `attrs` and the op's defaults; panics unless
/// it is valid.
pub fn node(op: &str, dtypes: &[DataType], attrs: &[(&str, AttrValue)]) -> NodeDef {
    attrs
        .iter()
        .fold(
            NodeDefBuilder::new("n", op).fake_inputs(dtypes),
            |builder, (name, value)| builder.attr(*name, value.clone()),
        )
        .finalize()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`node`] for inputs of the dtypes of `inputs`.
pub fn node_for(op: &str, inputs: &[Tensor], attrs: &[(&str, AttrValue)]) -> NodeDef {
    let dtypes: Vec<DataType> = inputs.iter().map(Tensor::dtype).collect();
    node(op, &dtypes, attrs)
}

/// Deterministic values in [0, 1) (a 64-bit LCG seeded with `seed`).
pub fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// Deterministic values in [-1, 1): [`uniform`]'s, scaled.
pub fn pseudo_random(n: usize, seed: u64) -> Vec<f64> {
    uniform(n, seed)
        .into_iter()
        .map(|u| u * 2.0 - 1.0)
        .collect()
}

/// A host tensor of `dtype` holding `values` ([`Tensor::from_f64`]: Rust's
/// `as` casts, f16 and bf16 rounded to nearest, bools `!= 0`).
pub fn tensor(dtype: DataType, shape: &[usize], values: &[f64]) -> Tensor {
    Tensor::from_f64(dtype, shape, values).unwrap_or_else(|e| panic!("{dtype:?} {shape:?}: {e}"))
}

/// The elements of a host tensor as `f64` ([`Tensor::to_f64`]).
pub fn values(t: &Tensor) -> Vec<f64> {
    t.to_f64().unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts `|a - e| <= abs + rel * |e|` element-wise (NaN matches NaN,
/// equal values match, infinities included).
#[track_caller]
pub fn assert_close(actual: &[f64], expected: &[f64], (abs, rel): (f64, f64)) {
    assert_eq!(actual.len(), expected.len(), "lengths differ");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a.is_nan() && e.is_nan()) || a == e || (a - e).abs() <= abs + rel * e.abs(),
            "element {i}: GPU {a}, CPU {e}"
        );
    }
}

/// Runs `node`'s CPU kernel on `inputs` (panics if it has none).
pub fn run_cpu(node: &NodeDef, inputs: &[Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let kernel =
        create_op_kernel("CPU", node).unwrap_or_else(|e| panic!("{}: no CPU kernel: {e}", node.op));
    Ok(kernel
        .compute(inputs.iter().cloned())?
        .into_iter()
        .collect())
}

/// `inputs` uploaded to the GPU, except those at the indices in `host`
/// (host-memory args), which stay on the host.
pub fn upload(dev: &GpuDevice, inputs: &[Tensor], host: &[usize]) -> Vec<Tensor> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if host.contains(&i) {
                t.clone()
            } else {
                dev.upload(t).expect("upload")
            }
        })
        .collect()
}

/// Runs `node`'s GPU kernel (panics if it has none) on inputs already
/// placed ([`upload`]); its outputs, each of which must be where the kernel
/// declares it (GPU memory, or host memory for a host-memory output), read
/// back to the host.
pub fn compute_on_gpu(node: &NodeDef, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, KernelError> {
    let kernel =
        create_op_kernel("GPU", node).unwrap_or_else(|e| panic!("{}: no GPU kernel: {e}", node.op));
    let out = kernel.compute(inputs)?;
    Ok(out
        .iter()
        .enumerate()
        .map(|(i, t)| {
            assert_eq!(
                t.is_on_host(),
                kernel.info().output_in_host_memory(i),
                "{}: output {i} is not in the memory its kernel declares",
                node.op
            );
            t.to_host().expect("read back")
        })
        .collect())
}

/// Runs `node` on the GPU with every input uploaded; the outputs read
/// back ([`compute_on_gpu`]).
pub fn run_gpu(
    dev: &GpuDevice,
    node: &NodeDef,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, KernelError> {
    compute_on_gpu(node, upload(dev, inputs, &[]))
}
