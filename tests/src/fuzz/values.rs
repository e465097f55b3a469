//! Values drawn from fuzz bytes: dtypes, shapes (0, 1, huge dims), tensors
//! and attr values, biased towards the values kernels treat specially.

use arbitrary::{Result, Unstructured};
use registry_core::proto::attr_value::{ListValue, Value};
use registry_core::proto::tensor_shape_proto::Dim;
use registry_core::proto::{AttrValue, DataType, TensorShapeProto};
use registry_core::tensor::{Tensor, is_supported};

/// The most elements a generated input tensor has.
const MAX_ELEMENTS: usize = 4096;

/// Every dtype a Tensor can hold.
pub(super) fn tensor_dtypes() -> Vec<DataType> {
    (1..=30)
        .filter_map(|v| DataType::try_from(v).ok())
        .filter(|&d| is_supported(d))
        .collect()
}

/// Any DataType enum value, including invalid and reference ones.
pub(super) fn any_dtype_enum(u: &mut Unstructured<'_>) -> Result<i32> {
    Ok(if u.ratio(7, 8)? {
        u.int_in_range(1..=23)?
    } else {
        *u.choose(&[0, 24, 101, 119, 1000, -1, i32::MAX])?
    })
}

/// An integer: mostly small (valid axes, sizes, indices), sometimes an
/// edge value.
pub(super) fn int(u: &mut Unstructured<'_>) -> Result<i64> {
    Ok(if u.ratio(3, 4)? {
        u.int_in_range(-2..=5)?
    } else {
        *u.choose(&[
            -5,
            7,
            8,
            16,
            100,
            1 << 20,
            i32::MAX as i64,
            i32::MIN as i64,
            1 << 31,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
        ])?
    })
}

/// A float: mostly ordinary, sometimes NaN, infinities, signed zero or
/// extremes.
pub(super) fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(if u.ratio(3, 4)? {
        f64::from(u.int_in_range(-8i32..=8)?) / 2.0
    } else {
        *u.choose(&[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            1e-40,
            1e30,
            -1e30,
            f64::MAX,
            f64::MIN_POSITIVE,
        ])?
    })
}

/// Tensor dims related to the previous input's, as ops need them: the same
/// (elementwise ops), chained (`[a, b]` then `[b, c]`: MatMul), its last dim
/// alone (BiasAdd, batch norm scales) or its rank as a vector (Tile
/// multiples, Pad paddings' rows, Transpose perms); else fresh ones.
pub(super) fn dims_after(
    u: &mut Unstructured<'_>,
    previous: Option<&[usize]>,
) -> Result<Vec<usize>> {
    let Some(previous) = previous else {
        return dims(u);
    };
    let related = match u.int_in_range(0..=5)? {
        0 | 1 => previous.to_vec(),
        2 if previous.len() >= 2 => {
            let mut next = previous.to_vec();
            let rank = next.len();
            next[rank - 2] = previous[rank - 1];
            next[rank - 1] = u.int_in_range(1..=5)?;
            next
        }
        3 if !previous.is_empty() => vec![previous[previous.len() - 1]],
        4 => {
            if u.arbitrary()? {
                vec![previous.len()]
            } else {
                vec![previous.len(), 2]
            }
        }
        _ => return dims(u),
    };
    bounded(u, related)
}

/// Tensor dims: rank 0-4, dims mostly 0-5, sometimes huge; a shape whose
/// element count would be over [`MAX_ELEMENTS`] gets a zero dim instead,
/// so huge dims appear in empty tensors.
pub(super) fn dims(u: &mut Unstructured<'_>) -> Result<Vec<usize>> {
    let rank = u.int_in_range(0..=4)?;
    let mut dims = Vec::with_capacity(rank);
    for _ in 0..rank {
        dims.push(if u.ratio(7, 8)? {
            u.int_in_range(0..=5)?
        } else {
            *u.choose(&[8, 16, 64, 1 << 31, 1 << 40])?
        });
    }
    bounded(u, dims)
}

/// `dims`, with one dim made 0 when it has over [`MAX_ELEMENTS`] elements.
fn bounded(u: &mut Unstructured<'_>, mut dims: Vec<usize>) -> Result<Vec<usize>> {
    let count = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .unwrap_or(usize::MAX);
    if count > MAX_ELEMENTS {
        let at = u.choose_index(dims.len())?;
        dims[at] = 0;
    }
    Ok(dims)
}

/// A tensor of `dtype` and `dims` with drawn values.
pub(super) fn tensor(u: &mut Unstructured<'_>, dtype: DataType, dims: &[usize]) -> Result<Tensor> {
    // `dims` came from `dims()`: a zero dim makes huge ones harmless.
    let n = if dims.contains(&0) {
        0
    } else {
        dims.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or(arbitrary::Error::IncorrectFormat)?
    };
    let made = match dtype {
        DataType::DtInt32 => Tensor::from_vec(dims, draw(u, n, |u| Ok(int(u)? as i32))?),
        DataType::DtInt64 => Tensor::from_vec(dims, draw(u, n, int)?),
        DataType::DtFloat => Tensor::from_vec(dims, draw(u, n, |u| Ok(float(u)? as f32))?),
        DataType::DtDouble => Tensor::from_vec(dims, draw(u, n, float)?),
        DataType::DtBool => Tensor::from_vec(dims, draw(u, n, |u| u.arbitrary::<bool>())?),
        DataType::DtString => Tensor::from_strings(
            dims,
            draw(u, n, |u| {
                let len = u.int_in_range(0..=8)?;
                Ok(u.bytes(len)?.to_vec())
            })?,
        ),
        _ => Tensor::zeros(dtype, dims).map(|mut t| {
            if let Ok(bytes) = t.as_mut_bytes() {
                let _ = u.fill_buffer(bytes);
            }
            t
        }),
    };
    made.map_err(|_| arbitrary::Error::IncorrectFormat)
}

fn draw<T>(
    u: &mut Unstructured<'_>,
    n: usize,
    mut one: impl FnMut(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    (0..n).map(|_| one(u)).collect()
}

/// A shape proto: unknown rank, or dims that may be -1 (unknown), other
/// negatives, or huge.
pub(super) fn shape_proto(u: &mut Unstructured<'_>) -> Result<TensorShapeProto> {
    if u.ratio(1, 8)? {
        return Ok(TensorShapeProto {
            dim: Vec::new(),
            unknown_rank: true,
        });
    }
    let rank = u.int_in_range(0..=4)?;
    let mut dim = Vec::with_capacity(rank);
    for _ in 0..rank {
        let size = if u.ratio(1, 6)? { -1 } else { int(u)? };
        dim.push(Dim {
            size,
            name: String::new(),
        });
    }
    Ok(TensorShapeProto {
        dim,
        unknown_rank: false,
    })
}

/// Strings kernels look for in attrs (padding, data formats), or bytes.
fn string(u: &mut Unstructured<'_>, allowed: &[Vec<u8>]) -> Result<Vec<u8>> {
    if !allowed.is_empty() && u.ratio(7, 8)? {
        return Ok(u.choose(allowed)?.clone());
    }
    let common: &[&[u8]] = &[b"SAME", b"VALID", b"EXPLICIT", b"NHWC", b"NCHW", b"", b"x"];
    Ok(if u.ratio(3, 4)? {
        u.choose(common)?.to_vec()
    } else {
        let len = u.int_in_range(0..=8)?;
        u.bytes(len)?.to_vec()
    })
}

/// A type: mostly one of the allowed ones, else any enum value.
fn type_value(u: &mut Unstructured<'_>, allowed: &[i32]) -> Result<i32> {
    if !allowed.is_empty() && u.ratio(15, 16)? {
        return Ok(*u.choose(allowed)?);
    }
    if u.ratio(3, 4)? {
        let all = tensor_dtypes();
        return Ok(*u.choose(&all)? as i32);
    }
    any_dtype_enum(u)
}

/// A value for an attr of type `kind` (`int`, `list(type)`, ...), with the
/// allowed types or strings of its definition when it has them; sometimes
/// a value of another kind.
pub(super) fn attr_value(
    u: &mut Unstructured<'_>,
    kind: &str,
    allowed_types: &[i32],
    allowed_strings: &[Vec<u8>],
    tensor_dtype: Option<DataType>,
) -> Result<AttrValue> {
    let kinds = [
        "int",
        "float",
        "bool",
        "string",
        "type",
        "shape",
        "tensor",
        "list(int)",
        "list(type)",
    ];
    let kind = if u.ratio(1, 32)? {
        *u.choose(&kinds)?
    } else {
        kind
    };
    let list_len = |u: &mut Unstructured<'_>| -> Result<usize> {
        Ok(if u.ratio(7, 8)? {
            u.int_in_range(0..=4)?
        } else {
            9
        })
    };
    let value = match kind {
        "int" => Value::I(int(u)?),
        "float" => Value::F(float(u)? as f32),
        "bool" => Value::B(u.arbitrary()?),
        "string" => Value::S(string(u, allowed_strings)?),
        "type" => Value::Type(type_value(u, allowed_types)?),
        "shape" => Value::Shape(shape_proto(u)?),
        "tensor" => {
            let dtype = match tensor_dtype {
                Some(d) if u.ratio(7, 8)? => d,
                _ => *u.choose(&tensor_dtypes())?,
            };
            let dims = dims(u)?;
            Value::Tensor(tensor(u, dtype, &dims)?.to_proto())
        }
        kind if kind.starts_with("list(") => {
            let n = list_len(u)?;
            let mut list = ListValue::default();
            for _ in 0..n {
                match kind {
                    "list(int)" => list.i.push(int(u)?),
                    "list(float)" => list.f.push(float(u)? as f32),
                    "list(bool)" => list.b.push(u.arbitrary()?),
                    "list(string)" => list.s.push(string(u, allowed_strings)?),
                    "list(type)" => list.r#type.push(type_value(u, allowed_types)?),
                    "list(shape)" => list.shape.push(shape_proto(u)?),
                    _ => {}
                }
            }
            Value::List(list)
        }
        _ => Value::S(Vec::new()),
    };
    Ok(AttrValue { value: Some(value) })
}
