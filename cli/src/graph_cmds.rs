//! `opreg check`, `opreg run`, `opreg optimize` and `opreg graph --dot`:
//! TensorFlow GraphDefs checked, run, rewritten and drawn.

use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use opreg_cli::io_json::{self, NamedTensor};
use opreg_proto::{DataTypeExt, TextFormat};
use opreg_runtime::{
    BatchSplit, Graph, GraphOptimizations, GraphShapes, Session, SessionOptions, optimize_graph,
};
use prost::Message;
use registry_core::KernelRegistry;
use registry_core::registry::OpRegistry;
use registry_core::shape::Shape;
use registry_core::tensor::Tensor;

use crate::CliError;

/// Reads the `feeds` list of an io.json-style file (and its `fetches`
/// names, the default fetches).
pub(crate) fn read_feeds(path: &Path) -> Result<(Vec<NamedTensor>, Vec<String>), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Input {
        what: format!("feeds file {}", path.display()),
        message: e.to_string(),
    })?;
    let bad = |e: io_json::IoJsonError| CliError::Input {
        what: format!("feeds file {}", path.display()),
        message: e.to_string(),
    };
    let feeds = io_json::read_list(&text, "feeds").map_err(bad)?;
    let fetches = io_json::names(&text, "fetches").unwrap_or_default();
    Ok((feeds, fetches))
}

/// The graph's shapes with the feeds' shapes plugged in.
fn shapes(graph: &Graph, feeds: &[NamedTensor]) -> Result<GraphShapes, CliError> {
    let fed = feeds
        .iter()
        .map(|f| {
            Ok((
                graph.endpoint(&f.name, "feed")?,
                Shape::from(f.tensor.shape()),
            ))
        })
        .collect::<Result<Vec<_>, opreg_runtime::GraphError>>()?;
    Ok(graph.infer_shapes(&fed)?)
}

/// `opreg check`: every node with its inferred output dtypes and shapes, the
/// device its kernel would run on, and TF's warning for each op the graph
/// uses that is deprecated at a GraphDef version newer than its producer.
pub(crate) fn check(
    graph: &Graph,
    feeds: &[NamedTensor],
    devices: &[String],
) -> Result<String, CliError> {
    let shapes = shapes(graph, feeds)?;
    let kernels = registry_core::KernelRegistry::global();
    let mut out = String::new();
    let mut problems = Vec::new();
    let width = graph
        .nodes()
        .iter()
        .map(|n| n.name().len())
        .max()
        .unwrap_or(0);
    let flow = graph.control_flow();
    for (index, (node, outputs)) in graph.nodes().iter().zip(&shapes).enumerate() {
        let outs: Vec<String> = node
            .output_types
            .iter()
            .zip(outputs)
            .map(|(t, s)| format!("{}{s}", t.type_name()))
            .collect();
        let device = if graph.is_run_by_runtime(index) {
            // Control flow and function calls: the executor runs them.
            Some("flow".to_owned())
        } else {
            devices
                .iter()
                .find(|d| kernels.find_kernel(&node.def, d).is_ok())
                .cloned()
        };
        let device = match device {
            Some(d) => d,
            None => {
                let err = kernels
                    .find_kernel(&node.def, devices.first().map_or("CPU", String::as_str))
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                problems.push(err);
                "-".to_owned()
            }
        };
        let frame = match flow {
            Some(flow) if flow.frame_of(index) != 0 => {
                format!("  [loop '{}']", flow.frames()[flow.frame_of(index)].name)
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:width$}  {:<18} {:<4} -> {}{frame}",
            node.name(),
            node.op(),
            device,
            if outs.is_empty() {
                "()".to_owned()
            } else {
                outs.join(", ")
            }
        );
    }
    if let Some(flow) = flow {
        for (id, frame) in flow.frames().iter().enumerate().skip(1) {
            let parent = frame.parent.map_or_else(String::new, |p| {
                if p == 0 {
                    String::new()
                } else {
                    format!(" inside '{}'", flow.frames()[p].name)
                }
            });
            let members = (0..graph.nodes().len())
                .filter(|&i| flow.frame_of(i) == id)
                .count();
            let _ = writeln!(
                out,
                "loop '{}'{parent}: {members} nodes, {} Enter, {} Exit, parallel_iterations {}",
                frame.name,
                frame.enters.len(),
                frame.exits.len(),
                frame.parallel_iterations
            );
        }
    }
    for name in graph.library().names() {
        // Functions with attrs are checked when a call instantiates them.
        let has_attrs = graph
            .library()
            .signature(name)
            .is_some_and(|s| !s.attr.is_empty());
        if has_attrs {
            let _ = writeln!(out, "function '{name}': generic, checked per call");
            continue;
        }
        match graph.library().body(name, &Default::default()) {
            Ok(body) => {
                let _ = writeln!(
                    out,
                    "function '{name}': {} nodes, valid, shapes inferred",
                    body.nodes().len()
                );
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    if !problems.is_empty() {
        return Err(CliError::Check(problems));
    }
    for warning in graph.deprecation_warnings() {
        let _ = writeln!(out, "warning: {warning}");
    }
    let _ = writeln!(
        out,
        "{} nodes: valid, shapes inferred, every node has a kernel",
        graph.nodes().len()
    );
    Ok(out)
}

/// How `opreg run` prints fetched tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RunFormat {
    /// One block per fetch: name, dtype, shape, values.
    Table,
    /// `{"fetches": [{"name", "dtype", "shape", "values"}]}` with io.json's encoding.
    Json,
}

/// A graph to run, with its feeds and fetches and the devices to place it
/// on.
pub(crate) struct GraphRun {
    pub(crate) graph: Graph,
    pub(crate) io: RunIo,
    pub(crate) devices: Vec<String>,
    /// The rewrites the session runs first.
    pub(crate) optimizations: GraphOptimizations,
    /// When runs split their batch over threads.
    pub(crate) batch_split: BatchSplit,
}

/// What a run is fed and what it fetches (at least one tensor).
pub(crate) struct RunIo {
    pub(crate) feeds: Vec<NamedTensor>,
    pub(crate) fetches: Vec<String>,
}

impl RunIo {
    /// The feed names and the fetch names, for `Session::prepare`.
    pub(crate) fn signature(&self) -> (Vec<&str>, Vec<&str>) {
        (
            self.feeds.iter().map(|f| f.name.as_str()).collect(),
            self.fetches.iter().map(String::as_str).collect(),
        )
    }

    /// The feeds' tensors, for one run (shared, not copied).
    pub(crate) fn feed_tensors(&self) -> impl Iterator<Item = Tensor> + '_ {
        self.feeds.iter().map(|f| f.tensor.clone())
    }
}

/// `opreg optimize`: rewrites `graph` for `io`'s feeds and fetches, writes
/// it to `output` (text when the name ends in `.pbtxt`, else binary) and
/// says what changed.
pub(crate) fn optimize(
    graph: &Graph,
    io: &RunIo,
    optimizations: &GraphOptimizations,
    output: &Path,
) -> Result<String, CliError> {
    let (feeds, fetches) = io.signature();
    let options = SessionOptions {
        optimizations: optimizations.clone(),
        ..SessionOptions::default()
    };
    let (optimized, report) = optimize_graph(
        graph,
        &feeds,
        &fetches,
        &[],
        &options,
        OpRegistry::global(),
        KernelRegistry::global(),
    )?;
    let graph_def = optimized.to_graph_def();
    let bytes = if output.extension().is_some_and(|e| e == "pbtxt") {
        graph_def.to_pbtxt().into_bytes()
    } else {
        graph_def.encode_to_vec()
    };
    std::fs::write(output, bytes).map_err(|source| CliError::WriteFile {
        path: output.to_owned(),
        source,
    })?;
    Ok(format!(
        "nodes: {} -> {} ({} pruned or merged away)\n\
         constant folding: {} tensors computed ahead of time\n\
         weight folding: {} scales folded into weights, {} additions made BiasAdd\n\
         pad folding: {} Pads made their convolution's padding\n\
         fusion: {} contractions fused with their bias (and activation)\n\
         wrote {}\n",
        report.nodes_before,
        report.nodes_after,
        report.nodes_before.saturating_sub(report.nodes_after),
        report.folded_constants,
        report.folded_scales,
        report.bias_adds,
        report.folded_pads,
        report.fused,
        output.display()
    ))
}

/// `opreg run`: runs the graph `repeat` times; prints the fetches (and
/// timings when `repeat > 1`).
pub(crate) fn run(
    run: GraphRun,
    options: SessionOptions,
    format: RunFormat,
    repeat: usize,
) -> Result<String, CliError> {
    let GraphRun { graph, io, .. } = run;
    let session = Session::with_options(graph, options);
    let (names, fetch_names) = io.signature();
    let prepared = session.prepare(&names, &fetch_names)?;
    let fetches = &io.fetches;
    let mut times = Vec::with_capacity(repeat.max(1));
    let mut outputs = Vec::new();
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        outputs = prepared.run(io.feed_tensors())?;
        times.push(start.elapsed());
    }
    let mut text = match format {
        RunFormat::Table => table(fetches, &outputs),
        RunFormat::Json => {
            let list: Vec<serde_json::Value> = fetches
                .iter()
                .zip(&outputs)
                .map(|(n, t)| io_json::entry_json(n, t))
                .collect();
            let mut json = serde_json::to_string_pretty(&serde_json::json!({ "fetches": list }))
                .map_err(|e| CliError::Json(e.to_string()))?;
            json.push('\n');
            json
        }
    };
    if repeat > 1 {
        let timing = timing(&mut times);
        match format {
            RunFormat::Table => text.push_str(&timing),
            // Keep stdout valid JSON: timings go to stderr.
            RunFormat::Json => eprint!("{timing}"),
        }
    }
    Ok(text)
}

fn table(fetches: &[String], outputs: &[Tensor]) -> String {
    const MAX_ROWS: usize = 16;
    let mut out = String::new();
    for (name, t) in fetches.iter().zip(outputs) {
        let _ = writeln!(out, "{name}: {} {}", t.dtype().type_name(), t.shape());
        let Some(values) = io_json::values_json(t) else {
            let _ = writeln!(out, "  (values of this dtype are not printed)");
            continue;
        };
        let cell = |v: &serde_json::Value| match v.as_f64() {
            Some(f) if v.is_f64() => format!("{f:>11.6}"),
            _ => format!("{:>6}", v.to_string()),
        };
        // One line per innermost row.
        let row_len = t.dims().last().copied().unwrap_or(1).max(1);
        let rows: Vec<&[serde_json::Value]> = values.chunks(row_len).collect();
        for row in rows.iter().take(MAX_ROWS) {
            let cells: Vec<String> = row.iter().map(cell).collect();
            let _ = writeln!(out, "  {}", cells.join(" "));
        }
        if rows.len() > MAX_ROWS {
            let _ = writeln!(out, "  ... ({} rows in all)", rows.len());
        }
    }
    out
}

pub(crate) fn timing(times: &mut [Duration]) -> String {
    times.sort();
    let total: Duration = times.iter().sum();
    let n = times.len();
    let mean = total / u32::try_from(n).unwrap_or(u32::MAX);
    format!(
        "{n} runs: min {:.1} us, median {:.1} us, mean {:.1} us\n",
        times[0].as_secs_f64() * 1e6,
        times[n / 2].as_secs_f64() * 1e6,
        mean.as_secs_f64() * 1e6
    )
}

/// `opreg graph --dot`: Graphviz DOT, one box per node (name and op), one
/// edge per data input labelled with dtype and inferred shape, dashed edges
/// for control inputs.
pub(crate) fn dot(graph: &Graph, feeds: &[NamedTensor]) -> Result<String, CliError> {
    let shapes = shapes(graph, feeds)?;
    let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out =
        String::from("digraph G {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n");
    write_dot_nodes(&mut out, graph, "n", &quote);
    for (k, name) in graph.library().names().into_iter().enumerate() {
        // A cluster per function body (generic ones instantiate per call).
        let _ = writeln!(
            out,
            "  subgraph cluster_function_{k} {{\n    label=\"function {}\"; style=rounded;",
            quote(name)
        );
        match graph.library().body(name, &Default::default()) {
            Ok(body) => {
                let prefix = format!("f{k}_");
                write_dot_nodes(&mut out, &body, &prefix, &quote);
                write_dot_edges(&mut out, &body, &prefix, None);
            }
            Err(_) => {
                let _ = writeln!(
                    out,
                    "    f{k}_generic [label=\"generic: instantiated per call\", shape=note];"
                );
            }
        }
        out.push_str("  }\n");
    }
    write_dot_edges(&mut out, graph, "n", Some(&shapes));
    out.push_str("}\n");
    Ok(out)
}

/// The nodes of `graph` as DOT nodes named `{prefix}{index}`, each loop
/// frame a cluster (nested as the loops are).
fn write_dot_nodes(out: &mut String, graph: &Graph, prefix: &str, quote: &dyn Fn(&str) -> String) {
    let node_line = |out: &mut String, i: usize, indent: &str| {
        let node = &graph.nodes()[i];
        let _ = writeln!(
            out,
            "{indent}{prefix}{i} [label=\"{}\\n{}\"];",
            quote(node.name()),
            quote(node.op())
        );
    };
    let Some(flow) = graph.control_flow() else {
        for i in 0..graph.nodes().len() {
            node_line(out, i, "  ");
        }
        return;
    };
    // Frames as nested clusters, the root frame's nodes at the top level.
    let clusters = FrameClusters {
        graph,
        flow,
        prefix,
        quote,
        node_line: &node_line,
    };
    clusters.write(out, 0, 0);
}

/// What writing the loop frames of a graph as nested DOT clusters needs.
struct FrameClusters<'a> {
    graph: &'a Graph,
    flow: &'a opreg_runtime::control_flow::ControlFlow,
    prefix: &'a str,
    quote: &'a dyn Fn(&str) -> String,
    node_line: &'a dyn Fn(&mut String, usize, &str),
}

impl FrameClusters<'_> {
    /// Writes frame `id` (a cluster unless it is the root) at `depth`,
    /// then its child frames inside it.
    fn write(&self, out: &mut String, id: usize, depth: usize) {
        let indent = "  ".repeat(depth + 1);
        if id != 0 {
            let _ = writeln!(
                out,
                "{indent}subgraph cluster_{}loop_{id} {{\n{indent}  label=\"loop {}\"; style=dashed;",
                self.prefix,
                (self.quote)(&self.flow.frames()[id].name)
            );
        }
        let inner = if id == 0 {
            indent.clone()
        } else {
            format!("{indent}  ")
        };
        for i in (0..self.graph.nodes().len()).filter(|&i| self.flow.frame_of(i) == id) {
            (self.node_line)(out, i, &inner);
        }
        let frames = self.flow.frames();
        for child in (0..frames.len()).filter(|&c| frames[c].parent == Some(id)) {
            self.write(out, child, depth + usize::from(id != 0));
        }
        if id != 0 {
            let _ = writeln!(out, "{indent}}}");
        }
    }
}

/// The data edges (labelled with dtype and, when known, shape), back edges
/// of loops in bold, and control edges dashed.
fn write_dot_edges(out: &mut String, graph: &Graph, prefix: &str, shapes: Option<&GraphShapes>) {
    for (i, node) in graph.nodes().iter().enumerate() {
        for (k, e) in node.inputs.iter().enumerate() {
            let source = &graph.nodes()[e.node];
            let dtype = source.output_types[e.port].type_name();
            let shape = shapes.map_or_else(String::new, |s| s[e.node][e.port].to_string());
            let port = if e.port == 0 {
                String::new()
            } else {
                format!(":{}", e.port)
            };
            let style = if graph.is_back_edge(i, k) {
                ", style=bold, constraint=false"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {prefix}{} -> {prefix}{i} [label=\"{port} {dtype}{shape}\"{style}];",
                e.node
            );
        }
        for &c in &node.control_inputs {
            let _ = writeln!(out, "  {prefix}{c} -> {prefix}{i} [style=dashed];");
        }
    }
}

/// The device preference list for `--device`.
pub(crate) fn devices(device: &str) -> Vec<String> {
    let device = device.to_ascii_uppercase();
    if device == "CPU" {
        vec!["CPU".into()]
    } else {
        vec![device, "CPU".into()]
    }
}
