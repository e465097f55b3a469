//! Benchmarks at TensorFlow scale (1,736 ops):
//! - `spec_parsing`: every op's specs through `registry_spec::OpSpec::build`
//!   (what `#[op]` does at compile time): all 1,736 per iteration, and one op
//!   per iteration cycling through them (the time per op);
//! - `registry_finalization`: a fresh non-global registry built from the
//!   inventory, up to its first lookup;
//! - `lookup`: `OpRegistry::look_up` by name in a finalized registry.
//!
//! Run with `cargo bench -p tf-registry-ops --bench registry`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use registry_core::registry::OpRegistry;
use registry_core::spec::OpSpec;
use serde_json::Value;

registry_core::link_ops!(tf_registry_ops);

/// The specs of every case of `tf_registry_2_21.json`, as `OpSpec`s (built
/// by the conformance runner's `spec_of`, the one reader of the case format).
fn op_specs() -> Vec<OpSpec> {
    let json = std::fs::read_to_string(tf_registry_ops_gen::registry_json_path()).unwrap();
    let cases: Vec<Value> = serde_json::from_str(&json).unwrap();
    cases
        .iter()
        .map(opreg_tests::conformance::spec_of)
        .collect()
}

fn spec_parsing(c: &mut Criterion) {
    let specs = op_specs();
    assert_eq!(specs.len(), 1736);
    let mut group = c.benchmark_group("spec_parsing");
    group.throughput(Throughput::Elements(specs.len() as u64));
    group.bench_function("build_all_1736", |b| {
        b.iter(|| {
            for spec in &specs {
                black_box(spec.build().unwrap());
            }
        })
    });
    // One op per iteration, cycling through all of them: criterion's time is
    // the mean time per op.
    group.throughput(Throughput::Elements(1));
    group.bench_function("build_one_op", |b| {
        let mut ops = specs.iter().cycle();
        b.iter(|| black_box(ops.next().unwrap().build().unwrap()))
    });
    group.finish();
}

fn registry_finalization(c: &mut Criterion) {
    assert!(OpRegistry::from_inventory().len() >= 1736);
    c.bench_function(
        "registry_finalization/from_inventory_to_first_lookup",
        |b| {
            b.iter_with_large_drop(|| {
                let registry = OpRegistry::from_inventory();
                black_box(registry.look_up(black_box("Conv2D")).unwrap());
                registry
            })
        },
    );
    // The same, without the first lookup's decoding and validation of one
    // OpDef: the cost of indexing the inventory alone.
    c.bench_function("registry_finalization/from_inventory", |b| {
        b.iter_with_large_drop(OpRegistry::from_inventory)
    });
}

fn lookup(c: &mut Criterion) {
    let registry = OpRegistry::from_inventory();
    // Decode every op once, so lookups measure the steady state.
    let _ = registry.process_registrations();
    let mut names: Vec<String> = registry.op_names().into_iter().map(str::to_owned).collect();
    names.sort();
    let mut group = c.benchmark_group("lookup");
    group.bench_function("look_up_Conv2D", |b| {
        b.iter(|| black_box(registry.look_up(black_box("Conv2D")).is_ok()))
    });
    group.bench_function("look_up_long_name", |b| {
        let name = "_MklNativeDepthwiseConv2dNativeBackpropFilter";
        b.iter(|| black_box(registry.look_up(black_box(name)).is_ok()))
    });
    group.throughput(Throughput::Elements(names.len() as u64));
    group.bench_function("look_up_every_op", |b| {
        b.iter(|| {
            for name in &names {
                black_box(registry.look_up(black_box(name)).is_ok());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, spec_parsing, registry_finalization, lookup);
criterion_main!(benches);
