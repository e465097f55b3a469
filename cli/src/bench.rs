//! `opreg bench`: time per run of a graph, the most tensor memory a run
//! holds, and where the time goes by op type (TensorFlow's
//! `benchmark_model --show_summary`).

use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

use opreg_runtime::{BatchParts, RunProfile, Session, SessionOptions};

use crate::CliError;
use crate::graph_cmds::{GraphRun, timing};

/// The runs `opreg bench` makes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BenchRuns {
    /// Untimed runs first (caches, lazily built kernels, page faults).
    pub(crate) warmup: usize,
    /// Timed runs, then as many profiled ones.
    pub(crate) runs: usize,
    /// Nodes listed by time taken (0: no such list).
    pub(crate) top: usize,
}

/// What `opreg bench` measured.
#[derive(Debug)]
pub(crate) struct BenchReport {
    /// The report printed.
    pub(crate) text: String,
    /// Each timed run's time, in the order they ran.
    pub(crate) times: Vec<Duration>,
}

/// Runs the graph `warmup` times untimed, `runs` times timed, and `runs`
/// times profiled; the report.
pub(crate) fn bench(
    run: GraphRun,
    options: SessionOptions,
    runs: BenchRuns,
) -> Result<BenchReport, CliError> {
    let count = runs.runs.max(1);
    let GraphRun { graph, io, .. } = run;
    let session = Session::with_options(graph, options);
    let (names, fetch_names) = io.signature();
    let prepared = session.prepare(&names, &fetch_names)?;
    let feed = || io.feed_tensors();
    for _ in 0..runs.warmup {
        prepared.run(feed())?;
    }
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let start = Instant::now();
        prepared.run(feed())?;
        times.push(start.elapsed());
    }
    let mut profiles = Vec::with_capacity(count);
    let mut profiled_time = Duration::ZERO;
    for _ in 0..count {
        let start = Instant::now();
        let (_, profile) = prepared.run_profiled(feed())?;
        profiled_time += start.elapsed();
        profiles.push(profile);
    }
    let in_order = times.clone();
    let mut out = format!(
        "{} (after {} warm-up runs)\n",
        timing(&mut times).trim_end(),
        runs.warmup
    );
    let feed_tensors: Vec<_> = feed().collect();
    let feed_dims: Vec<&[usize]> = feed_tensors.iter().map(|t| t.dims()).collect();
    let _ = writeln!(
        out,
        "batch: {}",
        batch_line(prepared.batch_parts(&feed_dims))
    );
    let peak = profiles.iter().filter_map(|p| p.peak_bytes).max();
    match peak {
        Some(bytes) => {
            let _ = writeln!(
                out,
                "peak tensor memory: {} (feeds and intermediates held at once)",
                human_bytes(bytes)
            );
        }
        None => {
            out.push_str("peak tensor memory: not measured for graphs with loops or conditionals\n")
        }
    }
    out.push('\n');
    out.push_str(&op_table(&profiles, profiled_time / count as u32));
    if runs.top > 0 {
        out.push('\n');
        out.push_str(&top_nodes(&profiles, runs.top));
    }
    Ok(BenchReport {
        text: out,
        times: in_order,
    })
}

/// How the timed runs used the batch, from [`PreparedRun::batch_parts`](opreg_runtime::PreparedRun::batch_parts).
fn batch_line(parts: Option<Result<BatchParts, String>>) -> String {
    match parts {
        Some(Ok(parts)) => format!(
            "{}, parts of {} samples (the profiled runs below run whole)",
            if parts.splitting {
                "split over threads"
            } else {
                "runs whole (whole runs short, under 125 us, or faster than split ones), though it splits"
            },
            parts
                .rows
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(Err(why)) => format!("runs whole: {why}"),
        None => "runs whole (not split: the runs did not go to the thread pool, or one thread)"
            .to_owned(),
    }
}

/// The times of runs, in microseconds, one per line (what `opreg bench
/// --times` writes, for pooling the runs of several invocations).
pub(crate) fn times_text(times: &[Duration]) -> String {
    times.iter().fold(String::new(), |mut out, t| {
        let _ = writeln!(out, "{:.3}", t.as_secs_f64() * 1e6);
        out
    })
}

/// Per op type: kernel executions per run (nodes, times their iterations
/// in loops), mean time per run, share of the kernels' time; then the
/// kernels' total and the executor's time outside them.
fn op_table(profiles: &[RunProfile], mean_run: Duration) -> String {
    let runs = profiles.len().max(1) as u32;
    let Some(first) = profiles.first().filter(|p| !p.steps.is_empty()) else {
        return "per op type: no kernel ran\n".to_owned();
    };
    let mut by_op: HashMap<&str, (usize, Duration)> = HashMap::new();
    for step in &first.steps {
        by_op.entry(step.op.as_str()).or_default().0 += 1;
    }
    for step in profiles.iter().flat_map(|p| &p.steps) {
        by_op.entry(step.op.as_str()).or_default().1 += step.time;
    }
    let mut rows: Vec<(&str, usize, Duration)> = by_op
        .into_iter()
        .map(|(op, (n, total))| (op, n, total / runs))
        .collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    let kernels: Duration = rows.iter().map(|r| r.2).sum();
    let width = rows
        .iter()
        .map(|r| r.0.len())
        .max()
        .unwrap_or(2)
        .max("executor, outside kernels".len());
    let mut out = format!("per op type (mean of {runs} profiled runs):\n");
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>12}  {:>6}",
        "op", "count", "time/run", "share"
    );
    let share =
        |t: Duration| 100.0 * t.as_secs_f64() / kernels.as_secs_f64().max(f64::MIN_POSITIVE);
    for (op, n, time) in &rows {
        let _ = writeln!(
            out,
            "{op:<width$}  {n:>6}  {:>9.1} us  {:>5.1}%",
            micros(*time),
            share(*time)
        );
    }
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>9.1} us  {:>5.1}%",
        "all kernels",
        first.steps.len(),
        micros(kernels),
        100.0
    );
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>9.1} us",
        "executor, outside kernels",
        "",
        micros(mean_run.saturating_sub(kernels))
    );
    out
}

/// The `top` nodes by mean time per run (a node in a loop: all its
/// iterations), with their op and share of the kernels' time.
fn top_nodes(profiles: &[RunProfile], top: usize) -> String {
    let runs = profiles.len().max(1) as u32;
    let mut by_node: HashMap<(&str, &str), Duration> = HashMap::new();
    for step in profiles.iter().flat_map(|p| &p.steps) {
        *by_node
            .entry((step.node.as_str(), step.op.as_str()))
            .or_default() += step.time;
    }
    let kernels: Duration = by_node.values().sum::<Duration>() / runs;
    let mut rows: Vec<((&str, &str), Duration)> = by_node
        .into_iter()
        .map(|(key, total)| (key, total / runs))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.truncate(top);
    let width = rows.iter().map(|r| r.0.0.len()).max().unwrap_or(4).max(4);
    let op_width = rows.iter().map(|r| r.0.1.len()).max().unwrap_or(2).max(2);
    let mut out = format!("top {} nodes by time (mean per run):\n", rows.len());
    let _ = writeln!(
        out,
        "{:<width$}  {:<op_width$}  {:>12}  {:>6}",
        "node", "op", "time/run", "share"
    );
    for ((node, op), time) in rows {
        let share = 100.0 * time.as_secs_f64() / kernels.as_secs_f64().max(f64::MIN_POSITIVE);
        let _ = writeln!(
            out,
            "{node:<width$}  {op:<op_width$}  {:>9.1} us  {share:>5.1}%",
            micros(time)
        );
    }
    out
}

fn micros(t: Duration) -> f64 {
    t.as_secs_f64() * 1e6
}

/// `bytes` in the largest binary unit that keeps it at least 1.
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.2} {} ({bytes} bytes)", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opreg_runtime::StepTime;

    fn step(op: &str, micros: u64) -> StepTime {
        StepTime {
            node: format!("{op}_node"),
            op: op.to_owned(),
            device: "CPU".to_owned(),
            time: Duration::from_micros(micros),
        }
    }

    #[test]
    fn the_table_sums_each_op_type_per_run() {
        let run = |a: u64| RunProfile {
            steps: vec![step("MatMul", a), step("Relu", 10), step("MatMul", a)],
            peak_bytes: Some(4096),
        };
        let table = op_table(&[run(100), run(200)], Duration::from_micros(400));
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("per op type (mean of 2 profiled runs)"),
            "{table}"
        );
        // MatMul: 2 nodes, (200 + 400) / 2 = 300 us per run, 300 / 310 of the kernels' time.
        assert!(
            lines[2].starts_with("MatMul")
                && lines[2].contains("     2")
                && lines[2].contains("300.0 us")
                && lines[2].contains("96.8%"),
            "{table}"
        );
        assert!(
            lines[3].starts_with("Relu")
                && lines[3].contains("10.0 us")
                && lines[3].contains("3.2%"),
            "{table}"
        );
        assert!(
            lines[4].starts_with("all kernels") && lines[4].contains("310.0 us"),
            "{table}"
        );
        assert!(
            lines[5].starts_with("executor, outside kernels") && lines[5].contains("90.0 us"),
            "{table}"
        );
    }

    #[test]
    fn the_top_nodes_are_the_slowest_per_run() {
        let run = |a: u64| RunProfile {
            steps: vec![step("MatMul", a), step("Relu", 10), step("Add", 30)],
            peak_bytes: None,
        };
        let table = top_nodes(&[run(100), run(200)], 2);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "top 2 nodes by time (mean per run):", "{table}");
        // MatMul_node: (100 + 200) / 2 = 150 us of 190 us per run.
        assert!(
            lines[2].starts_with("MatMul_node")
                && lines[2].contains("150.0 us")
                && lines[2].contains("78.9%"),
            "{table}"
        );
        assert!(
            lines[3].starts_with("Add_node") && lines[3].contains("30.0 us"),
            "{table}"
        );
        assert_eq!(lines.len(), 4, "{table}");
    }

    #[test]
    fn a_run_without_kernels_says_so() {
        let table = op_table(&[RunProfile::default()], Duration::from_micros(5));
        assert!(table.contains("no kernel ran"), "{table}");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 << 20), "3.00 MiB (3145728 bytes)");
    }
}
