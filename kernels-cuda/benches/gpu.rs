//! GPU benchmarks (criterion) of kernels-cuda against what the hardware and
//! cuBLAS do on their own, measured in the same run:
//!
//! - `elementwise`: f32 `Abs` on 256M elements (1 GiB in, 1 GiB out)
//!   through its kernel (`create_op_kernel("GPU", ..)` + `compute`, the
//!   input already on the device), next to a device-to-device copy of the
//!   same bytes (`memcpy_dtod`, the bandwidth ceiling). GB/s count bytes
//!   read plus bytes written.
//! - `matmul`: `MatMul` 8192x8192x8192 in f32 and f16 through its kernel,
//!   next to cuBLAS called directly on the same device buffers (cudarc's
//!   `CudaBlas::gemm` for f32; `cublasGemmEx` with f32 accumulation for
//!   f16, what `Gemm<f16>` would call). TFLOP/s count 2·M·N·K.
//! - `launch`: a `Session` running a chain of 100 `Abs` on a 1-element
//!   tensor with devices `[GPU, CPU]` (the host feed is uploaded, the fetch
//!   copied back), in µs per op, next to the same chain on the CPU; and one
//!   `KernelInstance::compute` of `Abs` on a 1-element device tensor, with
//!   a synchronisation after each and queued back to back.
//!
//! Every iteration of the GPU benchmarks waits for the device
//! (`Device::synchronize`), so the times are the work's, not the queueing's.
//! A summary table with the rates and ratios is printed at the end; the
//! process exits with status 1 when a part could not be measured (a missing
//! kernel, a failed launch, results that disagree).
//!
//! `cargo bench -p kernels-cuda --features cuda --bench gpu`. Without a GPU
//! it prints `skipped: <reason>` and measures nothing.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use cudarc::cublas::{Gemm, GemmConfig, result as cublas_result, sys as cublas_sys};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use opreg_cuda::{GpuDevice, gpu_error, gpu_slice, gpu_slice_mut};
use opreg_runtime::{Graph, Session, SessionOptions};
use registry_core::create_op_kernel;
use registry_core::device::Device;
use registry_core::kernel::{KernelError, KernelInstance};
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef, attr_value::Value};
use registry_core::tensor::{Tensor, f16};

/// Elements of the element-wise benchmark: 256M f32, 1 GiB.
const ELEMENTWISE_N: usize = 256 << 20;
/// M = N = K of the MatMul benchmark.
const MATMUL_DIM: usize = 8192;
/// Length of the Abs chain of the launch benchmark.
const CHAIN: usize = 100;

type BenchResult<T> = Result<T, String>;

/// Seconds per iteration of each benchmark, one entry per criterion sample
/// (warm-up samples included), for the summary table.
#[derive(Default)]
struct Samples(RefCell<BTreeMap<String, Vec<f64>>>);

impl Samples {
    fn record(&self, name: &str, iters: u64, elapsed: Duration) {
        if iters == 0 {
            return;
        }
        self.0
            .borrow_mut()
            .entry(name.to_owned())
            .or_default()
            .push(elapsed.as_secs_f64() / iters as f64);
    }

    /// The median seconds per iteration of `name`, if it ran.
    fn median(&self, name: &str) -> Option<f64> {
        let samples = self.0.borrow();
        let mut v = samples.get(name)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }
}

/// Registers `name` in `group`, timing `iters` calls of `one` (each of
/// which must wait for its own GPU work) and recording them in `samples`.
fn bench_each(
    group: &mut BenchmarkGroup<'_, WallTime>,
    samples: &Samples,
    name: &str,
    mut one: impl FnMut(),
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                one();
            }
            let elapsed = start.elapsed();
            samples.record(name, iters, elapsed);
            elapsed
        })
    });
}

fn type_attr(dtype: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(dtype as i32)),
    }
}

fn abs_node(dtype: DataType) -> NodeDef {
    NodeDef {
        name: "abs".into(),
        op: "Abs".into(),
        input: vec!["x".into()],
        attr: [("T".to_owned(), type_attr(dtype))].into(),
        ..Default::default()
    }
}

fn matmul_node(dtype: DataType) -> NodeDef {
    NodeDef {
        name: "matmul".into(),
        op: "MatMul".into(),
        input: vec!["a".into(), "b".into()],
        attr: [("T".to_owned(), type_attr(dtype))].into(),
        ..Default::default()
    }
}

/// `x` (a float Placeholder) followed by `n` chained `Abs` nodes
/// `abs0`..`abs{n-1}`.
fn abs_chain(n: usize) -> GraphDef {
    let t = type_attr(DataType::DtFloat);
    let mut nodes = vec![NodeDef {
        name: "x".into(),
        op: "Placeholder".into(),
        attr: [("dtype".to_owned(), t.clone())].into(),
        ..Default::default()
    }];
    for i in 0..n {
        nodes.push(NodeDef {
            name: format!("abs{i}"),
            op: "Abs".into(),
            input: vec![if i == 0 {
                "x".into()
            } else {
                format!("abs{}", i - 1)
            }],
            attr: [("T".to_owned(), t.clone())].into(),
            ..Default::default()
        });
    }
    GraphDef {
        node: nodes,
        ..Default::default()
    }
}

fn kernel(device: &str, node: &NodeDef) -> BenchResult<KernelInstance> {
    create_op_kernel(device, node).map_err(|e| format!("no {device} kernel for {}: {e}", node.op))
}

fn upload(dev: &GpuDevice, t: &Tensor) -> BenchResult<Tensor> {
    dev.upload(t).map_err(|e| format!("upload: {e}"))
}

fn sync(dev: &GpuDevice) -> BenchResult<()> {
    dev.synchronize().map_err(|e| format!("synchronize: {e}"))
}

/// Runs `kernel` once on `inputs` and waits for it; returns output 0.
fn compute_once(
    dev: &GpuDevice,
    kernel: &KernelInstance,
    inputs: &[Tensor],
) -> BenchResult<Tensor> {
    let mut outputs = kernel
        .compute(inputs.iter().cloned())
        .map_err(|e| format!("{}: {e}", kernel.info().op()))?;
    sync(dev)?;
    if outputs.is_empty() {
        return Err(format!("{}: no output", kernel.info().op()));
    }
    Ok(outputs.swap_remove(0))
}

fn to_host_f64(t: &Tensor) -> BenchResult<Vec<f64>> {
    let host = t.to_host().map_err(|e| format!("copy to host: {e}"))?;
    match host.dtype() {
        DataType::DtFloat => Ok(host
            .as_slice::<f32>()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|&v| f64::from(v))
            .collect()),
        DataType::DtHalf => Ok(host
            .as_slice::<f16>()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|v| v.to_f64())
            .collect()),
        other => Err(format!("unexpected dtype {other:?}")),
    }
}

/// (a) f32 Abs on 256M elements vs a device-to-device copy of 1 GiB.
fn elementwise(c: &mut Criterion, dev: &Arc<GpuDevice>, samples: &Samples) -> BenchResult<()> {
    let n = ELEMENTWISE_N;
    let bytes = n * std::mem::size_of::<f32>();
    let host: Vec<f32> = (0..n).map(|i| (i % 2001) as f32 - 1000.0).collect();
    let x = upload(
        dev,
        &Tensor::from_vec([n], host).map_err(|e| e.to_string())?,
    )?;
    let abs = kernel("GPU", &abs_node(DataType::DtFloat))?;
    if abs.info().device_type() != "GPU" {
        return Err(format!("Abs was built for {}", abs.info().device_type()));
    }
    // Check the result once (every 4099th element, and the last).
    let y = to_host_f64(&compute_once(dev, &abs, std::slice::from_ref(&x))?)?;
    if y.len() != n {
        return Err(format!("Abs returned {} elements, not {n}", y.len()));
    }
    for i in (0..n).step_by(4099).chain([n - 1]) {
        let expected = ((i % 2001) as f64 - 1000.0).abs();
        if y[i] != expected {
            return Err(format!("Abs[{i}] = {}, expected {expected}", y[i]));
        }
    }
    drop(y);
    let src: &CudaSlice<u8> = gpu_slice(&x).map_err(|e| e.to_string())?;
    let mut dst_tensor = dev
        .zeros(DataType::DtUint8, [bytes])
        .map_err(|e| e.to_string())?;
    let dst = gpu_slice_mut(&mut dst_tensor).map_err(|e| e.to_string())?;
    let stream = Arc::clone(dev.stream());
    stream
        .memcpy_dtod(src, dst)
        .map_err(|e| format!("memcpy_dtod: {e}"))?;
    sync(dev)?;

    let mut group = c.benchmark_group("elementwise");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(2 * bytes as u64));
    let inputs = [x.clone()];
    bench_each(&mut group, samples, "abs_f32_256M", || {
        let out = abs.compute(inputs.iter().cloned()).expect("Abs");
        dev.synchronize().expect("synchronize");
        black_box(out);
    });
    bench_each(&mut group, samples, "dtod_copy_1GiB", || {
        stream.memcpy_dtod(src, dst).expect("memcpy_dtod");
        dev.synchronize().expect("synchronize");
    });
    group.finish();
    Ok(())
}

/// C = A·B (row-major, M = N = K = `dim`) with cuBLAS directly, into `c`.
fn cublas_matmul(
    dev: &GpuDevice,
    dtype: DataType,
    a: &CudaSlice<u8>,
    b: &CudaSlice<u8>,
    c: &mut CudaSlice<u8>,
    dim: usize,
) -> Result<(), KernelError> {
    let d = i32::try_from(dim).map_err(|_| KernelError::internal("dimension over i32"))?;
    let op_n = cublas_sys::cublasOperation_t::CUBLAS_OP_N;
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: pass B first.
    dev.with_blas(|blas| match dtype {
        DataType::DtFloat => {
            let len = dim * dim;
            // SAFETY: the buffers hold `dim*dim` f32 each (checked by
            // `transmute`, which returns None when they are too small).
            let (av, bv, mut cv) = unsafe {
                (
                    a.transmute::<f32>(len),
                    b.transmute::<f32>(len),
                    c.transmute_mut::<f32>(len),
                )
            };
            let (Some(av), Some(bv), Some(cv)) = (av, bv, cv.as_mut()) else {
                return Err(KernelError::internal(
                    "buffers too small for the f32 MatMul",
                ));
            };
            let cfg = GemmConfig {
                transa: op_n,
                transb: op_n,
                m: d,
                n: d,
                k: d,
                alpha: 1.0f32,
                lda: d,
                ldb: d,
                beta: 0.0f32,
                ldc: d,
            };
            // SAFETY: every matrix is `dim`x`dim` f32 with leading
            // dimension `dim`, matching `cfg`; all work is on the device's
            // stream, which the handle uses.
            unsafe { blas.gemm(cfg, &bv, &av, cv) }.map_err(|e| gpu_error("cublasSgemm", e))
        }
        DataType::DtHalf => {
            let need = dim * dim * 2;
            if a.len() < need || b.len() < need || c.len() < need {
                return Err(KernelError::internal(
                    "buffers too small for the f16 MatMul",
                ));
            }
            let stream = dev.stream();
            let (alpha, beta) = (1.0f32, 0.0f32);
            let (a_ptr, _ra) = a.device_ptr(stream);
            let (b_ptr, _rb) = b.device_ptr(stream);
            let (c_ptr, _rc) = c.device_ptr_mut(stream);
            // SAFETY: the three buffers hold `dim*dim` f16 (checked above);
            // alpha and beta are host f32, as CUBLAS_COMPUTE_32F requires,
            // and live across the call; the handle runs on the stream the
            // buffers were used on.
            unsafe {
                cublas_result::gemm_ex(
                    *blas.handle(),
                    op_n,
                    op_n,
                    d,
                    d,
                    d,
                    (&alpha as *const f32).cast::<c_void>(),
                    b_ptr as *const c_void,
                    cublas_sys::cudaDataType_t::CUDA_R_16F,
                    d,
                    a_ptr as *const c_void,
                    cublas_sys::cudaDataType_t::CUDA_R_16F,
                    d,
                    (&beta as *const f32).cast::<c_void>(),
                    c_ptr as *mut c_void,
                    cublas_sys::cudaDataType_t::CUDA_R_16F,
                    d,
                    cublas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(|e| gpu_error("cublasGemmEx (f16)", e))
        }
        other => Err(KernelError::internal(format!(
            "no cuBLAS call for {other:?}"
        ))),
    })
}

/// The largest |kernel - cuBLAS| relative to the largest |cuBLAS|.
fn max_relative_difference(ours: &[f64], theirs: &[f64]) -> f64 {
    let scale = theirs
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    ours.iter()
        .zip(theirs)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// (b) MatMul 8192³ through the kernel vs cuBLAS, for one dtype. Returns
/// the kernel's largest difference from cuBLAS (relative to its largest
/// value).
fn matmul(
    c: &mut Criterion,
    dev: &Arc<GpuDevice>,
    samples: &Samples,
    dtype: DataType,
    label: &str,
) -> BenchResult<f64> {
    let dim = MATMUL_DIM;
    let len = dim * dim;
    let value = |i: usize, salt: usize| ((i * 7919 + salt) % 1009) as f32 / 1009.0 - 0.5;
    let (a, b) = match dtype {
        DataType::DtFloat => (
            Tensor::from_vec(
                [dim, dim],
                (0..len).map(|i| value(i, 0)).collect::<Vec<f32>>(),
            ),
            Tensor::from_vec(
                [dim, dim],
                (0..len).map(|i| value(i, 17)).collect::<Vec<f32>>(),
            ),
        ),
        DataType::DtHalf => (
            Tensor::from_vec(
                [dim, dim],
                (0..len)
                    .map(|i| f16::from_f32(value(i, 0)))
                    .collect::<Vec<f16>>(),
            ),
            Tensor::from_vec(
                [dim, dim],
                (0..len)
                    .map(|i| f16::from_f32(value(i, 17)))
                    .collect::<Vec<f16>>(),
            ),
        ),
        other => return Err(format!("no MatMul benchmark for {other:?}")),
    };
    let a = upload(dev, &a.map_err(|e| e.to_string())?)?;
    let b = upload(dev, &b.map_err(|e| e.to_string())?)?;
    let mm = kernel("GPU", &matmul_node(dtype))?;
    let inputs = [a.clone(), b.clone()];
    let ours = to_host_f64(&compute_once(dev, &mm, &inputs)?)?;
    let a_bytes: &CudaSlice<u8> = gpu_slice(&a).map_err(|e| e.to_string())?;
    let b_bytes: &CudaSlice<u8> = gpu_slice(&b).map_err(|e| e.to_string())?;
    let mut reference = dev
        .zeros(dtype, a.shape().clone())
        .map_err(|e| e.to_string())?;
    cublas_matmul(
        dev,
        dtype,
        a_bytes,
        b_bytes,
        gpu_slice_mut(&mut reference).map_err(|e| e.to_string())?,
        dim,
    )
    .map_err(|e| e.to_string())?;
    let theirs = to_host_f64(&reference)?;
    drop(reference);
    if ours.len() != theirs.len() {
        return Err(format!(
            "MatMul {label}: {} elements, cuBLAS gave {}",
            ours.len(),
            theirs.len()
        ));
    }
    let difference = max_relative_difference(&ours, &theirs);
    // f32 and f16 sums over K = 8192 in another order stay far below this;
    // a wrong layout or transposition does not.
    if difference.is_nan() || difference > 1e-2 {
        return Err(format!(
            "MatMul {label}: the kernel and cuBLAS differ by {difference:e} (relative to the largest value)"
        ));
    }
    drop((ours, theirs));

    let mut c_tensor = dev
        .zeros(dtype, a.shape().clone())
        .map_err(|e| e.to_string())?;
    let c_out = gpu_slice_mut(&mut c_tensor).map_err(|e| e.to_string())?;
    let mut group = c.benchmark_group(format!("matmul_{label}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        // "elements" are floating-point operations: elem/s = FLOP/s.
        .throughput(Throughput::Elements(2 * (dim as u64).pow(3)));
    bench_each(
        &mut group,
        samples,
        &format!("matmul_{label}_kernel"),
        || {
            let out = mm.compute(inputs.iter().cloned()).expect("MatMul");
            dev.synchronize().expect("synchronize");
            black_box(out);
        },
    );
    bench_each(
        &mut group,
        samples,
        &format!("matmul_{label}_cublas"),
        || {
            cublas_matmul(dev, dtype, a_bytes, b_bytes, c_out, dim).expect("cuBLAS");
            dev.synchronize().expect("synchronize");
        },
    );
    group.finish();
    Ok(difference)
}

/// (c) Launch overhead: a 100-Abs chain through a Session on GPU (and on
/// CPU for reference), and one `compute` on a 1-element device tensor.
fn launch(c: &mut Criterion, dev: &Arc<GpuDevice>, samples: &Samples) -> BenchResult<()> {
    let x = Tensor::from_vec([1], vec![-1.5f32]).map_err(|e| e.to_string())?;
    let graph = || Graph::new(abs_chain(CHAIN)).map_err(|e| format!("chain graph: {e}"));
    let last = format!("abs{}", CHAIN - 1);
    let gpu_session = Session::with_options(
        graph()?,
        SessionOptions {
            devices: vec!["GPU".into(), "CPU".into()],
            ..Default::default()
        },
    );
    let cpu_session = Session::new(graph()?);
    let gpu_run = gpu_session
        .prepare(&["x"], &[&last])
        .map_err(|e| format!("GPU chain plan: {e}"))?;
    let cpu_run = cpu_session
        .prepare(&["x"], &[&last])
        .map_err(|e| format!("CPU chain plan: {e}"))?;
    for (what, run) in [("GPU", &gpu_run), ("CPU", &cpu_run)] {
        let out = run
            .run([x.clone()])
            .map_err(|e| format!("{what} chain run: {e}"))?;
        let value = out
            .first()
            .and_then(|t| t.as_slice::<f32>().ok().map(<[f32]>::to_vec));
        if value.as_deref() != Some(&[1.5f32][..]) {
            return Err(format!("{what} chain gave {value:?}, expected [1.5]"));
        }
    }
    let placed = (0..CHAIN)
        .filter(|i| gpu_session.placement(&format!("abs{i}")).as_deref() == Some("GPU"))
        .count();
    if placed != CHAIN {
        return Err(format!(
            "only {placed} of the {CHAIN} Abs nodes were placed on the GPU"
        ));
    }

    let abs = kernel("GPU", &abs_node(DataType::DtFloat))?;
    let x_dev = upload(dev, &x)?;
    compute_once(dev, &abs, std::slice::from_ref(&x_dev))?;

    let mut group = c.benchmark_group("launch");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    bench_each(&mut group, samples, "session_chain100_abs_gpu", || {
        black_box(gpu_run.run([x.clone()]).expect("GPU chain"));
    });
    bench_each(&mut group, samples, "session_chain100_abs_cpu", || {
        black_box(cpu_run.run([x.clone()]).expect("CPU chain"));
    });
    let input = [x_dev.clone()];
    bench_each(&mut group, samples, "compute_abs1_sync", || {
        let out = abs.compute(input.iter().cloned()).expect("Abs");
        dev.synchronize().expect("synchronize");
        black_box(out);
    });
    // Back to back, one wait at the end: the host-side cost of a launch
    // (as long as the GPU keeps up).
    group.bench_function("compute_abs1_queued", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(abs.compute(input.iter().cloned()).expect("Abs"));
            }
            dev.synchronize().expect("synchronize");
            let elapsed = start.elapsed();
            samples.record("compute_abs1_queued", iters, elapsed);
            elapsed
        })
    });
    group.finish();
    Ok(())
}

fn fmt_time(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.2} µs", seconds * 1e6)
    }
}

/// The summary table: times, rates and ratios of what was measured.
fn summary(samples: &Samples, matmul_differences: &[(String, f64)]) {
    let row = |name: &str, what: &str, rate: String, ratio: String| {
        if let Some(t) = samples.median(name) {
            println!(
                "| {what:<44} | {:>12} | {rate:>22} | {ratio:<34} |",
                fmt_time(t)
            );
        }
    };
    let rate =
        |name: &str, f: &dyn Fn(f64) -> String| samples.median(name).map(f).unwrap_or_default();
    let ratio = |ours: &str, base: &str, what: &str, higher_is_better: bool| match (
        samples.median(ours),
        samples.median(base),
    ) {
        (Some(o), Some(b)) if higher_is_better => format!("{:.3}x {what}", b / o),
        (Some(o), Some(b)) => format!("{:.2}x {what}", o / b),
        _ => String::new(),
    };
    let gbs = |bytes: f64| move |t: f64| format!("{:.1} GB/s", bytes / t / 1e9);
    let tflops = |flops: f64| move |t: f64| format!("{:.1} TFLOP/s", flops / t / 1e12);
    let per_op = |t: f64| format!("{:.2} µs/op", t / CHAIN as f64 * 1e6);
    let ew_bytes = (2 * ELEMENTWISE_N * 4) as f64;
    let flops = 2.0 * (MATMUL_DIM as f64).powi(3);

    println!();
    println!("## GPU summary (median per iteration; each iteration waits for the GPU)");
    println!();
    println!(
        "| {:<44} | {:>12} | {:>22} | {:<34} |",
        "benchmark", "time", "rate", "ratio"
    );
    println!(
        "|{}|{}|{}|{}|",
        "-".repeat(46),
        "-".repeat(14),
        "-".repeat(24),
        "-".repeat(36)
    );
    row(
        "abs_f32_256M",
        "Abs f32, 256M elements (kernel)",
        rate("abs_f32_256M", &gbs(ew_bytes)),
        ratio(
            "abs_f32_256M",
            "dtod_copy_1GiB",
            "of the dtod copy's GB/s",
            true,
        ),
    );
    row(
        "dtod_copy_1GiB",
        "device-to-device copy, 1 GiB",
        rate("dtod_copy_1GiB", &gbs(ew_bytes)),
        String::new(),
    );
    for label in ["f32", "f16"] {
        let k = format!("matmul_{label}_kernel");
        let b = format!("matmul_{label}_cublas");
        let diff = matmul_differences
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, d)| format!(", max diff {d:.1e}"))
            .unwrap_or_default();
        row(
            &k,
            &format!("MatMul {label} 8192^3 (kernel)"),
            rate(&k, &tflops(flops)),
            format!("{}{diff}", ratio(&k, &b, "of cuBLAS's TFLOP/s", true)),
        );
        row(
            &b,
            &format!("cuBLAS {label} 8192^3 (direct)"),
            rate(&b, &tflops(flops)),
            String::new(),
        );
    }
    row(
        "session_chain100_abs_gpu",
        "Session, 100 Abs on f32[1], devices GPU,CPU",
        rate("session_chain100_abs_gpu", &per_op),
        ratio(
            "session_chain100_abs_gpu",
            "session_chain100_abs_cpu",
            "the CPU chain's time",
            false,
        ),
    );
    row(
        "session_chain100_abs_cpu",
        "Session, 100 Abs on f32[1], CPU",
        rate("session_chain100_abs_cpu", &per_op),
        String::new(),
    );
    row(
        "compute_abs1_sync",
        "KernelInstance::compute Abs f32[1] + sync",
        String::new(),
        String::new(),
    );
    row(
        "compute_abs1_queued",
        "KernelInstance::compute Abs f32[1], queued",
        String::new(),
        String::new(),
    );
}

fn main() -> ExitCode {
    kernels_cpu::link();
    let kernels = kernels_cuda::link();
    let dev = match kernels_cuda::gpu_device() {
        Ok(dev) => dev,
        Err(e) => {
            println!("skipped: {e}");
            return ExitCode::SUCCESS;
        }
    };
    println!(
        "GPU benchmarks on {} ({kernels} GPU kernel registrations)",
        dev.description()
    );
    let mut c = Criterion::default().configure_from_args();
    let samples = Samples::default();
    let mut failures = Vec::new();
    let mut differences = Vec::new();
    if let Err(e) = elementwise(&mut c, &dev, &samples) {
        failures.push(format!("elementwise: {e}"));
    }
    for (dtype, label) in [(DataType::DtFloat, "f32"), (DataType::DtHalf, "f16")] {
        match matmul(&mut c, &dev, &samples, dtype, label) {
            Ok(d) => differences.push((label.to_owned(), d)),
            Err(e) => failures.push(format!("matmul {label}: {e}")),
        }
    }
    if let Err(e) = launch(&mut c, &dev, &samples) {
        failures.push(format!("launch: {e}"));
    }
    c.final_summary();
    summary(&samples, &differences);
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!();
        for f in &failures {
            println!("FAILED: {f}");
        }
        ExitCode::FAILURE
    }
}
