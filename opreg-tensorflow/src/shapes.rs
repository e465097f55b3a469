//! opreg shape functions run by TensorFlow's shape inference.
//!
//! TensorFlow's C API gives a shape function the input shapes and the
//! values of `type` attrs, nothing else. The bridge therefore builds the
//! node from what it can derive: every `type` attr, and the `int` attr
//! that sizes a list input when the input count tells it (`N` of
//! `values: N * T`). Other attrs are left out, defaults included (a default
//! could be wrong for this node), and input values are unknown. A shape
//! function that reads such an attr, or fails for lack of it, gives
//! unknown output shapes; one that rejects its inputs fails TensorFlow's
//! shape inference with its message.

use std::ffi::{CString, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

use registry_core::proto::op_def::ArgDef;
use registry_core::proto::{AttrValue, DataType, NodeDef, OpDef};
use registry_core::shape::{Shape, ShapeError, ShapeFn, infer_shapes};

use crate::api::{TF_ShapeHandle, TF_ShapeInferenceContext, TF_Status, TfApi};
use crate::load::loaded;
use crate::status::{Status, c_string, code};

/// An op's shape function as TensorFlow calls it.
pub(crate) struct BridgedShapeFn {
    /// The OpDef the node is built against: the op's, without the defaults
    /// of the attrs the bridge cannot derive.
    pub(crate) op_def: OpDef,
    /// The op's shape function.
    pub(crate) shape_fn: ShapeFn,
    /// The `type` attrs, which TensorFlow gives: their names, and as C
    /// strings.
    type_attrs: Vec<(String, CString)>,
    /// The `int` attr the input count tells, if any.
    sizing: Option<Sizing>,
}

/// An `int` attr that sizes the op's only list inputs: its value is
/// `(inputs - fixed) / lists`.
struct Sizing {
    attr: String,
    /// The inputs that are single tensors.
    fixed: usize,
    /// The list inputs it sizes.
    lists: usize,
}

impl BridgedShapeFn {
    /// The bridge for `op_def`'s shape function `shape_fn`.
    pub(crate) fn new(op_def: &OpDef, shape_fn: ShapeFn) -> Self {
        let type_attrs: Vec<(String, CString)> = op_def
            .attr
            .iter()
            .filter(|a| a.r#type == "type")
            .map(|a| (a.name.clone(), c_string(&a.name)))
            .collect();
        let sizing = op_def
            .attr
            .iter()
            .find(|a| sizing_attr(op_def, &a.name))
            .map(|a| Sizing {
                attr: a.name.clone(),
                fixed: op_def
                    .input_arg
                    .iter()
                    .filter(|i| i.number_attr.is_empty() && i.type_list_attr.is_empty())
                    .count(),
                lists: op_def
                    .input_arg
                    .iter()
                    .filter(|i| i.number_attr == a.name)
                    .count(),
            });
        let mut op_def = op_def.clone();
        for attr in &mut op_def.attr {
            let derivable = type_attrs.iter().any(|(name, _)| *name == attr.name)
                || sizing.as_ref().is_some_and(|s| s.attr == attr.name);
            if !derivable {
                attr.default_value = None;
            }
        }
        Self {
            op_def,
            shape_fn,
            type_attrs,
            sizing,
        }
    }
}

/// True when `attr` is the `number_attr` of the op's only variable-length
/// inputs, so that the input count tells its value.
fn sizing_attr(op_def: &OpDef, attr: &str) -> bool {
    let variable = |a: &&ArgDef| !a.number_attr.is_empty() || !a.type_list_attr.is_empty();
    let mut variable_args = op_def.input_arg.iter().filter(variable).peekable();
    variable_args.peek().is_some() && variable_args.all(|a| a.number_attr == attr)
}

/// TensorFlow's shape function of slot `slot`.
///
/// # Safety
/// `ctx` and `status` must be TensorFlow's live ones.
pub(crate) unsafe fn infer(
    slot: usize,
    ctx: *mut TF_ShapeInferenceContext,
    status: *mut TF_Status,
) {
    let Some((api, bridge)) = loaded().and_then(|l| Some((l.api, l.shape_fns.get(slot)?))) else {
        return;
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's promise.
        unsafe { run(api, bridge, ctx) }
    }))
    .unwrap_or_else(|_| {
        Err(format!(
            "the shape function of {} panicked",
            bridge.op_def.name
        ))
    });
    if let Err(message) = outcome {
        let message = c_string(&message);
        // SAFETY: `status` is live; TF copies the message.
        unsafe { (api.TF_SetStatus)(status, code::INVALID_ARGUMENT, message.as_ptr()) };
    }
}

/// Reads the inputs, runs the shape function, sets the outputs.
///
/// # Safety
/// `ctx` must be TensorFlow's live context.
unsafe fn run(
    api: &TfApi,
    bridge: &BridgedShapeFn,
    ctx: *mut TF_ShapeInferenceContext,
) -> Result<(), String> {
    let status = Status::new(api);
    // SAFETY: `ctx` is live.
    let count = unsafe { (api.TF_ShapeInferenceContextNumInputs)(ctx) }.max(0) as usize;
    let mut inputs = Vec::with_capacity(count);
    for index in 0..count {
        // SAFETY: `ctx` is live and `index` below its input count.
        inputs.push(unsafe { input_shape(api, ctx, index as c_int, &status) }?);
    }
    let op_def = &bridge.op_def;
    let mut node = NodeDef {
        name: op_def.name.clone(),
        op: op_def.name.clone(),
        ..Default::default()
    };
    for (attr, name) in &bridge.type_attrs {
        let mut value = 0;
        // SAFETY: `ctx` and `status` are live; `value` receives the type.
        unsafe {
            (api.TF_ShapeInferenceContext_GetAttrType)(ctx, name.as_ptr(), &mut value, status.raw())
        };
        if status.check().is_ok() {
            let dtype = DataType::try_from(value).unwrap_or(DataType::DtInvalid);
            node.attr.insert(attr.clone(), AttrValue::from(dtype));
        }
        status.set(code::OK, "");
    }
    if let Some(Sizing { attr, fixed, lists }) = &bridge.sizing
        && *lists > 0
        && count >= *fixed
        && (count - fixed).is_multiple_of(*lists)
    {
        node.attr.insert(
            attr.clone(),
            AttrValue::from(((count - fixed) / lists) as i64),
        );
    }
    let outputs = match infer_shapes(op_def, bridge.shape_fn, &node, &inputs, &[]) {
        Ok(outputs) => outputs.into_iter().map(Some).collect(),
        Err(e) if unknowable(&e) => {
            let count = registry_core::node_def::in_out_types_for_node(&node, op_def)
                .map(|(_, outputs)| outputs.len());
            match count {
                Ok(count) => vec![None; count],
                Err(_) => {
                    // SAFETY: `ctx` and `status` are live.
                    unsafe { (api.TF_ShapeInferenceContextSetUnknownShape)(ctx, status.raw()) };
                    return Ok(());
                }
            }
        }
        Err(e) => return Err(e.to_string()),
    };
    for (index, shape) in outputs.iter().enumerate() {
        // SAFETY: `ctx` is live and `index` one of its outputs.
        unsafe { set_output(api, ctx, index as c_int, shape.as_ref(), &status) }?;
    }
    Ok(())
}

/// True for the errors that come from what the bridge cannot know (an attr
/// left out, a count it could not derive), not from the inputs.
fn unknowable(error: &ShapeError) -> bool {
    matches!(
        error.kind(),
        ShapeError::MissingAttr { .. } | ShapeError::NodeDef(_)
    )
}

/// Input `index`'s shape.
///
/// # Safety
/// `ctx` must be live and `index` below its input count.
unsafe fn input_shape(
    api: &TfApi,
    ctx: *mut TF_ShapeInferenceContext,
    index: c_int,
    status: &Status<'_>,
) -> Result<Shape, String> {
    // SAFETY: (all calls) `ctx` is live, the handles are ours and deleted
    // once, at the end.
    unsafe {
        let handle = (api.TF_NewShapeHandle)();
        (api.TF_ShapeInferenceContextGetInput)(ctx, index, handle, status.raw());
        let shape = match status.check() {
            Err((_, message)) => Err(format!("reading input {index}'s shape: {message}")),
            Ok(()) if (api.TF_ShapeInferenceContextRankKnown)(ctx, handle) == 0 => {
                Ok(Shape::unknown())
            }
            Ok(()) => {
                let rank = (api.TF_ShapeInferenceContextRank)(ctx, handle);
                let dim = (api.TF_NewDimensionHandle)();
                let mut dims = Vec::with_capacity(rank.max(0) as usize);
                for d in 0..rank {
                    (api.TF_ShapeInferenceContextDim)(ctx, handle, d, dim);
                    dims.push(if (api.TF_DimensionHandleValueKnown)(dim) != 0 {
                        (api.TF_DimensionHandleValue)(dim)
                    } else {
                        -1
                    });
                }
                (api.TF_DeleteDimensionHandle)(dim);
                Ok(Shape::from_dims(&dims))
            }
        };
        (api.TF_DeleteShapeHandle)(handle);
        shape
    }
}

/// Sets output `index` to `shape` (`None`: unknown), built from TensorFlow's
/// pieces: a scalar, vectors of known sizes, and `[?]` for unknown
/// dimensions, concatenated.
///
/// # Safety
/// `ctx` must be live and `index` below its output count.
unsafe fn set_output(
    api: &TfApi,
    ctx: *mut TF_ShapeInferenceContext,
    index: c_int,
    shape: Option<&Shape>,
    status: &Status<'_>,
) -> Result<(), String> {
    let fail = |(_, message): (i32, String)| format!("setting output {index}'s shape: {message}");
    // SAFETY: (all calls) `ctx` is live; every handle made here is deleted
    // once (deleting a handle leaves the shape, owned by `ctx`).
    unsafe {
        let Some(dims) = shape.and_then(Shape::dims) else {
            // An unset handle is TensorFlow's unknown shape.
            let unknown = (api.TF_NewShapeHandle)();
            (api.TF_ShapeInferenceContextSetOutput)(ctx, index, unknown, status.raw());
            (api.TF_DeleteShapeHandle)(unknown);
            return status.check().map_err(fail);
        };
        let mut result: *mut TF_ShapeHandle = (api.TF_ShapeInferenceContextScalar)(ctx);
        for dim in dims {
            let piece = match dim.value() {
                Some(size) => (api.TF_ShapeInferenceContextVectorFromSize)(ctx, size as usize),
                None => {
                    let unset = (api.TF_NewShapeHandle)();
                    let piece = (api.TF_NewShapeHandle)();
                    (api.TF_ShapeInferenceContextWithRank)(ctx, unset, 1, piece, status.raw());
                    (api.TF_DeleteShapeHandle)(unset);
                    piece
                }
            };
            let joined = (api.TF_NewShapeHandle)();
            if status.check().is_ok() {
                (api.TF_ShapeInferenceContextConcatenateShapes)(
                    ctx,
                    result,
                    piece,
                    joined,
                    status.raw(),
                );
            }
            (api.TF_DeleteShapeHandle)(piece);
            (api.TF_DeleteShapeHandle)(result);
            result = joined;
            if let Err(e) = status.check() {
                (api.TF_DeleteShapeHandle)(result);
                return Err(fail(e));
            }
        }
        (api.TF_ShapeInferenceContextSetOutput)(ctx, index, result, status.raw());
        (api.TF_DeleteShapeHandle)(result);
        status.check().map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::shape::common::unchanged_shape;
    use registry_core::spec::OpSpec;

    fn op(spec: OpSpec) -> OpDef {
        spec.build().unwrap()
    }

    #[test]
    fn the_count_of_a_lone_list_input_sizes_its_attr() {
        let sum = op(OpSpec::new("Sum")
            .input("values: N * T")
            .input("w: T")
            .output("y: T")
            .attr("N: int >= 1")
            .attr("T: type"));
        assert!(sizing_attr(&sum, "N"));
        assert!(!sizing_attr(&sum, "T"));
        // Two lists of different counts: the input count cannot tell.
        let two = op(OpSpec::new("Two")
            .input("a: N * float")
            .input("b: M * float")
            .attr("N: int")
            .attr("M: int"));
        assert!(!sizing_attr(&two, "N") && !sizing_attr(&two, "M"));
        // A type list beside it: its length is unknown.
        let typed = op(OpSpec::new("Typed")
            .input("a: N * float")
            .input("b: L")
            .attr("N: int")
            .attr("L: list(type)"));
        assert!(!sizing_attr(&typed, "N"));
    }

    #[test]
    fn defaults_of_attrs_tensorflow_cannot_give_are_dropped() {
        let scale = op(OpSpec::new("Scale")
            .input("x: T")
            .output("y: T")
            .attr("T: {float, double} = DT_FLOAT")
            .attr("factor: float = 2.0"));
        let bridge = BridgedShapeFn::new(&scale, unchanged_shape);
        let attr = |name: &str| bridge.op_def.attr.iter().find(|a| a.name == name).unwrap();
        assert!(attr("T").default_value.is_some());
        // A default would be wrong for a node that sets another factor.
        assert!(attr("factor").default_value.is_none());
        assert!(unknowable(&ShapeError::MissingAttr {
            attr: "factor".into()
        }));
        assert!(!unknowable(&ShapeError::Rank {
            expected: 2,
            found: 3
        }));
    }
}
