//! A call's node: the op's inputs and attrs bound into a valid NodeDef by
//! registry-core's `NodeDefBuilder`, which infers the attrs the inputs
//! imply (`T` from a `x: T` input, `N` and `T` from `N * T`), adds the
//! op's defaults and validates every value. Shape inference (from Python)
//! and the handlers (from XLA) bind calls the same way.

use registry_core::node_def::{
    BuildProblem, NodeDefBuildError, NodeDefBuilder, NodeDefError, NodeOut,
};
use registry_core::proto::op_def::ArgDef;
use registry_core::proto::{AttrValue, DataType, NodeDef, OpDef};

use crate::attrs::NamedAttr;
use crate::error::CallError;

/// The node of a call of `op_def` with `attrs` (given ones; the rest are
/// inferred or defaulted) and `inputs`, one list of dtypes per input arg
/// (a single tensor's arg has one).
pub fn bind(
    op_def: &OpDef,
    attrs: &[NamedAttr],
    inputs: &[Vec<DataType>],
) -> Result<NodeDef, CallError> {
    if inputs.len() != op_def.input_arg.len() {
        return Err(CallError::Value(format!(
            "{} inputs were given; the op takes {} ({})",
            inputs.len(),
            op_def.input_arg.len(),
            arg_names(op_def)
        )));
    }
    let mut builder = NodeDefBuilder::with_op_def(op_def.name.to_lowercase(), op_def);
    for (index, (arg, dtypes)) in op_def.input_arg.iter().zip(inputs).enumerate() {
        let outs = dtypes
            .iter()
            .enumerate()
            .map(|(i, &d)| NodeOut::new(format!("input{index}"), i, d));
        builder = if is_list(arg) {
            builder.input_list(outs)
        } else {
            match dtypes.as_slice() {
                [dtype] => builder.input(NodeOut::new(format!("input{index}"), 0, *dtype)),
                _ => {
                    return Err(CallError::Value(format!(
                        "input '{}' is one tensor; {} were given",
                        arg.name,
                        dtypes.len()
                    )));
                }
            }
        };
    }
    for (name, value) in attrs {
        builder = builder.attr(name.clone(), value.clone());
    }
    builder.finalize().map_err(|e| classify(op_def, e))
}

/// Splits a call's flat inputs (XLA's buffers) over the op's input args:
/// a list arg takes as many as its `number_attr` or `type_list_attr` says,
/// or, when neither is given and it is the op's only list arg, what the
/// single-tensor args leave.
pub fn group(
    op_def: &OpDef,
    attrs: &[NamedAttr],
    flat: &[DataType],
) -> Result<Vec<Vec<DataType>>, CallError> {
    let given = |name: &str| attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let mut sizes = Vec::with_capacity(op_def.input_arg.len());
    for arg in &op_def.input_arg {
        let size = if !arg.number_attr.is_empty() {
            given(&arg.number_attr).and_then(int_of)
        } else if !arg.type_list_attr.is_empty() {
            given(&arg.type_list_attr).and_then(type_list_len)
        } else {
            Some(1)
        };
        sizes.push(size);
    }
    let known: usize = sizes.iter().flatten().sum();
    let unknown = sizes.iter().filter(|s| s.is_none()).count();
    if unknown == 1 {
        let rest = flat
            .len()
            .checked_sub(known)
            .ok_or_else(|| count_error(op_def, flat.len()))?;
        for size in &mut sizes {
            size.get_or_insert(rest);
        }
    } else if unknown > 1 {
        return Err(CallError::Value(format!(
            "{} list inputs' lengths are not given as attrs, so {} inputs cannot be split over them ({})",
            unknown,
            flat.len(),
            arg_names(op_def)
        )));
    }
    let total: usize = sizes.iter().flatten().sum();
    if total != flat.len() {
        return Err(count_error(op_def, flat.len()));
    }
    let mut rest = flat;
    Ok(sizes
        .into_iter()
        .flatten()
        .map(|n| {
            let (head, tail) = rest.split_at(n);
            rest = tail;
            head.to_vec()
        })
        .collect())
}

fn count_error(op_def: &OpDef, given: usize) -> CallError {
    CallError::Value(format!(
        "{given} input buffers do not fit the op's inputs ({}) with the attrs given",
        arg_names(op_def)
    ))
}

fn int_of(value: &AttrValue) -> Option<usize> {
    use registry_core::proto::attr_value::Value;
    match value.value {
        Some(Value::I(i)) => usize::try_from(i).ok(),
        _ => None,
    }
}

fn type_list_len(value: &AttrValue) -> Option<usize> {
    use registry_core::proto::attr_value::Value;
    match &value.value {
        Some(Value::List(l)) => Some(l.r#type.len()),
        _ => None,
    }
}

fn is_list(arg: &ArgDef) -> bool {
    !arg.number_attr.is_empty() || !arg.type_list_attr.is_empty()
}

/// `x: T, values: N * T` for messages.
fn arg_names(op_def: &OpDef) -> String {
    let names: Vec<String> = op_def
        .input_arg
        .iter()
        .map(|a| {
            if is_list(a) {
                format!("{} (a list)", a.name)
            } else {
                a.name.clone()
            }
        })
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// A dtype the op does not take is a `TypeError`; anything else about the
/// inputs or attrs a `ValueError`.
fn classify(op_def: &OpDef, error: NodeDefBuildError) -> CallError {
    let is_type_attr = |attr: &str| {
        op_def
            .attr
            .iter()
            .any(|a| a.name == attr && (a.r#type == "type" || a.r#type == "list(type)"))
    };
    let about_types = match &error {
        NodeDefBuildError::Problems { problems, .. } => problems.iter().any(|p| {
            matches!(p, BuildProblem::WrongType { .. })
                || matches!(p, BuildProblem::InconsistentAttr { attr, .. } if is_type_attr(attr))
        }),
        NodeDefBuildError::Invalid(NodeDefError::InvalidAttr { attr, .. }) => is_type_attr(attr),
        _ => false,
    };
    let message = error.to_string();
    if about_types {
        CallError::Type(message)
    } else {
        CallError::Value(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::spec::OpSpec;

    fn weighted_sum() -> OpDef {
        OpSpec::new("WeightedSum")
            .input("values: N * T")
            .input("weights: T")
            .output("sum: T")
            .attr("N: int >= 1")
            .attr("T: {float, double, int32}")
            .attr("normalize: bool = false")
            .build()
            .expect("a valid spec")
    }

    #[test]
    fn inputs_imply_their_attrs_and_defaults_are_added() {
        let op = weighted_sum();
        let f = DataType::DtFloat;
        let node = bind(&op, &[], &[vec![f, f, f], vec![f]]).expect("binds");
        assert_eq!(node.attr["N"], AttrValue::from(3i64));
        assert_eq!(node.attr["T"], AttrValue::from(f));
        assert_eq!(node.attr["normalize"], AttrValue::from(false));
    }

    #[test]
    fn a_type_the_op_does_not_take_is_a_type_error() {
        let op = weighted_sum();
        let i = DataType::DtInt64;
        let err = bind(&op, &[], &[vec![i], vec![i]]).unwrap_err();
        assert!(matches!(err, CallError::Type(_)), "{err:?}");
        assert!(err.to_string().contains("int64"), "{err}");
        let f = DataType::DtFloat;
        let err = bind(&op, &[], &[vec![f], vec![DataType::DtDouble]]).unwrap_err();
        assert!(matches!(err, CallError::Type(_)), "{err:?}");
        let err = bind(&op, &[], &[vec![], vec![f]]).unwrap_err();
        assert!(matches!(err, CallError::Value(_)), "N >= 1: {err:?}");
    }

    #[test]
    fn flat_buffers_split_by_the_given_length_or_what_is_left() {
        let op = weighted_sum();
        let f = DataType::DtFloat;
        let flat = [f, f, f];
        assert_eq!(group(&op, &[], &flat).unwrap(), vec![vec![f, f], vec![f]]);
        let n = [("N".to_owned(), AttrValue::from(2i64))];
        assert_eq!(group(&op, &n, &flat).unwrap(), vec![vec![f, f], vec![f]]);
        let n = [("N".to_owned(), AttrValue::from(1i64))];
        let err = group(&op, &n, &flat).unwrap_err();
        assert_eq!(
            err.to_string(),
            "3 input buffers do not fit the op's inputs (values (a list), weights) with the attrs given"
        );
        assert!(group(&op, &[], &[]).is_err());
    }
}
