//! The fixed cost of running a kernel through the public API, apart from
//! the kernel's own work.
//!
//! - `dispatch/abs_1_f32_cached`: `Abs` on a 1-element f32 tensor with a
//!   kernel built once (`create_op_kernel` outside the loop), then
//!   `instance.compute([x.clone()])` per iteration: building the context,
//!   checking the input, computing, collecting the output into a new
//!   vector (target: under 60 ns). A tensor of at most 16 bytes is held by
//!   value, so the clone is a copy that the kernel computes in place.
//! - `dispatch/abs_1_f32_slots`: the same through
//!   `instance.compute_in(&mut inputs, &mut outputs)`, the slot API an
//!   executor uses: the caller owns and reuses the input and output slots,
//!   so no vectors are built or returned per call.
//! - `dispatch/abs_1_f32_forwarded`: `compute` on a unique input made in
//!   the untimed setup (`iter_batched`).
//! - `dispatch/abs_8_f32_shared_slots`: the slot API on 8 elements (32
//!   bytes, over the by-value size): the input is shared with the caller,
//!   so the output is allocated (the allocation path's cost).
//! - `lookup/abs_float`, `lookup/matmul_float`: choosing the kernel for a
//!   NodeDef with no cache, `KernelRegistry::global().find_kernel(&node,
//!   "CPU")` (target: under 300 ns). The nodes carry the OpDef's defaults,
//!   as `create_op_kernel` gives them.
//! - `create/abs_float`, `create/matmul_float`: the whole `create_op_kernel`
//!   (op lookup, defaults, validation, dtype resolution, kernel lookup,
//!   construction), for reference.
//!
//! Run: `cargo bench -p kernels-cpu --bench dispatch`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use registry_core::node_def::add_defaults_to_node_def;
use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::Tensor;
use registry_core::{KernelRegistry, OpRegistry, create_op_kernel};

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

/// The node with the OpDef's defaults added, as the kernel lookup sees it.
fn with_defaults(mut node: NodeDef) -> NodeDef {
    if let Ok(op_def) = OpRegistry::global().look_up_op_def(&node.op) {
        add_defaults_to_node_def(op_def, &mut node);
    }
    node
}

fn dispatch(c: &mut Criterion) {
    kernels_cpu::link();
    let abs = create_op_kernel("CPU", &node("Abs", 1)).expect("Abs<float> kernel");
    let x = Tensor::from_vec([1], vec![-1.5f32]).expect("tensor");
    let mut g = c.benchmark_group("dispatch");
    g.bench_function("abs_1_f32_cached", |b| {
        b.iter(|| black_box(abs.compute([black_box(&x).clone()])))
    });
    g.bench_function("abs_1_f32_slots", |b| {
        let mut inputs = [None];
        let mut outputs = [None];
        b.iter(|| {
            inputs[0] = Some(black_box(&x).clone());
            let result = abs.compute_in(&mut inputs, &mut outputs);
            black_box(result.map(|()| outputs[0].take()))
        })
    });
    let x8 = Tensor::from_vec([8], vec![-1.5f32; 8]).expect("tensor");
    g.bench_function("abs_8_f32_shared_slots", |b| {
        let mut inputs = [None];
        let mut outputs = [None];
        b.iter(|| {
            inputs[0] = Some(black_box(&x8).clone());
            let result = abs.compute_in(&mut inputs, &mut outputs);
            black_box(result.map(|()| outputs[0].take()))
        })
    });
    g.bench_function("abs_1_f32_forwarded", |b| {
        b.iter_batched(
            || Tensor::from_vec([1], vec![-1.5f32]).expect("tensor"),
            |x| black_box(abs.compute([x])),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn lookup(c: &mut Criterion) {
    kernels_cpu::link();
    let kernels = KernelRegistry::global();
    let abs = with_defaults(node("Abs", 1));
    let matmul = with_defaults(node("MatMul", 2));
    let mut g = c.benchmark_group("lookup");
    for (name, n) in [("abs_float", &abs), ("matmul_float", &matmul)] {
        kernels.find_kernel(n, "CPU").expect("a CPU kernel");
        g.bench_function(name, |b| {
            b.iter(|| black_box(kernels.find_kernel(black_box(n), "CPU")).is_ok())
        });
    }
    g.finish();
}

fn create(c: &mut Criterion) {
    kernels_cpu::link();
    let mut g = c.benchmark_group("create");
    for (name, n) in [
        ("abs_float", node("Abs", 1)),
        ("matmul_float", node("MatMul", 2)),
    ] {
        create_op_kernel("CPU", &n).expect("a CPU kernel");
        g.bench_function(name, |b| {
            b.iter(|| black_box(create_op_kernel("CPU", black_box(&n))).is_ok())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = dispatch, lookup, create
}
criterion_main!(benches);
