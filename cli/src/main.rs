//! `opreg`: inspect the ops registered in this binary (the standard op set of
//! `registry-core`, and every crate of ops it links).
//!
//! ```text
//! opreg ops list [--filter SUBSTR] [--internal]
//! opreg ops show NAME
//! opreg ops export [--format pbtxt|pb|json] [-o FILE] [--internal]
//! opreg ops check
//! opreg kernels list [--op OP] [--device DEVICE]
//! opreg kernels export [--format pbtxt|pb|json] [-o FILE]
//! opreg kernels check
//! opreg check GRAPH [--feeds FILE] [--device cpu|gpu]
//! opreg run GRAPH [--feeds FILE] [--fetch NAME:PORT]... [--device cpu|gpu] [--format table|json] [--repeat N]
//!           [--max-memory BYTES] [--max-allocation BYTES]
//! opreg bench GRAPH [--feeds FILE] [--fetch NAME:PORT]... [--device cpu|gpu] [--runs N] [--warmup N] [--top N]
//! opreg graph GRAPH --dot [--feeds FILE]
//! opreg docs -o DIR
//! opreg coverage [--device DEVICE]... [--format table|json|svg] [--against KERNELS.pb]
//! ```
//!
//! Every command takes `--load LIB` (repeatable): an op library loaded
//! first, whose ops and kernels join the registries.
//!
//! Errors are printed as `error: ...` on stderr, with exit code 1.

mod bench;
mod docs;
mod export;
mod graph_cmds;
mod kernels;
mod show;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use opreg_runtime::{BatchSplit, Graph, GraphOptimizations, SessionOptions};
use registry_core::KernelRegistry;
use registry_core::denormal::DenormalMode;
use registry_core::registry::{OpRegistry, RegistryError};

// Ops are linked only from crates this binary names (see
// `registry_core::link_ops!`): `registry_core`, named above, holds the
// standard op set. A crate of extra ops needs `registry_core::link_ops!(it);`.

/// Inspect TensorFlow-compatible ops registered with opreg.
#[derive(Debug, Parser)]
#[command(name = "opreg", version, about)]
struct Cli {
    /// Load an op library (a cdylib built with
    /// `registry_core::export_op_library!`) before running the command: its
    /// ops and kernels join the registries (repeatable).
    #[arg(long = "load", global = true, value_name = "LIB")]
    load: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with the op registry.
    #[command(subcommand)]
    Ops(OpsCommand),
    /// Work with the kernel registry.
    #[command(subcommand)]
    Kernels(KernelsCommand),
    /// Validate a GraphDef (.pb or .pbtxt): ops, NodeDefs, edges, cycles,
    /// shape inference and kernels; prints each node's output dtypes and shapes.
    Check {
        /// The graph file.
        graph: PathBuf,
        /// An io.json-style file whose `feeds` give input shapes.
        #[arg(long, value_name = "FILE")]
        feeds: Option<PathBuf>,
        /// The device to check kernels for (falls back to CPU).
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Run a GraphDef with feeds and print the fetched tensors.
    Run {
        #[command(flatten)]
        input: GraphRunArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = graph_cmds::RunFormat::Table)]
        format: graph_cmds::RunFormat,
        /// Run this many times and report the time per run.
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Fail the run when it holds more than this many bytes of tensors
        /// at once (feeds and intermediates).
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<u64>,
        /// Refuse any single tensor allocation over this many bytes
        /// (default: $OPREG_MAX_ALLOCATION_BYTES, else physical memory).
        #[arg(long, value_name = "BYTES")]
        max_allocation: Option<u64>,
        /// Keep IEEE denormal floats in the CPU kernels (by default they are
        /// flushed to zero, inputs and results, as TensorFlow's CPU kernels
        /// flush them).
        #[arg(long)]
        keep_denormals: bool,
        /// Stop any loop after this many iterations with an error (TF 1
        /// loop frames and `While` ops; 0: no limit).
        #[arg(long, value_name = "N", default_value_t = opreg_runtime::DEFAULT_MAX_LOOP_ITERATIONS)]
        max_iterations: u64,
        /// Stop any loop that runs longer than this many seconds.
        #[arg(long, value_name = "SECONDS")]
        loop_timeout: Option<f64>,
    },
    /// Time a GraphDef's runs: time per run (min, median, mean), the most
    /// tensor memory a run holds, and the time per op type.
    Bench {
        #[command(flatten)]
        input: GraphRunArgs,
        /// Timed runs (then as many profiled runs for the op table).
        #[arg(long, default_value_t = 50)]
        runs: usize,
        /// Untimed runs first.
        #[arg(long, default_value_t = 5)]
        warmup: usize,
        /// Also list the N nodes that took the most time (mean per run).
        #[arg(long, value_name = "N", default_value_t = 0)]
        top: usize,
        /// Also write each timed run's time in microseconds to FILE, one
        /// per line in the order they ran (to pool the runs of several
        /// invocations, as `scripts/compare_speed.py --rounds` does).
        #[arg(long, value_name = "FILE")]
        times: Option<PathBuf>,
    },
    /// Rewrite a GraphDef as a session would before running it (constant
    /// folding, batch-norm scales folded into weights, BiasAdds) and write
    /// the result; prints what changed.
    Optimize {
        /// The graph file (.pb or .pbtxt).
        graph: PathBuf,
        /// An io.json-style file: its `feeds` names are kept as inputs,
        /// and its `fetches` names are the outputs when no --fetch is given.
        #[arg(long, value_name = "FILE")]
        feeds: Option<PathBuf>,
        /// A tensor to keep as an output, `node:port` (repeatable).
        #[arg(long = "fetch", value_name = "NAME:PORT")]
        fetches: Vec<String>,
        /// Where to write the rewritten graph: binary, or text when the
        /// name ends in `.pbtxt`.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// Skip constant folding.
        #[arg(long)]
        no_constant_folding: bool,
        /// Skip folding scales into weights (and additions into BiasAdds).
        #[arg(long)]
        no_weight_folding: bool,
        /// Skip folding zero Pads into the convolutions after them.
        #[arg(long)]
        no_pad_folding: bool,
        /// Skip fusing convolutions and MatMuls with their bias, residual Add and activation.
        #[arg(long)]
        no_fusion: bool,
    },
    /// Draw a GraphDef.
    Graph {
        /// The graph file.
        graph: PathBuf,
        /// Print Graphviz DOT (ops, dtypes and shapes on edges).
        #[arg(long)]
        dot: bool,
        /// An io.json-style file whose `feeds` give input shapes.
        #[arg(long, value_name = "FILE")]
        feeds: Option<PathBuf>,
    },
    /// Write a Markdown reference of every registered op and its kernels.
    Docs {
        /// The output folder (`README.md` and `ops/<Op>.md`).
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
    },
    /// Show, for every op, which devices have kernels for which values of
    /// its type attrs, against what the op allows (and TF's kernels).
    Coverage {
        /// Only these device types (`cpu`, `gpu`, ...; repeatable or
        /// comma-separated). Default: CPU and every device with a kernel.
        #[arg(long = "device", value_name = "DEVICE")]
        devices: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = opreg_cli::coverage::CoverageFormat::Table)]
        format: opreg_cli::coverage::CoverageFormat,
        /// Compare with TensorFlow's kernels: a binary KernelList
        /// (`tf_2_21_kernels.pb`).
        #[arg(long, value_name = "FILE")]
        against: Option<PathBuf>,
    },
}

/// What `run` and `bench` run: a graph, its feeds and fetches, a device.
#[derive(Debug, clap::Args)]
struct GraphRunArgs {
    /// The graph file (.pb or .pbtxt).
    graph: PathBuf,
    /// An io.json-style file: its `feeds` list is fed, and its
    /// `fetches` names are fetched when no --fetch is given.
    #[arg(long, value_name = "FILE")]
    feeds: Option<PathBuf>,
    /// A tensor to fetch, `node:port` (repeatable).
    #[arg(long = "fetch", value_name = "NAME:PORT")]
    fetches: Vec<String>,
    /// Preferred device (nodes without a kernel there run on CPU).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Run the graph as written, without the rewrites a session runs
    /// first (see `opreg optimize`).
    #[arg(long)]
    no_optimize: bool,
    /// When runs split their batch over threads (each sample computed on
    /// its own): `auto` when a run goes to the thread pool, `always`, or
    /// `off`.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    batch_split: BatchSplitArg,
}

/// `--batch-split`'s values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum BatchSplitArg {
    Off,
    Auto,
    Always,
}

impl From<BatchSplitArg> for BatchSplit {
    fn from(arg: BatchSplitArg) -> Self {
        match arg {
            BatchSplitArg::Off => BatchSplit::Off,
            BatchSplitArg::Auto => BatchSplit::Auto,
            BatchSplitArg::Always => BatchSplit::Always,
        }
    }
}

impl GraphRunArgs {
    /// Reads the graph and the feeds; the fetches are --fetch's, or else
    /// the feeds file's (an error when there are none).
    fn load(self) -> Result<graph_cmds::GraphRun, CliError> {
        let (graph, io) = load_graph_io(&self.graph, self.feeds.as_deref(), self.fetches)?;
        Ok(graph_cmds::GraphRun {
            graph,
            io,
            devices: graph_cmds::devices(&self.device),
            batch_split: self.batch_split.into(),
            optimizations: if self.no_optimize {
                GraphOptimizations::none()
            } else {
                GraphOptimizations::default()
            },
        })
    }
}

/// Reads a graph and its feeds; the fetches are `fetches`, or else the
/// feeds file's (an error when there are none).
fn load_graph_io(
    graph: &std::path::Path,
    feeds: Option<&std::path::Path>,
    fetches: Vec<String>,
) -> Result<(Graph, graph_cmds::RunIo), CliError> {
    let (feeds, default_fetches) = optional_feeds(feeds)?;
    let fetches = if fetches.is_empty() {
        default_fetches
    } else {
        fetches
    };
    // The graph is read (and its errors reported) first.
    let graph = Graph::from_file(graph)?;
    if fetches.is_empty() {
        return Err(CliError::Input {
            what: "fetches".into(),
            message:
                "nothing to fetch: give --fetch NAME:PORT (or a feeds file with a `fetches` list)"
                    .into(),
        });
    }
    Ok((graph, graph_cmds::RunIo { feeds, fetches }))
}

#[derive(Debug, Subcommand)]
enum KernelsCommand {
    /// List registered kernels: op, device, constraints, label, priority, Rust item.
    List {
        /// Only kernels of this op.
        #[arg(long, value_name = "OP")]
        op: Option<String>,
        /// Only kernels for this device type (`CPU`, `GPU`, ...).
        #[arg(long, value_name = "DEVICE")]
        device: Option<String>,
    },
    /// Export every registered kernel as a TensorFlow KernelList.
    Export {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Pbtxt)]
        format: Format,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Report kernels whose op is not registered.
    Check,
}

#[derive(Debug, Subcommand)]
enum OpsCommand {
    /// List registered ops with their summaries, sorted by name.
    List {
        /// Only ops whose name contains this text (case-insensitive).
        #[arg(long, value_name = "SUBSTR")]
        filter: Option<String>,
        /// Include internal ops (names starting with `_`).
        #[arg(long)]
        internal: bool,
    },
    /// Show one op: args, attrs, flags, deprecation, docs, origin.
    Show {
        /// The op's name, e.g. `Conv2D`.
        name: String,
    },
    /// Export every registered op as a TensorFlow OpList.
    Export {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Pbtxt)]
        format: Format,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Include internal ops (names starting with `_`).
        #[arg(long)]
        internal: bool,
    },
    /// Report duplicate or invalid registrations (TF's ProcessRegistrations).
    Check,
}

/// Formats of `opreg ops export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Protobuf text format (`.pbtxt`), as TensorFlow writes OpLists.
    Pbtxt,
    /// Binary protobuf (`.pb`).
    Pb,
    /// JSON: field names as in the .proto files, enums by name.
    Json,
}

impl From<RegistryError> for CliError {
    fn from(e: RegistryError) -> Self {
        CliError::Registry(Box::new(e))
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// Looking up an op failed.
    #[error(transparent)]
    Registry(Box<RegistryError>),
    /// `ops check` found problems.
    #[error("{} problem(s) in the op registrations:\n{}", .0.len(), join_errors(.0))]
    Registrations(Vec<RegistryError>),
    /// The output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Standard output could not be written.
    #[error("cannot write to standard output: {0}")]
    Stdout(io::Error),
    /// The OpList could not be converted to JSON.
    #[error("cannot convert the op list to JSON: {0}")]
    Json(String),
    /// A graph file is invalid.
    #[error(transparent)]
    Graph(Box<opreg_runtime::GraphError>),
    /// A run failed.
    #[error(transparent)]
    Run(Box<opreg_runtime::RunError>),
    /// An op library could not be loaded.
    #[error(transparent)]
    Library(Box<opreg_runtime::library::LibraryError>),
    /// A feeds file or argument is invalid.
    #[error("{what}: {message}")]
    Input {
        /// What was being read.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// `opreg check` found nodes without a kernel.
    #[error("{} node(s) have no kernel:\n{}", .0.len(), .0.join("\n"))]
    Check(Vec<String>),
    /// `kernels check` found kernels of unknown ops.
    #[error("{} kernel(s) implement ops that are not registered:\n{}", .0.len(), .0.join("\n"))]
    OrphanKernels(Vec<String>),
}

impl From<opreg_runtime::GraphError> for CliError {
    fn from(e: opreg_runtime::GraphError) -> Self {
        CliError::Graph(Box::new(e))
    }
}

impl From<opreg_runtime::RunError> for CliError {
    fn from(e: opreg_runtime::RunError) -> Self {
        CliError::Run(Box::new(e))
    }
}

fn join_errors(errors: &[RegistryError]) -> String {
    errors
        .iter()
        .map(|e| format!("  - {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn main() -> ExitCode {
    // Sessions run on this thread: as one of the kernels' pool threads, it
    // starts their parallel work in place instead of handing runs over.
    opreg_runtime::join_global_pool();
    let cli = Cli::parse();
    match run(cli, OpRegistry::global()) {
        Ok(()) => ExitCode::SUCCESS,
        // `opreg ops list | head`: the reader went away, nothing to report.
        Err(CliError::Stdout(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, registry: &OpRegistry) -> Result<(), CliError> {
    // Names the kernel crates so that their registrations are linked in.
    kernels_cpu::link();
    kernels_cuda::link();
    for library in &cli.load {
        opreg_runtime::library::load_op_library(library)
            .map_err(|e| CliError::Library(Box::new(e)))?;
    }
    match cli.command {
        Command::Ops(command) => run_ops(command, registry),
        Command::Kernels(command) => run_kernels(command, registry),
        Command::Check {
            graph,
            feeds,
            device,
        } => {
            let feeds = optional_feeds(feeds.as_deref())?.0;
            let graph = Graph::from_file(&graph)?;
            let devices = graph_cmds::devices(&device);
            write_stdout(graph_cmds::check(&graph, &feeds, &devices)?.as_bytes())
        }
        Command::Run {
            input,
            format,
            repeat,
            max_memory,
            max_allocation,
            keep_denormals,
            max_iterations,
            loop_timeout,
        } => {
            if let Some(bytes) = max_allocation {
                registry_core::limits::set_max_allocation_bytes(bytes);
            }
            let run = input.load()?;
            let options = SessionOptions {
                devices: run.devices.clone(),
                optimizations: run.optimizations.clone(),
                max_memory_bytes: max_memory,
                denormals: if keep_denormals {
                    DenormalMode::Ieee
                } else {
                    DenormalMode::FlushToZero
                },
                max_loop_iterations: (max_iterations > 0).then_some(max_iterations),
                batch_split: run.batch_split,
                loop_timeout: loop_timeout
                    .map(|s| {
                        std::time::Duration::try_from_secs_f64(s).map_err(|e| CliError::Input {
                            what: "--loop-timeout".into(),
                            message: e.to_string(),
                        })
                    })
                    .transpose()?,
            };
            let text = graph_cmds::run(run, options, format, repeat)?;
            write_stdout(text.as_bytes())
        }
        Command::Bench {
            input,
            runs,
            warmup,
            top,
            times,
        } => {
            let run = input.load()?;
            let options = SessionOptions {
                devices: run.devices.clone(),
                optimizations: run.optimizations.clone(),
                batch_split: run.batch_split,
                ..SessionOptions::default()
            };
            let runs = bench::BenchRuns { warmup, runs, top };
            let report = bench::bench(run, options, runs)?;
            if let Some(path) = times {
                std::fs::write(&path, bench::times_text(&report.times))
                    .map_err(|source| CliError::WriteFile { path, source })?;
            }
            write_stdout(report.text.as_bytes())
        }
        Command::Optimize {
            graph,
            feeds,
            fetches,
            output,
            no_constant_folding,
            no_weight_folding,
            no_pad_folding,
            no_fusion,
        } => {
            let (graph, io) = load_graph_io(&graph, feeds.as_deref(), fetches)?;
            let optimizations = GraphOptimizations {
                constant_folding: !no_constant_folding,
                weight_folding: !no_weight_folding,
                pad_folding: !no_pad_folding,
                fusion: !no_fusion,
                ..GraphOptimizations::default()
            };
            let text = graph_cmds::optimize(&graph, &io, &optimizations, &output)?;
            write_stdout(text.as_bytes())
        }
        Command::Graph { graph, dot, feeds } => {
            let feeds = optional_feeds(feeds.as_deref())?.0;
            let graph = Graph::from_file(&graph)?;
            if !dot {
                return Err(CliError::Input {
                    what: "opreg graph".into(),
                    message: "choose an output format: --dot".into(),
                });
            }
            write_stdout(graph_cmds::dot(&graph, &feeds)?.as_bytes())
        }
        Command::Docs { output } => {
            let n = docs::write(&output, registry, KernelRegistry::global())?;
            write_stdout(format!("wrote {n} op pages to {}\n", output.display()).as_bytes())
        }
        Command::Coverage {
            devices,
            format,
            against,
        } => {
            let text = opreg_cli::coverage::command(
                registry,
                KernelRegistry::global(),
                &devices,
                against.as_deref(),
                format,
            )
            .map_err(|e| CliError::Input {
                what: "opreg coverage".into(),
                message: e.to_string(),
            })?;
            write_stdout(text.as_bytes())
        }
    }
}

fn optional_feeds(
    path: Option<&std::path::Path>,
) -> Result<(Vec<opreg_cli::io_json::NamedTensor>, Vec<String>), CliError> {
    match path {
        Some(path) => graph_cmds::read_feeds(path),
        None => Ok((Vec::new(), Vec::new())),
    }
}

fn run_kernels(command: KernelsCommand, registry: &OpRegistry) -> Result<(), CliError> {
    let kernels = KernelRegistry::global();
    match command {
        KernelsCommand::List { op, device } => {
            write_stdout(kernels::list(kernels, op.as_deref(), device.as_deref()).as_bytes())
        }
        KernelsCommand::Export { format, output } => {
            let list = kernels.kernel_list();
            let bytes = match format {
                Format::Pbtxt => opreg_proto::TextFormat::to_pbtxt(&list).into_bytes(),
                Format::Pb => prost::Message::encode_to_vec(&list),
                Format::Json => export::to_json(&list).map_err(CliError::Json)?.into_bytes(),
            };
            write_output(output, &bytes)
        }
        KernelsCommand::Check => {
            let orphans = kernels::orphans(kernels, registry);
            if !orphans.is_empty() {
                return Err(CliError::OrphanKernels(orphans));
            }
            write_stdout(format!("{} kernels, no problems\n", kernels.len()).as_bytes())
        }
    }
}

fn write_output(output: Option<PathBuf>, bytes: &[u8]) -> Result<(), CliError> {
    match output {
        Some(path) => {
            std::fs::write(&path, bytes).map_err(|source| CliError::WriteFile { path, source })
        }
        None => write_stdout(bytes),
    }
}

fn run_ops(command: OpsCommand, registry: &OpRegistry) -> Result<(), CliError> {
    match command {
        OpsCommand::List { filter, internal } => {
            let filter = filter.map(|f| f.to_lowercase());
            let ops = registry.export_op_list(internal).op;
            let ops: Vec<_> = ops
                .iter()
                .filter(|op| {
                    filter
                        .as_ref()
                        .is_none_or(|f| op.name.to_lowercase().contains(f))
                })
                .collect();
            let width = ops.iter().map(|op| op.name.len()).max().unwrap_or(0);
            let mut text = String::new();
            for op in ops {
                let line = format!("{:width$}  {}", op.name, op.summary);
                text.push_str(line.trim_end());
                text.push('\n');
            }
            write_stdout(text.as_bytes())
        }
        OpsCommand::Show { name } => {
            let data = registry.look_up(&name)?;
            let mut text = show::render(data);
            text.push_str(&kernels::section(KernelRegistry::global(), &name));
            write_stdout(text.as_bytes())
        }
        OpsCommand::Export {
            format,
            output,
            internal,
        } => {
            let list = registry.export_op_list(internal);
            let bytes = match format {
                Format::Pbtxt => opreg_proto::TextFormat::to_pbtxt(&list).into_bytes(),
                Format::Pb => prost::Message::encode_to_vec(&list),
                Format::Json => export::to_json(&list).map_err(CliError::Json)?.into_bytes(),
            };
            write_output(output, &bytes)
        }
        OpsCommand::Check => {
            registry
                .process_registrations()
                .map_err(CliError::Registrations)?;
            write_stdout(format!("{} ops, no problems\n", registry.len()).as_bytes())
        }
    }
}

fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Stdout)
}
