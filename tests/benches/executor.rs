//! Executor overhead and whole-graph runs (criterion).
//!
//! - `chain_1000_abs`: a prepared run of a chain of 1,000 `Abs` nodes on a
//!   1-element f32 tensor, next to `abs_kernel_alone` (the same kernel
//!   called directly through `KernelInstance::compute` on a unique input).
//!   Executor overhead per node = (chain - 1000 × kernel) / 1000.
//! - `mlp_f32`, `cnn_f32`: full runs of the shared TensorFlow graphs with
//!   their io.json feeds (plan and kernels cached, as in a served model).
//! - `loop/counted_loop_v1`, `loop/counted_loop_fn`: TF's counted loop
//!   (`tests/data/tf-control-flow`: `i < n`, two loop variables, a handful
//!   of scalar and 3-element kernels per step) run for `n` = 1,000
//!   iterations, in TF 1 form (Enter/Switch/Merge/NextIteration/Exit) and as
//!   a `While` with function bodies. Cost per iteration = time / 1,000;
//!   `scripts/tf_graph_timing.py --loops` times TensorFlow on the same
//!   graphs and feeds.
//!
//! `cargo bench -p opreg-tests --bench executor`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use opreg_runtime::{Graph, Session};
use opreg_tests::graphs::{SharedGraph, shared_graphs};
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef, attr_value::Value};
use registry_core::tensor::Tensor;

fn abs_chain(n: usize) -> GraphDef {
    let t = AttrValue {
        value: Some(Value::Type(DataType::DtFloat as i32)),
    };
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

fn executor_overhead(c: &mut Criterion) {
    kernels_cpu::link();
    let session = Session::new(Graph::new(abs_chain(1000)).expect("chain graph"));
    let prepared = session.prepare(&["x"], &["abs999"]).expect("plan");
    let abs = registry_core::create_op_kernel("CPU", &abs_chain(1).node[1]).expect("Abs kernel");
    let x = Tensor::from_vec([1], vec![-1.5f32]).expect("tensor");
    let mut group = c.benchmark_group("executor");
    group.bench_function("abs_kernel_alone", |b| {
        b.iter_batched(
            || {
                x.as_slice::<f32>()
                    .map(|s| Tensor::from_slice([1], s))
                    .expect("copy")
            },
            |t| black_box(abs.compute([t.expect("tensor")]).expect("abs")),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("chain_1000_abs", |b| {
        b.iter_batched(
            || {
                x.as_slice::<f32>()
                    .map(|s| Tensor::from_slice([1], s))
                    .expect("copy")
            },
            |t| black_box(prepared.run([t.expect("tensor")]).expect("run")),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn run_graph(c: &mut Criterion, graph: &SharedGraph) {
    let session = Session::new(Graph::from_file(graph.dir.join("graph.pb")).expect("graph"));
    let feeds: Vec<&str> = graph.feeds.iter().map(|f| f.name.as_str()).collect();
    let fetches: Vec<&str> = graph.fetch_names();
    let prepared = session.prepare(&feeds, &fetches).expect("plan");
    c.bench_function(&format!("graph/{}", graph.name), |b| {
        b.iter(|| {
            black_box(
                prepared
                    .run(graph.feeds.iter().map(|f| f.tensor.clone()))
                    .expect("run"),
            )
        })
    });
}

fn whole_graphs(c: &mut Criterion) {
    kernels_cpu::link();
    for graph in shared_graphs() {
        if graph.name == "mlp_f32" || graph.name == "cnn_f32" {
            run_graph(c, &graph);
        }
    }
}

/// Iterations of the loop benchmarks (TF's timing script feeds the same).
const LOOP_ITERATIONS: i32 = 1000;

fn loops(c: &mut Criterion) {
    kernels_cpu::link();
    let root = opreg_tests::workspace_root().join("tests/data/tf-control-flow");
    let mut group = c.benchmark_group("loop");
    for name in ["counted_loop_v1", "counted_loop_fn"] {
        let dir = root.join(name);
        let case = opreg_tests::graphs::load(&dir).expect("io.json");
        let session = Session::new(Graph::from_file(dir.join("graph.pbtxt")).expect("graph"));
        let feeds: Vec<&str> = case.feeds.iter().map(|f| f.name.as_str()).collect();
        let fetches: Vec<&str> = case.fetch_names();
        let prepared = session.prepare(&feeds, &fetches).expect("plan");
        let values: Vec<Tensor> = case
            .feeds
            .iter()
            .map(|f| {
                if f.name == "n:0" {
                    Tensor::scalar(LOOP_ITERATIONS)
                } else {
                    f.tensor.clone()
                }
            })
            .collect();
        group.bench_function(name, |b| {
            b.iter(|| black_box(prepared.run(values.iter().cloned()).expect("run")))
        });
    }
    group.finish();
}

criterion_group!(benches, executor_overhead, whole_graphs, loops);
criterion_main!(benches);
