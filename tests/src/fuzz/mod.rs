//! Fuzz targets: plain functions of `&[u8]` that must never panic (a
//! panic is a finding). `fuzz/` (cargo-fuzz, nightly, libFuzzer) runs them
//! coverage-guided; `tests/tests/fuzz_smoke.rs` (stable, in CI) replays
//! their seed corpora, the regression inputs under `fuzz/regressions/` and
//! a few thousand mutated seeds, so a regression shows without a fuzzer.
//!
//! Every target first calls [`setup`]: kernels linked, and a 16 MiB cap on
//! any single tensor allocation so hostile shapes fail fast instead of
//! swapping.

use std::sync::Once;

mod decode;
mod executor;
mod graph;
pub mod seeds;
mod spec;
mod values;

pub use decode::{decode_binary, decode_text};
pub use executor::{Outcome, executor, executor_outcome, ops_with_cpu_kernels};
pub use graph::graph_validation;
pub use spec::{spec_parser, spec_text};

/// The largest tensor a fuzz target may allocate.
pub const FUZZ_MAX_ALLOCATION: u64 = 16 << 20;

/// A fuzz target: bytes in, and a panic means a bug.
pub type Target = fn(&[u8]);

/// Every target, by the name `fuzz/` gives its binary.
pub const TARGETS: &[(&str, Target)] = &[
    ("spec_parser", spec_parser),
    ("decode_binary", decode_binary),
    ("decode_text", decode_text),
    ("graph_validation", graph_validation),
    ("executor", executor),
];

/// The target named `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
}

/// Links the CPU kernels and caps allocations (once per process).
pub fn setup() {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        kernels_cpu::link();
        registry_core::limits::set_max_allocation_bytes(FUZZ_MAX_ALLOCATION);
    });
}
