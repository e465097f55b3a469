//! TensorFlow's answers at extreme magnitudes (`tests/data/tf-numerics/
//! extremes.json`, made by `scripts/tf-oracle/numerics.py` with TF 2.21 on
//! CPU): each case one op on constant inputs given as bits, and TF's output
//! bits. [`run_case`] runs a case through opreg's [`Session`] and
//! [`compare`] says where the bits differ beyond the op's tolerance.

use std::collections::BTreeMap;
use std::path::PathBuf;

use opreg_runtime::{Graph, Session, SessionOptions};
use registry_core::proto::{
    AttrValue, DataType, DataTypeExt, GraphDef, NodeDef, TensorProto, TensorShapeProto, attr_value,
    tensor_shape_proto,
};
use registry_core::tensor::Tensor;
use serde_json::Value;

/// The cases file: in `$OPREG_TESTS_DATA_DIR` when set (a test binary run
/// on another machine), else in this crate's `data` folder.
pub fn extremes_path() -> PathBuf {
    std::env::var_os("OPREG_TESTS_DATA_DIR")
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data"),
            PathBuf::from,
        )
        .join("tf-numerics/extremes.json")
}

/// One op on constant inputs and TF's answer.
#[derive(Debug, Clone)]
pub struct Case {
    /// The op.
    pub op: String,
    /// The element type of its float inputs (`float`, `double`, `half`,
    /// `bfloat16`).
    pub t: DataType,
    /// Extra attrs (`DstT` of Cast, `keep_dims` of reductions).
    pub attrs: BTreeMap<String, AttrValue>,
    /// The inputs.
    pub inputs: Vec<Tensor>,
    /// The reduction axes, for Sum/Mean/Max.
    pub axis: Option<Vec<i32>>,
    /// TF's output.
    pub expected: Tensor,
}

impl Case {
    /// `op[T]` (and `->DstT` for Cast), for messages.
    pub fn label(&self) -> String {
        match self.attrs.get("DstT").and_then(|v| match v.value {
            Some(attr_value::Value::Type(t)) => DataType::try_from(t).ok(),
            _ => None,
        }) {
            Some(dst) => format!("{}[{}->{}]", self.op, self.t.type_name(), dst.type_name()),
            None => format!("{}[{}]", self.op, self.t.type_name()),
        }
    }
}

fn dtype_of(name: &str) -> Result<DataType, String> {
    let name = match name {
        "float32" => "float",
        "float64" => "double",
        "float16" => "half",
        other => other,
    };
    DataType::from_type_name(name).map_err(|e| e.to_string())
}

/// A tensor from its JSON form: `dtype` (numpy's name), `shape`, and
/// `bits` (each element's little-endian bits in hex).
pub fn tensor_of(v: &Value) -> Result<Tensor, String> {
    let dtype = dtype_of(v["dtype"].as_str().ok_or("no dtype")?)?;
    let shape: Vec<i64> = v["shape"]
        .as_array()
        .ok_or("no shape")?
        .iter()
        .map(|d| d.as_i64().ok_or("bad dim"))
        .collect::<Result<_, _>>()?;
    let mut content = Vec::new();
    for hex in v["bits"].as_array().ok_or("no bits")? {
        let hex = hex.as_str().ok_or("bits are hex strings")?;
        let bits = u128::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
        // Little-endian, as wide as the hex says (up to 16 bytes: complex128).
        content.extend_from_slice(&bits.to_le_bytes()[..hex.len() / 2]);
    }
    let proto = TensorProto {
        dtype: dtype as i32,
        tensor_shape: Some(shape_proto(&shape)),
        tensor_content: content,
        ..Default::default()
    };
    Tensor::from_proto(&proto).map_err(|e| e.to_string())
}

fn shape_proto(dims: &[i64]) -> TensorShapeProto {
    TensorShapeProto {
        dim: dims
            .iter()
            .map(|&size| tensor_shape_proto::Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    }
}

/// Reads every case of the file.
pub fn load_cases() -> Result<Vec<Case>, String> {
    let path = extremes_path();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let root: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut cases = Vec::new();
    for c in root["cases"].as_array().ok_or("no cases")? {
        let Some(output) = c.get("output").filter(|o| !o.is_null()) else {
            continue;
        };
        let mut attrs = BTreeMap::new();
        if let Some(map) = c["attrs"].as_object() {
            for (k, v) in map {
                let value = match v {
                    Value::Bool(b) => attr_value::Value::B(*b),
                    Value::String(s) => attr_value::Value::Type(dtype_of(s)? as i32),
                    other => return Err(format!("attr {k}: {other}")),
                };
                attrs.insert(k.clone(), AttrValue { value: Some(value) });
            }
        }
        cases.push(Case {
            op: c["op"].as_str().ok_or("no op")?.to_owned(),
            t: dtype_of(c["T"].as_str().ok_or("no T")?)?,
            attrs,
            inputs: c["inputs"]
                .as_array()
                .ok_or("no inputs")?
                .iter()
                .map(tensor_of)
                .collect::<Result<_, _>>()?,
            axis: c["axis"].as_array().map(|a| {
                a.iter()
                    .filter_map(|v| v.as_i64().map(|i| i as i32))
                    .collect()
            }),
            expected: tensor_of(output)?,
        });
    }
    Ok(cases)
}

fn attr(value: attr_value::Value) -> AttrValue {
    AttrValue { value: Some(value) }
}

fn constant(name: &str, tensor: &Tensor) -> NodeDef {
    NodeDef {
        name: name.to_owned(),
        op: "Const".to_owned(),
        attr: BTreeMap::from([
            (
                "dtype".to_owned(),
                attr(attr_value::Value::Type(tensor.dtype() as i32)),
            ),
            (
                "value".to_owned(),
                attr(attr_value::Value::Tensor(tensor.to_proto())),
            ),
        ]),
        ..Default::default()
    }
}

/// The case as a GraphDef: a Const per input (and the axes), the op as `y`.
pub fn graph_def(case: &Case) -> GraphDef {
    let mut nodes: Vec<NodeDef> = case
        .inputs
        .iter()
        .enumerate()
        .map(|(i, t)| constant(&format!("x{i}"), t))
        .collect();
    let mut op = NodeDef {
        name: "y".to_owned(),
        op: case.op.clone(),
        input: (0..case.inputs.len()).map(|i| format!("x{i}")).collect(),
        attr: case.attrs.clone(),
        ..Default::default()
    };
    let t = attr(attr_value::Value::Type(case.t as i32));
    if case.op == "Cast" {
        op.attr.insert("SrcT".to_owned(), t);
        op.attr
            .insert("Truncate".to_owned(), attr(attr_value::Value::B(false)));
    } else {
        op.attr.insert("T".to_owned(), t);
    }
    if let Some(axis) = &case.axis {
        let axis = Tensor::from_vec([axis.len()], axis.clone()).expect("axes");
        nodes.push(constant("axis", &axis));
        op.input.push("axis".to_owned());
        op.attr.insert(
            "Tidx".to_owned(),
            attr(attr_value::Value::Type(DataType::DtInt32 as i32)),
        );
    }
    nodes.push(op);
    GraphDef {
        node: nodes,
        ..Default::default()
    }
}

/// Runs the case through a [`Session`] with `options`; the output `y`.
pub fn run_case(case: &Case, options: SessionOptions) -> Result<Tensor, String> {
    let graph = Graph::new(graph_def(case)).map_err(|e| e.to_string())?;
    let session = Session::with_options(graph, options);
    let mut out = session.run(&[], &["y"]).map_err(|e| e.to_string())?;
    Ok(out.remove(0))
}

/// Ops whose results TF computes exactly (IEEE operations, comparisons,
/// casts): every bit must match. The others (transcendental functions) may
/// differ by a few units in the last place on finite, non-zero results.
fn is_exact(op: &str) -> bool {
    !matches!(op, "Exp" | "Log" | "Sigmoid" | "Tanh" | "Pow" | "Rsqrt")
}

/// The element bits of a host tensor, widened to u64.
fn bits(t: &Tensor) -> Vec<u64> {
    let proto = t.to_proto();
    let size = t.dtype().element_size().unwrap_or(1);
    proto
        .tensor_content
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// What comparing two floats needs to know of one, from its bits.
struct FloatBits {
    nan: bool,
    /// Zero or infinity (which must match exactly).
    special: bool,
    /// Sign and magnitude as one ordered integer: neighbours differ by one.
    ordered: i64,
}

/// A float type's width, exponent bits and mantissa bits.
fn float_layout(dtype: DataType) -> Option<(u32, u32, u32)> {
    let (width, exponent_bits) = match dtype {
        DataType::DtDouble => (64, 11),
        DataType::DtFloat => (32, 8),
        DataType::DtHalf => (16, 5),
        DataType::DtBfloat16 => (16, 8),
        _ => return None,
    };
    Some((width, exponent_bits, width - 1 - exponent_bits))
}

fn float_bits(bits: u64, dtype: DataType) -> Option<FloatBits> {
    let (width, exponent_bits, mantissa_bits) = float_layout(dtype)?;
    let all_ones = (1u64 << exponent_bits) - 1;
    let exponent = (bits >> mantissa_bits) & all_ones;
    let mantissa = bits & ((1u64 << mantissa_bits) - 1);
    let magnitude = (bits & ((1u64 << (width - 1)) - 1)) as i64;
    let negative = (bits >> (width - 1)) & 1 == 1;
    Some(FloatBits {
        nan: exponent == all_ones && mantissa != 0,
        special: magnitude == 0 || (exponent == all_ones && mantissa == 0),
        ordered: if negative { -magnitude } else { magnitude },
    })
}

/// Units in the last place that transcendental results may differ by.
const ULPS: i64 = 4;

/// Where `ours` differs from TF's `expected` (dtype, shape, or elements
/// beyond the op's tolerance): one line per difference, empty if none.
pub fn compare(case: &Case, ours: &Tensor) -> Vec<String> {
    compare_elements(case, ours, |_| true)
}

/// True when these bits, in `dtype`, are a denormal.
pub fn is_denormal(bits: u64, dtype: DataType) -> bool {
    let Some((_, exponent_bits, mantissa_bits)) = float_layout(dtype) else {
        return false;
    };
    let exponent = (bits >> mantissa_bits) & ((1u64 << exponent_bits) - 1);
    exponent == 0 && bits & ((1u64 << mantissa_bits) - 1) != 0
}

/// True when element `i` of the case has a denormal input or TF answered a
/// denormal there.
pub fn touches_denormal(case: &Case, i: usize) -> bool {
    let input = case
        .inputs
        .iter()
        .any(|t| bits(t).get(i).is_some_and(|&b| is_denormal(b, t.dtype())));
    let output = bits(&case.expected)
        .get(i)
        .is_some_and(|&b| is_denormal(b, case.expected.dtype()));
    input || output
}

/// Which elements of the case's result depend on how denormals are
/// treated: where opreg's CPU kernels answer differently with
/// [`DenormalMode::FlushToZero`](registry_core::denormal::DenormalMode) (TF's
/// CPU behaviour) and with IEEE denormals (a GPU's double precision, which
/// has no flushing).
pub fn denormal_dependent(case: &Case) -> Result<Vec<bool>, String> {
    use registry_core::denormal::DenormalMode;
    let run = |denormals| {
        let options = SessionOptions {
            denormals,
            ..Default::default()
        };
        run_case(case, options).map(|t| bits(&t))
    };
    let flushed = run(DenormalMode::FlushToZero)?;
    let ieee = run(DenormalMode::Ieee)?;
    Ok(flushed.iter().zip(&ieee).map(|(a, b)| a != b).collect())
}

/// True where TF's CPU `Cast` from a float to an integer gave x86's
/// "integer indefinite" (the most negative value) for a NaN or out-of-range
/// input; GPU kernels, as TF's, saturate there instead.
pub fn is_cast_indefinite(case: &Case, i: usize) -> bool {
    if case.op != "Cast" {
        return false;
    }
    let Some(&out) = bits(&case.expected).get(i) else {
        return false;
    };
    match case.expected.dtype() {
        DataType::DtInt32 => out == 0x8000_0000,
        DataType::DtInt64 => out == 0x8000_0000_0000_0000,
        _ => false,
    }
}

/// [`compare`] on the elements `check` accepts; also returns how many
/// differing elements it passed over.
pub fn compare_where(
    case: &Case,
    ours: &Tensor,
    check: impl Fn(usize) -> bool,
) -> (Vec<String>, usize) {
    let skipped = std::cell::Cell::new(0);
    let problems = compare_elements(case, ours, |i| {
        let keep = check(i);
        if !keep {
            skipped.set(skipped.get() + 1);
        }
        keep
    });
    (problems, skipped.get())
}

fn compare_elements(case: &Case, ours: &Tensor, check: impl Fn(usize) -> bool) -> Vec<String> {
    let expected = &case.expected;
    if ours.dtype() != expected.dtype() || ours.shape() != expected.shape() {
        return vec![format!(
            "{}: got {:?} {:?}, TF {:?} {:?}",
            case.label(),
            ours.dtype(),
            ours.shape(),
            expected.dtype(),
            expected.shape()
        )];
    }
    let Ok(ours) = ours.to_host() else {
        return vec![format!("{}: cannot read the result", case.label())];
    };
    let dtype = expected.dtype();
    let input_bits: Vec<Vec<u64>> = case.inputs.iter().map(bits).collect();
    let mut problems = Vec::new();
    for (i, (&a, &b)) in bits(&ours).iter().zip(&bits(expected)).enumerate() {
        if a == b || !check(i) {
            continue;
        }
        let fine = match (float_bits(a, dtype), float_bits(b, dtype)) {
            (Some(x), Some(y)) if x.nan && y.nan => true,
            (Some(x), Some(y)) if !is_exact(&case.op) => {
                !x.nan
                    && !y.nan
                    && !x.special
                    && !y.special
                    && (x.ordered > 0) == (y.ordered > 0)
                    && (x.ordered - y.ordered).abs() <= ULPS
            }
            _ => false,
        };
        if !fine {
            let inputs: Vec<String> = input_bits
                .iter()
                .map(|bits| format!("{:#x}", bits.get(i).copied().unwrap_or(0)))
                .collect();
            problems.push(format!(
                "{} element {i} (inputs {}): ours {a:#x}, TF {b:#x}",
                case.label(),
                inputs.join(", ")
            ));
        }
    }
    problems
}
