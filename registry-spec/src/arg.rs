//! `Input`/`Output` specs (`name: [Ref(]type|T|N * T|Tlist[)]`, TF's
//! `FinalizeInputOrOutput`) and control output names.

use opreg_proto::op_def::ArgDef;
use opreg_proto::{DataType, OpDef};

use crate::error::SpecErrorKind as K;
use crate::scanner::{
    Cursor, Failure, is_letter, is_letter_digit_underscore, is_lower, is_lower_digit_underscore,
};
use crate::suggest::nearest;
use crate::type_sets::{data_type_from_string, type_words};

/// Parses one input (or output) spec and appends its ArgDef.
pub(crate) fn parse_arg(spec: &str, is_output: bool, op_def: &mut OpDef) -> Result<(), Failure> {
    let mut arg = ArgDef::default();
    let result = parse_into(spec, &mut arg, op_def);
    let args = if is_output {
        &mut op_def.output_arg
    } else {
        &mut op_def.input_arg
    };
    args.push(arg);
    result?;
    let arg = args.last().expect("just pushed").clone();
    apply_implied_minimums(&arg, op_def);
    if arg.r#type == DataType::DtResource as i32 {
        op_def.is_stateful = true;
    }
    Ok(())
}

fn parse_into(spec: &str, arg: &mut ArgDef, op_def: &OpDef) -> Result<(), Failure> {
    let mut c = Cursor::new(spec);
    // TF's ConsumeInOutName: lowercase letter, then lowercase letters, digits, `_`.
    let name = c
        .name_colon(is_lower, is_lower_digit_underscore)
        .ok_or_else(|| {
            let end = spec.find(':').unwrap_or(spec.len());
            let head = &spec[..end];
            // `CAPS: int32` -> `caps`; only for a single identifier-like word.
            let head = head.trim();
            let hint = (head.chars().any(|ch| ch.is_ascii_uppercase())
                && head.bytes().all(is_letter_digit_underscore))
            .then(|| head.to_ascii_lowercase())
            .filter(|h| h.starts_with(|ch: char| ch.is_ascii_lowercase()));
            Failure::at(K::ArgName, 0..end).suggest(hint)
        })?;
    arg.name = name.to_owned();

    let save = c;
    arg.is_ref = c.eat("Ref") && {
        c.skip_space();
        c.eat("(")
    };
    if arg.is_ref {
        c.skip_space();
    } else {
        c = save;
    }

    let first = c
        .token(is_letter, is_letter_digit_underscore)
        .ok_or_else(|| {
            Failure::at(
                K::ArgType {
                    rest: c.rest().to_owned(),
                },
                c.word_span(),
            )
        })?;
    c.skip_space();
    let mut type_range = first.clone();
    let save = c;
    if c.eat("*") {
        c.skip_space();
        if let Some(second) = c.token(is_letter, is_letter_digit_underscore) {
            c.skip_space();
            arg.number_attr = c.slice(first).to_owned();
            type_range = second;
        } else {
            c = save;
        }
    }
    let type_or_attr = c.slice(type_range.clone());
    if let Some(dt) = data_type_from_string(type_or_attr) {
        arg.r#type = dt as i32;
    } else {
        match op_def.attr.iter().find(|a| a.name == type_or_attr) {
            None => {
                let mut candidates: Vec<&str> = op_def
                    .attr
                    .iter()
                    .filter(|a| a.r#type == "type" || a.r#type == "list(type)")
                    .map(|a| a.name.as_str())
                    .collect();
                for word in type_words() {
                    candidates.push(word);
                }
                return Err(
                    Failure::at(K::UnknownAttr(type_or_attr.to_owned()), type_range)
                        .suggest(nearest(type_or_attr, candidates).map(str::to_owned)),
                );
            }
            Some(attr) if attr.r#type == "type" => arg.type_attr = type_or_attr.to_owned(),
            Some(attr) if attr.r#type == "list(type)" => {
                arg.type_list_attr = type_or_attr.to_owned()
            }
            Some(attr) => {
                return Err(Failure::at(
                    K::NotATypeAttr {
                        name: type_or_attr.to_owned(),
                        attr_type: attr.r#type.clone(),
                    },
                    type_range,
                ));
            }
        }
    }

    if arg.is_ref {
        if !c.eat(")") {
            return Err(Failure::at(
                K::RefClose {
                    rest: c.rest().to_owned(),
                },
                c.word_span(),
            ));
        }
        c.skip_space();
    }
    if !c.is_empty() {
        return Err(Failure::at(
            K::Trailing {
                rest: c.rest().to_owned(),
            },
            c.rest_span(),
        ));
    }
    Ok(())
}

/// TF: an int attr used as a length gets minimum 1; a list(type) attr used
/// as an arg's types gets minimum 1 too (when no minimum was given).
fn apply_implied_minimums(arg: &ArgDef, op_def: &mut OpDef) {
    let (name, wanted_type) = if !arg.number_attr.is_empty() {
        (&arg.number_attr, None)
    } else if !arg.type_list_attr.is_empty() {
        (&arg.type_list_attr, Some("list(type)"))
    } else {
        return;
    };
    if let Some(attr) = op_def.attr.iter_mut().find(|a| &a.name == name)
        && wanted_type.is_none_or(|t| attr.r#type == t)
        && !attr.has_minimum
    {
        attr.has_minimum = true;
        attr.minimum = 1;
    }
}

/// Whether an arg error only repeats the failure of an attr it references
/// (so one bad attr does not also fail every input using it).
pub(crate) fn is_cascade(failure: &Failure, failed_attrs: &[String]) -> bool {
    match &failure.kind {
        K::UnknownAttr(name) | K::NotATypeAttr { name, .. } => {
            failed_attrs.iter().any(|f| f == name)
        }
        _ => false,
    }
}

/// A control output name: TF reads the identifier at the start.
pub(crate) fn parse_control_output(name: &str, op_def: &mut OpDef) -> Result<(), Failure> {
    let mut c = Cursor::new(name);
    match c.token(is_letter, is_letter_digit_underscore) {
        Some(range) => {
            op_def.control_output.push(c.slice(range).to_owned());
            Ok(())
        }
        None => {
            op_def.control_output.push(String::new());
            Err(Failure::at(
                K::ControlOutputName(name.to_owned()),
                0..name.len(),
            ))
        }
    }
}
