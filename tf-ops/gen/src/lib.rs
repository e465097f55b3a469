//! The generator of `tf-registry-ops`: turns the cases of
//! `conformance/tf_registry_2_21.json` (every op of TensorFlow 2.21's registry
//! that spec strings can express) into one `#[op(...)]` struct per op.
//!
//! The binary (`cargo run -p tf-registry-ops-gen`) writes
//! `tf-ops/src/generated.rs`; `tf-registry-ops`' tests call [`generate`] and
//! fail when the checked-in file differs from its output.
//!
//! ```
//! let json = r#"[{"name": "Namespace>Op", "inputs": ["x: T"], "outputs": ["y: T"],
//!     "attrs": ["T: type"], "flags": ["stateful"], "control_outputs": [],
//!     "deprecated": {"version": 8, "explanation": "Use \"Other\"."}}]"#;
//! let code = tf_registry_ops_gen::generate(json, &[]).unwrap();
//! assert!(code.contains("#[op(\n    name = \"Namespace>Op\",\n    input = \"x: T\",\n"));
//! assert!(code.contains("    deprecated(version = 8, explanation = \"Use \\\"Other\\\".\")\n)]"));
//! assert!(code.contains("pub struct Namespace_Op;"));
//! // An op declared elsewhere (the standard op set) is left out.
//! let code = tf_registry_ops_gen::generate(json, &["Namespace>Op"]).unwrap();
//! assert!(!code.contains("pub struct"));
//! ```

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

/// The flags a case may carry, in the order they are written (the `#[op]`
/// keyword of each is its JSON name).
const FLAGS: &[&str] = &[
    "commutative",
    "aggregate",
    "stateful",
    "allows_uninitialized_input",
];

/// Names of the standard prelude (and registry-core's `Op` trait) that a
/// struct must not take: the crate re-exports every struct at its root, and a
/// unit struct `None` or `Send` would shadow the prelude item in any code that
/// glob-imports it (`use tf_registry_ops::*;`). Ops with these names get a
/// trailing `_` (`Copy` -> `Copy_`; `CopyOp` is another op).
const RESERVED: &[&str] = &[
    "AsMut",
    "AsRef",
    "Box",
    "Clone",
    "Copy",
    "Default",
    "Drop",
    "Eq",
    "Err",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Into",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Op",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// The shared data directory: `$OPREG_SHARED_DIR`, else `shared/` beside the
/// checkout (as the other crates' tests find it).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// The input: `conformance/tf_registry_2_21.json` in [`shared_dir`].
pub fn registry_json_path() -> PathBuf {
    shared_dir().join("conformance/tf_registry_2_21.json")
}

/// The output: `tf-ops/src/generated.rs`.
pub fn generated_rs_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../src/generated.rs")
}

/// The Rust struct name of op `op_name`: the op name where it is a plain
/// Rust identifier, `>` (TF's namespace separator) replaced by `_`, and `_`
/// appended to names of the standard prelude (and `Op`), which a unit struct
/// would shadow for code that glob-imports the crate.
///
/// ```
/// use tf_registry_ops_gen::struct_name;
/// assert_eq!(struct_name("Namespace>TestStringOutput"), "Namespace_TestStringOutput");
/// assert_eq!(struct_name("None"), "None_");
/// assert_eq!(struct_name("_Arg"), "_Arg");
/// ```
pub fn struct_name(op_name: &str) -> String {
    let ident: String = op_name
        .chars()
        .map(|c| if c == '>' { '_' } else { c })
        .collect();
    if RESERVED.contains(&ident.as_str()) {
        format!("{ident}_")
    } else {
        ident
    }
}

fn field<'a>(case: &'a Value, key: &str, index: usize) -> Result<&'a Value, String> {
    case.get(key)
        .ok_or_else(|| format!("case {index}: no `{key}`"))
}

fn strings<'a>(case: &'a Value, key: &str, index: usize) -> Result<Vec<&'a str>, String> {
    field(case, key, index)?
        .as_array()
        .ok_or_else(|| format!("case {index}: `{key}` is not an array"))?
        .iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| format!("case {index}: `{key}` holds a non-string"))
        })
        .collect()
}

/// A Rust string literal holding `s`.
fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// Generates `generated.rs` from the JSON array of cases, less the ops
/// named in `declared_elsewhere` (the standard op set, which
/// `opreg-standard-ops` declares, with shape functions, and this crate
/// re-exports: every op is declared once).
///
/// Every other case becomes `#[op(name = ..., input = ..., output = ..., attr =
/// ..., control_output = ..., flags, deprecated(...))] pub struct ...;` with
/// the specs in the case's order. Fails on malformed JSON, an unknown flag, a
/// case that does not expect an OpDef, or two ops mapping to one struct name.
pub fn generate(json: &str, declared_elsewhere: &[&str]) -> Result<String, String> {
    let cases: Value = serde_json::from_str(json).map_err(|e| format!("bad JSON: {e}"))?;
    let cases = cases
        .as_array()
        .ok_or("the JSON is not an array of cases")?;
    let mut out = String::from(
        "// @generated by tf-registry-ops-gen (tf-ops/gen) from\n\
         // conformance/tf_registry_2_21.json. Do not edit: run\n\
         // `cargo run -p tf-registry-ops-gen` instead.\n\
         \n\
         //! Every op of TensorFlow 2.21's registry that spec strings express, one\n\
         //! `#[op]` struct each, named like the op (see the crate docs for the\n\
         //! exceptions), except the standard op set, declared by\n\
         //! `opreg-standard-ops` and re-exported by the crate. They carry no doc\n\
         //! comments: the doc comment of an op is its TF Doc text, and TF's\n\
         //! registry has none.\n\
         \n\
         #![allow(missing_docs, non_camel_case_types, clippy::upper_case_acronyms)]\n\
         \n\
         use registry_core::op;\n",
    );
    let mut seen = HashSet::new();
    for (index, case) in cases.iter().enumerate() {
        let name = field(case, "name", index)?
            .as_str()
            .ok_or_else(|| format!("case {index}: `name` is not a string"))?;
        if case
            .get("expect")
            .is_some_and(|e| e.get("op_def_pb_b64").is_none())
        {
            return Err(format!("case {index} ({name}): does not expect an OpDef"));
        }
        if declared_elsewhere.contains(&name) {
            continue;
        }
        let ident = struct_name(name);
        if !seen.insert(ident.clone()) {
            return Err(format!(
                "case {index} ({name}): struct name {ident} is taken"
            ));
        }
        let mut args = vec![format!("name = {}", lit(name))];
        for (key, arg) in [
            ("inputs", "input"),
            ("outputs", "output"),
            ("attrs", "attr"),
            ("control_outputs", "control_output"),
        ] {
            for spec in strings(case, key, index)? {
                args.push(format!("{arg} = {}", lit(spec)));
            }
        }
        let flags = strings(case, "flags", index)?;
        if let Some(unknown) = flags.iter().find(|f| !FLAGS.contains(f)) {
            return Err(format!("case {index} ({name}): unknown flag {unknown:?}"));
        }
        args.extend(
            FLAGS
                .iter()
                .filter(|f| flags.contains(f))
                .map(|f| f.to_string()),
        );
        match field(case, "deprecated", index)? {
            Value::Null => {}
            dep => {
                let version = dep.get("version").and_then(Value::as_i64);
                let explanation = dep.get("explanation").and_then(Value::as_str);
                let (Some(version), Some(explanation)) = (version, explanation) else {
                    return Err(format!("case {index} ({name}): malformed `deprecated`"));
                };
                args.push(format!(
                    "deprecated(version = {version}, explanation = {})",
                    lit(explanation)
                ));
            }
        }
        let _ = write!(
            out,
            "\n#[op(\n    {}\n)]\npub struct {ident};\n",
            args.join(",\n    ")
        );
    }
    Ok(out)
}
