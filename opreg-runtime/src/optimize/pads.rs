//! Pad folding: a convolution's zero padding done by the convolution.
//!
//! A `Pad` (or a `PadV2` whose constant is zero) of only the rows and
//! columns of an NHWC image, by constant non-negative amounts, read only by
//! one `Conv2D` or `DepthwiseConv2dNative` (NHWC, `VALID` or `EXPLICIT`
//! padding, on the CPU) as its input, becomes that convolution's
//! `EXPLICIT` padding (what Keras' `ZeroPadding2D` before a `valid`
//! convolution is): the convolution reads the unpadded image, and the
//! padded copy is never made. The convolution computes the same sums (a
//! tap in the padding adds nothing either way). A fed or fetched `Pad`
//! stays.
//!
//! When the image and filter sizes are known and the amounts are what
//! `SAME` (or `VALID`) padding computes for them, the convolution gets that
//! padding instead of `EXPLICIT`: Keras pads a stride-2 convolution's even
//! image by one row and column after it, which is `SAME`. That keeps the
//! convolution fusable: a `_FusedDepthwiseConv2dNative` has no explicit
//! padding, so a depthwise convolution left with `EXPLICIT` is not fused.

use opreg_proto::attr_value::ListValue;
use opreg_proto::{AttrValue, NodeDef};
use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelRegistry;
use registry_core::registry::OpRegistry;
use registry_core::shape::Shape;

use opreg_op_logic::window::{Padding, windowed_output};

use super::edit::{self, Preserve};
use super::fusion::runs_on_cpu;
use crate::{Graph, GraphError, GraphNode, SessionOptions};

/// The convolutions that take explicit padding.
const CONVOLUTIONS: &[&str] = &["Conv2D", "DepthwiseConv2dNative"];

/// Folds every `Pad` it can; `None` when there is none.
pub(super) fn fold(
    graph: &Graph,
    preserve: &Preserve,
    options: &SessionOptions,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Result<Option<(Graph, usize)>, GraphError> {
    let nodes = graph.nodes();
    let readers = edit::sole_readers(graph, preserve);
    let mut defs: Vec<Option<NodeDef>> = nodes.iter().map(|n| Some(n.def.clone())).collect();
    let mut count = 0;
    let mut shapes = None;
    for (p, pad) in nodes.iter().enumerate() {
        if !matches!(pad.def.op.as_str(), "Pad" | "PadV2") {
            continue;
        }
        let Some(c) = readers[p] else { continue };
        let conv = &nodes[c];
        let Some(amounts) = image_padding(graph, pad) else {
            continue;
        };
        if !CONVOLUTIONS.contains(&conv.def.op.as_str())
            || conv
                .inputs
                .first()
                .is_none_or(|e| e.node != p || e.port != 0)
            || conv.def.device != pad.def.device
            || !runs_on_cpu(conv, options, kernels)
        {
            continue;
        }
        let shapes = shapes.get_or_insert_with(|| graph.infer_shapes(&[]).ok());
        let shape_of = |at: Option<&crate::Endpoint>| {
            let e = at?;
            shapes.as_ref()?.get(e.node)?.get(e.port)
        };
        let sizes = WindowSizes {
            image: shape_of(pad.inputs.first()),
            filter: shape_of(conv.inputs.get(1)),
        };
        let Some(def) = padded_convolution(graph, conv, pad, amounts, sizes) else {
            continue;
        };
        defs[p] = None;
        defs[c] = Some(def);
        count += 1;
    }
    edit::rewritten(graph, defs, count, ops)
}

/// The (before, after) padding of the rows and columns a `Pad` or
/// `PadV2` adds to a 4-D tensor, when its paddings are a constant that pads
/// nothing else, by non-negative amounts, with zeros.
fn image_padding(graph: &Graph, pad: &GraphNode) -> Option<[i64; 4]> {
    let paddings = edit::const_value(&graph.nodes()[pad.inputs.get(1)?.node])?;
    if paddings.dims() != [4, 2] {
        return None;
    }
    let values: Vec<i64> = match paddings.as_slice::<i32>() {
        Ok(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Err(_) => paddings.as_slice::<i64>().ok()?.to_vec(),
    };
    if pad.def.op == "PadV2" {
        let constant = edit::const_value(&graph.nodes()[pad.inputs.get(2)?.node])?;
        // All bits zero: `0` of any type (not `-0.0`, kept as written).
        if constant.num_elements() != 1 || constant.as_bytes().ok()?.iter().any(|&b| b != 0) {
            return None;
        }
    }
    let [n0, n1, h0, h1, w0, w1, c0, c1] = values.try_into().ok()?;
    ([n0, n1, c0, c1] == [0; 4] && [h0, h1, w0, w1].iter().all(|&v| v >= 0))
        .then_some([h0, h1, w0, w1])
}

/// The inferred shapes of a convolution's (unpadded) image and its filter,
/// where known.
struct WindowSizes<'a> {
    image: Option<&'a Shape>,
    filter: Option<&'a Shape>,
}

/// Convolution `conv` reading `pad`'s input, with `pad`'s row and column
/// `amounts` added to its own padding; `None` unless it is NHWC with
/// `VALID` or `EXPLICIT` padding. The padding is `SAME` or `VALID` where
/// that is the same (see [`named_padding`]).
fn padded_convolution(
    graph: &Graph,
    conv: &GraphNode,
    pad: &GraphNode,
    [top, bottom, left, right]: [i64; 4],
    sizes: WindowSizes,
) -> Option<NodeDef> {
    let attrs = NodeAttrs::new(&conv.def, &conv.op_def);
    if attrs.get::<&str>("data_format").is_ok_and(|f| f != "NHWC") {
        return None;
    }
    let mut explicit = match attrs.get::<&str>("padding").ok()? {
        "VALID" => vec![0; 8],
        "EXPLICIT" => attrs.get::<Vec<i64>>("explicit_paddings").ok()?,
        _ => return None,
    };
    if explicit.len() != 8 {
        return None;
    }
    for (at, amount) in [(2, top), (3, bottom), (4, left), (5, right)] {
        explicit[at] = explicit[at].checked_add(amount)?;
    }
    let named = named_padding(&attrs, &explicit, sizes);
    let mut def = conv.def.clone();
    def.input[0] = edit::tensor_name(graph, *pad.inputs.first()?);
    def.attr.insert(
        "padding".into(),
        AttrValue::from(named.unwrap_or("EXPLICIT")),
    );
    def.attr.insert(
        "explicit_paddings".into(),
        AttrValue::from(ListValue {
            i: if named.is_some() {
                Vec::new()
            } else {
                explicit
            },
            ..Default::default()
        }),
    );
    for control in edit::control_inputs(&pad.def) {
        if !def.input.contains(control) {
            def.input.push(control.clone());
        }
    }
    Some(def)
}

/// `"VALID"` when NHWC `explicit` padding pads nothing, `"SAME"` when it
/// pads each image dimension by what `SAME` computes for the convolution's
/// (known) image and filter sizes, strides and dilations; else `None`.
fn named_padding(attrs: &NodeAttrs, explicit: &[i64], sizes: WindowSizes) -> Option<&'static str> {
    if explicit.iter().all(|&p| p == 0) {
        return Some("VALID");
    }
    let image = sizes.image?.dims()?;
    let filter = sizes.filter?.dims()?;
    let strides = attrs.get::<Vec<i64>>("strides").ok()?;
    let dilations = attrs
        .get::<Vec<i64>>("dilations")
        .unwrap_or_else(|_| vec![1; 4]);
    if image.len() != 4 || filter.len() != 4 || strides.len() != 4 || dilations.len() != 4 {
        return None;
    }
    // Image dimensions 1 and 2 (H, W); the filter's 0 and 1.
    for d in 0..2 {
        let input = usize::try_from(image[d + 1].value()?).ok()?;
        let size = usize::try_from(filter[d].value()?).ok()?;
        let same = windowed_output(
            input,
            size,
            dilations[d + 1],
            strides[d + 1],
            Padding::Same,
            (0, 0),
        )
        .ok()?;
        if (same.pad_before, same.pad_after) != (explicit[2 * d + 2], explicit[2 * d + 3]) {
            return None;
        }
    }
    Some("SAME")
}
