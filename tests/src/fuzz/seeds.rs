//! Seed corpora for the fuzz targets, made from `shared/`: the conformance
//! cases' specs, the shared graphs (whole, node by node, and their Const
//! tensors, in binary and text), chunks of TF's op list, and for the
//! executor one input per op with a CPU kernel.

use std::path::{Path, PathBuf};

use prost::Message;
use registry_core::proto::attr_value::Value;
use registry_core::proto::{GraphDef, OpList, TextFormat};
use serde_json::Value as Json;

use super::spec::spec_text;

/// How many of TF's ops go in one OpList seed.
const OPS_PER_SEED: usize = 6;

/// The seed inputs of the target `name` (empty for an unknown target).
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    match name {
        "spec_parser" => spec_seeds(),
        "decode_binary" => message_seeds(|m| m.binary),
        "decode_text" => message_seeds(|m| m.text),
        "graph_validation" => graph_files()
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .collect(),
        "executor" => executor_seeds(),
        _ => Vec::new(),
    }
}

/// Writes each target's seeds to `dir/<target>/seed-<n>` (for cargo-fuzz's
/// corpus folders); returns how many files were written.
pub fn write_corpora(dir: &Path) -> std::io::Result<usize> {
    let mut written = 0;
    for (name, _) in super::TARGETS {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder)?;
        for (i, seed) in seeds(name).iter().enumerate() {
            std::fs::write(folder.join(format!("seed-{i:04}")), seed)?;
            written += 1;
        }
    }
    Ok(written)
}

fn spec_seeds() -> Vec<Vec<u8>> {
    let dir = crate::shared_dir().join("conformance");
    let mut out = Vec::new();
    for file in crate::conformance::json_files(&dir) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(cases) = serde_json::from_str::<Vec<Json>>(&text) else {
            continue;
        };
        for case in &cases {
            if case["name"].is_string() {
                let spec = crate::conformance::spec_of(case);
                out.push(spec_text(&spec).into_bytes());
            }
        }
    }
    out
}

/// One message seed in both encodings (selector byte first).
struct MessageSeed {
    binary: Vec<u8>,
    text: Vec<u8>,
}

fn seed_of<M: Message + TextFormat>(kind: u8, message: &M) -> MessageSeed {
    let mut binary = vec![kind];
    binary.extend(message.encode_to_vec());
    let mut text = vec![kind];
    text.extend(message.to_pbtxt().into_bytes());
    MessageSeed { binary, text }
}

fn message_seeds(pick: fn(MessageSeed) -> Vec<u8>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for path in graph_files()
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "pb"))
    {
        let Some(graph) = std::fs::read(path)
            .ok()
            .and_then(|b| GraphDef::decode(b.as_slice()).ok())
        else {
            continue;
        };
        out.push(pick(seed_of(0, &graph)));
        for node in &graph.node {
            out.push(pick(seed_of(1, node)));
            for value in node.attr.values() {
                if let Some(Value::Tensor(t)) = &value.value {
                    out.push(pick(seed_of(2, t)));
                }
            }
        }
    }
    let ops = crate::shared_dir().join("tf_2_21_ops.pb");
    if let Some(list) = std::fs::read(ops)
        .ok()
        .and_then(|b| OpList::decode(b.as_slice()).ok())
    {
        for chunk in list.op.chunks(OPS_PER_SEED).take(40) {
            let part = OpList { op: chunk.to_vec() };
            out.push(pick(seed_of(3, &part)));
        }
    }
    out
}

/// `graph.pb` and `graph.pbtxt` of every shared graph.
fn graph_files() -> Vec<PathBuf> {
    crate::graphs::shared_graphs()
        .iter()
        .flat_map(|g| [g.dir.join("graph.pb"), g.dir.join("graph.pbtxt")])
        .filter(|p| p.is_file())
        .collect()
}

/// For each op with a CPU kernel: its number and a few bytes of choices
/// (all-zero: the first allowed values; and a fixed pseudo-random run).
fn executor_seeds() -> Vec<Vec<u8>> {
    let ops = super::executor::ops_with_cpu_kernels();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for i in 0..ops.len() as u16 {
        let mut zeros = i.to_le_bytes().to_vec();
        zeros.extend([0u8; 64]);
        out.push(zeros);
        let mut random = i.to_le_bytes().to_vec();
        random.extend((0..128).map(|_| (rng.next_u64() >> 32) as u8));
        out.push(random);
    }
    out
}

/// A small deterministic generator (xorshift64) for seeds and mutations.
#[derive(Debug, Clone)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
