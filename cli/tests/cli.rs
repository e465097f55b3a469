//! Runs the `opreg` binary for each command and checks its output against the
//! registry of this test process (which links the same standard op set).

use std::path::PathBuf;

use opreg_proto::{OpList, TextFormat};
use prost::Message;
use registry_core::registry::OpRegistry;

use crate::common;

use common::{opreg, stdout_of};

fn expected(include_internal: bool) -> OpList {
    OpRegistry::global().export_op_list(include_internal)
}

fn names(list: &OpList) -> Vec<String> {
    list.op.iter().map(|op| op.name.clone()).collect()
}

fn temp_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("opreg-cli-{}-{name}", std::process::id()))
}

/// An op to show: the standard `Abs` if there, else the first registered one.
fn some_op() -> String {
    let list = expected(false);
    let names = names(&list);
    assert!(
        !names.is_empty(),
        "the CLI should link registry-core's standard ops"
    );
    names
        .iter()
        .find(|n| *n == "Abs")
        .unwrap_or(&names[0])
        .clone()
}

#[test]
fn list_prints_every_op_sorted_with_summaries() {
    let text = stdout_of(&["ops", "list"]);
    let listed: Vec<&str> = text
        .lines()
        .map(|line| line.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(listed, names(&expected(false)));
    for (line, op) in text.lines().zip(&expected(false).op) {
        assert!(
            line.ends_with(op.summary.trim_end()),
            "{line:?} vs {:?}",
            op.summary
        );
    }
}

#[test]
fn list_filter_and_internal() {
    let op = some_op();
    let filter = op[..op.len().min(3)].to_lowercase();
    let text = stdout_of(&["ops", "list", "--filter", &filter]);
    let listed: Vec<&str> = text
        .lines()
        .map(|line| line.split_whitespace().next().unwrap_or(""))
        .collect();
    let wanted: Vec<String> = names(&expected(false))
        .into_iter()
        .filter(|n| n.to_lowercase().contains(&filter))
        .collect();
    assert!(listed.contains(&op.as_str()), "{listed:?}");
    assert_eq!(listed, wanted);

    assert_eq!(
        stdout_of(&["ops", "list", "--filter", "no such op, surely"]),
        ""
    );

    let all = stdout_of(&["ops", "list", "--internal"]);
    assert_eq!(all.lines().count(), expected(true).op.len());
}

#[test]
fn show_describes_one_op() {
    let name = some_op();
    let text = stdout_of(&["ops", "show", &name]);
    let data = OpRegistry::global().look_up(&name).unwrap();
    let op = data.op_def();
    assert!(text.starts_with(&format!("{name}\n")), "{text}");
    assert!(text.contains(&op.summary), "{text}");
    for arg in op.input_arg.iter().chain(&op.output_arg) {
        assert!(text.contains(&format!("  {}: ", arg.name)), "{text}");
    }
    for attr in &op.attr {
        assert!(text.contains(&format!("  {}: ", attr.name)), "{text}");
    }
    assert!(text.contains("Origin: declared at "), "{text}");
    if name == "Abs" {
        assert!(text.contains("Inputs:\n  x: T\n"), "{text}");
        assert!(text.contains("Outputs:\n  y: T\n"), "{text}");
    }
}

#[test]
fn show_unknown_op_fails_with_suggestions() {
    let name = some_op();
    let typo = name.to_lowercase() + "x";
    let output = opreg(&["ops", "show", &typo]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("error: op '{typo}' is not registered")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("'{name}'")),
        "suggests {name}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let output = opreg(&["ops", "show", "CompletelyUnrelatedName"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("link_ops!"), "{stderr}");
}

#[test]
fn export_pbtxt_is_the_op_list() {
    let text = stdout_of(&["ops", "export"]);
    assert_eq!(OpList::from_pbtxt(&text).unwrap(), expected(false));
    assert_eq!(text, stdout_of(&["ops", "export", "--format", "pbtxt"]));
}

#[test]
fn export_pb_decodes_as_the_registry_export() {
    let path = temp_file("ops.pb");
    let path_text = path.to_str().unwrap();
    assert_eq!(
        stdout_of(&["ops", "export", "--format", "pb", "-o", path_text]),
        ""
    );
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(OpList::decode(bytes.as_slice()).unwrap(), expected(false));

    stdout_of(&[
        "ops",
        "export",
        "--format",
        "pb",
        "--internal",
        "--output",
        path_text,
    ]);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(OpList::decode(bytes.as_slice()).unwrap(), expected(true));
    let _ = std::fs::remove_file(path);
}

#[test]
fn export_json_is_readable() {
    let text = stdout_of(&["ops", "export", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ops = json["op"].as_array().expect("an `op` array");
    let json_names: Vec<&str> = ops.iter().map(|op| op["name"].as_str().unwrap()).collect();
    assert_eq!(json_names, names(&expected(false)));
    let first = &expected(false).op[0];
    assert_eq!(ops[0]["summary"].as_str().unwrap_or(""), first.summary);
    assert_eq!(
        ops[0]["input_arg"].as_array().map_or(0, Vec::len),
        first.input_arg.len()
    );
}

#[test]
fn export_to_an_unwritable_path_fails_cleanly() {
    let path = temp_file("missing-dir").join("ops.pbtxt");
    let output = opreg(&["ops", "export", "-o", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: cannot write "), "{stderr}");
}

#[test]
fn check_reports_the_registrations() {
    let output = opreg(&["ops", "check"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    match OpRegistry::global().process_registrations() {
        Ok(()) => {
            assert!(output.status.success(), "{stderr}");
            assert_eq!(
                stdout,
                format!("{} ops, no problems\n", OpRegistry::global().len())
            );
        }
        Err(errors) => {
            assert_eq!(output.status.code(), Some(1));
            assert!(
                stderr.starts_with(&format!("error: {} problem(s)", errors.len())),
                "{stderr}"
            );
        }
    }
}

#[test]
fn usage_errors_exit_non_zero() {
    let output = opreg(&["ops", "export", "--format", "xml"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("xml"));
}

/// The kernel registry of this test process, which links kernels-cpu and
/// kernels-cuda like the binary.
fn expected_kernels() -> opreg_proto::KernelList {
    common::link_kernels_like_the_binary();
    registry_core::KernelRegistry::global().kernel_list()
}

#[test]
fn kernels_export_pb_is_the_registry_kernel_list() {
    let path = temp_file("kernels.pb");
    let path_str = path.to_str().expect("UTF-8 temp path");
    stdout_of(&["kernels", "export", "--format", "pb", "-o", path_str]);
    let bytes = std::fs::read(&path).expect("read exported KernelList");
    let list = opreg_proto::KernelList::decode(bytes.as_slice()).expect("decodes");
    assert_eq!(list, expected_kernels());
    assert!(
        list.kernel
            .iter()
            .any(|k| k.op == "MatMul" && k.device_type == "CPU")
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn kernels_export_pbtxt_parses_back() {
    let text = stdout_of(&["kernels", "export"]);
    let list = opreg_proto::KernelList::from_pbtxt(&text).expect("pbtxt parses");
    assert_eq!(list, expected_kernels());
}

#[test]
fn kernels_list_filters_by_op_and_device() {
    let text = stdout_of(&["kernels", "list", "--op", "Abs", "--device", "cpu"]);
    let lines: Vec<&str> = text.lines().collect();
    let expected = expected_kernels()
        .kernel
        .iter()
        .filter(|k| k.op == "Abs" && k.device_type == "CPU")
        .count();
    assert_eq!(lines.len(), expected, "{text}");
    assert!(lines.iter().all(|l| l.starts_with("Abs ")), "{text}");
    assert!(text.contains("device='CPU'; T in [DT_FLOAT]"), "{text}");
    assert!(stdout_of(&["kernels", "list", "--device", "TPU"]).is_empty());
}

#[test]
fn ops_show_lists_the_ops_kernels() {
    let text = stdout_of(&["ops", "show", "MatMul"]);
    assert!(text.contains("Kernels ("), "{text}");
    assert!(text.contains("device='CPU'; T in [DT_FLOAT]"), "{text}");
}

#[test]
fn kernels_check_passes_for_the_linked_kernels() {
    let text = stdout_of(&["kernels", "check"]);
    assert!(text.ends_with("kernels, no problems\n"), "{text}");
}

fn shared_graph(name: &str, file: &str) -> String {
    let dir = std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    dir.join("graphs")
        .join(name)
        .join(file)
        .to_string_lossy()
        .into_owned()
}

/// `opreg COMMAND` on the shared MLP graph with its feeds, then `args`;
/// its standard output.
fn on_mlp(command: &str, args: &[&str]) -> String {
    let (graph, feeds) = (
        shared_graph("mlp_f32", "graph.pb"),
        shared_graph("mlp_f32", "io.json"),
    );
    let mut all = vec![command, graph.as_str(), "--feeds", feeds.as_str()];
    all.extend_from_slice(args);
    stdout_of(&all)
}

#[test]
fn run_json_matches_tensorflow_for_every_shared_graph() {
    for name in [
        "addn_reduce",
        "batchnorm_misc",
        "broadcast_int",
        "cnn_f32",
        "double_half",
        "elementwise_f32",
        "mlp_f32",
    ] {
        let io = shared_graph(name, "io.json");
        let text = stdout_of(&[
            "run",
            &shared_graph(name, "graph.pb"),
            "--feeds",
            &io,
            "--format",
            "json",
        ]);
        let ours = opreg_cli::io_json::read_list(&text, "fetches").expect("run's JSON reads back");
        let tf = opreg_cli::io_json::read_list(&std::fs::read_to_string(&io).unwrap(), "fetches")
            .unwrap();
        assert_eq!(ours.len(), tf.len(), "{name}");
        for (a, b) in ours.iter().zip(&tf) {
            assert_eq!(a.name, b.name, "{name}");
            let err = opreg_tests::graphs::compare(&a.name, &a.tensor, &b.tensor);
            assert!(err.is_ok(), "{name}: {err:?}");
        }
    }
}

/// Every model of `shared/models` (feed-forward, a TF 1 style loop, a
/// `While` with function bodies) through `opreg run --format json`, within
/// the models' tolerance.
#[test]
fn run_json_matches_tensorflow_for_every_model() {
    for name in [
        "mobilenet_v2",
        "transformer_encoder",
        "unet_small",
        "lstm_while",
        "control_flow_mix_fn",
    ] {
        let dir = opreg_tests::shared_dir().join("models").join(name);
        let io = dir.join("io.json").to_string_lossy().into_owned();
        let text = stdout_of(&[
            "run",
            &dir.join("graph.pb").to_string_lossy(),
            "--feeds",
            &io,
            "--format",
            "json",
        ]);
        let ours = opreg_cli::io_json::read_list(&text, "fetches").expect("run's JSON reads back");
        let tf = opreg_cli::io_json::read_list(&std::fs::read_to_string(&io).unwrap(), "fetches")
            .unwrap();
        assert_eq!(ours.len(), tf.len(), "{name}");
        for (a, b) in ours.iter().zip(&tf) {
            assert_eq!(a.name, b.name, "{name}");
            let err = opreg_tests::graphs::compare_model(&a.name, &a.tensor, &b.tensor);
            assert!(err.is_ok(), "{name}: {err:?}");
        }
    }
}

#[test]
fn run_table_and_repeat() {
    let text = on_mlp("run", &["--fetch", "Identity:0", "--repeat", "3"]);
    assert!(text.starts_with("Identity:0: int64 [8]\n"), "{text}");
    assert!(text.contains("3 runs: min "), "{text}");
}

#[test]
fn bench_reports_time_memory_and_ops() {
    let text = on_mlp("bench", &["--runs", "4", "--warmup", "1"]);
    assert!(text.starts_with("4 runs: min "), "{text}");
    assert!(text.contains("(after 1 warm-up runs)"), "{text}");
    let peak = text
        .lines()
        .find_map(|l| l.strip_prefix("peak tensor memory: "))
        .unwrap_or_else(|| panic!("no peak memory line:\n{text}"));
    let bytes: u64 = peak
        .split('(')
        .nth(1)
        .and_then(|p| p.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| peak.split(' ').next().unwrap().parse().unwrap());
    assert!(bytes > 0, "{text}");
    assert!(
        text.contains("per op type (mean of 4 profiled runs):"),
        "{text}"
    );
    // Every op of the MLP is in the table, with its node count (its
    // MatMuls fused with their biases and activations).
    let matmul = text
        .lines()
        .find(|l| l.starts_with("_FusedMatMul "))
        .unwrap_or_else(|| panic!("{text}"));
    let count: usize = matmul.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(count >= 2, "{matmul}");
    assert!(text.lines().any(|l| l.starts_with("all kernels")), "{text}");
    assert!(!text.contains("nodes by time"), "{text}");
}

#[test]
fn bench_says_whether_runs_split_their_batch() {
    let (graph, feeds) = (
        shared_graph("mlp_f32", "graph.pb"),
        shared_graph("mlp_f32", "io.json"),
    );
    // Two threads, wherever the tests run: the MLP's batch of 8 in 2 parts.
    let bench = |when: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_opreg"))
            .env("RAYON_NUM_THREADS", "2")
            .args(["bench", &graph, "--feeds", &feeds, "--runs", "3"])
            .args(["--warmup", "1", "--batch-split", when])
            .output()
            .expect("run opreg");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("UTF-8 output")
    };
    let always = bench("always");
    assert!(
        always.contains("batch: split over threads, parts of 4, 4 samples"),
        "{always}"
    );
    let off = bench("off");
    assert!(off.contains("batch: runs whole (not split"), "{off}");
}

#[test]
fn bench_lists_the_slowest_nodes_when_asked() {
    let text = on_mlp("bench", &["--runs", "2", "--top", "2"]);
    let (_, top) = text
        .split_once("top 2 nodes by time (mean per run):\n")
        .unwrap_or_else(|| panic!("no top nodes table:\n{text}"));
    let rows: Vec<&str> = top.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{text}");
    // Each row names a node of the graph, its op, and its time.
    for row in rows {
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert!(fields.len() >= 4, "{row}");
        assert!(text.contains(&format!("{} ", fields[1])), "{text}");
        assert!(row.contains(" us "), "{row}");
    }
}

#[test]
fn bench_writes_each_run_time_when_asked() {
    let path = temp_file("bench-times.txt");
    let text = on_mlp(
        "bench",
        &[
            "--runs",
            "7",
            "--times",
            path.to_str().expect("a UTF-8 path"),
        ],
    );
    let written = std::fs::read_to_string(&path).expect("the times file");
    let _ = std::fs::remove_file(&path);
    let times: Vec<f64> = written
        .lines()
        .map(|l| l.parse().unwrap_or_else(|_| panic!("not a time: {l:?}")))
        .collect();
    assert_eq!(times.len(), 7, "{written}");
    assert!(times.iter().all(|&t| t > 0.0), "{written}");
    // The printed min and median (to 0.1 us) are those of the times
    // written.
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let printed = |label: &str| -> f64 {
        let (_, rest) = text
            .split_once(label)
            .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"));
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    assert!(
        (printed("min ") - sorted[0]).abs() <= 0.051,
        "{written}\n{text}"
    );
    assert!(
        (printed("median ") - sorted[3]).abs() <= 0.051,
        "{written}\n{text}"
    );
}

#[test]
fn bench_counts_each_loop_iteration() {
    let model = opreg_tests::shared_dir().join("models/lstm_while");
    let text = stdout_of(&[
        "bench",
        &model.join("graph.pb").to_string_lossy(),
        "--feeds",
        &model.join("io.json").to_string_lossy(),
        "--runs",
        "2",
        "--warmup",
        "0",
    ]);
    assert!(
        text.contains("peak tensor memory: ") && !text.contains("not measured"),
        "{text}"
    );
    // The loop reads one TensorList item per iteration: more than one
    // execution of the node per run.
    let get_item = text
        .lines()
        .find(|l| l.starts_with("TensorListGetItem "))
        .unwrap_or_else(|| panic!("{text}"));
    let count: usize = get_item.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(count > 1, "{get_item}");
}

#[test]
fn check_reports_every_node_with_shapes() {
    let text = stdout_of(&[
        "check",
        &shared_graph("cnn_f32", "graph.pb"),
        "--feeds",
        &shared_graph("cnn_f32", "io.json"),
    ]);
    assert!(text.contains("12 nodes: valid"), "{text}");
    assert!(text.contains("float[2,10]"), "{text}");
}

#[test]
fn graph_dot_draws_edges_with_dtypes_and_shapes() {
    let text = stdout_of(&[
        "graph",
        &shared_graph("mlp_f32", "graph.pb"),
        "--dot",
        "--feeds",
        &shared_graph("mlp_f32", "io.json"),
    ]);
    assert!(text.starts_with("digraph G {"), "{text}");
    assert!(text.contains("float[8,16]"), "{text}");
}

#[test]
fn docs_writes_a_page_per_op() {
    let dir = temp_file("docs");
    let dir_str = dir.to_str().unwrap();
    stdout_of(&["docs", "-o", dir_str]);
    let index = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(index.contains("| [MatMul](ops/MatMul.md) |"), "{index}");
    let page = std::fs::read_to_string(dir.join("ops/MatMul.md")).unwrap();
    assert!(page.contains("device='CPU'; T in [DT_FLOAT]"), "{page}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_graphs_and_feeds_exit_non_zero_with_a_message() {
    let not_a_graph = temp_file("not-a-graph.pb");
    std::fs::write(&not_a_graph, [0xffu8, 0xff, 0x07]).unwrap();
    let out = opreg(&["run", not_a_graph.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a GraphDef"));

    let bad_feeds = temp_file("bad-feeds.json");
    std::fs::write(
        &bad_feeds,
        r#"{"feeds": [{"name": "x:0", "dtype": "DT_FLOAT", "shape": [2], "values": [1]}]}"#,
    )
    .unwrap();
    let out = opreg(&[
        "run",
        &shared_graph("mlp_f32", "graph.pb"),
        "--feeds",
        bad_feeds.to_str().unwrap(),
        "--fetch",
        "Identity:0",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("feeds file") && stderr.contains("x:0"),
        "{stderr}"
    );

    let out = opreg(&[
        "run",
        &shared_graph("mlp_f32", "graph.pb"),
        "--feeds",
        &shared_graph("mlp_f32", "io.json"),
        "--fetch",
        "nope:0",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("fetch 'nope:0'"));
    let _ = std::fs::remove_file(not_a_graph);
    let _ = std::fs::remove_file(bad_feeds);
}

/// `opreg check` names every op of a graph that is not registered at once,
/// with how many nodes use it and the first of them, not only the first.
#[test]
fn check_reports_every_unregistered_op_at_once() {
    let dir = std::env::temp_dir().join(format!("opreg-unregistered-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("graph.pbtxt");
    std::fs::write(
        &path,
        r#"
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "a" op: "Relu7" input: "x" }
node { name: "b" op: "NoSuchOp" input: "a" }
node { name: "c" op: "Relu7" input: "b" }
node { name: "d" op: "Relu" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
"#,
    )
    .unwrap();
    let out = opreg(&["check", &path.to_string_lossy()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 ops of the graph are not registered"),
        "{err}"
    );
    assert!(
        err.contains("node 'a' (and 1 more nodes): op 'Relu7' is not registered"),
        "{err}"
    );
    assert!(
        err.contains("node 'b': op 'NoSuchOp' is not registered"),
        "{err}"
    );
}

/// A TF 1 loop that never ends: `opreg run --max-iterations` stops it with
/// an error naming the loop, and `--max-iterations 0` lifts the limit (not
/// run here: it would not end).
#[test]
fn run_stops_a_loop_that_never_ends() {
    let dir = std::env::temp_dir().join(format!("opreg-forever-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("forever.pbtxt");
    std::fs::write(
        &path,
        r#"
  node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
  node { name: "yes" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
         attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }
  node { name: "enter" op: "Enter" input: "zero" attr { key: "T" value { type: DT_INT32 } }
         attr { key: "frame_name" value { s: "forever" } } }
  node { name: "enter_yes" op: "Enter" input: "yes" attr { key: "T" value { type: DT_BOOL } }
         attr { key: "frame_name" value { s: "forever" } } attr { key: "is_constant" value { b: true } } }
  node { name: "merge" op: "Merge" input: "enter" input: "next"
         attr { key: "T" value { type: DT_INT32 } } attr { key: "N" value { i: 2 } } }
  node { name: "cond" op: "LoopCond" input: "enter_yes" }
  node { name: "switch" op: "Switch" input: "merge" input: "cond" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "next" op: "NextIteration" input: "switch:1" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "exit" op: "Exit" input: "switch" attr { key: "T" value { type: DT_INT32 } } }
"#,
    )
    .unwrap();
    let output = opreg(&[
        "run",
        &path.to_string_lossy(),
        "--fetch",
        "exit",
        "--max-iterations",
        "1000",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("loop 'forever' was stopped after 1000 iterations"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `opreg check` and `opreg graph --dot` show loops (a frame per loop,
/// nested) and function bodies (a cluster per function).
#[test]
fn check_and_dot_show_loops_and_functions() {
    let nested = opreg_tests::workspace_root()
        .join("tests/data/tf-control-flow/nested_loops_v1/graph.pbtxt")
        .to_string_lossy()
        .into_owned();
    let text = stdout_of(&["check", &nested]);
    assert!(text.contains("loop 'while': "), "{text}");
    assert!(text.contains("inside 'while'"), "{text}");
    assert!(text.contains("[loop 'while']"), "{text}");
    let dot = stdout_of(&["graph", "--dot", &nested]);
    assert!(dot.contains("subgraph cluster_nloop_1"), "{dot}");
    assert!(dot.contains("style=bold"), "the back edges: {dot}");
    let model = opreg_tests::shared_dir()
        .join("models/control_flow_mix_fn/graph.pb")
        .to_string_lossy()
        .into_owned();
    let text = stdout_of(&["check", &model]);
    assert!(
        text.contains("function 'control_flow_1_while_body_frozen_49094': 29 nodes, valid"),
        "{text}"
    );
    let dot = stdout_of(&["graph", "--dot", &model]);
    assert_eq!(
        dot.matches("subgraph cluster_function_").count(),
        4,
        "{dot}"
    );
}

#[test]
fn optimize_writes_a_graph_that_runs_to_the_same_outputs() {
    let model = opreg_tests::shared_dir().join("models/mobilenet_v2");
    let graph = model.join("graph.pb").to_string_lossy().into_owned();
    let feeds = model.join("io.json").to_string_lossy().into_owned();
    let out = temp_file("mobilenet_v2_optimized.pbtxt");
    let out_name = out.to_string_lossy().into_owned();
    let optimize = |extra: &[&str]| {
        let mut args = vec!["optimize", &graph, "--feeds", &feeds, "-o", &out_name];
        args.extend_from_slice(extra);
        stdout_of(&args)
    };
    let text = optimize(&[]);
    assert!(
        text.contains("weight folding: 52 scales folded into weights, 52 additions made BiasAdd"),
        "{text}"
    );
    assert!(
        text.contains("pad folding: 4 Pads made their convolution's padding"),
        "{text}"
    );
    assert!(
        text.contains("fusion: 53 contractions fused with their bias (and activation)"),
        "{text}"
    );
    assert!(text.starts_with("nodes: 1052 -> "), "{text}");
    // Text format, as the name asks; it runs to the graph's outputs.
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("op: \"_FusedConv2D\""));
    assert!(written.contains("op: \"_FusedDepthwiseConv2dNative\""));
    assert!(!written.contains("op: \"Pad\""));
    // Each folded Pad is what SAME pads (one row and column after an even
    // image, for a stride of 2), so no convolution is left EXPLICIT.
    assert!(!written.contains("s: \"EXPLICIT\""));
    assert!(written.contains("s: \"SAME\""));
    let run = |graph: &str, extra: &[&str]| {
        let mut args = vec!["run", graph, "--feeds", &feeds, "--format", "json"];
        args.extend_from_slice(extra);
        stdout_of(&args)
    };
    let parse = |json: &str| -> Vec<f64> {
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        value["fetches"][0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let rewritten = parse(&run(&out.to_string_lossy(), &["--no-optimize"]));
    let as_written = parse(&run(&graph, &["--no-optimize"]));
    assert_eq!(rewritten.len(), as_written.len());
    for (a, b) in rewritten.iter().zip(&as_written) {
        assert!((a - b).abs() <= 1e-4, "{a} against {b}");
    }
    // Without weight folding the convolutions keep their Mul.
    let text = optimize(&["--no-weight-folding"]);
    assert!(text.contains("weight folding: 0 scales"), "{text}");
    // Without pad folding the Pads stay, and every convolution fuses.
    let text = optimize(&["--no-pad-folding"]);
    assert!(text.contains("pad folding: 0 Pads"), "{text}");
    assert!(text.contains("fusion: 53 contractions"), "{text}");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn optimize_needs_something_to_keep() {
    let out = temp_file("nothing.pb");
    let graph = shared_graph("mlp_f32", "graph.pb");
    let output = opreg(&["optimize", &graph, "-o", &out.to_string_lossy()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nothing to fetch"), "{stderr}");
    assert!(!out.exists());
}
