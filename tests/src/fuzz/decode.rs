//! The `decode_binary` and `decode_text` targets: the first byte picks the
//! message (GraphDef, NodeDef, TensorProto, OpList), the rest is its binary
//! encoding or its text format. A decoded message then goes through what
//! opreg does with one: a GraphDef is checked as a graph, a NodeDef is
//! validated and given a CPU kernel, a TensorProto becomes a Tensor (and
//! back, unchanged), an OpList's OpDefs are validated and registered.

use prost::Message;
use registry_core::executor::Graph;
use registry_core::kernel::{DEVICE_CPU, create_op_kernel};
use registry_core::node_def::{add_defaults_to_node_def, in_out_types_for_node, validate_node_def};
use registry_core::proto::{GraphDef, NodeDef, OpList, TensorProto, TextFormat};
use registry_core::registry::OpRegistry;
use registry_core::tensor::Tensor;

/// The message kinds, by selector byte (modulo their count).
pub const KINDS: [&str; 4] = ["GraphDef", "NodeDef", "TensorProto", "OpList"];

/// The `decode_binary` target.
pub fn decode_binary(data: &[u8]) {
    super::setup();
    let Some((&kind, bytes)) = data.split_first() else {
        return;
    };
    match kind as usize % KINDS.len() {
        0 => {
            if let Ok(g) = GraphDef::decode(bytes) {
                graph_def(g);
            }
        }
        1 => {
            if let Ok(n) = NodeDef::decode(bytes) {
                node_def(n);
            }
        }
        2 => {
            if let Ok(t) = TensorProto::decode(bytes) {
                tensor_proto(&t);
            }
        }
        _ => {
            if let Ok(l) = OpList::decode(bytes) {
                op_list(l);
            }
        }
    }
}

/// The `decode_text` target.
pub fn decode_text(data: &[u8]) {
    super::setup();
    let Some((&kind, bytes)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    match kind as usize % KINDS.len() {
        0 => {
            if let Ok(g) = GraphDef::from_pbtxt(text) {
                graph_def(g);
            }
        }
        1 => {
            if let Ok(n) = NodeDef::from_pbtxt(text) {
                node_def(n);
            }
        }
        2 => {
            if let Ok(t) = TensorProto::from_pbtxt(text) {
                tensor_proto(&t);
            }
        }
        _ => {
            if let Ok(l) = OpList::from_pbtxt(text) {
                op_list(l);
            }
        }
    }
}

/// A GraphDef: checked as a graph, then shape inference.
pub(super) fn graph_def(def: GraphDef) {
    if let Ok(graph) = Graph::new(def) {
        let _ = graph.infer_shapes(&[]);
    }
}

fn node_def(mut node: NodeDef) {
    let Ok(op_def) = OpRegistry::global().look_up_op_def(&node.op) else {
        return;
    };
    add_defaults_to_node_def(op_def, &mut node);
    if validate_node_def(&node, op_def).is_ok()
        && let Err(e) = in_out_types_for_node(&node, op_def)
    {
        panic!("a valid NodeDef has no input/output types: {e}\nnode: {node:?}");
    }
    // Validation errors or not, creating a kernel must not panic.
    let _ = create_op_kernel(DEVICE_CPU, &node);
}

fn tensor_proto(proto: &TensorProto) {
    let Ok(tensor) = Tensor::from_proto(proto) else {
        return;
    };
    let n = tensor.num_elements();
    match tensor.as_strings() {
        Ok(strings) => assert_eq!(strings.len(), n, "string count of {tensor:?}"),
        Err(_) => {
            let size = registry_core::tensor::element_size(tensor.dtype()).unwrap_or(0);
            let bytes = tensor.as_bytes().map_or(0, <[u8]>::len);
            assert_eq!(bytes, n * size, "buffer length of {tensor:?}");
        }
    }
    for (how, again) in [
        ("to_proto", tensor.to_proto()),
        ("to_proto_field", tensor.to_proto_field()),
    ] {
        let back = Tensor::from_proto(&again)
            .unwrap_or_else(|e| panic!("{how} of a decoded tensor does not decode: {e}"));
        assert!(
            back == tensor,
            "{how} round trip changed the tensor: {tensor:?} -> {back:?}"
        );
    }
}

fn op_list(list: OpList) {
    let registry = OpRegistry::new();
    for op_def in list.op {
        let valid = registry_core::spec::validate_op_def(&op_def).is_ok();
        let name = op_def.name.clone();
        let registered = registry.register_op_def(op_def, None);
        if valid && registered.is_err() && !registry.contains(&name) {
            panic!("a valid OpDef did not register: {registered:?}");
        }
    }
}
