//! The fuzz targets on stable Rust, for CI: each target runs its seed
//! corpus (from `shared/`), every regression input under
//! `fuzz/regressions/<target>/` (inputs that once crashed), and a fixed
//! number of mutated seeds. The coverage-guided runs are `scripts/fuzz.sh`.

use std::path::PathBuf;

use opreg_tests::fuzz::seeds::XorShift;
use opreg_tests::fuzz::{self, TARGETS, seeds};

/// Mutated inputs per target (the CI budget: seconds, not minutes).
const MUTATIONS: usize = 3000;

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

/// A small deterministic mutator: flips, overwrites with edge bytes,
/// inserts, deletes and splices, like libFuzzer's simplest strategies.
struct Mutator(XorShift);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn mutate(&mut self, seed: &[u8], other: &[u8]) -> Vec<u8> {
        let mut data = seed.to_vec();
        for _ in 0..=self.below(4) {
            let at = self.below(data.len() + 1);
            match self.below(6) {
                0 if at < data.len() => data[at] ^= 1 << self.below(8),
                1 if at < data.len() => {
                    data[at] = [0, 1, 0x7f, 0x80, 0xff, b'-', b'9', b'{'][self.below(8)];
                }
                2 => data.insert(at, self.next() as u8),
                3 if at < data.len() => {
                    let end = (at + 1 + self.below(8)).min(data.len());
                    data.drain(at..end);
                }
                4 if !other.is_empty() => {
                    let from = self.below(other.len());
                    let end = (from + 1 + self.below(32)).min(other.len());
                    data.splice(at..at, other[from..end].iter().copied());
                }
                _ => {
                    if at < data.len() {
                        data[at] = data[at].wrapping_add(1);
                    }
                }
            }
        }
        data
    }
}

fn smoke(target: &str) {
    let run = fuzz::target(target).expect("a known target");
    let seeds = seeds::seeds(target);
    assert!(
        !seeds.is_empty(),
        "{target} has no seeds: is ../shared there?"
    );
    for seed in &seeds {
        run(seed);
    }
    for (path, input) in regressions(target) {
        eprintln!("{target}: regression {}", path.display());
        run(&input);
    }
    let mut mutator = Mutator(XorShift(0x5eed ^ target.len() as u64));
    for i in 0..MUTATIONS {
        let seed = &seeds[i % seeds.len()];
        let other = &seeds[mutator.below(seeds.len())];
        let input = mutator.mutate(seed, other);
        run(&input);
    }
}

#[test]
fn spec_parser() {
    smoke("spec_parser");
}

#[test]
fn decode_binary() {
    smoke("decode_binary");
}

#[test]
fn decode_text() {
    smoke("decode_text");
}

#[test]
fn graph_validation() {
    smoke("graph_validation");
}

#[test]
fn executor() {
    smoke("executor");
}

#[test]
fn every_target_has_a_smoke_test_and_seeds() {
    let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "spec_parser",
            "decode_binary",
            "decode_text",
            "graph_validation",
            "executor"
        ]
    );
    // The executor's seeds name every op with a CPU kernel.
    assert_eq!(
        seeds::seeds("executor").len(),
        2 * fuzz::ops_with_cpu_kernels().len()
    );
    assert!(fuzz::ops_with_cpu_kernels().len() > 40);
}

/// Writes the seed corpora for `scripts/fuzz.sh`:
/// `OPREG_FUZZ_CORPUS=fuzz/corpus cargo test -p opreg-tests --test integration -- --ignored fuzz_smoke::`.
#[test]
#[ignore = "writes files; run by scripts/fuzz.sh"]
fn write_seed_corpora() {
    let dir = std::env::var_os("OPREG_FUZZ_CORPUS").expect("set OPREG_FUZZ_CORPUS");
    let written = seeds::write_corpora(std::path::Path::new(&dir)).expect("write corpora");
    assert!(written > 0);
}
