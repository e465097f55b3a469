//! Property tests of `Tensor` <-> `TensorProto` for every dtype `Tensor`
//! supports:
//!
//! - round trips through `tensor_content` (`to_proto`), the typed `*_val`
//!   fields (`to_proto_field`) and prost's binary encoding keep the dtype,
//!   the shape and every element bit for bit (NaN payloads, infinities and
//!   -0.0 included);
//! - TensorFlow's repeated-last-value shorthand: `k` typed values for a
//!   shape of `n >= k` elements decode to the values and then the last one
//!   repeated; no values at all decode to zeros;
//! - hostile protos (invalid dtypes, negative, overflowing or unknown
//!   shapes, `tensor_content` of the wrong length, values in the wrong
//!   fields) are an `Ok` or an `Err`, never a panic, and an `Ok` tensor has
//!   exactly the shape's element count.
//!
//! The typed fields are written here independently of the library
//! (`typed_proto`), from TensorFlow's `ProtoHelper` mapping, so that
//! `to_proto_field` is checked against it rather than against itself.

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use prost::Message;
use registry_core::proto::{DataType, TensorProto, TensorShapeProto};
use registry_core::tensor::{Tensor, TensorError, element_size, is_supported};

/// The memory cap for decoding hostile protos.
const LIMIT: u64 = 1 << 20;

/// Generated cases per dtype and property.
const CASES_PER_DTYPE: u32 = 64;

/// One element as the test sees it: the little-endian bytes of a
/// fixed-size element (`[0]`/`[1]` for a bool), or a string's bytes.
type Elem = Vec<u8>;

/// Every dtype `Tensor` supports, in enum order, taken from the library's
/// own `is_supported` over every `DataType` value.
fn supported_dtypes() -> Vec<DataType> {
    (i32::from(u8::MIN)..=i32::from(u8::MAX))
        .filter_map(|v| DataType::try_from(v).ok())
        .filter(|&d| is_supported(d))
        .collect()
}

/// Runs `body` on `CASES_PER_DTYPE` values of `strategy(dtype)` for every
/// supported dtype; panics naming the dtype and the shrunk failing value.
fn for_every_dtype<S: Strategy>(
    strategy: impl Fn(DataType) -> S,
    body: impl Fn(DataType, S::Value) -> Result<(), TestCaseError>,
) {
    for dtype in supported_dtypes() {
        let mut runner = TestRunner::new(Config {
            cases: CASES_PER_DTYPE,
            failure_persistence: None,
            ..Config::default()
        });
        if let Err(e) = runner.run(&strategy(dtype), |value| body(dtype, value)) {
            panic!("{dtype:?}: {e}");
        }
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn is_float_like(dtype: DataType) -> bool {
    use DataType::*;
    matches!(
        dtype,
        DtFloat | DtDouble | DtHalf | DtBfloat16 | DtComplex64 | DtComplex128
    )
}

/// Bit patterns worth hitting often: NaNs (quiet, signalling, negative),
/// infinities, signed zeros, subnormals and extremes for floats; zero, -1,
/// min and max for integers.
fn special_patterns(dtype: DataType) -> Vec<Elem> {
    use DataType::*;
    let f32s = || {
        [
            0x7fc0_0000u32,
            0xffc0_0001,
            0x7f80_0001,
            0x7fbf_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x8000_0000,
            0,
            1,
            0x8000_0001,
            0x7f7f_ffff,
            0x0080_0000,
        ]
        .map(|b| b.to_le_bytes().to_vec())
    };
    let f64s = || {
        [
            0x7ff8_0000_0000_0000u64,
            0xfff8_0000_0000_0001,
            0x7ff0_0000_0000_0001,
            0x7ff7_ffff_ffff_ffff,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x8000_0000_0000_0000,
            0,
            1,
            0x8000_0000_0000_0001,
            0x7fef_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
        ]
        .map(|b| b.to_le_bytes().to_vec())
    };
    let pairs = |parts: Vec<Elem>| -> Vec<Elem> {
        let mut out = Vec::new();
        for a in &parts {
            for b in &parts {
                out.push([a.as_slice(), b.as_slice()].concat());
            }
        }
        out
    };
    match dtype {
        DtFloat => f32s().to_vec(),
        DtDouble => f64s().to_vec(),
        DtComplex64 => pairs(f32s().to_vec()),
        DtComplex128 => pairs(f64s().to_vec()),
        DtHalf => [
            0x7e00u16, 0xfe01, 0x7c01, 0x7dff, 0x7c00, 0xfc00, 0x8000, 0, 1, 0x8001, 0x7bff, 0x0400,
        ]
        .map(|b| b.to_le_bytes().to_vec())
        .to_vec(),
        DtBfloat16 => [
            0x7fc0u16, 0xffc1, 0x7f81, 0x7fbf, 0x7f80, 0xff80, 0x8000, 0, 1, 0x8001, 0x7f7f, 0x0080,
        ]
        .map(|b| b.to_le_bytes().to_vec())
        .to_vec(),
        _ => {
            let size = element_size(dtype).expect("fixed-size dtype");
            let min = [vec![0u8; size - 1], vec![0x80]].concat();
            let max = [vec![0xffu8; size - 1], vec![0x7f]].concat();
            let one = [vec![1u8], vec![0; size - 1]].concat();
            vec![vec![0; size], vec![0xff; size], min, max, one]
        }
    }
}

/// Any element of `dtype`: random bit patterns, often a special one.
fn elem(dtype: DataType) -> BoxedStrategy<Elem> {
    match dtype {
        DataType::DtString => prop::collection::vec(any::<u8>(), 0..12).boxed(),
        DataType::DtBool => any::<bool>().prop_map(|b| vec![u8::from(b)]).boxed(),
        // Sub-byte integers hold a value of their width in each byte, as in
        // TF's memory: sign-extended, or the low bits.
        DataType::DtInt4 => (-8i8..8).prop_map(|v| v.to_le_bytes().to_vec()).boxed(),
        DataType::DtInt2 => (-2i8..2).prop_map(|v| v.to_le_bytes().to_vec()).boxed(),
        DataType::DtUint4 => (0u8..16).prop_map(|v| vec![v]).boxed(),
        DataType::DtUint2 => (0u8..4).prop_map(|v| vec![v]).boxed(),
        _ => {
            let size = element_size(dtype).expect("fixed-size dtype");
            let raw = prop::collection::vec(any::<u8>(), size).boxed();
            let special = select(special_patterns(dtype)).boxed();
            if is_float_like(dtype) {
                prop_oneof![1 => raw, 1 => special].boxed()
            } else {
                prop_oneof![3 => raw, 1 => special].boxed()
            }
        }
    }
}

/// Shapes of rank 0-4 with dimensions in `dims`.
fn shape(dims: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(dims, 0..=4)
}

/// A shape and one element per entry of it.
fn shape_and_elems(dtype: DataType) -> impl Strategy<Value = (Vec<usize>, Vec<Elem>)> {
    shape(0..=5).prop_flat_map(move |dims| {
        let n: usize = dims.iter().product();
        (Just(dims), prop::collection::vec(elem(dtype), n))
    })
}

/// The zero element of `dtype` (an empty string for `DT_STRING`).
fn zero(dtype: DataType) -> Elem {
    vec![0; element_size(dtype).unwrap_or(0)]
}

fn shape_proto(dims: &[i64]) -> TensorShapeProto {
    TensorShapeProto::from_sizes(dims)
}

fn as_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter()
        .map(|&d| i64::try_from(d).expect("small dim"))
        .collect()
}

fn le<const N: usize>(e: &[u8]) -> [u8; N] {
    e.try_into().expect("element of the dtype's size")
}

/// A proto holding `elems` in the typed field TensorFlow's `AsProtoField`
/// uses for `dtype` (written here independently of the library).
fn typed_proto(dtype: DataType, dims: &[i64], elems: &[Elem]) -> TensorProto {
    use DataType::*;
    let mut p = TensorProto {
        dtype: dtype as i32,
        tensor_shape: Some(shape_proto(dims)),
        ..Default::default()
    };
    let ints = |f: fn(&[u8]) -> i32| elems.iter().map(|e| f(e)).collect::<Vec<i32>>();
    match dtype {
        DtFloat => p.float_val = elems.iter().map(|e| f32::from_le_bytes(le(e))).collect(),
        DtDouble => p.double_val = elems.iter().map(|e| f64::from_le_bytes(le(e))).collect(),
        DtInt32 | DtQint32 => p.int_val = ints(|e| i32::from_le_bytes(le(e))),
        DtInt16 | DtQint16 => p.int_val = ints(|e| i32::from(i16::from_le_bytes(le(e)))),
        DtInt8 | DtQint8 => p.int_val = ints(|e| i32::from(i8::from_le_bytes(le(e)))),
        DtUint8 | DtQuint8 => p.int_val = ints(|e| i32::from(e[0])),
        DtUint16 | DtQuint16 | DtHalf | DtBfloat16 => {
            let v = ints(|e| i32::from(u16::from_le_bytes(le(e))));
            if matches!(dtype, DtHalf | DtBfloat16) {
                p.half_val = v;
            } else {
                p.int_val = v;
            }
        }
        DtInt64 => p.int64_val = elems.iter().map(|e| i64::from_le_bytes(le(e))).collect(),
        DtUint32 => p.uint32_val = elems.iter().map(|e| u32::from_le_bytes(le(e))).collect(),
        DtUint64 => p.uint64_val = elems.iter().map(|e| u64::from_le_bytes(le(e))).collect(),
        DtBool => p.bool_val = elems.iter().map(|e| e[0] != 0).collect(),
        DtComplex64 => {
            p.scomplex_val = elems
                .iter()
                .flat_map(|e| e.chunks_exact(4).map(|c| f32::from_le_bytes(le(c))))
                .collect()
        }
        DtComplex128 => {
            p.dcomplex_val = elems
                .iter()
                .flat_map(|e| e.chunks_exact(8).map(|c| f64::from_le_bytes(le(c))))
                .collect()
        }
        DtString => p.string_val = elems.to_vec(),
        DtInt4 | DtInt2 => p.int_val = ints(|e| i32::from(i8::from_le_bytes(le(e)))),
        DtUint4 | DtUint2 => p.int_val = ints(|e| i32::from(e[0])),
        DtFloat8E5m2 | DtFloat8E4m3fn | DtFloat8E4m3fnuz | DtFloat8E4m3b11fnuz
        | DtFloat8E5m2fnuz | DtFloat4E2m1fn => p.float8_val = elems.concat(),
        other => panic!("the test does not know the typed field of {other:?}: add it"),
    }
    p
}

/// The tensor of `dtype` and `dims` holding `elems`.
fn build(dtype: DataType, dims: &[usize], elems: &[Elem]) -> Tensor {
    match dtype {
        DataType::DtString => Tensor::from_strings(dims, elems.to_vec()).expect("string tensor"),
        DataType::DtBool => {
            Tensor::from_vec(dims, elems.iter().map(|e| e[0] != 0).collect()).expect("bools")
        }
        _ => {
            let mut t = Tensor::zeros(dtype, dims).expect("zeros");
            t.as_mut_bytes()
                .expect("fresh tensor")
                .copy_from_slice(&elems.concat());
            t
        }
    }
}

/// The elements of `t` as the test sees them.
fn elems_of(t: &Tensor) -> Vec<Elem> {
    match t.as_strings() {
        Ok(s) => s.to_vec(),
        Err(_) => {
            let size = element_size(t.dtype()).expect("fixed-size dtype");
            let bytes = t.as_bytes().expect("host tensor");
            bytes.chunks_exact(size).map(<[u8]>::to_vec).collect()
        }
    }
}

/// `t` has `dtype` and `dims` and holds exactly `elems`, bit for bit.
fn check_tensor(
    what: &str,
    t: &Tensor,
    dtype: DataType,
    dims: &[usize],
    elems: &[Elem],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(t.dtype(), dtype, "{}: dtype", what);
    prop_assert_eq!(t.dims(), dims, "{}: shape", what);
    prop_assert_eq!(t.num_elements(), elems.len(), "{}: element count", what);
    prop_assert_eq!(elems_of(t), elems.to_vec(), "{}: elements", what);
    Ok(())
}

fn decode(p: &TensorProto, what: &str) -> Result<Tensor, TestCaseError> {
    Tensor::from_proto(p).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))
}

fn through_prost(p: &TensorProto) -> Result<TensorProto, TestCaseError> {
    TensorProto::decode(p.encode_to_vec().as_slice())
        .map_err(|e| TestCaseError::fail(format!("prost decode: {e}")))
}

#[test]
fn the_supported_dtypes_are_the_expected_ones() {
    use DataType::*;
    let dtypes = supported_dtypes();
    for d in [
        DtFloat,
        DtDouble,
        DtHalf,
        DtBfloat16,
        DtInt8,
        DtInt16,
        DtInt32,
        DtInt64,
        DtUint8,
        DtUint16,
        DtUint32,
        DtUint64,
        DtBool,
        DtString,
        DtComplex64,
        DtComplex128,
        DtQint8,
        DtQuint8,
        DtQint16,
        DtQuint16,
        DtQint32,
    ] {
        assert!(dtypes.contains(&d), "{d:?} is not supported: {dtypes:?}");
    }
    // The rest are refused by name, never misread.
    for v in 0..=200 {
        let Ok(d) = DataType::try_from(v) else {
            continue;
        };
        if dtypes.contains(&d) {
            continue;
        }
        let p = TensorProto {
            dtype: v,
            ..Default::default()
        };
        assert_eq!(
            Tensor::from_proto(&p),
            Err(TensorError::UnsupportedDtype(d)),
            "{d:?}"
        );
    }
    assert!(matches!(
        Tensor::from_proto(&TensorProto {
            dtype: 99,
            ..Default::default()
        }),
        Err(TensorError::UnknownDtype(99))
    ));
}

#[test]
fn round_trips_keep_dtype_shape_and_bits() {
    for_every_dtype(shape_and_elems, |dtype, (dims, elems)| {
        let t = build(dtype, &dims, &elems);
        check_tensor("built", &t, dtype, &dims, &elems)?;
        let shape = Some(shape_proto(&as_i64(&dims)));

        // tensor_content (strings: string_val).
        let content = t.to_proto();
        prop_assert_eq!(content.dtype, dtype as i32);
        prop_assert_eq!(&content.tensor_shape, &shape);
        if dtype == DataType::DtString {
            prop_assert!(content.tensor_content.is_empty());
            prop_assert_eq!(&content.string_val, &elems);
        } else {
            prop_assert_eq!(&content.tensor_content, &elems.concat());
        }
        let back = decode(&content, "to_proto")?;
        check_tensor("to_proto", &back, dtype, &dims, &elems)?;
        prop_assert_eq!(&back, &t);
        let back = decode(&through_prost(&content)?, "to_proto + prost")?;
        check_tensor("to_proto + prost", &back, dtype, &dims, &elems)?;

        // Typed fields, compared bytewise with the independent encoder (so
        // NaNs compare by their bits).
        let field = t.to_proto_field();
        prop_assert!(field.tensor_content.is_empty());
        let expected = typed_proto(dtype, &as_i64(&dims), &elems);
        prop_assert_eq!(field.encode_to_vec(), expected.encode_to_vec());
        let back = decode(&field, "to_proto_field")?;
        check_tensor("to_proto_field", &back, dtype, &dims, &elems)?;
        let back = decode(&through_prost(&field)?, "to_proto_field + prost")?;
        check_tensor("to_proto_field + prost", &back, dtype, &dims, &elems)?;
        Ok(())
    });
}

/// A shape of at least one element, a count `k <= n` and `k` elements.
fn shorthand_case(dtype: DataType) -> impl Strategy<Value = (Vec<usize>, Vec<Elem>)> {
    shape(1..=5)
        .prop_flat_map(|dims| {
            let n: usize = dims.iter().product();
            (Just(dims), 0..=n)
        })
        .prop_flat_map(move |(dims, k)| (Just(dims), prop::collection::vec(elem(dtype), k)))
}

#[test]
fn fewer_typed_values_repeat_the_last_and_none_mean_zeros() {
    // TF's FromProtoField: `in_n == 0` fills T() (zeros, empty strings);
    // `0 < in_n < n` copies the values and fills the rest with the last.
    for_every_dtype(shorthand_case, |dtype, (dims, given)| {
        let n: usize = dims.iter().product();
        let fill = given.last().cloned().unwrap_or_else(|| zero(dtype));
        let mut expected = given.clone();
        expected.resize(n, fill);
        let p = typed_proto(dtype, &as_i64(&dims), &given);
        let t = decode(&p, "shorthand")?;
        check_tensor("shorthand", &t, dtype, &dims, &expected)?;
        let t = decode(&through_prost(&p)?, "shorthand + prost")?;
        check_tensor("shorthand + prost", &t, dtype, &dims, &expected)?;
        Ok(())
    });
}

#[test]
fn more_typed_values_than_elements_are_refused() {
    // Documented in `Tensor::from_proto`: more values are an error
    // (TensorFlow's own FromProtoField ignores the extra values instead).
    let case = |dtype: DataType| {
        shape(0..=3).prop_flat_map(move |dims| {
            let n: usize = dims.iter().product();
            (
                Just(dims),
                prop::collection::vec(elem(dtype), n + 1..=n + 3),
            )
        })
    };
    for_every_dtype(case, |dtype, (dims, given)| {
        let p = typed_proto(dtype, &as_i64(&dims), &given);
        let result = Tensor::from_proto(&p);
        prop_assert!(
            matches!(result, Err(TensorError::TooManyValues { .. })),
            "{:?}",
            result
        );
        Ok(())
    });
}

#[test]
fn int_val_and_half_val_are_narrowed_as_static_cast() {
    use DataType::*;
    // How TensorFlow narrows one int_val/half_val value to an element.
    type Narrow = fn(i32) -> Elem;
    let narrow: [(DataType, Narrow); 11] = [
        (DtInt8, |v| (v as i8).to_le_bytes().to_vec()),
        (DtQint8, |v| (v as i8).to_le_bytes().to_vec()),
        (DtUint8, |v| (v as u8).to_le_bytes().to_vec()),
        (DtQuint8, |v| (v as u8).to_le_bytes().to_vec()),
        (DtInt16, |v| (v as i16).to_le_bytes().to_vec()),
        (DtQint16, |v| (v as i16).to_le_bytes().to_vec()),
        (DtUint16, |v| (v as u16).to_le_bytes().to_vec()),
        (DtQuint16, |v| (v as u16).to_le_bytes().to_vec()),
        (DtInt32, |v| v.to_le_bytes().to_vec()),
        (DtHalf, |v| (v as u16).to_le_bytes().to_vec()),
        (DtBfloat16, |v| (v as u16).to_le_bytes().to_vec()),
    ];
    for (dtype, cast) in narrow {
        let strategy = prop::collection::vec(any::<i32>(), 1..=8);
        let result = runner(64).run(&strategy, |vals| {
            let mut p = TensorProto {
                dtype: dtype as i32,
                tensor_shape: Some(shape_proto(&[vals.len() as i64])),
                ..Default::default()
            };
            if matches!(dtype, DtHalf | DtBfloat16) {
                p.half_val = vals.clone();
            } else {
                p.int_val = vals.clone();
            }
            let t = decode(&p, "narrowing")?;
            let expected: Vec<Elem> = vals.iter().map(|&v| cast(v)).collect();
            check_tensor("narrowing", &t, dtype, &[vals.len()], &expected)
        });
        if let Err(e) = result {
            panic!("{dtype:?}: {e}");
        }
    }
}

/// A dimension size: mostly small, sometimes negative or huge.
fn hostile_dim() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -2i64..=6,
        1 => select(vec![
            -1,
            i64::MIN,
            i64::MAX,
            1 << 31,
            1 << 32,
            (1 << 32) + 1,
            1 << 62,
            (1 << 62) + 1,
            1 << 40,
            1 << 20,
            (1 << 20) + 1,
            3_037_000_500, // its square overflows i64
        ]),
        1 => any::<i64>(),
    ]
}

fn hostile_dtype() -> impl Strategy<Value = i32> {
    prop_oneof![
        6 => select(supported_dtypes()).prop_map(|d| d as i32),
        2 => -3i32..=140,
        1 => any::<i32>(),
    ]
}

fn small<T: std::fmt::Debug + Clone>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Vec<T>> {
    prop_oneof![2 => Just(Vec::new()), 1 => prop::collection::vec(s, 0..=8)]
}

prop_compose! {
    fn hostile_shape()(
        present in prop::bool::weighted(0.9),
        unknown_rank in prop::bool::weighted(0.1),
        dims in prop::collection::vec(hostile_dim(), 0..=6),
    ) -> Option<TensorShapeProto> {
        present.then(|| TensorShapeProto { unknown_rank, ..shape_proto(&dims) })
    }
}

prop_compose! {
    fn hostile_fields()(
        float_val in small(any::<f32>()),
        double_val in small(any::<f64>()),
        int_val in small(any::<i32>()),
        string_val in small(prop::collection::vec(any::<u8>(), 0..6)),
        scomplex_val in small(any::<f32>()),
        int64_val in small(any::<i64>()),
        bool_val in small(any::<bool>()),
        dcomplex_val in small(any::<f64>()),
        half_val in small(any::<i32>()),
        uint32_val in small(any::<u32>()),
        uint64_val in small(any::<u64>()),
    ) -> TensorProto {
        TensorProto {
            float_val, double_val, int_val, string_val, scomplex_val, int64_val,
            bool_val, dcomplex_val, half_val, uint32_val, uint64_val,
            ..Default::default()
        }
    }
}

prop_compose! {
    fn hostile_proto()(
        dtype in hostile_dtype(),
        tensor_shape in hostile_shape(),
        version_number in any::<i32>(),
        tensor_content in prop_oneof![
            2 => Just(Vec::new()),
            1 => prop::collection::vec(any::<u8>(), 0..=80),
        ],
        fields in hostile_fields(),
    ) -> TensorProto {
        TensorProto { dtype, tensor_shape, version_number, tensor_content, ..fields }
    }
}

#[test]
fn hostile_protos_never_panic() {
    let ok = std::cell::Cell::new(0usize);
    let result = runner(4096).run(&hostile_proto(), |p| {
        let Ok(t) = Tensor::from_proto_with_limit(&p, LIMIT) else {
            return Ok(());
        };
        ok.set(ok.get() + 1);
        // An accepted proto has a valid dtype and a fully known shape, and
        // the tensor has exactly that shape's elements.
        prop_assert_eq!(t.dtype() as i32, p.dtype);
        let dims: Vec<i64> = p
            .tensor_shape
            .as_ref()
            .map(|s| s.dim.iter().map(|d| d.size).collect())
            .unwrap_or_default();
        prop_assert!(!p.tensor_shape.as_ref().is_some_and(|s| s.unknown_rank));
        prop_assert_eq!(as_i64(t.dims()), dims.clone());
        let n = dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?));
        prop_assert_eq!(Some(t.num_elements() as u64), n);
        let elems = elems_of(&t);
        prop_assert_eq!(elems.len(), t.num_elements());
        if let Some(size) = element_size(t.dtype()) {
            prop_assert!((t.num_elements() * size) as u64 <= LIMIT);
            prop_assert!(elems.iter().all(|e| e.len() == size));
            if !p.tensor_content.is_empty() {
                prop_assert_eq!(p.tensor_content.len(), t.num_elements() * size);
                // bool and the sub-byte integers keep their values, not
                // every bit of a byte.
                let canonical = matches!(
                    t.dtype(),
                    DataType::DtBool
                        | DataType::DtInt4
                        | DataType::DtInt2
                        | DataType::DtUint4
                        | DataType::DtUint2
                );
                if !canonical {
                    prop_assert_eq!(elems.concat(), p.tensor_content.clone());
                }
            }
        } else {
            prop_assert!(
                p.tensor_content.is_empty(),
                "string tensor from tensor_content"
            );
        }
        // What was accepted converts back to the same tensor.
        let content = t.to_proto();
        prop_assert_eq!(Tensor::from_proto(&content), Ok(t.clone()));
        let field = t.to_proto_field();
        prop_assert_eq!(Tensor::from_proto(&field), Ok(t));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The generator must reach the decoding paths, not only the early errors.
    let ok = ok.get();
    assert!(ok > 100, "only {ok} hostile protos were accepted");
}

#[test]
fn hostile_protos_decode_the_same_after_prost() {
    // Every hostile proto survives a prost round trip and still decodes the
    // same way (same Ok tensor or the same error).
    let result = runner(1024).run(&hostile_proto(), |p| {
        let again = through_prost(&p)?;
        prop_assert_eq!(
            Tensor::from_proto_with_limit(&p, LIMIT),
            Tensor::from_proto_with_limit(&again, LIMIT)
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn hand_picked_hostile_protos_give_the_right_errors() {
    // A hand-picked hostile case per path: wrong content length, content on a
    // string tensor, a shape over the limit, an overflowing shape.
    let p = TensorProto {
        dtype: DataType::DtComplex64 as i32,
        tensor_shape: Some(shape_proto(&[3])),
        tensor_content: vec![0; 23],
        ..Default::default()
    };
    assert!(matches!(
        Tensor::from_proto_with_limit(&p, LIMIT),
        Err(TensorError::ContentLength {
            expected: 24,
            actual: 23,
            ..
        })
    ));
    let p = TensorProto {
        dtype: DataType::DtString as i32,
        tensor_content: vec![1],
        ..Default::default()
    };
    assert_eq!(
        Tensor::from_proto_with_limit(&p, LIMIT),
        Err(TensorError::StringContent)
    );
    let p = TensorProto {
        dtype: DataType::DtFloat as i32,
        tensor_shape: Some(shape_proto(&[1 << 20])),
        ..Default::default()
    };
    assert!(matches!(
        Tensor::from_proto_with_limit(&p, LIMIT),
        Err(TensorError::TooLarge { .. })
    ));
    let p = TensorProto {
        dtype: DataType::DtFloat as i32,
        tensor_shape: Some(shape_proto(&[3_037_000_500, 3_037_000_500])),
        ..Default::default()
    };
    assert!(matches!(
        Tensor::from_proto_with_limit(&p, LIMIT),
        Err(TensorError::ShapeOverflow { .. })
    ));
}

#[test]
fn content_length_error_with_no_limit_does_not_overflow() {
    // n = 2^62 elements of 16 bytes: `bytes` saturates to u64::MAX. This
    // once passed a limit of u64::MAX and overflowed `n * size` building
    // the ContentLength error; the limit is now capped at isize::MAX.
    let p = TensorProto {
        dtype: DataType::DtComplex128 as i32,
        tensor_shape: Some(shape_proto(&[1 << 62])),
        tensor_content: vec![0; 16],
        ..Default::default()
    };
    // Raising the process-wide cap cannot disturb the other tests (they
    // pass their own, smaller limits or allocate little).
    let previous = registry_core::limits::set_max_allocation_bytes(u64::MAX);
    let result = std::panic::catch_unwind(|| Tensor::from_proto_with_limit(&p, u64::MAX));
    registry_core::limits::set_max_allocation_bytes(previous);
    assert!(
        matches!(result, Ok(Err(_))),
        "expected an error, got {:?}",
        result.map_err(|_| "a panic")
    );
}
