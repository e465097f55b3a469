//! Element-wise kernel bandwidth against the machine's memory-copy
//! bandwidth, on 16M f32 elements (64 MiB per tensor).
//!
//! - `memcpy/*`: `copy_from_slice` of 64 MiB into a preallocated buffer,
//!   split over the rayon pool (one chunk per thread, and 4 MiB chunks);
//!   throughput counts the bytes read and written (2 x 64 MiB).
//! - `abs/*`: `Abs` through `KernelInstance::compute` with a cached kernel:
//!   `forwarded` feeds a unique tensor each iteration (made in the untimed
//!   setup) so the kernel works in place; `allocated` feeds a shared
//!   tensor, so the output is allocated (2 x 64 MiB counted).
//! - `add_v2/*`: same-shape `AddV2`, `x` forwarded or not (3 x 64 MiB:
//!   two reads and one write).
//! - `alloc/zeros_64MiB`: allocating and freeing one 64 MiB tensor, the
//!   fixed cost of every non-forwarded output (throughput: bytes zeroed).
//!
//! Run: `cargo bench -p kernels-cpu --bench elementwise`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use registry_core::create_op_kernel;
use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::Tensor;

/// Elements per tensor: 16M f32 = 64 MiB.
const N: usize = 16 << 20;
const BYTES: u64 = (N * 4) as u64;

fn node(op: &str, inputs: usize) -> NodeDef {
    let mut node = NodeDef {
        name: op.to_lowercase(),
        op: op.into(),
        input: (0..inputs).map(|i| format!("in{i}")).collect(),
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

fn data() -> Vec<f32> {
    (0..N).map(|i| (i % 1000) as f32 - 500.0).collect()
}

fn memcpy(c: &mut Criterion) {
    let src = data();
    let mut dst = vec![0.0f32; N];
    let mut g = c.benchmark_group("memcpy");
    g.throughput(Throughput::Bytes(2 * BYTES));
    let threads = rayon::current_num_threads();
    for (name, chunk) in [("per_thread", N.div_ceil(threads)), ("4MiB", 1 << 20)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                dst.par_chunks_mut(chunk)
                    .zip(src.par_chunks(chunk))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                black_box(&mut dst);
            })
        });
    }
    g.finish();
}

/// What allocating (and freeing) one 64 MiB output costs: `Tensor::zeros`,
/// which `allocate_output` uses (aligned allocation, zero-filled).
fn alloc(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc");
    g.throughput(Throughput::Bytes(BYTES));
    g.bench_function("zeros_64MiB", |b| {
        b.iter(|| black_box(Tensor::zeros(DataType::DtFloat, [N]).unwrap()))
    });
    g.finish();
}

fn abs(c: &mut Criterion) {
    kernels_cpu::link();
    let kernel = create_op_kernel("CPU", &node("Abs", 1)).unwrap();
    let values = data();
    let shared = Tensor::from_slice([N], &values).unwrap();
    let mut g = c.benchmark_group("abs");
    g.throughput(Throughput::Bytes(2 * BYTES));
    g.bench_function("forwarded", |b| {
        b.iter_batched(
            || Tensor::from_slice([N], &values).unwrap(),
            |x| kernel.compute([x]).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("allocated", |b| {
        b.iter(|| black_box(kernel.compute([shared.clone()]).unwrap()))
    });
    g.finish();
}

fn add_v2(c: &mut Criterion) {
    kernels_cpu::link();
    let kernel = create_op_kernel("CPU", &node("AddV2", 2)).unwrap();
    let values = data();
    let x = Tensor::from_slice([N], &values).unwrap();
    let y = Tensor::from_slice([N], &values).unwrap();
    let mut g = c.benchmark_group("add_v2");
    g.throughput(Throughput::Bytes(3 * BYTES));
    g.bench_function("forwarded", |b| {
        b.iter_batched(
            || Tensor::from_slice([N], &values).unwrap(),
            |x| kernel.compute([x, y.clone()]).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("allocated", |b| {
        b.iter(|| black_box(kernel.compute([x.clone(), y.clone()]).unwrap()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    targets = memcpy, alloc, abs, add_v2
}
criterion_main!(benches);
