//! `opreg ops show`: one op, for people.

use std::fmt::Write;

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::op_def::{ArgDef, AttrDef};
use opreg_proto::{AttrValue, DataType, DataTypeExt, TensorShapeProto};
use registry_core::registry::{OpOrigin, OpRegistrationData};

/// The op as readable text: summary and description, inputs and outputs with
/// their types, attrs with constraints and defaults, flags, deprecation and
/// where it was declared.
pub(crate) fn render(data: &OpRegistrationData) -> String {
    let op = data.op_def();
    let mut out = String::new();
    let _ = writeln!(out, "{}", op.name);
    if !op.summary.is_empty() {
        let _ = writeln!(out, "  {}", op.summary);
    }
    if !op.description.is_empty() {
        out.push('\n');
        push_indented(&mut out, &op.description, "  ");
    }
    section(&mut out, "Inputs", &op.input_arg, |arg| {
        (format!("{}: {}", arg.name, arg_type(arg)), &arg.description)
    });
    section(&mut out, "Outputs", &op.output_arg, |arg| {
        (format!("{}: {}", arg.name, arg_type(arg)), &arg.description)
    });
    section(&mut out, "Attrs", &op.attr, |attr| {
        (
            format!("{}: {}", attr.name, attr_spec(attr)),
            &attr.description,
        )
    });
    if !op.control_output.is_empty() {
        let _ = writeln!(out, "\nControl outputs: {}", op.control_output.join(", "));
    }
    let flags: Vec<&str> = [
        (op.is_commutative, "commutative"),
        (op.is_aggregate, "aggregate"),
        (op.is_stateful, "stateful"),
        (op.allows_uninitialized_input, "allows uninitialized input"),
        (op.is_distributed_communication, "distributed communication"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    if !flags.is_empty() {
        let _ = writeln!(out, "\nFlags: {}", flags.join(", "));
    }
    if let Some(deprecation) = &op.deprecation {
        let _ = writeln!(
            out,
            "\nDeprecated since GraphDef version {}: {}",
            deprecation.version, deprecation.explanation
        );
    }
    let _ = writeln!(
        out,
        "\nShape function: {}",
        if data.shape_fn().is_some() {
            "yes"
        } else {
            "none"
        }
    );
    let origin = match data.origin() {
        OpOrigin::Source(location) => format!("declared at {location}"),
        other => other.to_string(),
    };
    let _ = writeln!(out, "Origin: {origin}");
    out
}

fn section<T>(out: &mut String, title: &str, items: &[T], line: impl Fn(&T) -> (String, &String)) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    for item in items {
        let (head, description) = line(item);
        let _ = writeln!(out, "  {head}");
        if !description.is_empty() {
            push_indented(out, description, "      ");
        }
    }
}

fn push_indented(out: &mut String, text: &str, indent: &str) {
    for line in text.lines() {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{indent}{line}");
        }
    }
}

fn type_name(dtype: i32) -> String {
    match DataType::try_from(dtype) {
        Ok(dtype) => dtype.type_name().to_owned(),
        Err(_) => format!("<unknown type {dtype}>"),
    }
}

/// An input or output type in spec syntax: `float`, `T`, `N * T`, `Tlist`,
/// `Ref(T)`.
pub(crate) fn arg_type(arg: &ArgDef) -> String {
    let base = if !arg.type_list_attr.is_empty() {
        arg.type_list_attr.clone()
    } else {
        let element = if arg.type_attr.is_empty() {
            type_name(arg.r#type)
        } else {
            arg.type_attr.clone()
        };
        if arg.number_attr.is_empty() {
            element
        } else {
            format!("{} * {element}", arg.number_attr)
        }
    };
    if arg.is_ref {
        format!("Ref({base})")
    } else {
        base
    }
}

/// An attr in spec syntax: `type`, `{float, int32}`, `int >= 1`,
/// `{'SAME', 'VALID'}`, followed by ` = default`.
pub(crate) fn attr_spec(attr: &AttrDef) -> String {
    let allowed = attr.allowed_values.as_ref().and_then(|v| match &v.value {
        Some(Value::List(list)) => allowed_set(list),
        _ => None,
    });
    let mut spec = match allowed {
        Some(set) if attr.r#type.starts_with("list(") => format!("list({set})"),
        Some(set) => set,
        None => attr.r#type.clone(),
    };
    if attr.has_minimum {
        let _ = write!(spec, " >= {}", attr.minimum);
    }
    if let Some(default) = &attr.default_value {
        let _ = write!(spec, " = {}", attr_value(default));
    }
    spec
}

fn allowed_set(list: &ListValue) -> Option<String> {
    let items: Vec<String> = if !list.r#type.is_empty() {
        list.r#type.iter().map(|&t| type_name(t)).collect()
    } else if !list.s.is_empty() {
        list.s.iter().map(|s| quote(s)).collect()
    } else {
        return None;
    };
    Some(format!("{{{}}}", items.join(", ")))
}

fn quote(bytes: &[u8]) -> String {
    format!("'{}'", String::from_utf8_lossy(bytes).escape_default())
}

/// An attr value as the spec language writes defaults.
pub(crate) fn attr_value(value: &AttrValue) -> String {
    match &value.value {
        None => "<none>".to_owned(),
        Some(Value::S(s)) => quote(s),
        Some(Value::I(i)) => i.to_string(),
        Some(Value::F(f)) => float(*f),
        Some(Value::B(b)) => b.to_string(),
        Some(Value::Type(t)) => type_name(*t),
        Some(Value::Shape(shape)) => shape_text(shape),
        Some(Value::Tensor(tensor)) => format!("<{} tensor>", type_name(tensor.dtype)),
        Some(Value::Placeholder(name)) => format!("${name}"),
        Some(Value::Func(func)) => func.name.clone(),
        Some(Value::List(list)) => {
            let items: Vec<String> = list
                .s
                .iter()
                .map(|s| quote(s))
                .chain(list.i.iter().map(i64::to_string))
                .chain(list.f.iter().map(|f| float(*f)))
                .chain(list.b.iter().map(bool::to_string))
                .chain(list.r#type.iter().map(|&t| type_name(t)))
                .chain(list.shape.iter().map(shape_text))
                .chain(
                    list.tensor
                        .iter()
                        .map(|t| format!("<{} tensor>", type_name(t.dtype))),
                )
                .chain(list.func.iter().map(|f| f.name.clone()))
                .collect();
            format!("[{}]", items.join(", "))
        }
    }
}

fn float(f: f32) -> String {
    let text = f.to_string();
    if f.is_finite() && !text.contains(['.', 'e']) {
        format!("{text}.0")
    } else {
        text
    }
}

fn shape_text(shape: &TensorShapeProto) -> String {
    if shape.unknown_rank {
        return "<unknown>".to_owned();
    }
    let dims: Vec<String> = shape
        .dim
        .iter()
        .map(|d| {
            if d.size < 0 {
                "?".to_owned()
            } else {
                d.size.to_string()
            }
        })
        .collect();
    format!("[{}]", dims.join(","))
}

#[cfg(test)]
mod tests {
    use registry_core::registry::OpRegistry;
    use registry_core::spec::OpSpec;

    #[test]
    fn renders_args_attrs_flags_and_docs() {
        let registry = OpRegistry::new();
        let spec = OpSpec::new("Demo")
            .input("values: N * T")
            .input("ref: Ref(float)")
            .input("mixed: Tlist")
            .output("out: T")
            .attr("T: {float, int32} = DT_FLOAT")
            .attr("N: int >= 2")
            .attr("Tlist: list(type) >= 0")
            .attr("padding: {'SAME', 'VALID'} = 'SAME'")
            .attr("dims: list(int) = [1, 2]")
            .attr("alpha: float = 0.5")
            .attr("shape: shape = { dim { size: -1 } dim { size: 3 } }")
            .doc("Does a demo.\n\nA longer description.\n\nvalues: the values.\nalpha: a factor.")
            .commutative()
            .stateful()
            .deprecated(12, "Use Other.");
        registry.register(spec, None).unwrap();
        let text = super::render(registry.look_up("Demo").unwrap());
        for expected in [
            "Demo\n  Does a demo.\n\n  A longer description.\n",
            "Inputs:\n  values: N * T\n      the values.\n  ref: Ref(float)\n  mixed: Tlist\n",
            "Outputs:\n  out: T\n",
            "  T: {float, int32} = float\n",
            "  N: int >= 2\n",
            "  Tlist: list(type) >= 0\n",
            "  padding: {'SAME', 'VALID'} = 'SAME'\n",
            "  dims: list(int) = [1, 2]\n",
            "  alpha: float = 0.5\n      a factor.\n",
            "  shape: shape = [?,3]\n",
            "Flags: commutative, stateful\n",
            "Deprecated since GraphDef version 12: Use Other.\n",
            "Shape function: none\n",
            "Origin: registered at run time at cli/src/show.rs:",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
        }
    }
}
