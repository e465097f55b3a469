//! Conversion between [`Tensor`] and TensorFlow's [`TensorProto`].

use std::sync::Arc;

use opreg_proto::{DataType, TensorProto};

use super::dtype::sealed::Sealed;
use super::{
    Complex64, Complex128, Storage, Tensor, TensorElement, TensorError, TensorShape, bf16,
    element_size, f16, is_supported,
};

/// The default cap, in bytes, on the memory [`Tensor::from_proto`] will
/// allocate for one tensor (4 GiB). Use [`Tensor::from_proto_with_limit`] to
/// choose another.
pub const DEFAULT_MAX_PROTO_BYTES: u64 = 1 << 32;

/// Runs `$body` with `$S` bound to the Rust storage type of a fixed-size
/// dtype (quantized types use their underlying integer type).
macro_rules! with_storage_type {
    ($dtype:expr, $S:ident => $body:expr, _ => $other:expr) => {{
        use DataType::*;
        match $dtype {
            DtFloat => {
                type $S = f32;
                $body
            }
            DtDouble => {
                type $S = f64;
                $body
            }
            DtHalf => {
                type $S = f16;
                $body
            }
            DtBfloat16 => {
                type $S = bf16;
                $body
            }
            DtInt8 | DtQint8 | DtInt4 | DtInt2 => {
                type $S = i8;
                $body
            }
            DtInt16 | DtQint16 => {
                type $S = i16;
                $body
            }
            DtInt32 | DtQint32 => {
                type $S = i32;
                $body
            }
            DtInt64 => {
                type $S = i64;
                $body
            }
            DtUint8 | DtQuint8 | DtUint4 | DtUint2 | DtFloat8E5m2 | DtFloat8E4m3fn
            | DtFloat8E4m3fnuz | DtFloat8E4m3b11fnuz | DtFloat8E5m2fnuz | DtFloat4E2m1fn => {
                type $S = u8;
                $body
            }
            DtUint16 | DtQuint16 => {
                type $S = u16;
                $body
            }
            DtUint32 => {
                type $S = u32;
                $body
            }
            DtUint64 => {
                type $S = u64;
                $body
            }
            DtBool => {
                type $S = bool;
                $body
            }
            DtComplex64 => {
                type $S = Complex64;
                $body
            }
            DtComplex128 => {
                type $S = Complex128;
                $body
            }
            _ => $other,
        }
    }};
}
pub(super) use with_storage_type;

impl Tensor {
    /// Reads a [`TensorProto`] in any of TensorFlow's encodings, allocating at
    /// most [`DEFAULT_MAX_PROTO_BYTES`] (or the process-wide
    /// [`max_allocation_bytes`](crate::limits::max_allocation_bytes) when
    /// that is lower).
    ///
    /// - `tensor_content`: little-endian element bytes; the length must be
    ///   exactly elements × element size (the 4- and 2-bit integers keep
    ///   their low bits, sign-extended for the signed ones).
    /// - otherwise the typed field of the dtype (`float_val`, `int_val` for
    ///   int32/int16/int8/uint8/uint16, the quantized types and the 4- and
    ///   2-bit integers (wrapped to their width), `float8_val` for the float8
    ///   and float4 types (one byte each), `half_val`
    ///   for half and bfloat16 bit patterns, `scomplex_val` as re/im pairs,
    ///   ...). As in TensorFlow, fewer values than elements repeat the last
    ///   value, no values at all mean zeros, and more values are an error.
    ///   Integer values are narrowed as TensorFlow does (`static_cast`).
    ///
    /// A missing shape means a scalar.
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// use registry_core::proto::{DataType, TensorProto, TensorShapeProto, tensor_shape_proto::Dim};
    ///
    /// let proto = TensorProto {
    ///     dtype: DataType::DtFloat as i32,
    ///     tensor_shape: Some(TensorShapeProto {
    ///         dim: vec![Dim { size: 4, name: String::new() }],
    ///         unknown_rank: false,
    ///     }),
    ///     float_val: vec![1.0, 2.0],
    ///     ..Default::default()
    /// };
    /// let t = Tensor::from_proto(&proto).unwrap();
    /// assert_eq!(t.as_slice::<f32>().unwrap(), &[1.0, 2.0, 2.0, 2.0]);
    /// ```
    pub fn from_proto(proto: &TensorProto) -> Result<Tensor, TensorError> {
        Self::from_proto_with_limit(proto, DEFAULT_MAX_PROTO_BYTES)
    }

    /// Like [`from_proto`](Self::from_proto), refusing tensors that would
    /// need more than `max_bytes` bytes of memory (or more than the
    /// process-wide cap)
    /// ([`TensorError::TooLarge`]) instead of trying to allocate them.
    pub fn from_proto_with_limit(
        proto: &TensorProto,
        max_bytes: u64,
    ) -> Result<Tensor, TensorError> {
        let max_bytes = max_bytes
            .min(crate::limits::max_allocation_bytes())
            .min(isize::MAX as u64);
        let dtype =
            DataType::try_from(proto.dtype).map_err(|_| TensorError::UnknownDtype(proto.dtype))?;
        if !is_supported(dtype) {
            return Err(TensorError::UnsupportedDtype(dtype));
        }
        let shape = match &proto.tensor_shape {
            Some(s) => TensorShape::from_proto(s)?,
            None => TensorShape::scalar(),
        };
        let n = shape.num_elements();
        if dtype == DataType::DtString {
            return strings_from_proto(proto, shape, max_bytes);
        }
        let size = element_size(dtype).ok_or_else(|| TensorError::UnsupportedDtype(dtype))?;
        let bytes = (n as u64).saturating_mul(size as u64);
        if bytes > max_bytes {
            return Err(TensorError::TooLarge {
                dtype,
                shape,
                bytes,
                limit: max_bytes,
            });
        }
        if !proto.tensor_content.is_empty() {
            let content = &proto.tensor_content;
            if content.len() as u64 != bytes {
                return Err(TensorError::ContentLength {
                    dtype,
                    shape,
                    expected: n.saturating_mul(size),
                    actual: content.len(),
                });
            }
            let mut tensor = with_storage_type!(dtype, S => from_content::<S>(dtype, shape, content),
                _ => Err(TensorError::UnsupportedDtype(dtype)))?;
            canonicalize_sub_byte(&mut tensor);
            return Ok(tensor);
        }
        let p = proto;
        use DataType::*;
        match dtype {
            DtFloat => fill(dtype, shape, "float_val", &p.float_val, |v| v),
            DtDouble => fill(dtype, shape, "double_val", &p.double_val, |v| v),
            DtInt32 | DtQint32 => fill(dtype, shape, "int_val", &p.int_val, |v| v),
            DtInt16 | DtQint16 => fill(dtype, shape, "int_val", &p.int_val, |v| v as i16),
            DtInt8 | DtQint8 => fill(dtype, shape, "int_val", &p.int_val, |v| v as i8),
            DtUint8 | DtQuint8 => fill(dtype, shape, "int_val", &p.int_val, |v| v as u8),
            DtUint16 | DtQuint16 => fill(dtype, shape, "int_val", &p.int_val, |v| v as u16),
            // Sub-byte integers: one byte each, the value wrapped to its
            // width as TF's `static_cast` to int4/int2 wraps it.
            DtInt4 => fill(dtype, shape, "int_val", &p.int_val, |v| wrap_signed(v, 4)),
            DtInt2 => fill(dtype, shape, "int_val", &p.int_val, |v| wrap_signed(v, 2)),
            DtUint4 => fill(dtype, shape, "int_val", &p.int_val, |v| (v & 0xf) as u8),
            DtUint2 => fill(dtype, shape, "int_val", &p.int_val, |v| (v & 0x3) as u8),
            // float8 and float4 values: one byte each, their bit patterns.
            DtFloat8E5m2 | DtFloat8E4m3fn | DtFloat8E4m3fnuz | DtFloat8E4m3b11fnuz
            | DtFloat8E5m2fnuz | DtFloat4E2m1fn => {
                fill(dtype, shape, "float8_val", &p.float8_val, |v: u8| v)
            }
            DtInt64 => fill(dtype, shape, "int64_val", &p.int64_val, |v| v),
            DtUint32 => fill(dtype, shape, "uint32_val", &p.uint32_val, |v| v),
            DtUint64 => fill(dtype, shape, "uint64_val", &p.uint64_val, |v| v),
            DtBool => fill(dtype, shape, "bool_val", &p.bool_val, |v| v),
            DtHalf => fill(dtype, shape, "half_val", &p.half_val, |v| {
                f16::from_bits(v as u16)
            }),
            DtBfloat16 => fill(dtype, shape, "half_val", &p.half_val, |v| {
                bf16::from_bits(v as u16)
            }),
            DtComplex64 => {
                let pairs = complex_pairs("scomplex_val", &p.scomplex_val)?;
                fill(dtype, shape, "scomplex_val", &pairs, |[re, im]| {
                    Complex64::new(re, im)
                })
            }
            DtComplex128 => {
                let pairs = complex_pairs("dcomplex_val", &p.dcomplex_val)?;
                fill(dtype, shape, "dcomplex_val", &pairs, |[re, im]| {
                    Complex128::new(re, im)
                })
            }
            _ => Err(TensorError::UnsupportedDtype(dtype)),
        }
    }

    /// Writes a [`TensorProto`] with the elements in `tensor_content`
    /// (little-endian bytes), as TensorFlow's `AsProtoTensorContent`; string
    /// tensors use `string_val`.
    ///
    /// A tensor on a device is read back first; if that fails the proto
    /// holds no values (call [`to_host`](Self::to_host) first to see the
    /// error). A `DT_VARIANT` tensor's host values have no proto form here:
    /// its proto holds only the dtype and shape
    /// ([`try_to_proto`](Self::try_to_proto) says so with an error).
    pub fn to_proto(&self) -> TensorProto {
        if !self.is_on_host() {
            return match self.to_host() {
                Ok(host) => host.to_proto(),
                Err(_) => self.proto_header(),
            };
        }
        let mut p = self.proto_header();
        match self.storage() {
            Storage::Strings(s) => p.string_val = s.to_vec(),
            Storage::Device(_) | Storage::Variants(_) => {}
            Storage::Host(b) => {
                let mut out = Vec::with_capacity(b.len());
                with_storage_type!(self.dtype(), S => {
                    for &v in self.storage_slice::<S>() {
                        v.write_le(&mut out);
                    }
                }, _ => {});
                p.tensor_content = out;
            }
        }
        p
    }

    /// [`to_proto`](Self::to_proto), but an error instead of a proto
    /// without values where the values cannot be written: a `DT_VARIANT`
    /// tensor ([`TensorError::VariantProto`]), or a device tensor that could
    /// not be read back.
    ///
    /// ```
    /// use registry_core::tensor::{Tensor, TensorError, TensorList};
    /// use registry_core::proto::DataType;
    /// use registry_core::shape::Shape;
    ///
    /// let t = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
    /// assert_eq!(t.try_to_proto().unwrap(), t.to_proto());
    /// let list = TensorList::new(DataType::DtFloat, Shape::unknown()).into_tensor();
    /// let err = list.try_to_proto().unwrap_err();
    /// assert!(matches!(err, TensorError::VariantProto { type_name: "tensorflow::TensorList", .. }));
    /// ```
    pub fn try_to_proto(&self) -> Result<TensorProto, TensorError> {
        if let Storage::Variants(variants) = self.storage() {
            return Err(TensorError::VariantProto {
                shape: self.shape().clone(),
                type_name: variants
                    .iter()
                    .find_map(|v| v.type_name())
                    .unwrap_or("empty"),
            });
        }
        if !self.is_on_host() {
            return Ok(self.to_host()?.to_proto());
        }
        Ok(self.to_proto())
    }

    /// Writes a [`TensorProto`] with the elements in the dtype's typed field
    /// (`float_val`, `int_val`, `half_val`, ...), as TensorFlow's
    /// `AsProtoField`.
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    /// let t = Tensor::from_vec([3], vec![1i8, -2, 3]).unwrap();
    /// let p = t.to_proto_field();
    /// assert_eq!(p.int_val, vec![1, -2, 3]);
    /// assert_eq!(Tensor::from_proto(&p).unwrap(), t);
    /// ```
    pub fn to_proto_field(&self) -> TensorProto {
        if !self.is_on_host() {
            return match self.to_host() {
                Ok(host) => host.to_proto_field(),
                Err(_) => self.proto_header(),
            };
        }
        let mut p = self.proto_header();
        use DataType::*;
        match self.dtype() {
            DtString => p.string_val = self.as_strings().unwrap_or_default().to_vec(),
            DtFloat => p.float_val = self.storage_slice::<f32>().to_vec(),
            DtDouble => p.double_val = self.storage_slice::<f64>().to_vec(),
            DtInt32 | DtQint32 => p.int_val = self.storage_slice::<i32>().to_vec(),
            DtInt16 | DtQint16 => p.int_val = widen(self.storage_slice::<i16>()),
            DtInt8 | DtQint8 => p.int_val = widen(self.storage_slice::<i8>()),
            DtUint8 | DtQuint8 => p.int_val = widen(self.storage_slice::<u8>()),
            DtUint16 | DtQuint16 => p.int_val = widen(self.storage_slice::<u16>()),
            DtInt4 | DtInt2 => p.int_val = widen(self.storage_slice::<i8>()),
            DtUint4 | DtUint2 => p.int_val = widen(self.storage_slice::<u8>()),
            DtFloat8E5m2 | DtFloat8E4m3fn | DtFloat8E4m3fnuz | DtFloat8E4m3b11fnuz
            | DtFloat8E5m2fnuz | DtFloat4E2m1fn => {
                p.float8_val = self.storage_slice::<u8>().to_vec()
            }
            DtInt64 => p.int64_val = self.storage_slice::<i64>().to_vec(),
            DtUint32 => p.uint32_val = self.storage_slice::<u32>().to_vec(),
            DtUint64 => p.uint64_val = self.storage_slice::<u64>().to_vec(),
            DtBool => p.bool_val = self.storage_slice::<bool>().to_vec(),
            DtHalf => {
                p.half_val = self
                    .storage_slice::<f16>()
                    .iter()
                    .map(|v| i32::from(v.to_bits()))
                    .collect()
            }
            DtBfloat16 => {
                p.half_val = self
                    .storage_slice::<bf16>()
                    .iter()
                    .map(|v| i32::from(v.to_bits()))
                    .collect()
            }
            DtComplex64 => {
                p.scomplex_val = self
                    .storage_slice::<Complex64>()
                    .iter()
                    .flat_map(|c| [c.re, c.im])
                    .collect()
            }
            DtComplex128 => {
                p.dcomplex_val = self
                    .storage_slice::<Complex128>()
                    .iter()
                    .flat_map(|c| [c.re, c.im])
                    .collect()
            }
            _ => {}
        }
        p
    }

    fn proto_header(&self) -> TensorProto {
        TensorProto {
            dtype: self.dtype() as i32,
            tensor_shape: Some(self.shape().to_proto()),
            ..Default::default()
        }
    }
}

/// Sub-byte integers read from raw bytes keep only their value, as TF's
/// 4- and 2-bit types read a byte: its low bits, sign-extended for the
/// signed ones.
fn canonicalize_sub_byte(tensor: &mut Tensor) {
    let wrap: fn(u8) -> u8 = match tensor.dtype() {
        DataType::DtInt4 => |b| wrap_signed(i32::from(b), 4) as u8,
        DataType::DtInt2 => |b| wrap_signed(i32::from(b), 2) as u8,
        DataType::DtUint4 => |b| b & 0xf,
        DataType::DtUint2 => |b| b & 0x3,
        _ => return,
    };
    for b in tensor.typed_mut_unchecked::<u8>() {
        *b = wrap(*b);
    }
}

/// The low `bits` bits of `v` as a two's-complement integer.
fn wrap_signed(v: i32, bits: u32) -> i8 {
    ((v << (32 - bits)) >> (32 - bits)) as i8
}

fn widen<T: Copy + Into<i32>>(v: &[T]) -> Vec<i32> {
    v.iter().map(|&x| x.into()).collect()
}

fn complex_pairs<F: Copy>(field: &'static str, v: &[F]) -> Result<Vec<[F; 2]>, TensorError> {
    if !v.len().is_multiple_of(2) {
        return Err(TensorError::OddComplexValues {
            field,
            count: v.len(),
        });
    }
    Ok(v.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
}

fn from_content<S: TensorElement>(
    dtype: DataType,
    shape: TensorShape,
    content: &[u8],
) -> Result<Tensor, TensorError> {
    let mut t = Tensor::zeros(dtype, shape)?;
    let size = std::mem::size_of::<S>();
    for (o, chunk) in t
        .typed_mut_unchecked::<S>()
        .iter_mut()
        .zip(content.chunks_exact(size))
    {
        *o = S::read_le(chunk);
    }
    Ok(t)
}

/// Builds a tensor from a typed field with TF's repeated-last-value rule.
fn fill<V: Copy, S: TensorElement>(
    dtype: DataType,
    shape: TensorShape,
    field: &'static str,
    vals: &[V],
    conv: impl Fn(V) -> S,
) -> Result<Tensor, TensorError> {
    let n = shape.num_elements();
    if vals.len() > n {
        return Err(TensorError::TooManyValues {
            dtype,
            shape,
            field,
            count: vals.len(),
            expected: n,
        });
    }
    let mut t = Tensor::zeros(dtype, shape)?;
    let out = t.typed_mut_unchecked::<S>();
    for (o, &v) in out.iter_mut().zip(vals) {
        *o = conv(v);
    }
    if let Some(&last) = vals.last() {
        let last = conv(last);
        out[vals.len()..].fill(last);
    }
    Ok(t)
}

fn strings_from_proto(
    proto: &TensorProto,
    shape: TensorShape,
    max_bytes: u64,
) -> Result<Tensor, TensorError> {
    let dtype = DataType::DtString;
    if !proto.tensor_content.is_empty() {
        return Err(TensorError::StringContent);
    }
    let vals = &proto.string_val;
    let n = shape.num_elements();
    if vals.len() > n {
        return Err(TensorError::TooManyValues {
            dtype,
            shape,
            field: "string_val",
            count: vals.len(),
            expected: n,
        });
    }
    // Estimate: one Vec header per element plus the repeated tail's bytes.
    let last_len = vals.last().map_or(0, Vec::len) as u64;
    let given: u64 = vals.iter().map(|v| v.len() as u64).sum();
    let per = std::mem::size_of::<Vec<u8>>() as u64;
    let bytes = (n as u64)
        .saturating_mul(per.saturating_add(last_len))
        .saturating_add(given);
    if bytes > max_bytes {
        return Err(TensorError::TooLarge {
            dtype,
            shape,
            bytes,
            limit: max_bytes,
        });
    }
    let mut out = Vec::with_capacity(n);
    out.extend_from_slice(vals);
    out.resize(n, vals.last().cloned().unwrap_or_default());
    Ok(Tensor::from_parts(
        dtype,
        shape,
        Storage::Strings(Arc::new(out)),
    ))
}
