//! The exact renderer is the inverse of the parser: for random valid specs
//! (every kind of arg and attr, defaults of every kind, Doc text, flags,
//! deprecation), `build()` succeeds and `op_spec(&op_def).build()` gives the
//! same OpDef, byte for byte. The random specs are written independently of
//! the renderer (other quotes, escapes, float forms, spacing), so a shared
//! mistake cannot hide.

use std::fmt::Write;

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::{AttrValue, DataType, DataTypeExt, OpDef};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use prost::Message;
use registry_spec::render::attr_value;
use registry_spec::{NUMBER_TYPES, OpSpec, QUANTIZED_TYPES, REAL_NUMBER_TYPES, op_spec};

/// The spec names of all types (`float`, `float8_e5m2`, ...), from the enum.
fn type_names() -> impl Iterator<Item = &'static str> {
    (1..100)
        .filter_map(|i| DataType::try_from(i).ok())
        .filter(|dt| !dt.is_ref())
        .map(DataTypeExt::type_name)
}

/// Type names that may stand in a `{...}` set (no `_`), with TF's
/// synonyms.
fn set_types() -> Vec<&'static str> {
    type_names()
        .filter(|name| !name.contains('_'))
        .chain(["float32", "float64", "float16"])
        .collect()
}

/// Type names only an input or output may use (those with `_`).
fn arg_only_types() -> Vec<&'static str> {
    type_names().filter(|name| name.contains('_')).collect()
}

const ALIASES: &[&str] = &[
    "numbertype",
    "numerictype",
    "quantizedtype",
    "realnumbertype",
    "realnumerictype",
];
const WORDS: &[&str] = &[
    "the", "value", "of", "a", "tensor", "Must", "be", "1-D.", "`x`", "(see", "below)", "élan",
    "e.g.", "N", "x_1", "{float}", "'quoted'", "#", "\\n",
];

fn data_type(word: &str) -> DataType {
    match word {
        "float16" => DataType::DtHalf,
        other => DataType::from_type_name(other).expect("a type name"),
    }
}

fn expand(word: &str) -> Vec<DataType> {
    match word {
        "numbertype" | "numerictype" => NUMBER_TYPES.to_vec(),
        "quantizedtype" => QUANTIZED_TYPES.to_vec(),
        "realnumbertype" | "realnumerictype" => REAL_NUMBER_TYPES.to_vec(),
        other => vec![data_type(other)],
    }
}

fn join(items: &[String], sep: &str) -> String {
    items.join(sep)
}

/// A list default as the spec writes it: `[a, b]`, `[]` or `[ ]`.
fn list_text(items: &[String], spaced: bool) -> String {
    if items.is_empty() {
        return if spaced { "[ ]" } else { "[]" }.to_owned();
    }
    format!("[{}]", join(items, if spaced { " , " } else { "," }))
}

/// Test-side string literal, written unlike the renderer does: double
/// quotes, and octal for every byte but letters, digits and spaces.
fn literal(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b == b' ' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "\\{b:03o}");
        }
    }
    out.push('"');
    out
}

fn string_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => select(&b"abcXYZ019 _-'\"\\{}[],=:#>"[..]).prop_map(|b| vec![b]),
        1 => select(&[0u8, 7, b'\n', b'\t', b'\r', 0x1b, 0x7f, 0x80, 0xff][..]).prop_map(|b| vec![b]),
        1 => select(&["é", "€", "\u{2028}", "𝄞"][..]).prop_map(|s| s.as_bytes().to_vec()),
    ];
    vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

/// A float written in one of several forms Rust and TF both read.
fn float_text() -> impl Strategy<Value = (String, bool)> {
    (any::<f32>(), 0..3u8).prop_map(|(f, form)| {
        let text = match form {
            0 => format!("{f}"),
            1 => format!("{f:e}"),
            _ => format!("{f:E}"),
        };
        (text, f.is_nan())
    })
}

fn type_set() -> impl Strategy<Value = (String, Vec<DataType>)> {
    let element = prop_oneof![4 => select(set_types()), 1 => select(ALIASES)];
    (
        vec(element, 1..5),
        select(&[", ", ",", " , "][..]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(words, sep, angle, trailing_comma)| {
            let (open, close) = if angle { ("<", ">") } else { ("{ ", "}") };
            let comma = if trailing_comma { "," } else { "" };
            let items: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
            let text = format!("{open}{}{comma}{close}", join(&items, sep));
            let types = words.iter().flat_map(|w| expand(w)).collect();
            (text, types)
        })
}

/// What an attr can be used for by the args.
#[derive(Debug, Clone, Default)]
struct AttrGen {
    /// The spec after `name: `.
    tail: String,
    is_type: bool,
    count_ok: bool,
    type_list_ok: bool,
    has_nan: bool,
}

fn with_default(tail: String, default: Option<String>) -> String {
    match default {
        Some(d) => format!("{tail} = {d}"),
        None => tail,
    }
}

fn type_attr() -> impl Strategy<Value = AttrGen> {
    let unrestricted = (any::<bool>(), select(set_types())).prop_map(|(with, word)| {
        let default = with.then(|| data_type(word).as_str_name().to_owned());
        ("type".to_owned(), default)
    });
    // Standalone, TF reads only these aliases (`realnumerictype` is a set
    // element only: TF's standalone check spells it `realnumberictype`).
    let standalone = &[
        "numbertype",
        "numerictype",
        "quantizedtype",
        "realnumbertype",
    ][..];
    let alias = (select(standalone), proptest::option::of(any::<Index>())).prop_map(|(a, pick)| {
        let set = expand(a);
        let default = pick.map(|i| i.get(&set).as_str_name().to_owned());
        (a.to_owned(), default)
    });
    let set = (type_set(), proptest::option::of(any::<Index>())).prop_map(|((text, set), pick)| {
        let default = pick.map(|i| i.get(&set).as_str_name().to_owned());
        (text, default)
    });
    prop_oneof![unrestricted, alias, set].prop_map(|(tail, default)| AttrGen {
        tail: with_default(tail, default),
        is_type: true,
        ..AttrGen::default()
    })
}

fn int_attr() -> impl Strategy<Value = AttrGen> {
    let value = prop_oneof![-3..8i64, Just(i64::MIN), Just(i64::MAX), any::<i64>()];
    (
        proptest::option::of(-3..4i64),
        proptest::option::of(value),
        0..4i64,
    )
        .prop_map(|(min, default, offset)| {
            // A default must respect the minimum.
            let default = match (min, default) {
                (Some(m), Some(_)) => Some(m + offset),
                (_, d) => d,
            };
            let mut tail = "int".to_owned();
            if let Some(m) = min {
                let _ = write!(tail, " >= {m}");
            }
            // Used as a length, an int without minimum gets minimum 1.
            let count_ok = match min {
                Some(m) => m >= 0,
                None => default.is_none_or(|d| d >= 1),
            };
            AttrGen {
                tail: with_default(tail, default.map(|d| d.to_string())),
                count_ok,
                ..AttrGen::default()
            }
        })
}

fn list_type_attr() -> impl Strategy<Value = AttrGen> {
    (
        proptest::option::of(type_set()),
        proptest::option::of(0..3usize),
        proptest::option::of(vec(any::<Index>(), 0..4)),
        any::<bool>(),
    )
        .prop_map(|(set, min, default, spaced)| {
            let (inner, allowed) = match set {
                Some((text, types)) => (text, types),
                None => (
                    "type".to_owned(),
                    set_types().into_iter().map(data_type).collect(),
                ),
            };
            let mut tail = format!("list({inner})");
            if let Some(m) = min {
                let _ = write!(tail, " >= {m}");
            }
            let default = default.map(|picks| {
                let mut names: Vec<String> = picks
                    .iter()
                    .map(|i| i.get(&allowed).as_str_name().to_owned())
                    .collect();
                while names.len() < min.unwrap_or(0) {
                    names.push(allowed[0].as_str_name().to_owned());
                }
                names
            });
            let type_list_ok = min.is_some() || default.as_ref().is_none_or(|d| !d.is_empty());
            AttrGen {
                tail: with_default(tail, default.map(|d| list_text(&d, spaced))),
                type_list_ok,
                ..AttrGen::default()
            }
        })
}

fn shape_text() -> impl Strategy<Value = String> {
    let dim =
        (-1..5i64, proptest::option::of(select(&["a", "batch"][..]))).prop_map(|(size, name)| {
            match name {
                Some(n) => format!("dim {{ size: {size} name: '{n}' }}"),
                None => format!("dim {{ size: {size} }}"),
            }
        });
    prop_oneof![
        vec(dim, 0..4).prop_map(|dims| format!("{{ {} }}", dims.join(" "))),
        Just("{ unknown_rank: true }".to_owned()),
        Just("{}".to_owned()),
        Just("<dim <size: 2>>".to_owned()),
    ]
}

fn tensor_text() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        vec(any::<i32>(), 0..3).prop_map(|v| {
            let vals: String = v.iter().map(|i| format!(" int_val: {i}")).collect();
            (
                format!(
                    "{{ dtype: DT_INT32 tensor_shape {{ dim {{ size: {} }} }}{vals} }}",
                    v.len()
                ),
                false,
            )
        }),
        vec(float_text(), 0..3).prop_map(|v| {
            let vals: String = v.iter().map(|(f, _)| format!(" float_val: {f}")).collect();
            let nan = v.iter().any(|(_, n)| *n);
            (
                format!("{{ dtype: DT_FLOAT tensor_shape {{ }}{vals} }}"),
                nan,
            )
        }),
        vec(string_bytes(), 0..3).prop_map(|v| {
            let vals: String = v
                .iter()
                .map(|s| format!(" string_val: {}", literal(s)))
                .collect();
            (format!("{{ dtype: DT_STRING{vals} }}"), false)
        }),
        string_bytes().prop_map(|b| (
            format!("{{ dtype: DT_UINT8 tensor_content: {} }}", literal(&b)),
            false
        )),
        any::<f64>().prop_map(|d| (
            format!("{{ dtype: DT_DOUBLE double_val: {d:e} }}"),
            d.is_nan()
        )),
    ]
}

fn func_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{ name: 'f' }".to_owned()),
        Just("{ name: \"g\" attr { key: 'T' value { type: DT_FLOAT } } }".to_owned()),
        Just("{ name: 'h' attr { key: 'n' value { i: 3 } } attr { key: 'a' value { list { s: ['x'] } } } }".to_owned()),
    ]
}

/// An attr whose default may hold NaNs: `(text, is_nan)`.
fn with_nans(tail: &str, default: Option<(String, bool)>) -> AttrGen {
    AttrGen {
        has_nan: default.as_ref().is_some_and(|(_, nan)| *nan),
        tail: with_default(tail.to_owned(), default.map(|(text, _)| text)),
        ..AttrGen::default()
    }
}

/// A list default of items that may be NaNs, as `with_nans` takes it.
fn nan_list(items: Option<Vec<(String, bool)>>) -> Option<(String, bool)> {
    items.map(|items| {
        let nan = items.iter().any(|(_, n)| *n);
        let texts: Vec<String> = items.into_iter().map(|(t, _)| t).collect();
        (list_text(&texts, false), nan)
    })
}

fn other_attr() -> impl Strategy<Value = AttrGen> {
    let plain = |tail: &str, default: Option<String>| AttrGen {
        tail: with_default(tail.to_owned(), default),
        ..AttrGen::default()
    };
    prop_oneof![
        proptest::option::of(float_text()).prop_map(|f| with_nans("float", f)),
        proptest::option::of(select(&["true", "false", "True", "False", "1", "0"][..]))
            .prop_map(move |b| plain("bool", b.map(str::to_owned))),
        proptest::option::of(string_bytes())
            .prop_map(move |s| plain("string", s.map(|s| literal(&s)))),
        (
            vec(string_bytes(), 1..4),
            proptest::option::of(any::<Index>())
        )
            .prop_map(move |(set, pick)| {
                let items: Vec<String> = set.iter().map(|s| literal(s)).collect();
                let default = pick.map(|i| literal(i.get::<Vec<u8>>(&set)));
                plain(&format!("{{{}}}", items.join(", ")), default)
            }),
        (
            proptest::option::of(0..3usize),
            proptest::option::of(vec(any::<i64>(), 0..4)),
            any::<bool>()
        )
            .prop_map(move |(min, default, spaced)| {
                let tail = match min {
                    Some(m) => format!("list(int) >= {m}"),
                    None => "list(int)".to_owned(),
                };
                let default = default.map(|mut d| {
                    d.resize(d.len().max(min.unwrap_or(0)), 7);
                    let items: Vec<String> = d.iter().map(i64::to_string).collect();
                    list_text(&items, spaced)
                });
                plain(&tail, default)
            }),
        proptest::option::of(vec(float_text(), 0..3))
            .prop_map(|d| with_nans("list(float)", nan_list(d))),
        proptest::option::of(vec(string_bytes(), 0..3)).prop_map(move |d| {
            let default = d.map(|v| {
                let items: Vec<String> = v.iter().map(|s| literal(s)).collect();
                list_text(&items, true)
            });
            plain("list(string)", default)
        }),
        proptest::option::of(vec(any::<bool>(), 0..3)).prop_map(move |d| {
            let default = d.map(|v| {
                let items: Vec<String> = v.iter().map(bool::to_string).collect();
                list_text(&items, false)
            });
            plain("list(bool)", default)
        }),
        proptest::option::of(shape_text()).prop_map(move |s| plain("shape", s)),
        proptest::option::of(vec(shape_text(), 0..3))
            .prop_map(move |d| plain("list(shape)", d.map(|v| list_text(&v, false)))),
        proptest::option::of(tensor_text()).prop_map(|t| with_nans("tensor", t)),
        proptest::option::of(vec(tensor_text(), 0..2))
            .prop_map(|d| with_nans("list(tensor)", nan_list(d))),
        proptest::option::of(func_text()).prop_map(move |f| plain("func", f)),
        proptest::option::of(vec(func_text(), 0..2))
            .prop_map(move |d| plain("list(func)", d.map(|v| list_text(&v, false)))),
    ]
}

fn attr_gen() -> impl Strategy<Value = AttrGen> {
    prop_oneof![
        3 => type_attr(),
        2 => int_attr(),
        1 => list_type_attr(),
        4 => other_attr(),
    ]
}

/// An input or output: which form it takes and which attrs it picks (the
/// form falls back to a fixed type when no attr fits).
#[derive(Debug, Clone)]
struct ArgGen {
    form: u8,
    count: Index,
    ty: Index,
    fixed: &'static str,
    is_ref: bool,
    spaced: bool,
}

fn arg_gen() -> impl Strategy<Value = ArgGen> {
    let fixed = prop_oneof![4 => select(set_types()), 1 => select(arg_only_types())];
    (
        0..5u8,
        any::<Index>(),
        any::<Index>(),
        fixed,
        prop::bool::weighted(0.2),
        any::<bool>(),
    )
        .prop_map(|(form, count, ty, fixed, is_ref, spaced)| ArgGen {
            form,
            count,
            ty,
            fixed,
            is_ref,
            spaced,
        })
}

/// Doc text: summary, description lines, and `name: text` blocks for
/// names picked among the op's args and attrs.
#[derive(Debug, Clone)]
struct DocGen {
    summary: Vec<&'static str>,
    description: Vec<Vec<&'static str>>,
    described: Vec<Described>,
}

/// One `name: text` block: which name, its first line, and its later lines
/// with their indentation.
#[derive(Debug, Clone)]
struct Described {
    name: Index,
    first: Vec<&'static str>,
    more: Vec<(usize, Vec<&'static str>)>,
}

fn words(range: std::ops::Range<usize>) -> impl Strategy<Value = Vec<&'static str>> {
    vec(select(WORDS), range)
}

fn doc_gen() -> impl Strategy<Value = DocGen> {
    (
        words(1..5),
        vec(words(0..4), 0..4),
        vec(
            (
                any::<Index>(),
                words(0..4),
                vec((1..5usize, words(0..3)), 0..3),
            )
                .prop_map(|(name, first, more)| Described { name, first, more }),
            0..4,
        ),
    )
        .prop_map(|(summary, description, described)| DocGen {
            summary,
            description,
            described,
        })
}

fn doc_text(doc: &DocGen, names: &[String]) -> String {
    let mut text = format!("\n{}\n\n", doc.summary.join(" "));
    for line in &doc.description {
        // A description line must not read as `name:`; none of WORDS ends in `:`.
        let _ = writeln!(text, "{}", line.join(" "));
    }
    if names.is_empty() {
        return text;
    }
    for block in &doc.described {
        let _ = writeln!(text, "{}: {}", block.name.get(names), block.first.join(" "));
        for (indent, line) in &block.more {
            let _ = writeln!(text, "{}{}", " ".repeat(*indent), line.join(" "));
        }
    }
    text
}

#[derive(Debug, Clone)]
struct OpGen {
    name: String,
    attrs: Vec<(&'static str, AttrGen)>,
    inputs: Vec<(&'static str, ArgGen)>,
    outputs: Vec<(&'static str, ArgGen)>,
    control_outputs: Vec<&'static str>,
    flags: [bool; 5],
    deprecation: Option<(i32, Vec<u8>)>,
    doc: Option<DocGen>,
}

fn op_name() -> impl Strategy<Value = String> {
    let segment = (
        select(&["A", "Abs", "MatMul", "Z", "Op"][..]),
        vec(select(&['a', 'Z', '0', '9', '_'][..]), 0..4),
    )
        .prop_map(|(head, rest)| format!("{head}{}", rest.into_iter().collect::<String>()));
    prop_oneof![
        3 => segment.clone(),
        1 => segment.clone().prop_map(|s| format!("_{s}")),
        1 => (segment.clone(), segment).prop_map(|(ns, s)| format!("{ns}>{s}")),
    ]
}

fn op_gen() -> impl Strategy<Value = OpGen> {
    let attr_names = select(&["T", "N", "Tidx", "alpha", "dtype", "Tlist", "out_type", "k"][..]);
    let in_names = select(&["x", "y", "input", "values", "ref", "handle"][..]);
    let out_names = select(&["z", "output", "sum", "out"][..]);
    (
        op_name(),
        vec((attr_names, attr_gen()), 0..6),
        vec((in_names, arg_gen()), 0..5),
        vec((out_names, arg_gen()), 0..5),
        vec(select(&["side", "c0", "Ctl"][..]), 0..3),
        any::<[bool; 5]>(),
        proptest::option::of((any::<i32>(), string_bytes())),
        proptest::option::of(doc_gen()),
    )
        .prop_map(
            |(name, attrs, inputs, outputs, control_outputs, flags, deprecation, doc)| OpGen {
                name,
                attrs,
                inputs,
                outputs,
                control_outputs,
                flags,
                deprecation,
                doc,
            },
        )
}

/// The spec of a generated op, and whether any value in it is a NaN (so
/// only bytes, not `==`, can show equality).
fn spec_of(op: &OpGen) -> (OpSpec, bool) {
    let mut spec = OpSpec::new(op.name.clone());
    let mut names = Vec::new();
    let attr_names: Vec<String> = op
        .attrs
        .iter()
        .enumerate()
        .map(|(i, (base, _))| format!("{base}{i}"))
        .collect();
    for ((_, attr), name) in op.attrs.iter().zip(&attr_names) {
        spec = spec.attr(format!("{name}: {}", attr.tail));
        names.push(name.clone());
    }
    let pick = |ok: fn(&AttrGen) -> bool, index: &Index| -> Option<String> {
        let fitting: Vec<&String> = op
            .attrs
            .iter()
            .zip(&attr_names)
            .filter(|((_, a), _)| ok(a))
            .map(|(_, n)| n)
            .collect();
        (!fitting.is_empty()).then(|| index.get(&fitting).to_string())
    };
    let arg = |name: &str, a: &ArgGen| -> String {
        let star = if a.spaced { " * " } else { "*" };
        let type_attr = pick(|g| g.is_type, &a.ty);
        let count = pick(|g| g.count_ok, &a.count);
        let type_list = pick(|g| g.type_list_ok, &a.ty);
        let ty = match (a.form, type_attr, count, type_list) {
            (1, Some(t), _, _) => t,
            (2, Some(t), Some(n), _) => format!("{n}{star}{t}"),
            (3, _, Some(n), _) => format!("{n}{star}{}", a.fixed),
            (4, _, _, Some(l)) => l,
            _ => a.fixed.to_owned(),
        };
        if a.is_ref {
            format!("{name}: Ref( {ty} )")
        } else {
            format!("{name} : {ty}")
        }
    };
    for (i, (base, a)) in op.inputs.iter().enumerate() {
        let name = format!("{base}_{i}");
        spec = spec.input(arg(&name, a));
        names.push(name);
    }
    for (i, (base, a)) in op.outputs.iter().enumerate() {
        let name = format!("{base}_{}", 10 + i);
        spec = spec.output(arg(&name, a));
        names.push(name);
    }
    for c in &op.control_outputs {
        spec = spec.control_output(*c);
    }
    let [commutative, aggregate, stateful, uninitialized, distributed] = op.flags;
    spec.flags.commutative = commutative;
    spec.flags.aggregate = aggregate;
    spec.flags.stateful = stateful;
    spec.flags.allows_uninitialized_input = uninitialized;
    spec.flags.distributed_communication = distributed;
    if let Some((version, explanation)) = &op.deprecation {
        spec = spec.deprecated(*version, String::from_utf8_lossy(explanation));
    }
    if let Some(doc) = &op.doc {
        spec = spec.doc(doc_text(doc, &names));
    }
    let has_nan = op.attrs.iter().any(|(_, a)| a.has_nan);
    (spec, has_nan)
}

fn assert_round_trips(op_def: &OpDef, compare_values: bool) -> Result<(), TestCaseError> {
    let rendered = op_spec(op_def);
    let again = rendered
        .build()
        .map_err(|e| TestCaseError::fail(format!("rendered spec {rendered:?} fails: {e}")))?;
    prop_assert_eq!(
        again.encode_to_vec(),
        op_def.encode_to_vec(),
        "rendered as {:?}",
        rendered
    );
    if compare_values {
        prop_assert_eq!(&again, op_def);
    }
    Ok(())
}

proptest! {
    // No regression files in the source tree.
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_valid_specs_round_trip(op in op_gen()) {
        let (spec, has_nan) = spec_of(&op);
        let op_def = match spec.build() {
            Ok(op_def) => op_def,
            Err(e) => return Err(TestCaseError::fail(format!("generated spec {spec:?} fails: {e}"))),
        };
        assert_round_trips(&op_def, !has_nan)?;
    }

    #[test]
    fn any_string_default_round_trips(bytes in vec(any::<u8>(), 0..24)) {
        let value = AttrValue { value: Some(Value::S(bytes.clone())) };
        let op_def = OpSpec::new("S")
            .attr(format!("s: string = {}", attr_value(&value)))
            .attr(format!("t: {{{}}}", attr_value(&value)))
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(op_def.attr[0].default_value.as_ref(), Some(&value));
        assert_round_trips(&op_def, true)?;
    }

    #[test]
    fn any_float_keeps_its_bits(bits in any::<u32>(), more in vec(any::<u32>(), 0..4)) {
        // The parser makes only the two plain NaNs; payloads cannot be written.
        let plain = |b: u32| {
            let f = f32::from_bits(b);
            if f.is_nan() { f32::NAN.copysign(f) } else { f }
        };
        let f = plain(bits);
        let list: Vec<f32> = more.into_iter().map(plain).collect();
        let scalar = AttrValue { value: Some(Value::F(f)) };
        let floats = AttrValue {
            value: Some(Value::List(ListValue { f: list.clone(), ..ListValue::default() })),
        };
        let op_def = OpSpec::new("F")
            .attr(format!("f: float = {}", attr_value(&scalar)))
            .attr(format!("g: list(float) = {}", attr_value(&floats)))
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Some(Some(Value::F(back))) = op_def.attr[0].default_value.as_ref().map(|v| &v.value) else {
            return Err(TestCaseError::fail("no float default"));
        };
        prop_assert_eq!(back.to_bits(), f.to_bits());
        assert_round_trips(&op_def, false)?;
    }
}

/// Tensor defaults go through the shared protobuf text printer, which writes
/// NaN as Python does (`nan`, no sign): a `-nan` inside a tensor default
/// comes back as `nan`. Scalar and list float defaults keep the sign.
#[test]
fn negative_nan_inside_a_tensor_loses_its_sign() {
    let op_def = OpSpec::new("N")
        .attr("t: tensor = { dtype: DT_FLOAT float_val: -nan }")
        .attr("f: list(float) = [-nan]")
        .build()
        .unwrap();
    let again = op_spec(&op_def).build().unwrap();
    let Some(Value::Tensor(t)) = &again.attr[0].default_value.as_ref().unwrap().value else {
        panic!("a tensor default")
    };
    assert!(t.float_val[0].is_nan() && t.float_val[0].is_sign_positive());
    let Some(Value::List(l)) = &again.attr[1].default_value.as_ref().unwrap().value else {
        panic!("a list default")
    };
    assert!(l.f[0].is_nan() && l.f[0].is_sign_negative());
}
