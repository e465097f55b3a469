use registry_core::proto::DataType;
use registry_core::shape::{InferenceContext, ShapeError};
use registry_core::{Op, op};

mod shapes {
    use super::*;

    pub fn unchanged(c: &mut InferenceContext) -> Result<(), ShapeError> {
        let input = c.input(0)?.clone();
        c.set_output(0, input)
    }
}

mod reexport {
    pub use registry_core as core_again;
}

/// Returns x + y element-wise.
///
/// Supports broadcasting.
///
/// x: The first addend.
/// y: The second addend.
/// z: The sum.
#[op(
    name = "Namespace>AddV9",
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {bfloat16, half, float, double, int32, int64} = DT_FLOAT",
    commutative,
    aggregate,
    shape_fn = shapes::unchanged,
    crate = crate::reexport::core_again,
)]
pub struct AddV9;

#[op(
    name = "_Internal",
    input = "ref: Ref(T)",
    input = "values: N * T",
    input = "list: Tlist",
    output = "out: int64",
    control_output = "done",
    attr = "T: type",
    attr = "N: int >= 2",
    attr = "Tlist: list(type) >= 0",
    attr = "padding: {'SAME', 'VALID'} = 'SAME'",
    stateful,
    allows_uninitialized_input,
    distributed_communication,
    deprecated(version = 27, explanation = "Use Something instead"),
)]
pub struct Internal;

#[op(input = "x: float")]
pub struct r#Raw;

fn main() {
    assert_eq!(AddV9::NAME, "Namespace>AddV9");
    let def = AddV9::op_def();
    assert_eq!(def.summary, "Returns x + y element-wise.");
    assert_eq!(def.description, "Supports broadcasting.");
    assert_eq!(def.input_arg[1].description, "The second addend.");
    assert!(def.is_commutative && def.is_aggregate && !def.is_stateful);
    let t = AddV9::SIGNATURE.attr("T").unwrap();
    assert!(t.has_default);
    assert_eq!(t.allowed_types.unwrap()[2], DataType::DtFloat);

    let sig = Internal::SIGNATURE;
    assert_eq!(Internal::NAME, "_Internal");
    assert!(sig.inputs[0].is_ref);
    assert_eq!(sig.inputs[1].number_attr, "N");
    assert_eq!(sig.inputs[2].type_list_attr, "Tlist");
    assert_eq!(sig.outputs[0].dtype, DataType::DtInt64);
    assert_eq!(sig.attr("N").unwrap().minimum, Some(2));
    assert_eq!(sig.attr("padding").unwrap().allowed_types, None);
    let def = Internal::op_def();
    assert_eq!(def.control_output, ["done"]);
    assert_eq!(def.deprecation.unwrap().version, 27);
    assert!(def.is_stateful && def.allows_uninitialized_input && def.is_distributed_communication);
    assert_eq!(Raw::NAME, "Raw");

    let registered: Vec<_> = registry_core::__private::inventory::iter::<registry_core::__private::OpRegistration>
        .into_iter()
        .map(|r| (r.name, r.shape_fn.is_some(), r.op_def == AddV9::OP_DEF_BYTES))
        .collect();
    assert!(registered.contains(&("Namespace>AddV9", true, true)), "{registered:?}");
    assert!(registered.contains(&("_Internal", false, false)), "{registered:?}");
    let reg = registry_core::__private::inventory::iter::<registry_core::__private::OpRegistration>
        .into_iter()
        .find(|r| r.name == "Raw")
        .unwrap();
    assert!(reg.location.file.ends_with("pass_all_keys.rs"), "{}", reg.location);
    assert_eq!(reg.location.line, 56, "{}", reg.location);
}
