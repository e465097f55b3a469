//! Every case of `tests/data/tf-ops/` (single ops answered by TensorFlow
//! 2.21's CPU kernels, made by `scripts/tf-oracle/ops.py`) through opreg's
//! Graph and Session: outputs within the tolerances of
//! `opreg_tests::graphs::tolerance` (ints and bools exactly), TF's errors
//! as errors, and the shape functions' answers as TF's.

use std::collections::BTreeMap;

use opreg_tests::graphs::compare;
use opreg_tests::tf_ops::{GROUPS, OpCase, Outcome, load_group, run_case, shapes_agree};
use registry_core::OpRegistry;

/// Ops of the data that this build does not register yet (checked: each
/// must really be missing, so the list cannot go stale).
const NOT_YET: &[&str] = &[
    "Conv3D",
    "AvgPool",
    "MaxPool3D",
    "AvgPool3D",
    "SpaceToBatchND",
    "BatchToSpaceND",
    "DepthToSpace",
    "SpaceToDepth",
    "ResizeBilinear",
    "ResizeNearestNeighbor",
    "MirrorPad",
    "PadV2",
    "ClipByValue",
    "Cumsum",
    "Min",
    "Prod",
    "All",
    "Any",
    "ArgMin",
    "Shape",
    "ShapeN",
    "Size",
    "Rank",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "Range",
    "Split",
    "SplitV",
    "Unpack",
    "BroadcastTo",
    "ReverseV2",
    "GatherNd",
    "MatrixBandPart",
    "TopKV2",
    "IdentityN",
    "StopGradient",
    "PreventGradient",
    "Snapshot",
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
                        if let Err(e) = compare(&format!("{} output {i}", case.name), o, w) {
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
    let registry = OpRegistry::global();
    let mut per_op: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut missing_listed = Vec::new();
    for group in GROUPS {
        let (cases, shape_cases) = load_group(group).unwrap();
        assert!(!cases.is_empty(), "{group}: no cases");
        for case in cases.iter().chain(&shape_cases) {
            let registered = registry.contains(&case.op);
            if !registered {
                if !NOT_YET.contains(&case.op.as_str()) {
                    problems.push(format!("{}: op {} is not registered", case.name, case.op));
                }
                continue;
            }
            if NOT_YET.contains(&case.op.as_str()) {
                missing_listed.push(case.op.clone());
            }
            let found = check(case);
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
