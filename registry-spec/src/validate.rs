//! TensorFlow's `ValidateOpDef` (op_def_util.cc): the rules a whole OpDef
//! must satisfy (names, duplicates, attr types, minimums, allowed values,
//! defaults, arg types), and `ValidateAttrValue` for a value against its
//! AttrDef.

use std::collections::HashSet;

use opreg_proto::attr_value::Value;
use opreg_proto::op_def::{ArgDef, AttrDef};
use opreg_proto::{AttrValue, DataType, DataTypeExt, OpDef};

use crate::type_sets::data_type_from_string;

/// What a validation error is about, so it can be pointed at the spec that
/// declared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidationSubject {
    /// The op's name.
    OpName,
    /// The attr with this name.
    Attr(String),
    /// The default value of the attr with this name.
    AttrDefault(String),
    /// The input with this name.
    Input(String),
    /// The output with this name.
    Output(String),
}

/// A broken `ValidateOpDef` rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// What the rule is about.
    pub subject: ValidationSubject,
    /// TensorFlow's message for the rule.
    pub message: String,
    /// The context TensorFlow appends to the message.
    pub context: ValidationContext,
}

/// The context TensorFlow's `ValidateOpDef` appends to a rule's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationContext {
    /// `; in OpDef: <the OpDef's short debug string>` (TF's `VALIDATE`).
    OpDef,
    /// ` in Op '<name>'` (allowed values and default values).
    InOp,
}

impl ValidationContext {
    /// The text TF appends for `op_def`.
    pub fn text(self, op_def: &OpDef) -> String {
        match self {
            ValidationContext::OpDef => {
                use opreg_proto::TextFormat;
                format!("; in OpDef: {}", op_def.to_pbtxt_short())
            }
            ValidationContext::InOp => format!(" in Op '{}'", op_def.name),
        }
    }
}

fn err(subject: ValidationSubject, message: String) -> ValidationError {
    ValidationError {
        subject,
        message,
        context: ValidationContext::OpDef,
    }
}

fn err_in_op(subject: ValidationSubject, message: String) -> ValidationError {
    ValidationError {
        subject,
        message,
        context: ValidationContext::InOp,
    }
}

fn type_name(dt: i32) -> String {
    DataType::try_from(dt).map_or_else(
        |_| format!("unknown dtype enum ({dt})"),
        |d| d.type_name().to_owned(),
    )
}

/// Checks an OpDef against TensorFlow's `ValidateOpDef` rules.
///
/// ```
/// use registry_spec::{OpSpec, validate_op_def};
/// let mut op = OpSpec::new("Ok").attr("T: type").input("x: T").build().unwrap();
/// assert!(validate_op_def(&op).is_ok());
/// op.name = "lowercase".into();
/// assert!(validate_op_def(&op).unwrap_err().message.contains("Invalid name"));
/// ```
pub fn validate_op_def(op_def: &OpDef) -> Result<(), ValidationError> {
    if !op_def.name.starts_with('_') && !is_valid_op_name(&op_def.name) {
        return Err(err(
            ValidationSubject::OpName,
            format!("Invalid name: {} (Did you use CamelCase?)", op_def.name),
        ));
    }
    let mut names: HashSet<&str> = HashSet::new();
    for attr in &op_def.attr {
        validate_attr_def(attr, &mut names)?;
    }
    for arg in &op_def.input_arg {
        validate_arg(arg, op_def, false, &mut names)?;
    }
    for arg in &op_def.output_arg {
        validate_arg(arg, op_def, true, &mut names)?;
    }
    Ok(())
}

/// TF's `IsValidOpName`: `[A-Z][A-Za-z0-9_]*` segments joined by `>`.
fn is_valid_op_name(name: &str) -> bool {
    name.split('>').all(|segment| {
        let mut chars = segment.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn validate_attr_def<'a>(
    attr: &'a AttrDef,
    names: &mut HashSet<&'a str>,
) -> Result<(), ValidationError> {
    let subject = || ValidationSubject::Attr(attr.name.clone());
    if !names.insert(&attr.name) {
        return Err(err(subject(), format!("Duplicate name: {}", attr.name)));
    }
    if data_type_from_string(&attr.name).is_some() {
        return Err(err(
            subject(),
            format!(
                "Attr can't have name {} that matches a data type",
                attr.name
            ),
        ));
    }
    let (is_list, mut rest) = match attr.r#type.strip_prefix("list(") {
        Some(inner) => (true, inner),
        None => (false, attr.r#type.as_str()),
    };
    let base = [
        "string", "int", "float", "bool", "type", "shape", "tensor", "func",
    ]
    .into_iter()
    .find(|t| rest.starts_with(t))
    .ok_or_else(|| {
        err(
            subject(),
            format!("Unrecognized type '{rest}' in attr '{}'", attr.name),
        )
    })?;
    rest = &rest[base.len()..];
    if is_list {
        rest = rest.strip_prefix(')').ok_or_else(|| {
            err(
                subject(),
                format!(
                    "'list(' is missing ')' in attr {}'s type {}",
                    attr.name, attr.r#type
                ),
            )
        })?;
    }
    if !rest.is_empty() {
        return Err(err(
            subject(),
            format!(
                "Extra '{rest}' at the end of attr {}'s type {}",
                attr.name, attr.r#type
            ),
        ));
    }
    if attr.has_minimum {
        if attr.r#type != "int" && !is_list {
            return Err(err(
                subject(),
                format!(
                    "Attr '{}' has minimum for unsupported type {}",
                    attr.name, attr.r#type
                ),
            ));
        }
        if is_list && attr.minimum < 0 {
            return Err(err(
                subject(),
                format!(
                    "Attr '{}' with list type must have a non-negative minimum, not {}",
                    attr.name, attr.minimum
                ),
            ));
        }
    } else if attr.minimum != 0 {
        return Err(err(
            subject(),
            format!(
                "Attr '{}' with has_minimum = false but minimum {} not equal to default of 0",
                attr.name, attr.minimum
            ),
        ));
    }
    if let Some(allowed) = &attr.allowed_values {
        let list_type = if is_list {
            attr.r#type.clone()
        } else {
            format!("list({})", attr.r#type)
        };
        attr_value_has_type(allowed, &list_type)
            .map_err(|m| err_in_op(subject(), format!("{m} for attr '{}'", attr.name)))?;
    }
    if let Some(default) = &attr.default_value {
        validate_attr_value(default, attr)
            .map_err(|m| err_in_op(ValidationSubject::AttrDefault(attr.name.clone()), m))?;
    }
    Ok(())
}

fn validate_arg<'a>(
    arg: &'a ArgDef,
    op_def: &OpDef,
    output: bool,
    names: &mut HashSet<&'a str>,
) -> Result<(), ValidationError> {
    let subject = || {
        if output {
            ValidationSubject::Output(arg.name.clone())
        } else {
            ValidationSubject::Input(arg.name.clone())
        }
    };
    let suffix = format!(
        " for {} '{}'",
        if output { "output" } else { "input" },
        arg.name
    );
    let fail = |message: String| Err(err(subject(), message));
    if !names.insert(&arg.name) {
        return fail(format!("Duplicate name: {}", arg.name));
    }
    let has_type = arg.r#type != 0;
    if !has_type && arg.type_attr.is_empty() && arg.type_list_attr.is_empty() {
        return fail(format!("Missing type{suffix}"));
    }
    let find = |name: &str| op_def.attr.iter().find(|a| a.name == name);
    if !arg.number_attr.is_empty() {
        let Some(attr) = find(&arg.number_attr) else {
            return fail(format!("No attr with name '{}'{suffix}", arg.number_attr));
        };
        if attr.r#type != "int" {
            return fail(format!(
                "Attr '{}' used as length{suffix} has type {} != int",
                attr.name, attr.r#type
            ));
        }
        if !attr.has_minimum {
            return fail(format!(
                "Attr '{}' used as length{suffix} must have minimum",
                attr.name
            ));
        }
        if attr.minimum < 0 {
            return fail(format!(
                "Attr '{}' used as length{suffix} must have minimum >= 0",
                attr.name
            ));
        }
        if !arg.type_list_attr.is_empty() {
            return fail(format!(
                "Can't have both number_attr and type_list_attr{suffix}"
            ));
        }
        if usize::from(has_type) + usize::from(!arg.type_attr.is_empty()) != 1 {
            return fail(format!(
                "Exactly one of type, type_attr must be set{suffix}"
            ));
        }
    } else {
        let count = usize::from(has_type)
            + usize::from(!arg.type_attr.is_empty())
            + usize::from(!arg.type_list_attr.is_empty());
        if count != 1 {
            return fail(format!(
                "Exactly one of type, type_attr, type_list_attr must be set{suffix}"
            ));
        }
    }
    if !arg.type_attr.is_empty() {
        let Some(attr) = find(&arg.type_attr) else {
            return fail(format!("No attr with name '{}'{suffix}", arg.type_attr));
        };
        if attr.r#type != "type" {
            return fail(format!(
                "Attr '{}' used as type_attr{suffix} has type {} != type",
                attr.name, attr.r#type
            ));
        }
    } else if !arg.type_list_attr.is_empty() {
        let Some(attr) = find(&arg.type_list_attr) else {
            return fail(format!(
                "No attr with name '{}'{suffix}",
                arg.type_list_attr
            ));
        };
        if attr.r#type != "list(type)" {
            return fail(format!(
                "Attr '{}' used as type_list_attr{suffix} has type {} != list(type)",
                attr.name, attr.r#type
            ));
        }
    } else if DataType::try_from(arg.r#type).is_ok_and(|d| d.is_ref()) {
        return fail(format!(
            "Illegal use of ref type '{}'. Use 'Ref(type)' instead{suffix}",
            type_name(arg.r#type)
        ));
    }
    Ok(())
}

/// TF's `AttrValueHasType`: the value is of attr type `ty` (`int`,
/// `list(type)`, ...), and type values are valid, non-reference types.
pub(crate) fn attr_value_has_type(value: &AttrValue, ty: &str) -> Result<(), String> {
    let mut num_set = 0;
    let mut check = |present: bool, name: &str, is_list: bool| -> Result<(), String> {
        if !present {
            return Ok(());
        }
        let expected = if is_list {
            format!("list({name})")
        } else {
            name.to_owned()
        };
        if ty != expected {
            return Err(format!(
                "AttrValue had value with type '{expected}' when '{ty}' expected"
            ));
        }
        num_set += 1;
        Ok(())
    };
    match &value.value {
        Some(Value::List(list)) => {
            check(!list.s.is_empty(), "string", true)?;
            check(!list.i.is_empty(), "int", true)?;
            check(!list.f.is_empty(), "float", true)?;
            check(!list.b.is_empty(), "bool", true)?;
            check(!list.r#type.is_empty(), "type", true)?;
            check(!list.shape.is_empty(), "shape", true)?;
            check(!list.tensor.is_empty(), "tensor", true)?;
            check(!list.func.is_empty(), "func", true)?;
        }
        Some(Value::S(_)) => check(true, "string", false)?,
        Some(Value::I(_)) => check(true, "int", false)?,
        Some(Value::F(_)) => check(true, "float", false)?,
        Some(Value::B(_)) => check(true, "bool", false)?,
        Some(Value::Type(_)) => check(true, "type", false)?,
        Some(Value::Shape(_)) => check(true, "shape", false)?,
        Some(Value::Tensor(_)) => check(true, "tensor", false)?,
        Some(Value::Func(_)) => check(true, "func", false)?,
        Some(Value::Placeholder(_)) => {
            return Err("AttrValue had value with unexpected type 'placeholder'".to_owned());
        }
        None => {}
    }
    let has_list = matches!(value.value, Some(Value::List(_)));
    if ty.starts_with("list(") && !has_list {
        if num_set > 0 {
            return Err(format!("AttrValue missing value with expected type '{ty}'"));
        }
        num_set += 1;
    }
    if num_set == 0 && !ty.starts_with("list(") {
        return Err(format!("AttrValue missing value with expected type '{ty}'"));
    }
    let check_type = |dt: i32, contains: bool| -> Result<(), String> {
        match DataType::try_from(dt) {
            Err(_) => Err(format!("AttrValue has invalid DataType enum: {dt}")),
            Ok(d) if d.is_ref() => Err(format!(
                "AttrValue must not have reference type value of {}",
                d.type_name()
            )),
            Ok(DataType::DtInvalid) if contains => {
                Err("AttrValue contains invalid DataType".to_owned())
            }
            Ok(DataType::DtInvalid) => Err("AttrValue has invalid DataType".to_owned()),
            Ok(_) => Ok(()),
        }
    };
    match (&value.value, ty) {
        (Some(Value::Type(dt)), "type") => check_type(*dt, false)?,
        (None, "type") => check_type(0, false)?,
        (Some(Value::List(list)), "list(type)") => {
            for dt in &list.r#type {
                check_type(*dt, true)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// TF's `ValidateAttrValue`: type, minimum and allowed values of a value
/// (e.g. a default, or a NodeDef's attr) against its AttrDef.
pub fn validate_attr_value(value: &AttrValue, attr: &AttrDef) -> Result<(), String> {
    attr_value_has_type(value, &attr.r#type)
        .map_err(|m| format!("{m} for attr '{}'", attr.name))?;
    let list = match &value.value {
        Some(Value::List(list)) => Some(list),
        _ => None,
    };
    if attr.has_minimum {
        if attr.r#type == "int" {
            let i = match value.value {
                Some(Value::I(i)) => i,
                _ => 0,
            };
            if i < attr.minimum {
                return Err(format!(
                    "Value for attr '{}' of {i} must be at least minimum {}",
                    attr.name, attr.minimum
                ));
            }
        } else {
            let length = list.map_or(0, |l| match attr.r#type.as_str() {
                "list(string)" => l.s.len(),
                "list(int)" => l.i.len(),
                "list(float)" => l.f.len(),
                "list(bool)" => l.b.len(),
                "list(type)" => l.r#type.len(),
                "list(shape)" => l.shape.len(),
                "list(tensor)" => l.tensor.len(),
                "list(func)" => l.func.len(),
                _ => 0,
            }) as i64;
            let length = if attr.r#type.starts_with("list(") {
                length
            } else {
                -1
            };
            if length < attr.minimum {
                return Err(format!(
                    "Length for attr '{}' of {length} must be at least minimum {}",
                    attr.name, attr.minimum
                ));
            }
        }
    }
    let Some(allowed) = &attr.allowed_values else {
        return Ok(());
    };
    let allowed_list = match &allowed.value {
        Some(Value::List(l)) => l.clone(),
        _ => Default::default(),
    };
    let allowed_types = || {
        allowed_list
            .r#type
            .iter()
            .map(|t| type_name(*t))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let allowed_strings = || {
        allowed_list
            .s
            .iter()
            .map(|s| format!("\"{}\"", String::from_utf8_lossy(s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let type_ok = |dt: i32| {
        if allowed_list.r#type.contains(&dt) {
            Ok(())
        } else {
            Err(format!(
                "Value for attr '{}' of {} is not in the list of allowed values: {}",
                attr.name,
                type_name(dt),
                allowed_types()
            ))
        }
    };
    let string_ok = |s: &[u8]| {
        if allowed_list.s.iter().any(|a| a == s) {
            Ok(())
        } else {
            Err(format!(
                "Value for attr '{}' of \"{}\" is not in the list of allowed values: {}",
                attr.name,
                String::from_utf8_lossy(s),
                allowed_strings()
            ))
        }
    };
    match attr.r#type.as_str() {
        "type" => type_ok(match value.value {
            Some(Value::Type(t)) => t,
            _ => 0,
        }),
        "list(type)" => list.map_or(Ok(()), |l| l.r#type.iter().try_for_each(|t| type_ok(*t))),
        "string" => string_ok(match &value.value {
            Some(Value::S(s)) => s,
            _ => &[],
        }),
        "list(string)" => list.map_or(Ok(()), |l| l.s.iter().try_for_each(|s| string_ok(s))),
        other => Err(format!(
            "Support for allowed_values not implemented for type {other}"
        )),
    }
}
