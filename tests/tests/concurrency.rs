//! Thread safety: the registries, graphs, sessions, kernels and tensors are
//! `Send + Sync` (checked at compile time), and a stress test hammers them
//! from many threads at once:
//!
//! - op and kernel lookups in the global registries, and kernels created
//!   and computed for standard ops;
//! - new ops registered at run time under unique names, and the same name
//!   registered by every thread at once (exactly one wins, the others get
//!   `AlreadyExists`);
//! - shared TensorFlow graphs run through one shared `Session` (racing on
//!   its kernel creation and plan cache) and through per-thread sessions.
//!
//! Every result must be bit-identical to a single-threaded reference run,
//! the test must finish (a watchdog fails it after `WATCHDOG`), and the
//! registry must hold every op the threads registered afterwards.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use opreg_runtime::{Graph, PreparedRun, RunError, Session};
use opreg_tests::graphs::load;
use registry_core::kernel::{KernelInstance, KernelRegistry, create_op_kernel};
use registry_core::node_def::add_defaults_to_node_def;
use registry_core::proto::{NodeDef, TextFormat};
use registry_core::registry::{OpRegistry, RegistryError};
use registry_core::spec::OpSpec;
use registry_core::tensor::Tensor;

/// Compile-time check that `T` can be shared between threads.
const fn assert_send_sync<T: Send + Sync>() {}

const _: () = {
    assert_send_sync::<OpRegistry>();
    assert_send_sync::<KernelRegistry>();
    assert_send_sync::<Graph>();
    assert_send_sync::<Session>();
    assert_send_sync::<PreparedRun<'static>>();
    assert_send_sync::<KernelInstance>();
    assert_send_sync::<Tensor>();
    assert_send_sync::<RegistryError>();
    assert_send_sync::<RunError>();
};

/// Worker threads.
const THREADS: usize = 8;
/// Iterations per worker.
const ITERS: usize = 250;
/// Every this many iterations, all workers register one name at once.
const DUP_EVERY: usize = 25;
/// The longest the whole stress test may take before it counts as a
/// deadlock.
const WATCHDOG: Duration = Duration::from_secs(120);

/// The shared graphs run by the workers.
const GRAPHS: [&str; 3] = ["mlp_f32", "broadcast_int", "addn_reduce"];

/// A shared graph with its feeds and the single-threaded reference result.
struct Case {
    name: String,
    graph: Graph,
    feeds: Vec<(String, Tensor)>,
    fetches: Vec<String>,
    reference: Vec<Tensor>,
}

impl Case {
    fn load(name: &str) -> Case {
        let shared = load(&opreg_tests::shared_dir().join("graphs").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let graph =
            Graph::from_file(shared.dir.join("graph.pb")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut case = Case {
            name: name.to_owned(),
            graph,
            feeds: shared
                .feeds
                .into_iter()
                .map(|f| (f.name, f.tensor))
                .collect(),
            fetches: shared.fetches.into_iter().map(|f| f.name).collect(),
            reference: Vec::new(),
        };
        let session = Session::new(case.graph.clone());
        case.reference = case
            .run(&session)
            .unwrap_or_else(|e| panic!("{name}: reference run: {e}"));
        assert_eq!(case.reference.len(), case.fetches.len(), "{name}");
        case
    }

    fn run(&self, session: &Session) -> Result<Vec<Tensor>, RunError> {
        let feeds: Vec<(&str, Tensor)> = self
            .feeds
            .iter()
            .map(|(n, t)| (n.as_str(), t.clone()))
            .collect();
        let fetches: Vec<&str> = self.fetches.iter().map(String::as_str).collect();
        session.run(&feeds, &fetches)
    }

    /// Runs through `session` and compares with the reference, bit for bit.
    fn check(&self, session: &Session, what: &str) -> Result<(), String> {
        let out = self
            .run(session)
            .map_err(|e| format!("{} ({what}): {e}", self.name))?;
        if out != self.reference {
            return Err(format!(
                "{} ({what}): result differs from the single-threaded run",
                self.name
            ));
        }
        Ok(())
    }
}

/// A standard-op node, a kernel input set and the output computed by a
/// single-threaded run.
struct KernelCase {
    node: NodeDef,
    inputs: Vec<Tensor>,
    reference: Vec<Tensor>,
}

impl KernelCase {
    fn new(pbtxt: &str, inputs: Vec<Tensor>) -> KernelCase {
        let mut node = NodeDef::from_pbtxt(pbtxt).expect("node pbtxt parses");
        let op_def = OpRegistry::global()
            .look_up_op_def(&node.op)
            .expect("standard op");
        add_defaults_to_node_def(op_def, &mut node);
        let kernel = create_op_kernel("CPU", &node).expect("CPU kernel");
        let reference = kernel.compute(inputs.clone()).expect("compute").to_vec();
        KernelCase {
            node,
            inputs,
            reference,
        }
    }

    fn check(&self) -> Result<(), String> {
        let op = &self.node.op;
        let found = KernelRegistry::global()
            .find_kernel(&self.node, "CPU")
            .map_err(|e| format!("find_kernel {op}: {e}"))?;
        if found.op != op.as_str() {
            return Err(format!("find_kernel {op} found a kernel of {}", found.op));
        }
        let kernel = create_op_kernel("CPU", &self.node).map_err(|e| format!("{op}: {e}"))?;
        let out = kernel
            .compute(self.inputs.clone())
            .map_err(|e| format!("{op}: {e}"))?;
        if out.as_slice() != self.reference.as_slice() {
            return Err(format!("{op}: result differs from the single-threaded run"));
        }
        Ok(())
    }
}

fn kernel_cases() -> Vec<KernelCase> {
    let f32s = |dims: [usize; 2], v: Vec<f32>| Tensor::from_vec(dims, v).expect("tensor");
    vec![
        KernelCase::new(
            r#"name: "abs" op: "Abs" input: "x" attr { key: "T" value { type: DT_FLOAT } }"#,
            vec![f32s(
                [2, 3],
                vec![-1.5, 2.0, -0.0, f32::NAN, f32::NEG_INFINITY, -3.25],
            )],
        ),
        KernelCase::new(
            r#"name: "mm" op: "MatMul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } }"#,
            vec![
                f32s([2, 3], vec![1.0, -2.0, 0.5, 3.0, 0.25, -1.0]),
                f32s([3, 2], vec![0.5, 1.0, -1.0, 2.0, 4.0, -0.125]),
            ],
        ),
        KernelCase::new(
            r#"name: "add" op: "AddV2" input: "a" input: "b" attr { key: "T" value { type: DT_INT32 } }"#,
            vec![
                Tensor::from_vec([3, 1], vec![1i32, -7, i32::MAX]).expect("tensor"),
                Tensor::from_vec([1, 2], vec![10i32, i32::MIN]).expect("tensor"),
            ],
        ),
    ]
}

fn stress_op_name(thread: usize, iter: usize) -> String {
    format!("StressOp{thread}_{iter}")
}

fn dup_name(round: usize) -> String {
    format!("StressDup_{round}")
}

/// What one worker did: failures, and its result for each duplicate round.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    dup_results: Vec<(String, Result<(), RegistryError>)>,
}

/// One iteration of a worker: lookups, a registration, kernels and graphs.
fn iteration(
    thread: usize,
    i: usize,
    cases: &[Case],
    shared: &[Session],
    own: &[Session],
    kernels: &[KernelCase],
) -> Result<(), String> {
    let ops = OpRegistry::global();
    for name in ["Abs", "MatMul", "AddV2", "Placeholder", "Const"] {
        let op = ops
            .look_up(name)
            .map_err(|e| format!("look_up {name}: {e}"))?;
        if op.name() != name {
            return Err(format!("look_up {name} returned {}", op.name()));
        }
    }

    let name = stress_op_name(thread, i);
    ops.register(
        OpSpec::new(name.as_str())
            .input("x: T")
            .output("y: T")
            .attr("T: {float, int32}"),
        None,
    )
    .map_err(|e| format!("register {name}: {e}"))?;
    let op = ops
        .look_up(&name)
        .map_err(|e| format!("look_up {name} after registering it: {e}"))?;
    if op.op_def().input_arg.len() != 1 || op.op_def().input_arg[0].type_attr != "T" {
        return Err(format!("{name} reads back as {:?}", op.op_def()));
    }
    // Another thread's op of the previous iteration may or may not be
    // there yet, but once it is, it can be looked up whole. (`contains`
    // first: a failed lookup ranks every name for suggestions, which is
    // slow with thousands of ops.)
    let other = stress_op_name((thread + 1) % THREADS, i.saturating_sub(1));
    if ops.contains(&other) {
        let op = ops
            .look_up(&other)
            .map_err(|e| format!("{other} is contained but look_up fails: {e}"))?;
        if op.name() != other {
            return Err(format!("look_up {other} returned {}", op.name()));
        }
    }

    kernels[(thread + i) % kernels.len()].check()?;

    let case = (thread + i) % cases.len();
    cases[case].check(&shared[case], "shared session")?;
    let case = (thread + i + 1) % cases.len();
    cases[case].check(&own[case], "per-thread session")?;
    Ok(())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

fn worker(
    thread: usize,
    cases: &[Case],
    shared: &[Session],
    kernels: &[KernelCase],
    barrier: &Barrier,
) -> Report {
    let mut report = Report::default();
    // Per-thread sessions of the same graphs, built concurrently.
    let own: Vec<Session> = cases
        .iter()
        .map(|c| Session::new(c.graph.clone()))
        .collect();
    barrier.wait();
    for i in 0..ITERS {
        // A panic is recorded, not propagated, so that no other worker is
        // left waiting at the barrier.
        let result = catch_unwind(AssertUnwindSafe(|| {
            iteration(thread, i, cases, shared, &own, kernels)
        }))
        .unwrap_or_else(|payload| Err(format!("panic: {}", panic_message(&*payload))));
        if let Err(e) = result {
            report
                .failures
                .push(format!("thread {thread}, iteration {i}: {e}"));
        }
        if i % DUP_EVERY == 0 {
            let name = dup_name(i);
            barrier.wait();
            let result = OpRegistry::global().register(
                OpSpec::new(name.as_str())
                    .input("x: float")
                    .output("y: float"),
                None,
            );
            report.dup_results.push((name, result));
        }
    }
    report
}

/// The stress test proper; panics on any failure.
fn stress() {
    kernels_cpu::link();
    let cases: Vec<Case> = GRAPHS.iter().map(|name| Case::load(name)).collect();
    let kernels = kernel_cases();
    // Fresh sessions, shared by every worker: their kernels and plans are
    // created by whichever worker gets there first.
    let shared: Vec<Session> = cases
        .iter()
        .map(|c| Session::new(c.graph.clone()))
        .collect();
    let ops = OpRegistry::global();
    let ops_before = ops.len();
    let barrier = Barrier::new(THREADS);
    let reports = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (cases, shared, kernels, barrier, reports) =
                (&cases, &shared, &kernels, &barrier, &reports);
            std::thread::Builder::new()
                .name(format!("stress-{thread}"))
                .spawn_scoped(scope, move || {
                    let report = worker(thread, cases, shared, kernels, barrier);
                    reports
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(report);
                })
                .expect("spawn a worker");
        }
    });
    eprintln!(
        "{THREADS} threads x {ITERS} iterations in {:?}",
        start.elapsed()
    );
    let reports = reports
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    assert_eq!(reports.len(), THREADS, "a worker did not report");

    let failures: Vec<&String> = reports.iter().flat_map(|r| &r.failures).collect();
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );

    // Each duplicate round: exactly one registration won, every other one
    // was refused as a duplicate of that name.
    let rounds: Vec<String> = (0..ITERS).step_by(DUP_EVERY).map(dup_name).collect();
    for name in &rounds {
        let results: Vec<&Result<(), RegistryError>> = reports
            .iter()
            .flat_map(|r| &r.dup_results)
            .filter(|(n, _)| n == name)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(results.len(), THREADS, "{name}: one result per thread");
        let won = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "{name}: {won} registrations succeeded");
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(
                matches!(r, RegistryError::AlreadyExists { name: n, .. } if n == name),
                "{name}: unexpected error {r}"
            );
        }
        assert!(ops.look_up(name).is_ok(), "{name} is not registered");
    }

    // Every op a worker registered is there, and nothing else was added.
    let names = ops.op_names();
    for thread in 0..THREADS {
        for i in 0..ITERS {
            let name = stress_op_name(thread, i);
            assert!(ops.contains(&name), "{name} is missing");
            assert!(names.contains(&name.as_str()), "{name} is not listed");
            let op = ops.look_up(&name).expect("registered op");
            assert_eq!(op.name(), name);
        }
    }
    assert_eq!(ops.len(), ops_before + THREADS * ITERS + rounds.len());

    // The shared sessions still give the reference after the storm.
    for (case, session) in cases.iter().zip(&shared) {
        case.check(session, "shared session, afterwards")
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn registries_and_sessions_hold_up_under_concurrent_use() {
    let (done_tx, done_rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("stress".to_owned())
        .spawn(move || {
            stress();
            // The receiver may have given up already.
            let _ = done_tx.send(());
        })
        .expect("spawn the stress thread");
    match done_rx.recv_timeout(WATCHDOG) {
        // Disconnected: the stress thread panicked; `join` reports why.
        Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
        Err(RecvTimeoutError::Timeout) => panic!(
            "the stress test did not finish within {WATCHDOG:?}: deadlock \
             (or a worker stuck after a panic; see the output above)"
        ),
    }
    if let Err(payload) = handle.join() {
        std::panic::resume_unwind(payload);
    }
}
