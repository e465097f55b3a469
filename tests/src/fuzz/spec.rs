//! The `spec_parser` target: op specs as text, one builder call a line.
//!
//! ```text
//! AddN                    <- the op name (first line)
//! i:inputs: N * T         <- .input(..)
//! o:sum: T                <- .output(..)
//! a:N: int >= 1           <- .attr(..) (also any line without a prefix)
//! c:done                  <- .control_output(..)
//! d:Adds all inputs.      <- .doc(..)
//! f:commutative           <- a flag
//! ```
//!
//! Whatever the text, building must not panic; a spec that builds must
//! pass `validate_op_def` (what registering checks) and re-encode to the
//! same bytes. (Registering itself is left out: registries keep their
//! entries for the life of the process, which LeakSanitizer would report
//! on every input.)

use prost::Message;
use registry_core::spec::{OpSpec, validate_op_def};

/// Renders `spec` in the target's line format (for seeds).
pub fn spec_text(spec: &OpSpec) -> String {
    let mut out = spec.name.clone();
    let lines = [
        ("i:", &spec.inputs),
        ("o:", &spec.outputs),
        ("a:", &spec.attrs),
        ("c:", &spec.control_outputs),
        ("d:", &spec.docs),
    ];
    for (prefix, items) in lines {
        for item in items {
            // Multi-line docs keep their first line only.
            let first = item.lines().next().unwrap_or("");
            out.push('\n');
            out.push_str(prefix);
            out.push_str(first);
        }
    }
    out
}

/// Parses the line format into an OpSpec.
fn parse_lines(text: &str) -> OpSpec {
    let mut lines = text.split('\n');
    let mut spec = OpSpec::new(lines.next().unwrap_or(""));
    for line in lines {
        let (prefix, rest) = match (line.get(..2), line.get(2..)) {
            (Some(prefix), Some(rest)) => (prefix, rest),
            _ => ("", line),
        };
        spec = match prefix {
            "i:" => spec.input(rest),
            "o:" => spec.output(rest),
            "a:" => spec.attr(rest),
            "c:" => spec.control_output(rest),
            "d:" => spec.doc(rest),
            "f:" => match rest {
                "commutative" => spec.commutative(),
                "aggregate" => spec.aggregate(),
                "stateful" => spec.stateful(),
                "allows_uninitialized_input" => spec.allows_uninitialized_input(),
                "distributed_communication" => spec.distributed_communication(),
                _ => spec.deprecated(rest.len() as i32, rest),
            },
            _ => spec.attr(line),
        };
    }
    spec
}

/// The target.
pub fn spec_parser(data: &[u8]) {
    super::setup();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let spec = parse_lines(text);
    let Ok(op_def) = spec.build() else {
        return;
    };
    if let Err(e) = validate_op_def(&op_def) {
        panic!("spec builds but its OpDef does not validate: {e}\nspec: {text:?}");
    }
    let bytes = op_def.encode_to_vec();
    let decoded = registry_core::proto::OpDef::decode(bytes.as_slice())
        .unwrap_or_else(|e| panic!("OpDef does not decode after encoding: {e}\nspec: {text:?}"));
    assert_eq!(
        decoded, op_def,
        "OpDef changed through its encoding\nspec: {text:?}"
    );
}
