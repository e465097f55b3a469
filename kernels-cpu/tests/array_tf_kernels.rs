//! Every CPU kernel TensorFlow 2.21 registers for the array ops added to
//! the standard set has a counterpart here: `create_op_kernel` finds one for
//! a node with TF's type constraints, with TF's host-memory args, and no
//! kernel is found for a type TF has none for.
//!
//! TF's registrations come from `conformance/tf_2_21_kernels.pb` (TF's own
//! `KernelList`; for an op without CPU kernels, its `DEFAULT`-device
//! kernels, which TF's lookup falls back to: `IdentityN`). Variant and resource kernels are skipped (opreg has
//! no tensors of them); constraints on string attrs (`data_format`,
//! `bad_indices_policy`) are left to the node's defaults. The shared folder
//! is `$OPREG_SHARED_DIR`, else `../../shared` from this crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use registry_core::proto::attr_value::Value;
use registry_core::proto::prost::Message;
use registry_core::proto::{AttrValue, DataType, DataTypeExt, KernelList, NodeDef};
use registry_core::tensor::Tensor;
use registry_core::{OpRegistry, create_op_kernel};

/// The array ops added to the standard set that have CPU kernels here.
const NEW_OPS: &[&str] = &[
    "BroadcastTo",
    "Fill",
    "GatherNd",
    "IdentityN",
    "MatrixBandPart",
    "OnesLike",
    "PreventGradient",
    "Range",
    "Rank",
    "ReverseV2",
    "Shape",
    "ShapeN",
    "Size",
    "Snapshot",
    "Split",
    "SplitV",
    "StopGradient",
    "TopKV2",
    "Unpack",
    "ZerosLike",
];

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// One TF CPU kernel: its type constraints and host-memory args.
#[derive(Debug, Clone)]
struct TfKernel {
    types: Vec<(String, DataType)>,
    host_memory: BTreeSet<String>,
}

/// TF's CPU kernels of `NEW_OPS` (the DEFAULT ones for an op without
/// CPU kernels), by op, without variant and resource ones.
fn tf_kernels() -> BTreeMap<String, Vec<TfKernel>> {
    let path = shared_dir().join("conformance/tf_2_21_kernels.pb");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let list = KernelList::decode(bytes.as_slice()).unwrap();
    let with_cpu: BTreeSet<String> = list
        .kernel
        .iter()
        .filter(|k| k.device_type == "CPU")
        .map(|k| k.op.clone())
        .collect();
    let mut out: BTreeMap<String, Vec<TfKernel>> = BTreeMap::new();
    'kernel: for def in list.kernel {
        let device = if with_cpu.contains(&def.op) {
            "CPU"
        } else {
            "DEFAULT"
        };
        if !NEW_OPS.contains(&def.op.as_str()) || def.device_type != device {
            continue;
        }
        let mut types = Vec::new();
        for c in &def.constraint {
            let Some(Value::List(l)) = c.allowed_values.as_ref().and_then(|v| v.value.as_ref())
            else {
                continue;
            };
            if l.r#type.is_empty() {
                // A string-attr constraint (`data_format`): the default.
                continue;
            }
            assert_eq!(l.r#type.len(), 1, "{}: one type per registration", def.op);
            let dtype = DataType::try_from(l.r#type[0]).unwrap();
            if matches!(dtype, DataType::DtVariant | DataType::DtResource) {
                continue 'kernel;
            }
            types.push((c.name.clone(), dtype));
        }
        out.entry(def.op.clone()).or_default().push(TfKernel {
            types,
            host_memory: def.host_memory_arg.iter().cloned().collect(),
        });
    }
    out
}

/// A node of `op` with the given type attrs; other attrs without a default
/// get a valid value (a type attr its first allowed type or `float`, a type
/// list `[float, int32]`, an int 2, a float `value`).
fn coverage_node(op: &str, types: &[(String, DataType)]) -> NodeDef {
    let op_def = OpRegistry::global().look_up_op_def(op).unwrap();
    let mut node = NodeDef {
        name: "n".into(),
        op: op.into(),
        ..Default::default()
    };
    for (attr, dtype) in types {
        node.attr.insert(attr.clone(), (*dtype).into());
    }
    for attr in &op_def.attr {
        if node.attr.contains_key(&attr.name) || attr.default_value.is_some() {
            continue;
        }
        let value: AttrValue = match attr.r#type.as_str() {
            "type" => match attr.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::List(l)) if !l.r#type.is_empty() => Value::Type(l.r#type[0]).into(),
                _ => DataType::DtFloat.into(),
            },
            "list(type)" => AttrValue::from(vec![DataType::DtFloat, DataType::DtInt32]),
            "int" => 2.into(),
            "tensor" => Tensor::scalar(1.0f32).to_proto().into(),
            other => panic!("{op}: no filler for attr kind {other}"),
        };
        node.attr.insert(attr.name.clone(), value);
    }
    let (inputs, _) = registry_core::node_def::name_ranges_for_node(&node, op_def).unwrap();
    let count = inputs.values().map(|r| r.end).max().unwrap_or(0);
    node.input = (0..count).map(|i| format!("x{i}")).collect();
    node
}

#[test]
fn every_tf_cpu_kernel_of_the_new_array_ops_has_a_counterpart() {
    kernels_cpu::link();
    let tf = tf_kernels();
    let missing: Vec<_> = NEW_OPS.iter().filter(|op| !tf.contains_key(**op)).collect();
    assert!(missing.is_empty(), "no TF kernels for {missing:?}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for (op, kernels) in &tf {
        for k in kernels {
            let node = coverage_node(op, &k.types);
            match create_op_kernel("CPU", &node) {
                Ok(instance) => {
                    let ours: BTreeSet<String> = instance
                        .registration()
                        .host_memory
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                    if ours != k.host_memory {
                        failures.push(format!("{op} {k:?}: host memory {ours:?}"));
                    }
                }
                Err(e) => failures.push(format!("{op} {k:?}: {e}")),
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= NEW_OPS.len());
}

#[test]
fn no_kernel_for_a_type_tf_has_none_for() {
    kernels_cpu::link();
    let tf = tf_kernels();
    // Every type of the op's allowed set that TF has no CPU kernel for
    // (for the ops with one type attr).
    let mut extra = Vec::new();
    for (op, kernels) in &tf {
        let op_def = OpRegistry::global().look_up_op_def(op).unwrap();
        let type_attrs: Vec<_> = op_def.attr.iter().filter(|a| a.r#type == "type").collect();
        let [attr] = type_attrs[..] else {
            continue;
        };
        let theirs: BTreeSet<DataType> = kernels
            .iter()
            .flat_map(|k| {
                k.types
                    .iter()
                    .filter(|(a, _)| *a == attr.name)
                    .map(|(_, t)| *t)
            })
            .collect();
        if theirs.is_empty() {
            continue; // no constraint: every type
        }
        let candidates = [
            DataType::DtFloat,
            DataType::DtDouble,
            DataType::DtHalf,
            DataType::DtBfloat16,
            DataType::DtInt8,
            DataType::DtInt16,
            DataType::DtInt32,
            DataType::DtInt64,
            DataType::DtUint8,
            DataType::DtUint16,
            DataType::DtUint32,
            DataType::DtUint64,
            DataType::DtBool,
            DataType::DtString,
            DataType::DtComplex64,
            DataType::DtComplex128,
            DataType::DtQint8,
            DataType::DtQuint8,
            DataType::DtQint32,
            DataType::DtQint16,
            DataType::DtQuint16,
            DataType::DtInt4,
            DataType::DtUint4,
        ];
        for dtype in candidates.into_iter().filter(|t| !theirs.contains(t)) {
            let node = coverage_node(op, &[(attr.name.clone(), dtype)]);
            if create_op_kernel("CPU", &node).is_ok() {
                extra.push(format!("{op} {}={}", attr.name, dtype.type_name()));
            }
        }
    }
    assert!(extra.is_empty(), "kernels TF does not have: {extra:?}");
}
