//! Property: shape inference never disagrees with the shapes a kernel
//! actually produces. Random nodes of every op with a CPU kernel (the
//! executor fuzz target's generator, from proptest's random bytes) run
//! through a Session; the target panics when an output's shape is not
//! compatible with the inferred one, or its dtype differs from the graph's.

use opreg_tests::fuzz::{Outcome, executor_outcome, ops_with_cpu_kernels};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Random inputs per op.
const CASES_PER_OP: u32 = 128;

#[test]
fn shape_inference_agrees_with_every_cpu_kernel() {
    let ops = ops_with_cpu_kernels();
    let mut checked_ops = Vec::new();
    let mut never_checked = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        // A fixed seed: CI sees the same cases every run (the fuzzer
        // explores; this guards).
        let config = Config {
            cases: CASES_PER_OP,
            failure_persistence: None,
            ..Config::default()
        };
        let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let checked = std::cell::Cell::new(0u32);
        let result = runner.run(&prop::collection::vec(any::<u8>(), 0..512), |bytes| {
            let mut data = (index as u16).to_le_bytes().to_vec();
            data.extend(bytes);
            if executor_outcome(&data)
                == (Outcome::Ran {
                    shape_checked: true,
                })
            {
                checked.set(checked.get() + 1);
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{op}: {e}");
        }
        if checked.get() > 0 {
            checked_ops.push(*op);
        } else {
            never_checked.push(*op);
        }
    }
    eprintln!(
        "{} of {} ops ran with a shape check; never: {never_checked:?}",
        checked_ops.len(),
        ops.len()
    );
    // The property is only as strong as the cases that reach the kernels.
    assert!(
        checked_ops.len() * 10 >= ops.len() * 7,
        "only {} of {} ops ran with a shape check; never: {never_checked:?}",
        checked_ops.len(),
        ops.len()
    );
}
