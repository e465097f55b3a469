//! `opreg ops show`: one op, for people.

use std::fmt::Write;

use opreg_proto::attr_value::Value;
use opreg_proto::op_def::AttrDef;
use opreg_proto::{AttrValue, DataType, DataTypeExt};
use registry_core::attr::summarize_shape;
use registry_core::registry::{OpOrigin, OpRegistrationData};
use registry_core::spec::render as exact;

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
        (exact::arg_spec(arg), &arg.description)
    });
    section(&mut out, "Outputs", &op.output_arg, |arg| {
        (exact::arg_spec(arg), &arg.description)
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

/// An attr in spec syntax (`{float, int32}`, `int >= 1`,
/// `{'SAME', 'VALID'}`, as the exact spec renderer writes it), followed by
/// ` = default` in the readable form of [`attr_value`].
fn attr_spec(attr: &AttrDef) -> String {
    let mut spec = exact::attr_type(attr);
    if let Some(default) = &attr.default_value {
        let _ = write!(spec, " = {}", attr_value(default));
    }
    spec
}

/// An attr value for people: strings, numbers and bools as the spec
/// language writes them (they read well as they are); types by their short
/// names (`float`), shapes as `[?,3]`, tensors as `<float tensor>`,
/// functions by name.
fn attr_value(value: &AttrValue) -> String {
    match &value.value {
        None => "<none>".to_owned(),
        Some(Value::Type(t)) => type_name(*t),
        Some(Value::Shape(shape)) => summarize_shape(shape),
        Some(Value::Tensor(tensor)) => format!("<{} tensor>", type_name(tensor.dtype)),
        Some(Value::Placeholder(name)) => format!("${name}"),
        Some(Value::Func(func)) => func.name.clone(),
        Some(Value::List(list)) => {
            let items: Vec<String> = exact::list_items(list).iter().map(attr_value).collect();
            format!("[{}]", items.join(", "))
        }
        Some(Value::S(_) | Value::I(_) | Value::F(_) | Value::B(_)) => exact::attr_value(value),
    }
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
