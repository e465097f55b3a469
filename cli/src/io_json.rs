//! The tensor layout of `shared/graphs/*/io.json`, read for `opreg run
//! --feeds` and written by `opreg run --format json`:
//!
//! ```json
//! {"feeds": [{"name": "x:0", "dtype": "DT_FLOAT", "shape": [2, 2], "values": [1.0, -2.5, 3.0, 0.5]}]}
//! ```
//!
//! Values are row-major and flattened. Floats are the exact value of each
//! element widened to f64, printed as the shortest decimal that reads back
//! to the same f64 (`NaN`, `Infinity` and `-Infinity` as strings). Bools are
//! `true`/`false`; integers are JSON integers.

use opreg_proto::DataType;
use registry_core::tensor::{Tensor, TensorElement, bf16, f16};
use serde_json::{Map, Value};

/// A named tensor of an io.json list.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTensor {
    /// `node:port`.
    pub name: String,
    /// The values.
    pub tensor: Tensor,
}

/// Why an io.json entry could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IoJsonError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    Json(String),
    /// A list is missing or not a list.
    #[error("no `{0}` list")]
    MissingList(String),
    /// An entry lacks a field or has one of the wrong kind.
    #[error("entry {index} ({name}): {message}")]
    Entry {
        /// The entry's index in its list.
        index: usize,
        /// Its name, if it has one.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// Reads the list `key` (`feeds` or `fetches`) of an io.json document.
///
/// ```
/// let json = r#"{"feeds": [{"name": "x:0", "dtype": "DT_INT32", "shape": [2], "values": [1, -2]}]}"#;
/// let feeds = opreg_cli::io_json::read_list(json, "feeds").unwrap();
/// assert_eq!(feeds[0].tensor.as_slice::<i32>().unwrap(), &[1, -2]);
/// ```
pub fn read_list(text: &str, key: &str) -> Result<Vec<NamedTensor>, IoJsonError> {
    let json: Value = serde_json::from_str(text).map_err(|e| IoJsonError::Json(e.to_string()))?;
    let list = json
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| IoJsonError::MissingList(key.to_owned()))?;
    list.iter()
        .enumerate()
        .map(|(index, entry)| {
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("<unnamed>")
                .to_owned();
            read_entry(entry).map_err(|message| IoJsonError::Entry {
                index,
                name,
                message,
            })
        })
        .collect()
}

/// The names in list `key`, without reading values (`fetches` of a feeds
/// file says what to fetch by default).
pub fn names(text: &str, key: &str) -> Result<Vec<String>, IoJsonError> {
    let json: Value = serde_json::from_str(text).map_err(|e| IoJsonError::Json(e.to_string()))?;
    let list = json
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| IoJsonError::MissingList(key.to_owned()))?;
    Ok(list
        .iter()
        .filter_map(|e| e.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect())
}

fn read_entry(entry: &Value) -> Result<NamedTensor, String> {
    let name = entry
        .get("name")
        .and_then(Value::as_str)
        .ok_or("no `name`")?
        .to_owned();
    let dtype_name = entry
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or("no `dtype`")?;
    let dtype = DataType::from_str_name(dtype_name)
        .ok_or_else(|| format!("unknown dtype `{dtype_name}` (expected e.g. DT_FLOAT)"))?;
    let shape: Vec<usize> = entry
        .get("shape")
        .and_then(Value::as_array)
        .ok_or("no `shape` list")?
        .iter()
        .map(|d| {
            d.as_u64()
                .and_then(|d| usize::try_from(d).ok())
                .ok_or_else(|| format!("bad dimension {d}"))
        })
        .collect::<Result<_, _>>()?;
    let values = entry
        .get("values")
        .and_then(Value::as_array)
        .ok_or("no `values` list")?;
    let tensor = tensor_from_values(dtype, &shape, values)?;
    Ok(NamedTensor { name, tensor })
}

fn float(v: &Value) -> Result<f64, String> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("bad number {n}")),
        Value::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            other => Err(format!("bad float {other:?}")),
        },
        other => Err(format!("bad float {other}")),
    }
}

fn int<T: TryFrom<i64>>(v: &Value) -> Result<T, String> {
    let wide = match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().and_then(|u| i64::try_from(u).ok())),
        _ => None,
    };
    wide.and_then(|w| T::try_from(w).ok())
        .ok_or_else(|| format!("bad integer {v} for this dtype"))
}

fn collect<T: TensorElement>(
    shape: &[usize],
    values: &[Value],
    f: impl Fn(&Value) -> Result<T, String>,
) -> Result<Tensor, String> {
    let data = values.iter().map(f).collect::<Result<Vec<T>, _>>()?;
    Tensor::from_vec(shape, data).map_err(|e| e.to_string())
}

/// A tensor of `dtype` and `shape` from io.json values.
pub fn tensor_from_values(
    dtype: DataType,
    shape: &[usize],
    values: &[Value],
) -> Result<Tensor, String> {
    match dtype {
        DataType::DtFloat => collect(shape, values, |v| float(v).map(|f| f as f32)),
        DataType::DtDouble => collect(shape, values, float),
        DataType::DtHalf => collect(shape, values, |v| float(v).map(f16::from_f64)),
        DataType::DtBfloat16 => collect(shape, values, |v| float(v).map(bf16::from_f64)),
        DataType::DtInt8 => collect(shape, values, int::<i8>),
        DataType::DtInt16 => collect(shape, values, int::<i16>),
        DataType::DtInt32 => collect(shape, values, int::<i32>),
        DataType::DtInt64 => collect(shape, values, int::<i64>),
        DataType::DtUint8 => collect(shape, values, int::<u8>),
        DataType::DtUint16 => collect(shape, values, int::<u16>),
        DataType::DtUint32 => collect(shape, values, int::<u32>),
        DataType::DtUint64 => collect(shape, values, |v| {
            v.as_u64()
                .ok_or_else(|| format!("bad integer {v} for uint64"))
        }),
        DataType::DtBool => collect(shape, values, |v| {
            v.as_bool().ok_or_else(|| format!("bad bool {v}"))
        }),
        other => Err(format!(
            "dtype {} is not supported in io.json",
            other.as_str_name()
        )),
    }
}

fn float_json(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or_else(
        || {
            Value::String(
                if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                }
                .into(),
            )
        },
        Value::Number,
    )
}

/// The tensor's values in io.json's encoding, or `None` for dtypes it has
/// no encoding for (strings, complex, quantized).
pub fn values_json(t: &Tensor) -> Option<Vec<Value>> {
    fn map<T: TensorElement>(t: &Tensor, f: impl Fn(T) -> Value) -> Option<Vec<Value>> {
        Some(t.as_slice::<T>().ok()?.iter().map(|&v| f(v)).collect())
    }
    match t.dtype() {
        DataType::DtFloat => map(t, |v: f32| float_json(f64::from(v))),
        DataType::DtDouble => map(t, float_json),
        DataType::DtHalf => map(t, |v: f16| float_json(v.to_f64())),
        DataType::DtBfloat16 => map(t, |v: bf16| float_json(v.to_f64())),
        DataType::DtInt8 => map(t, |v: i8| v.into()),
        DataType::DtInt16 => map(t, |v: i16| v.into()),
        DataType::DtInt32 => map(t, |v: i32| v.into()),
        DataType::DtInt64 => map(t, |v: i64| v.into()),
        DataType::DtUint8 => map(t, |v: u8| v.into()),
        DataType::DtUint16 => map(t, |v: u16| v.into()),
        DataType::DtUint32 => map(t, |v: u32| v.into()),
        DataType::DtUint64 => map(t, |v: u64| v.into()),
        DataType::DtBool => map(t, |v: bool| v.into()),
        _ => None,
    }
}

/// `{"name", "dtype", "shape", "values"}` for one fetched tensor.
pub fn entry_json(name: &str, t: &Tensor) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), name.into());
    entry.insert("dtype".into(), t.dtype().as_str_name().into());
    entry.insert(
        "shape".into(),
        Value::Array(t.dims().iter().map(|&d| d.into()).collect()),
    );
    entry.insert(
        "values".into(),
        values_json(t).map_or(Value::Null, Value::Array),
    );
    Value::Object(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers that serde_json's fast float parsing rounds wrongly: every
    /// io.json value is read correctly rounded (`float_roundtrip`).
    #[test]
    fn numbers_are_read_correctly_rounded() {
        let text = r#"[1000000000000000.5, 0.1, 2.2250738585072011e-308, 9007199254740993,
            1.7976931348623157e308, 4.9406564584124654e-324, 0.30000000000000004]"#;
        let values: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
        let t = tensor_from_values(DataType::DtDouble, &[7], &values).unwrap();
        assert_eq!(
            t.as_slice::<f64>().unwrap(),
            &[
                1_000_000_000_000_000.5,
                0.1,
                2.225_073_858_507_201e-308,
                9_007_199_254_740_992.0,
                f64::MAX,
                f64::from_bits(1),
                0.300_000_000_000_000_04,
            ]
        );
        // The issue's example: FloorMod(1000000000000000.5, 3) is 1.5 in TF.
        let x = t.as_slice::<f64>().unwrap()[0];
        assert_eq!(x % 3.0, 1.5);
    }

    #[test]
    fn values_round_trip_through_json() {
        let t = Tensor::from_vec([3], vec![0.1f32, f32::NAN, f32::NEG_INFINITY]).unwrap();
        let values = values_json(&t).unwrap();
        assert_eq!(values[0], serde_json::json!(f64::from(0.1f32)));
        assert_eq!(values[1], "NaN");
        let back = tensor_from_values(DataType::DtFloat, &[3], &values).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn bad_entries_are_errors() {
        let err = read_list(
            r#"{"feeds": [{"name": "x", "dtype": "DT_FLAOT", "shape": [], "values": [1]}]}"#,
            "feeds",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("unknown dtype `DT_FLAOT`"),
            "{err}"
        );
        let err = read_list(
            r#"{"feeds": [{"name": "x", "dtype": "DT_INT8", "shape": [1], "values": [300]}]}"#,
            "feeds",
        )
        .unwrap_err();
        assert!(err.to_string().contains("bad integer 300"), "{err}");
        let err = read_list(
            r#"{"feeds": [{"name": "x", "dtype": "DT_INT8", "shape": [2], "values": [3]}]}"#,
            "feeds",
        )
        .unwrap_err();
        assert!(err.to_string().contains("x"), "{err}");
        assert!(matches!(read_list("{", "feeds"), Err(IoJsonError::Json(_))));
        assert!(matches!(
            read_list("{}", "feeds"),
            Err(IoJsonError::MissingList(_))
        ));
    }
}
