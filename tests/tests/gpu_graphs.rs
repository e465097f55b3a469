//! Every shared TensorFlow graph runs with `devices: ["GPU", "CPU"]` and its
//! fetches match TensorFlow's within the tolerances `graphs_e2e` uses
//! (`opreg_tests::graphs::tolerance`: integers and bools exactly, f32/f64
//! within 64 ulps, f16 within 1 ulp of half); so do the feed-forward Keras
//! models of `shared/models` (mobilenet_v2, unet_small,
//! transformer_encoder), within the models' tolerance (`models_e2e`'s).
//! Every node that has a GPU kernel must have been placed on the GPU; each
//! test prints how many nodes ran on each device.
//!
//! Each graph test needs a GPU: it is `#[ignore = "needs a GPU"]`, so
//! `cargo test` reports it as ignored, and `scripts/gpu-verify.sh run`
//! runs it with `--ignored` on a GPU machine. `gpu_sessions_fail_cleanly_without_a_gpu`
//! runs everywhere: without a GPU it checks that a GPU session fails with
//! `RunError::Device` ("no GPU device: ...") while a CPU session runs; with
//! a GPU, that the GPU session runs.

use opreg_runtime::{Graph, RunError, Session, SessionOptions, requested_device_type};
use opreg_tests::graphs::{SharedGraph, compare, compare_model, shared_graphs, shared_model};
use registry_core::KernelRegistry;
use registry_core::device::{DEVICE_CPU, DEVICE_GPU};
use registry_core::tensor::Tensor;

/// Links both kernel crates (their registrations and the GPU device).
fn link() {
    kernels_cpu::link();
    kernels_cuda::link();
}

/// Session options preferring the GPU, CPU for the rest.
fn gpu_then_cpu() -> SessionOptions {
    SessionOptions {
        devices: vec![DEVICE_GPU.into(), DEVICE_CPU.into()],
        ..Default::default()
    }
}

/// Prints the GPU the test runs on; panics, saying why, without one.
fn require_gpu(test: &str) {
    match kernels_cuda::gpu_available() {
        Ok(description) => eprintln!("{test}: on {description}"),
        Err(why) => panic!("{test} needs a GPU: {why}"),
    }
}

fn shared_graph(name: &str) -> SharedGraph {
    shared_graphs()
        .into_iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no shared graph '{name}'"))
}

/// How a fetch is compared with TF's: `compare` (graphs) or
/// `compare_model` (models); the worst relative error, or why not.
type Comparison = fn(&str, &Tensor, &Tensor) -> Result<f64, String>;

/// Compares fetched tensors with TF's; returns the worst relative error,
/// pushing a message per mismatch to `failures`.
fn compare_all(
    g: &SharedGraph,
    compare: Comparison,
    what: &str,
    outputs: &[Tensor],
    failures: &mut Vec<String>,
) -> f64 {
    if outputs.len() != g.fetches.len() {
        failures.push(format!(
            "{} ({what}): {} outputs for {} fetches",
            g.name,
            outputs.len(),
            g.fetches.len()
        ));
        return f64::NAN;
    }
    let mut worst: f64 = 0.0;
    for (fetch, ours) in g.fetches.iter().zip(outputs) {
        if !ours.is_on_host() {
            failures.push(format!(
                "{} ({what}): fetch {} came back in {} memory, not on the host",
                g.name,
                fetch.name,
                ours.device_type()
            ));
            continue;
        }
        match compare(&fetch.name, ours, &fetch.tensor) {
            Ok(w) => worst = worst.max(w),
            Err(e) => failures.push(format!("{} ({what}): {e}", g.name)),
        }
    }
    worst
}

/// Runs graph `name` on GPU+CPU twice, compares both runs with TF, checks
/// placement and prints the per-device node counts.
fn check_graph_on_gpu(name: &str) {
    link();
    require_gpu(name);
    check_on_gpu(&shared_graph(name), compare);
}

/// [`check_graph_on_gpu`] for model `name` of `shared/models`, compared by
/// the models' rule.
fn check_model_on_gpu(name: &str) {
    link();
    require_gpu(name);
    check_on_gpu(&shared_model(name), compare_model);
}

/// Runs `g` on GPU+CPU twice, compares both runs with TF by `compare`,
/// checks placement and prints the per-device node counts.
fn check_on_gpu(g: &SharedGraph, compare: Comparison) {
    let name = g.name.as_str();
    let graph = Graph::from_file(g.dir.join("graph.pb")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let session = Session::with_options(graph, gpu_then_cpu());
    let feeds = g.feed_pairs();
    let fetches = g.fetch_names();
    let mut failures = Vec::new();
    let first = session
        .run(&feeds, &fetches)
        .unwrap_or_else(|e| panic!("{name}: run with devices [GPU, CPU] failed: {e}"));
    let worst = compare_all(g, compare, "first run", &first, &mut failures);
    // A second run reuses the plan, the kernels and the compiled GPU code.
    // GPU reductions may sum in another order between runs, so both runs
    // are compared with TF rather than with each other.
    match session.run(&feeds, &fetches) {
        Ok(again) => {
            compare_all(g, compare, "second run", &again, &mut failures);
        }
        Err(e) => failures.push(format!("{name}: second run failed: {e}")),
    }

    let gpu_kernels = KernelRegistry::global();
    let (mut on_gpu, mut on_cpu, mut not_run) = (Vec::new(), Vec::new(), 0usize);
    for node in session.graph().nodes() {
        let Some(device) = session.placement(node.name()) else {
            not_run += 1;
            continue;
        };
        let label = format!("{} ({})", node.name(), node.op());
        if device == DEVICE_GPU {
            on_gpu.push(label);
            continue;
        }
        // A node that asks for another device explicitly may stay there.
        let requested = requested_device_type(&node.def.device);
        let pinned_elsewhere = requested.as_deref().is_some_and(|d| d != DEVICE_GPU);
        if !pinned_elsewhere && gpu_kernels.find_kernel(&node.def, DEVICE_GPU).is_ok() {
            failures.push(format!(
                "{name}: node {label} has a GPU kernel but was placed on {device}"
            ));
        }
        on_cpu.push(label);
    }
    eprintln!(
        "{name}: {} nodes on GPU, {} on CPU, {not_run} not run; worst relative error {worst:e}",
        on_gpu.len(),
        on_cpu.len()
    );
    if !on_cpu.is_empty() {
        eprintln!("{name}: on CPU: {}", on_cpu.join(", "));
    }
    if on_gpu.is_empty() {
        failures.push(format!("{name}: no node was placed on the GPU"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One test per shared graph (so one failing graph does not hide the
/// others), and the list of their names.
macro_rules! gpu_graph_tests {
    ($($graph:ident),* $(,)?) => {
        $(
            #[test]
            #[ignore = "needs a GPU"]
            fn $graph() {
                check_graph_on_gpu(stringify!($graph));
            }
        )*
        const GRAPHS: &[&str] = &[$(stringify!($graph)),*];
    };
}

gpu_graph_tests!(
    addn_reduce,
    batchnorm_misc,
    broadcast_int,
    cnn_f32,
    double_half,
    elementwise_f32,
    mlp_f32,
);

/// The feed-forward models, one test each (the control-flow models run
/// their loops on the host and are checked on the CPU by `models_e2e`).
macro_rules! gpu_model_tests {
    ($($model:ident),* $(,)?) => {
        $(
            #[test]
            #[ignore = "needs a GPU"]
            fn $model() {
                check_model_on_gpu(stringify!($model));
            }
        )*
    };
}

gpu_model_tests!(mobilenet_v2, unet_small, transformer_encoder);

#[test]
fn every_shared_graph_has_a_gpu_test() {
    let mut shared: Vec<String> = shared_graphs().into_iter().map(|g| g.name).collect();
    shared.sort();
    let mut tested: Vec<String> = GRAPHS.iter().map(|s| (*s).to_owned()).collect();
    tested.sort();
    assert_eq!(
        shared, tested,
        "the shared graphs and the graphs tested on GPU differ: add a name to gpu_graph_tests!"
    );
}

/// Without a GPU, a session that lists GPU fails every run with
/// `RunError::Device` ("no GPU device: ...") and a CPU session runs; with a
/// GPU, the GPU session runs and matches TF.
#[test]
fn gpu_sessions_fail_cleanly_without_a_gpu() {
    link();
    let g = shared_graph("mlp_f32");
    let load = || Graph::from_file(g.dir.join("graph.pb")).expect("mlp_f32 graph");
    let feeds = g.feed_pairs();
    let fetches = g.fetch_names();
    let gpu_session = Session::with_options(load(), gpu_then_cpu());
    let result = gpu_session.run(&feeds, &fetches);
    let mut failures = Vec::new();
    match kernels_cuda::gpu_available() {
        Err(why) => {
            assert!(why.starts_with("no GPU device"), "gpu_available: {why}");
            for attempt in ["first", "second"] {
                let result = if attempt == "first" {
                    result.clone()
                } else {
                    gpu_session.run(&feeds, &fetches)
                };
                match result {
                    Err(RunError::Device(e)) => assert!(
                        e.to_string().starts_with("no GPU device"),
                        "{attempt} run: the device error does not start with 'no GPU device': {e}"
                    ),
                    Err(other) => {
                        panic!("{attempt} run: expected RunError::Device, got {other:?} ({other})")
                    }
                    Ok(_) => panic!("{attempt} run: a GPU session ran without a GPU"),
                }
            }
            let cpu_session = Session::with_options(
                load(),
                SessionOptions {
                    devices: vec![DEVICE_CPU.into()],
                    ..Default::default()
                },
            );
            let outputs = cpu_session
                .run(&feeds, &fetches)
                .unwrap_or_else(|e| panic!("CPU session failed: {e}"));
            compare_all(&g, compare, "CPU", &outputs, &mut failures);
            eprintln!(
                "no GPU here ({why}): GPU sessions fail with RunError::Device, CPU sessions run"
            );
        }
        Ok(description) => {
            let outputs =
                result.unwrap_or_else(|e| panic!("GPU session failed on {description}: {e}"));
            compare_all(&g, compare, "GPU", &outputs, &mut failures);
            eprintln!("GPU present ({description}): the GPU session ran");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The float kernels at extreme magnitudes (`tests/data/tf-numerics`, TF
/// 2.21's CPU answers) on the GPU: every case whose op has a GPU kernel runs
/// there and matches TF's answer, except where that answer depends on how
/// denormals are treated: where opreg's CPU kernels answer differently with
/// and without flushing (the GPU keeps double precision's denormals, as
/// TF's GPU kernels do), and, in single precision, where an input or TF's
/// answer is a denormal (the GPU flushes every single-precision denormal,
/// bit operations included, as TF's GPU kernels built with `ftz=true` do);
/// and where TF's CPU `Cast` to an integer gives x86's "integer
/// indefinite" (the GPU saturates, as TF's GPU kernels do). Prints, per op,
/// how many elements were passed over.
#[test]
#[ignore = "needs a GPU"]
fn extreme_magnitudes_on_the_gpu_match_tensorflow() {
    use opreg_tests::numerics::{
        compare_where, denormal_dependent, is_cast_indefinite, load_cases, run_case,
        touches_denormal,
    };
    use registry_core::proto::DataType;
    link();
    require_gpu("extreme_magnitudes_on_the_gpu");
    let mut problems = Vec::new();
    let mut on_gpu = 0;
    for case in load_cases().unwrap() {
        let kernels = KernelRegistry::global();
        if kernels
            .kernels_for_op(&case.op)
            .iter()
            .all(|k| k.device != DEVICE_GPU)
        {
            continue;
        }
        on_gpu += 1;
        let dependent = denormal_dependent(&case).unwrap();
        let single = case.t != DataType::DtDouble;
        match run_case(&case, gpu_then_cpu()) {
            Ok(out) => {
                let (diffs, passed_over) = compare_where(&case, &out, |i| {
                    let passed_over = dependent.get(i).copied().unwrap_or(false)
                        || is_cast_indefinite(&case, i)
                        || (single && touches_denormal(&case, i));
                    !passed_over
                });
                if passed_over > 0 {
                    println!(
                        "{}: {passed_over} element(s) differ where TF's CPU answer depends on denormal flushing or x86's integer indefinite",
                        case.label()
                    );
                }
                problems.extend(diffs);
            }
            Err(why) => problems.push(format!("{}: {why}", case.label())),
        }
    }
    for p in &problems {
        println!("{p}");
    }
    assert!(on_gpu > 50, "only {on_gpu} cases have GPU kernels");
    assert!(
        problems.is_empty(),
        "{} differences from TensorFlow (above)",
        problems.len()
    );
}
