//! MatMul f32 throughput: opreg's kernel through the public API against
//! OpenBLAS, square n×n by n×n products (n = 1024 and 2048).
//!
//! - `matmul_f32/opreg/n`: `MatMul` via a cached `KernelInstance`
//!   (`create_op_kernel` once; each iteration is `compute([a, b])`, which
//!   checks the inputs and allocates the zero-filled output as any run does).
//! - `matmul_f32/openblas/n` (feature `bench-openblas`): `cblas_sgemm` into
//!   a preallocated output, on `OPENBLAS_NUM_THREADS` threads (default 2,
//!   set with `openblas_set_num_threads`). opreg uses the rayon pool
//!   (`RAYON_NUM_THREADS`, default: one thread per core).
//!
//! Throughput counts 2·n³ floating-point operations, so criterion's
//! "Gelem/s" reads as GFLOP/s. The mean GFLOP/s of each benchmark is also
//! printed, over wall time and over the process's CPU time divided by the
//! thread count (the speed on an idle machine: on a shared one, time spent
//! descheduled does not count).
//!
//! Run: `cargo bench -p kernels-cpu --bench matmul`, or with OpenBLAS:
//! `scripts/openblas-bench.sh` (installs `libopenblas-dev` when missing).

use std::cell::Cell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use registry_core::create_op_kernel;
use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::Tensor;

const SIZES: [usize; 2] = [1024, 2048];

fn matmul_node() -> NodeDef {
    let mut node = NodeDef {
        name: "matmul".into(),
        op: "MatMul".into(),
        input: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    node.attr.insert(
        "T".into(),
        AttrValue {
            value: Some(Value::Type(DataType::DtFloat as i32)),
        },
    );
    node
}

fn data(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7919 + seed * 104_729) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// The CPU time (user + system) this process has used so far, from
/// `/proc/self/stat` (Linux; 10 ms ticks), or `None` elsewhere.
fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): state is
    // field 3, utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Times `f` with `iter_custom`, keeping the total wall and CPU time and
/// iterations so the mean GFLOP/s can be printed afterwards.
struct Tally {
    time: Cell<Duration>,
    cpu: Cell<Option<Duration>>,
    iters: Cell<u64>,
}

impl Tally {
    fn new() -> Self {
        Self {
            time: Cell::new(Duration::ZERO),
            cpu: Cell::new(Some(Duration::ZERO)),
            iters: Cell::new(0),
        }
    }

    fn run(&self, iters: u64, mut f: impl FnMut()) -> Duration {
        let cpu_start = process_cpu_time();
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        let elapsed = start.elapsed();
        let cpu = match (cpu_start, process_cpu_time(), self.cpu.get()) {
            (Some(a), Some(b), Some(total)) => Some(total + b.saturating_sub(a)),
            _ => None,
        };
        self.cpu.set(cpu);
        self.time.set(self.time.get() + elapsed);
        self.iters.set(self.iters.get() + iters);
        elapsed
    }

    /// Prints the mean GFLOP/s over wall time and, when the process CPU
    /// time is known, per `threads` fully used cores (what the product
    /// would reach on an otherwise idle machine; spinning counts as work).
    fn report(&self, name: &str, n: usize, threads: usize) {
        let flops = 2.0 * (n as f64).powi(3) * self.iters.get() as f64;
        let gflops = flops / self.time.get().as_secs_f64() / 1e9;
        let per_core = self
            .cpu
            .get()
            .filter(|c| !c.is_zero())
            .map(|c| flops / (c.as_secs_f64() / threads as f64) / 1e9);
        match per_core {
            Some(p) => println!(
                "{name}/{n}: {gflops:.1} GFLOP/s wall, {p:.1} GFLOP/s per {threads} busy cores \
                 (CPU time; mean of {} runs)",
                self.iters.get()
            ),
            None => println!(
                "{name}/{n}: {gflops:.1} GFLOP/s (mean of {} runs)",
                self.iters.get()
            ),
        }
    }
}

#[cfg(feature = "bench-openblas")]
mod openblas {
    use std::ffi::c_int;

    const ROW_MAJOR: c_int = 101;
    const NO_TRANS: c_int = 111;

    #[link(name = "openblas")]
    unsafe extern "C" {
        fn cblas_sgemm(
            order: c_int,
            trans_a: c_int,
            trans_b: c_int,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: f32,
            a: *const f32,
            lda: c_int,
            b: *const f32,
            ldb: c_int,
            beta: f32,
            c: *mut f32,
            ldc: c_int,
        );
        fn openblas_set_num_threads(threads: c_int);
    }

    /// Uses `threads` OpenBLAS threads.
    pub fn set_threads(threads: i32) {
        // SAFETY: a plain setter of OpenBLAS's thread count.
        unsafe { openblas_set_num_threads(threads) }
    }

    /// `c = a · b` for row-major n×n matrices.
    pub fn sgemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        let len = n * n;
        assert!(a.len() == len && b.len() == len && c.len() == len);
        let n = c_int::try_from(n).expect("n fits in an int");
        // SAFETY: the three slices hold n·n elements each (checked above),
        // the leading dimensions are n (row-major, no transpose), `c` is
        // the only mutable borrow, and beta = 0 means `c` is only written.
        unsafe {
            cblas_sgemm(
                ROW_MAJOR,
                NO_TRANS,
                NO_TRANS,
                n,
                n,
                n,
                1.0,
                a.as_ptr(),
                n,
                b.as_ptr(),
                n,
                0.0,
                c.as_mut_ptr(),
                n,
            );
        }
    }
}

fn matmul(c: &mut Criterion) {
    kernels_cpu::link();
    let kernel = create_op_kernel("CPU", &matmul_node()).expect("MatMul f32 kernel");
    // OpenBLAS threads: OPENBLAS_NUM_THREADS, else 2 (the machine's cores).
    #[cfg(feature = "bench-openblas")]
    let blas_threads: u16 = std::env::var("OPENBLAS_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&t| t > 0)
        .unwrap_or(2);
    #[cfg(feature = "bench-openblas")]
    openblas::set_threads(i32::from(blas_threads));
    let mut group = c.benchmark_group("matmul_f32");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(2));
    for n in SIZES {
        let a_data = data(n * n, 1);
        let b_data = data(n * n, 2);
        let a = Tensor::from_slice([n, n], &a_data).expect("a");
        let b = Tensor::from_slice([n, n], &b_data).expect("b");
        group.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
        group.measurement_time(Duration::from_secs(if n >= 2048 { 12 } else { 6 }));

        let tally = Tally::new();
        group.bench_with_input(BenchmarkId::new("opreg", n), &n, |bench, _| {
            bench.iter_custom(|iters| {
                tally.run(iters, || {
                    let out = kernel.compute([a.clone(), b.clone()]).expect("MatMul runs");
                    black_box(out);
                })
            })
        });
        tally.report("matmul_f32/opreg", n, rayon::current_num_threads());

        #[cfg(feature = "bench-openblas")]
        {
            let mut out = vec![0.0f32; n * n];
            let tally = Tally::new();
            group.bench_with_input(BenchmarkId::new("openblas", n), &n, |bench, &n| {
                bench.iter_custom(|iters| {
                    tally.run(iters, || {
                        openblas::sgemm(n, &a_data, &b_data, &mut out);
                        black_box(&mut out);
                    })
                })
            });
            tally.report("matmul_f32/openblas", n, usize::from(blas_threads));
        }
    }
    group.finish();
}

criterion_group!(benches, matmul);
criterion_main!(benches);
