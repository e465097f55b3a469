//! Every case of `tests/data/tf-ops/` (single ops answered by TensorFlow
//! 2.21's CPU kernels, made by `scripts/tf-oracle/ops.py`) through opreg's
//! Graph and Session: outputs within the tolerances of
//! `opreg_tests::graphs::tolerance` (ints and bools exactly), TF's errors
//! as errors, and the shape functions' answers as TF's.

use std::collections::BTreeMap;

use opreg_tests::graphs::compare;
use opreg_tests::tf_ops::{
    GROUPS, OpCase, Outcome, comparable, load_group, run_case, shapes_agree,
};
use registry_core::KernelRegistry;
use registry_core::device::DEVICE_CPU;

/// Ops of the data that have no CPU kernel in this build yet (checked:
/// each must really have none, so the list cannot go stale).
const NOT_YET: &[&str] = &[];

/// Cases where opreg knowingly differs from TF 2.21 (each must still
/// differ, so the list cannot go stale), with why.
const KNOWN: &[(&str, &str)] = &[
    (
        "Round/int32/specials",
        "TF's CPU Round of integers returns 0 (a TF bug); opreg returns x",
    ),
    (
        "Round/int64/specials",
        "TF's CPU Round of integers returns 0 (a TF bug); opreg returns x",
    ),
    (
        "Erf/float64/specials",
        "Eigen's double erf gives NaN at +-inf; opreg (libm) gives +-1",
    ),
    (
        "LogSoftmax/bfloat16/[3,5]",
        "TF rounds to bfloat16 between steps; opreg computes in f32",
    ),
    (
        "Einsum/bfloat16/ij,jk->ik",
        "TF accumulates bfloat16 products in bfloat16; opreg in f32",
    ),
    (
        "Einsum/bfloat16/bij,bjk->bik",
        "TF accumulates bfloat16 products in bfloat16; opreg in f32",
    ),
    (
        "DepthwiseConv2dNative/float16/NHWC/SAME",
        "TF accumulates in half; opreg in f32",
    ),
    (
        "DepthwiseConv2dNative/bfloat16/NHWC/SAME",
        "TF accumulates in bfloat16; opreg in f32",
    ),
    (
        "Conv2DBackpropInput/float16/NHWC/SAME",
        "TF accumulates in half; opreg in f32",
    ),
    (
        "Conv2DBackpropInput/bfloat16/NHWC/SAME",
        "TF accumulates in bfloat16; opreg in f32",
    ),
    (
        "Conv3D/float16/NDHWC/SAME",
        "TF accumulates in half; opreg in f32",
    ),
    (
        "Conv3D/bfloat16/NDHWC/SAME",
        "TF accumulates in bfloat16; opreg in f32",
    ),
    (
        "BatchMatMulV3/uint8xbfloat16->bfloat16/[2,3,4]x[2,4,5]",
        "TF's mixed-type kernel accumulates in bfloat16; opreg in f32",
    ),
    (
        "BatchMatMulV3/int8xbfloat16->bfloat16/[2,3,4]x[2,4,5]",
        "TF's mixed-type kernel accumulates in bfloat16; opreg in f32",
    ),
    (
        "BatchMatMulV3/bfloat16xuint8->bfloat16/[2,3,4]x[2,4,5]",
        "TF's mixed-type kernel accumulates in bfloat16; opreg in f32",
    ),
    (
        "BatchMatMulV3/bfloat16xint8->bfloat16/[2,3,4]x[2,4,5]",
        "TF's mixed-type kernel accumulates in bfloat16; opreg in f32",
    ),
];

fn link() {
    kernels_cpu::link();
}

/// The differences of one case from TF (empty when it agrees).
fn check(case: &OpCase) -> Vec<String> {
    let mut problems = Vec::new();
    match (run_case(case), &case.outputs, &case.error) {
        (Outcome::GraphError(e), Some(_), _) => {
            problems.push(format!("{}: rejected what TF runs: {e}", case.name));
        }
        (Outcome::GraphError(_), None, _) => {}
        (Outcome::Ran { shapes, result }, outputs, error) => {
            if let Some(tf_shapes) = &case.shapes {
                for (i, (ours, tf)) in shapes.iter().zip(tf_shapes).enumerate() {
                    if !shapes_agree(ours, tf) {
                        problems.push(format!(
                            "{}: output {i} shape {ours}, TF infers {tf}",
                            case.name
                        ));
                    }
                }
            }
            match (result, outputs, error) {
                (Ok(ours), Some(want), _) => {
                    for (i, (o, w)) in ours.iter().zip(want).enumerate() {
                        let name = format!("{} output {i}", case.name);
                        if let Err(e) = compare(&name, &comparable(o), &comparable(w)) {
                            problems.push(e);
                        }
                    }
                }
                (Err(e), Some(_), _) => problems.push(format!("{}: failed: {e}", case.name)),
                (Ok(_), None, Some(tf)) => problems.push(format!(
                    "{}: ran, but TF fails ({} at {}): {}",
                    case.name, tf.code, tf.phase, tf.message
                )),
                (Err(_), None, _) | (Ok(_), None, None) => {}
            }
        }
    }
    problems
}

#[test]
fn single_ops_answer_as_tensorflow() {
    link();
    let kernels = KernelRegistry::global();
    let has_cpu_kernel = |op: &str| {
        kernels
            .all()
            .iter()
            .any(|r| r.op == op && r.device == DEVICE_CPU)
    };
    let mut known_seen = Vec::new();
    let mut per_op: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut missing_listed = Vec::new();
    for group in GROUPS {
        let (cases, shape_cases) = load_group(group).unwrap();
        assert!(!cases.is_empty(), "{group}: no cases");
        for case in cases.iter().chain(&shape_cases) {
            let registered = has_cpu_kernel(&case.op);
            if !registered {
                if !NOT_YET.contains(&case.op.as_str()) {
                    problems.push(format!("{}: op {} is not registered", case.name, case.op));
                }
                continue;
            }
            if NOT_YET.contains(&case.op.as_str()) {
                missing_listed.push(case.op.clone());
            }
            let mut found = check(case);
            if let Some((_, why)) = KNOWN.iter().find(|(name, _)| *name == case.name) {
                assert!(
                    !found.is_empty(),
                    "{}: agrees with TF now, take it off KNOWN",
                    case.name
                );
                println!("known: {}: {why}", case.name);
                known_seen.push(case.name.clone());
                found.clear();
            }
            let entry = per_op.entry(case.op.clone()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(!found.is_empty());
            problems.extend(found);
        }
    }
    for (op, (n, bad)) in &per_op {
        println!("{op:24} {n:4} cases, {bad:3} differ from TF");
    }
    for p in &problems {
        println!("{p}");
    }
    missing_listed.dedup();
    assert_eq!(
        known_seen.len(),
        KNOWN.len(),
        "KNOWN names a case not in the data"
    );
    assert!(
        missing_listed.is_empty(),
        "registered now, take them off NOT_YET: {missing_listed:?}"
    );
    assert!(
        problems.is_empty(),
        "{} differences from TensorFlow (above)",
        problems.len()
    );
}
