//! Every CPU kernel TensorFlow 2.21 registers for the standard op set has a
//! counterpart in kernels-cpu: same op, a registration whose constraints
//! accept TF's types, and the same host-memory args.
//!
//! TF's registrations come from `conformance/tf_2_21_kernels.pb` (TF's own
//! `KernelList`). Types we have no tensors of (`variant`, `resource`, the
//! 8-bit floats) are skipped and counted.

use std::collections::BTreeSet;

use opreg_proto::attr_value::Value;
use opreg_proto::{DataType, KernelDef, KernelList};
use registry_core::KernelRegistry;
use registry_core::kernel::KernelRegistration;

use opreg_standard_ops::NAMES as STANDARD_OPS;

fn tf_kernels() -> KernelList {
    let path = opreg_tests::shared_dir().join("conformance/tf_2_21_kernels.pb");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    prost::Message::decode(bytes.as_slice()).expect("TF's KernelList decodes")
}

fn unsupported(dtype: i32) -> bool {
    matches!(
        DataType::try_from(dtype),
        Ok(DataType::DtVariant
            | DataType::DtResource
            | DataType::DtFloat8E5m2
            | DataType::DtFloat8E4m3fn)
    )
}

/// TF's constraints as (attr, allowed types).
fn constraints(def: &KernelDef) -> Vec<(String, Vec<i32>)> {
    def.constraint
        .iter()
        .map(|c| {
            let types = match c.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::List(l)) => l.r#type.clone(),
                _ => Vec::new(),
            };
            (c.name.clone(), types)
        })
        .collect()
}

/// Whether `ours` accepts every type combination of TF's kernel.
fn accepts(ours: &KernelRegistration, tf: &[(String, Vec<i32>)]) -> bool {
    ours.constraints.iter().all(|c| {
        tf.iter()
            .find(|(attr, _)| attr == c.attr)
            .is_some_and(|(_, types)| {
                types
                    .iter()
                    .all(|t| c.types.iter().any(|&ours| ours as i32 == *t))
            })
    })
}

/// Whether the op's OpDef allows every type of TF's constraints.
fn op_allows(op: &str, tf: &[(String, Vec<i32>)]) -> bool {
    let Ok(op_def) = registry_core::OpRegistry::global().look_up_op_def(op) else {
        return false;
    };
    tf.iter().all(|(attr, types)| {
        let Some(def) = op_def.attr.iter().find(|a| &a.name == attr) else {
            return false;
        };
        match def.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::List(l)) if !l.r#type.is_empty() => {
                types.iter().all(|t| l.r#type.contains(t))
            }
            _ => true,
        }
    })
}

#[test]
fn every_tf_cpu_kernel_of_the_standard_ops_has_a_counterpart() {
    assert!(kernels_cpu::link() > 0);
    let ours = KernelRegistry::global();
    let mut missing = Vec::new();
    let mut host_memory_diffs = Vec::new();
    let (mut checked, mut skipped) = (0, 0);
    let mut unusable: Vec<String> = Vec::new();
    for def in tf_kernels().kernel {
        // The ops the runtime runs itself (Switch, Merge, While...) need
        // no kernel.
        if def.device_type != "CPU"
            || !STANDARD_OPS.contains(&def.op.as_str())
            || opreg_runtime::is_runtime_op(&def.op)
        {
            continue;
        }
        let tf = constraints(&def);
        if tf
            .iter()
            .any(|(_, types)| types.iter().any(|&t| unsupported(t)))
        {
            skipped += 1;
            continue;
        }
        // TF registers a few kernels for types its own op does not allow
        // (MatMul int16, MaxPool uint32/uint64): no node can select them,
        // and `#[kernel]` refuses such a registration at compile time.
        if !op_allows(&def.op, &tf) {
            unusable.push(format!("{} {tf:?}", def.op));
            continue;
        }
        checked += 1;
        let candidates: Vec<&KernelRegistration> = ours
            .kernels_for_op(&def.op)
            .into_iter()
            .filter(|r| r.device == "CPU" && r.label == def.label && accepts(r, &tf))
            .collect();
        let Some(found) = candidates.first() else {
            let described: Vec<String> = tf
                .iter()
                .map(|(attr, types)| {
                    let names: Vec<&str> = types
                        .iter()
                        .map(|&t| DataType::try_from(t).map_or("?", |t| t.as_str_name()))
                        .collect();
                    format!("{attr} in {names:?}")
                })
                .collect();
            missing.push(format!("  {}: {}", def.op, described.join(", ")));
            continue;
        };
        let theirs: BTreeSet<&str> = def.host_memory_arg.iter().map(String::as_str).collect();
        let mine: BTreeSet<&str> = found.host_memory.iter().copied().collect();
        if theirs != mine {
            host_memory_diffs.push(format!("{}: TF {theirs:?}, ours {mine:?}", def.op));
        }
    }
    eprintln!(
        "checked {checked} TF CPU kernels, skipped {skipped} (variant/resource/float8) and {} \
         that TF's op does not allow: {unusable:?}",
        unusable.len()
    );
    // TF registers these kernels for types its op does not allow: MatMul
    // int16, MaxPool and the resizes uint32/uint64, LeakyRelu every
    // integer type (TF_CALL_REAL_NUMBER_TYPES against `T: {half, bfloat16,
    // float, double}`), _FusedConv2D bfloat16 (against `T: {half, float,
    // double, int8, qint8}`).
    let mut unusable_ops: Vec<&str> = unusable
        .iter()
        .filter_map(|k| k.split(' ').next())
        .collect();
    unusable_ops.sort_unstable();
    unusable_ops.dedup();
    assert_eq!(
        unusable_ops,
        [
            "LeakyRelu",
            "MatMul",
            "MaxPool",
            "ResizeBilinear",
            "ResizeNearestNeighbor",
            "_FusedConv2D"
        ],
        "TF kernels for types their op does not allow: {unusable:?}"
    );
    assert_eq!(unusable.len(), 16, "{unusable:?}");
    assert!(checked > 600, "only {checked} TF kernels checked");
    // Not yet: TensorFlow's quantized `_FusedConv2D` (int8 and qint8
    // inputs with requantization scales as `host_args`), which no graph
    // rewrite of opreg makes; the float fusions are all there.
    let not_yet = [
        "  _FusedConv2D: T in [\"DT_INT8\"]",
        "  _FusedConv2D: T in [\"DT_QINT8\"]",
    ];
    missing.retain(|m| !not_yet.contains(&m.as_str()));
    assert!(
        missing.is_empty(),
        "{} TF CPU kernels have no counterpart:\n{}",
        missing.len(),
        missing.join("\n")
    );
    assert!(
        host_memory_diffs.is_empty(),
        "host-memory args differ:\n{}",
        host_memory_diffs.join("\n")
    );
}

#[test]
fn every_standard_op_has_a_cpu_kernel() {
    kernels_cpu::link();
    let ours = KernelRegistry::global();
    let without: Vec<&str> = STANDARD_OPS
        .iter()
        .copied()
        .filter(|op| !opreg_runtime::is_runtime_op(op))
        .filter(|op| !ours.kernels_for_op(op).iter().any(|r| r.device == "CPU"))
        .collect();
    assert!(
        without.is_empty(),
        "standard ops without a CPU kernel: {without:?}"
    );
}
