//! Keeps `docs/guide.md` true: its code blocks are all of a kind that is
//! compiled or checked, the compiler messages it quotes are those pinned in
//! `registry-macros/tests/ui/*.stderr` (and its failing examples are those UI cases), the
//! `opreg` error it shows is the executor's, and the `kernels-cpu` features
//! it names exist. (The Rust blocks themselves are this crate's doctests.)

mod common;

use std::path::{Path, PathBuf};

use opreg_runtime::Graph;
use registry_core::OpRegistry;
use registry_core::proto::{GraphDef, TextFormat};

/// One fenced code block of the guide.
struct Block {
    /// The info string (`rust,compile_fail`, `text`, ...).
    info: String,
    /// The lines between the fences, joined with `\n`.
    body: String,
    /// The prose between the previous block and this one.
    before: String,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn guide_blocks() -> Vec<Block> {
    let text = read(&repo_root().join("docs/guide.md"));
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        match &mut open {
            None => match line.strip_prefix("```") {
                Some(info) => open = Some((info.trim().to_owned(), Vec::new())),
                None => {
                    prose.push_str(line);
                    prose.push('\n');
                }
            },
            Some((info, body)) => {
                if line == "```" {
                    blocks.push(Block {
                        info: std::mem::take(info),
                        body: body.join("\n"),
                        before: std::mem::take(&mut prose),
                    });
                    open = None;
                } else {
                    body.push(line);
                }
            }
        }
    }
    assert!(open.is_none(), "the guide ends inside a code block");
    blocks
}

/// The last `tests/ui/<case><suffix>` the text names: the UI case.
fn ui_case(text: &str, suffix: &str) -> Option<String> {
    let end = text.rfind(suffix)?;
    let start = text[..end].rfind("tests/ui/")? + "tests/ui/".len();
    Some(text[start..end].to_owned())
}

fn ui_file(case: &str, ext: &str) -> String {
    read(&repo_root().join(format!("registry-macros/tests/ui/{case}.{ext}")))
}

fn is_compiler_message(block: &Block) -> bool {
    block.info == "text" && block.body.starts_with("error")
}

#[test]
fn every_code_block_is_compiled_or_checked() {
    let blocks = guide_blocks();
    let allowed = [
        "rust",
        "rust,standalone_crate",
        "rust,compile_fail",
        "text",
        "toml",
        // Run with TensorFlow by tests/tests/tensorflow_host.rs and with
        // JAX by tests/tests/jax_host.rs.
        "python",
    ];
    for block in &blocks {
        assert!(
            allowed.contains(&block.info.as_str()),
            "a block of kind `{}` (allowed: {allowed:?}):\n{}",
            block.info,
            block.body
        );
    }
    let runnable = blocks.iter().filter(|b| b.info.starts_with("rust")).count();
    assert!(runnable >= 8, "only {runnable} Rust blocks");
}

/// rustdoc links this crate into a doctest whose code contains `zero_out`:
/// a block declaring one of the crate's ops itself would then register it
/// twice.
#[test]
fn blocks_declaring_the_ops_do_not_link_the_crate() {
    let mut declaring = 0;
    for block in guide_blocks().iter().filter(|b| b.info.starts_with("rust")) {
        if ["pub struct ZeroOut", "pub struct WeightedSum"]
            .iter()
            .any(|decl| block.body.contains(decl))
        {
            assert!(
                !block.body.contains("zero_out"),
                "a block declaring an op of zero_out mentions `zero_out`:\n{}",
                block.body
            );
            declaring += 1;
        }
    }
    assert!(declaring >= 3, "{declaring}");
}

#[test]
fn failing_examples_are_the_ui_cases() {
    let blocks = guide_blocks();
    let mut checked = 0;
    for (i, block) in blocks.iter().enumerate() {
        if block.info != "rust,compile_fail" {
            continue;
        }
        let case = ui_case(&block.before, ".rs").unwrap_or_else(|| {
            panic!(
                "no `registry-macros/tests/ui/<case>.rs` named before:\n{}",
                block.body
            )
        });
        // The block is the case's file without its empty `main`.
        let file = ui_file(&case, "rs");
        let file_lines: Vec<&str> = file.lines().filter(|l| *l != "fn main() {}").collect();
        assert_eq!(
            block.body.trim_end(),
            file_lines.join("\n").trim_end(),
            "the guide's example differs from registry-macros/tests/ui/{case}.rs"
        );
        // The message shown next is that case's.
        let message = blocks[i + 1..]
            .iter()
            .find(|b| is_compiler_message(b))
            .expect("a compiler message follows the failing example");
        assert_eq!(
            ui_case(&message.before, ".stderr").as_deref(),
            Some(case.as_str())
        );
        checked += 1;
    }
    assert_eq!(checked, 2, "the spec error and the kernel type error");
}

#[test]
fn compiler_messages_are_the_ui_snapshots() {
    let mut checked = 0;
    for block in guide_blocks().iter().filter(|b| is_compiler_message(b)) {
        let case = ui_case(&block.before, ".stderr").unwrap_or_else(|| {
            panic!(
                "no `registry-macros/tests/ui/<case>.stderr` named before:\n{}",
                block.body
            )
        });
        // The guide places the example in the user's src/lib.rs.
        let snapshot =
            ui_file(&case, "stderr").replace(&format!("tests/ui/{case}.rs"), "src/lib.rs");
        assert!(
            snapshot.contains(&block.body),
            "the guide's message is not in registry-macros/tests/ui/{case}.stderr:\n{}\n--- snapshot:\n{snapshot}",
            block.body
        );
        checked += 1;
    }
    assert_eq!(checked, 2, "the spec error and the kernel type error");
}

/// The error `opreg check` prints for the guide's graph: the executor's
/// graph check with the standard ops only (what the stock binary links),
/// printed as `error: {err}`.
#[test]
fn the_cli_error_is_the_executors() {
    let blocks = guide_blocks();
    let block = blocks
        .iter()
        .find(|b| b.info == "text" && b.body.contains("$ opreg check"))
        .expect("the guide shows `opreg check` on a graph with ZeroOut");
    let lines: Vec<&str> = block.body.lines().collect();
    let cat = lines.iter().position(|l| l.starts_with("$ cat ")).unwrap();
    let check = lines
        .iter()
        .position(|l| l.starts_with("$ opreg check"))
        .unwrap();
    let graph_def = GraphDef::from_pbtxt(&lines[cat + 1..check].join("\n")).unwrap();
    let shown = lines[check + 1];

    let standard = OpRegistry::new();
    for name in opreg_standard_ops::NAMES {
        let op = OpRegistry::global().look_up(name).unwrap();
        standard
            .register_op_def(op.op_def().clone(), op.shape_fn())
            .unwrap();
    }
    let err = Graph::with_registry(&standard, graph_def.clone()).unwrap_err();
    assert_eq!(format!("error: {err}"), shown);
    // With this crate linked, the same graph checks.
    Graph::new(graph_def).expect("ZeroOut is registered here");
}

#[test]
fn kernels_cpu_features_named_exist() {
    let manifest = read(&repo_root().join("kernels-cpu/Cargo.toml"));
    let mut named = 0;
    for block in guide_blocks().iter().filter(|b| b.info == "toml") {
        for line in block.body.lines().filter(|l| l.starts_with("kernels-cpu")) {
            let Some(list) = line.split("features = [").nth(1) else {
                continue;
            };
            let list = list.split(']').next().unwrap_or_default();
            for feature in list.split(',').map(|f| f.trim().trim_matches('"')) {
                assert!(
                    manifest
                        .lines()
                        .any(|l| l.starts_with(&format!("{feature} = "))),
                    "kernels-cpu has no feature `{feature}`"
                );
                named += 1;
            }
        }
    }
    assert!(named > 0, "the guide selects kernels-cpu features");
}

/// The GPU kernel the guide shows (a `text` block, as it needs the `cuda`
/// feature) is `src/gpu/zero_out.rs`'s: each of its code lines, without
/// comments, stands in that file, in the same order.
#[test]
fn gpu_kernel_excerpt_is_the_example_code() {
    let blocks = guide_blocks();
    let excerpt = blocks
        .iter()
        .find(|b| b.info == "text" && b.body.contains("struct ZeroOutGpu"))
        .expect("the guide shows ZeroOut's GPU kernel");
    let code_lines = |text: &str| -> Vec<String> {
        text.lines()
            .map(|line| line.split("//").next().unwrap_or("").trim().to_owned())
            .filter(|line| !line.is_empty())
            .collect()
    };
    let file = code_lines(&read(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu/zero_out.rs"),
    ));
    let mut rest = file.iter();
    for line in code_lines(&excerpt.body) {
        assert!(
            rest.any(|l| *l == line),
            "the guide's GPU kernel has `{line}`, not in src/gpu/zero_out.rs (in this order)"
        );
    }
}
