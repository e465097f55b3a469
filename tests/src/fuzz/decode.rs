//! The `decode_binary` and `decode_text` targets: the first byte picks the
//! message (GraphDef, NodeDef, TensorProto, OpList), the rest is its binary
//! encoding or its text format. A decoded message then goes through what
//! opreg does with one: a GraphDef is checked as a graph, a NodeDef is
//! validated and given a CPU kernel, a TensorProto becomes a Tensor (and
//! back, unchanged), an OpList's OpDefs are validated.

use opreg_runtime::Graph;
use prost::Message;
use registry_core::device::DEVICE_CPU;
use registry_core::kernel::create_op_kernel;
use registry_core::node_def::{add_defaults_to_node_def, in_out_types_for_node, validate_node_def};
use registry_core::proto::{GraphDef, NodeDef, OpList, TensorProto, TextFormat};
use registry_core::registry::OpRegistry;
use registry_core::tensor::Tensor;

/// The message kinds, by selector byte (modulo their count).
pub const KINDS: [&str; 4] = ["GraphDef", "NodeDef", "TensorProto", "OpList"];

/// The `decode_binary` target.
pub fn decode_binary(data: &[u8]) {
    dispatch(data, Some, |m, bytes| m.merge(bytes).is_ok());
}

/// The `decode_text` target.
pub fn decode_text(data: &[u8]) {
    dispatch(
        data,
        |bytes| std::str::from_utf8(bytes).ok(),
        |m, text| m.set_from_pbtxt(text),
    );
}

/// Decodes the message the selector byte names with `decode` (on the
/// rest of the bytes, as `view` presents them) and hands it on.
fn dispatch<'a, V: ?Sized + 'a>(
    data: &'a [u8],
    view: impl Fn(&'a [u8]) -> Option<&'a V>,
    decode: impl Fn(&mut dyn Decodable, &'a V) -> bool,
) {
    super::setup();
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let Some(body) = view(rest) else {
        return;
    };
    match kind as usize % KINDS.len() {
        0 => decode_then(body, &decode, graph_def),
        1 => decode_then(body, &decode, node_def),
        2 => decode_then(body, &decode, |t: TensorProto| tensor_proto(&t)),
        _ => decode_then(body, &decode, op_list),
    }
}

fn decode_then<'a, V: ?Sized, M: Decodable + Default>(
    body: &'a V,
    decode: &impl Fn(&mut dyn Decodable, &'a V) -> bool,
    then: impl FnOnce(M),
) {
    let mut message = M::default();
    if decode(&mut message, body) {
        then(message);
    }
}

/// A message either decoder can fill in.
trait Decodable {
    /// Merges binary bytes.
    fn merge(&mut self, bytes: &[u8]) -> Result<(), prost::DecodeError>;
    /// Replaces the message with one parsed from text.
    fn set_from_pbtxt(&mut self, text: &str) -> bool;
}

impl<M: Message + TextFormat + Default> Decodable for M {
    fn merge(&mut self, bytes: &[u8]) -> Result<(), prost::DecodeError> {
        Message::merge(self, bytes)
    }

    fn set_from_pbtxt(&mut self, text: &str) -> bool {
        match M::from_pbtxt(text) {
            Ok(parsed) => {
                *self = parsed;
                true
            }
            Err(_) => false,
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
    // Validation is what registering an OpDef checks (registries keep
    // their entries for the life of the process, so none is made here).
    for op_def in &list.op {
        let _ = registry_core::spec::validate_op_def(op_def);
    }
}
