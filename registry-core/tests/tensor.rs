//! Tests of `registry_core::tensor`: construction, views, sharing, and
//! TensorProto conversion in every encoding.

use std::path::PathBuf;

use prost::Message;
use registry_core::proto::{DataType, GraphDef, TensorProto, TensorShapeProto, attr_value};
use registry_core::tensor::{
    Complex64, Complex128, HOST_ALIGNMENT, INLINE_ALIGNMENT, INLINE_CAPACITY, Tensor,
    TensorElement, TensorError, TensorShape, bf16, f16,
};

fn shape_proto(dims: &[i64]) -> Option<TensorShapeProto> {
    Some(TensorShapeProto::from_sizes(dims))
}

fn proto(dtype: DataType, dims: &[i64]) -> TensorProto {
    TensorProto {
        dtype: dtype as i32,
        tensor_shape: shape_proto(dims),
        ..Default::default()
    }
}

/// Builds, views, mutates and round-trips one dtype with sample values.
fn check_dtype<T: TensorElement>(values: [T; 6]) {
    let t = Tensor::from_vec([2, 3], values.to_vec()).unwrap();
    assert_eq!(t.dtype(), T::DTYPE);
    assert_eq!(t.dims(), &[2, 3]);
    assert_eq!(t.num_elements(), 6);
    assert_eq!(t.as_slice::<T>().unwrap(), &values);
    let bytes = t.as_bytes().unwrap();
    let alignment = if bytes.len() <= INLINE_CAPACITY {
        INLINE_ALIGNMENT
    } else {
        HOST_ALIGNMENT
    };
    assert_eq!(
        bytes.as_ptr() as usize % alignment,
        0,
        "{:?} buffer of {} bytes is {alignment}-byte aligned",
        T::DTYPE,
        bytes.len()
    );

    // Both encodings round-trip.
    let content = t.to_proto();
    assert!(!content.tensor_content.is_empty(), "{:?}", T::DTYPE);
    assert_eq!(
        content.tensor_content.len(),
        6 * std::mem::size_of::<T>(),
        "{:?}",
        T::DTYPE
    );
    assert_eq!(Tensor::from_proto(&content).unwrap(), t, "{:?}", T::DTYPE);
    let field = t.to_proto_field();
    assert!(field.tensor_content.is_empty());
    assert_eq!(Tensor::from_proto(&field).unwrap(), t, "{:?}", T::DTYPE);
    // And survive the wire.
    let wire = TensorProto::decode(field.encode_to_vec().as_slice()).unwrap();
    assert_eq!(Tensor::from_proto(&wire).unwrap(), t);

    // Zeros, scalars and mutation.
    let mut z = Tensor::zeros(T::DTYPE, [3]).unwrap();
    let zero = z.as_slice::<T>().unwrap()[0];
    assert!(z.as_slice::<T>().unwrap().iter().all(|v| *v == zero));
    z.as_mut_slice::<T>().unwrap()[2] = values[1];
    assert_eq!(z.as_slice::<T>().unwrap()[2], values[1]);
    let s = Tensor::scalar(values[4]);
    assert_eq!(s.dims(), &[] as &[usize]);
    assert_eq!(s.as_slice::<T>().unwrap(), &[values[4]]);
    assert_eq!(Tensor::from_proto(&s.to_proto()).unwrap(), s);
    assert_eq!(Tensor::from_proto(&s.to_proto_field()).unwrap(), s);

    // A zero-element tensor.
    let e = Tensor::from_vec([0, 4], Vec::<T>::new()).unwrap();
    assert!(e.as_slice::<T>().unwrap().is_empty());
    assert_eq!(Tensor::from_proto(&e.to_proto()).unwrap(), e);

    // Repeated-last-value shorthand via the typed field: 2 of 6 values.
    let mut short = t.to_proto_field();
    short.tensor_shape = shape_proto(&[6]);
    truncate_fields(&mut short, 2);
    let r = Tensor::from_proto(&short).unwrap();
    let mut expect = vec![values[1]; 6];
    expect[0] = values[0];
    assert_eq!(
        r.as_slice::<T>().unwrap(),
        expect.as_slice(),
        "{:?}",
        T::DTYPE
    );
    // No values: all zeros.
    truncate_fields(&mut short, 0);
    let r = Tensor::from_proto(&short).unwrap();
    assert_eq!(r, Tensor::zeros(T::DTYPE, [6]).unwrap(), "{:?}", T::DTYPE);

    // Too many values.
    let mut many = t.to_proto_field();
    many.tensor_shape = shape_proto(&[5]);
    let err = Tensor::from_proto(&many).unwrap_err();
    assert!(
        matches!(
            err,
            TensorError::TooManyValues {
                count: 6,
                expected: 5,
                ..
            }
        ),
        "{:?}: {err}",
        T::DTYPE
    );
    // Wrong content length.
    let mut bad = t.to_proto();
    bad.tensor_content.pop();
    let err = Tensor::from_proto(&bad).unwrap_err();
    assert!(
        matches!(err, TensorError::ContentLength { actual, .. } if actual == 6 * std::mem::size_of::<T>() - 1),
        "{err}"
    );

    // Dtype mismatch on views.
    let other = if T::DTYPE == DataType::DtFloat {
        DataType::DtInt32
    } else {
        DataType::DtFloat
    };
    let w = Tensor::zeros(other, [6]).unwrap();
    let err = w.as_slice::<T>().unwrap_err();
    assert_eq!(
        err,
        TensorError::DtypeMismatch {
            expected: T::DTYPE,
            actual: other
        }
    );
}

/// Keeps the first `n` values of whichever typed field is set.
fn truncate_fields(p: &mut TensorProto, n: usize) {
    p.float_val.truncate(n);
    p.double_val.truncate(n);
    p.int_val.truncate(n);
    p.int64_val.truncate(n);
    p.bool_val.truncate(n);
    p.half_val.truncate(n);
    p.uint32_val.truncate(n);
    p.uint64_val.truncate(n);
    p.scomplex_val.truncate(2 * n);
    p.dcomplex_val.truncate(2 * n);
    p.string_val.truncate(n);
}

#[test]
fn every_numeric_dtype() {
    check_dtype([1.5f32, -2.0, 3.25, f32::MAX, f32::MIN_POSITIVE, -0.0]);
    check_dtype([1.5f64, -2.0, 3.25, f64::MAX, 1e-300, -0.0]);
    check_dtype([1.5, -2.0, 65504.0, 0.25, 7.0, -1.0].map(f16::from_f32));
    check_dtype([1.5, -2.0, 3.0e38, 0.25, 7.0, -1.0].map(bf16::from_f32));
    check_dtype([1i8, -2, i8::MAX, i8::MIN, 0, 5]);
    check_dtype([1i16, -2, i16::MAX, i16::MIN, 0, 5]);
    check_dtype([1i32, -2, i32::MAX, i32::MIN, 0, 5]);
    check_dtype([1i64, -2, i64::MAX, i64::MIN, 0, 5]);
    check_dtype([1u8, 2, u8::MAX, 0, 7, 5]);
    check_dtype([1u16, 2, u16::MAX, 0, 7, 5]);
    check_dtype([1u32, 2, u32::MAX, 0, 7, 5]);
    check_dtype([1u64, 2, u64::MAX, 0, 7, 5]);
    check_dtype([true, false, true, true, false, true]);
    check_dtype([
        Complex64::new(1.0, -1.0),
        Complex64::new(2.0, 0.5),
        Complex64::new(0.0, 0.0),
        Complex64::new(-3.0, 4.0),
        Complex64::new(1e30, -1e-30),
        Complex64::new(7.0, 8.0),
    ]);
    check_dtype([
        Complex128::new(1.0, -1.0),
        Complex128::new(2.0, 0.5),
        Complex128::new(0.0, 0.0),
        Complex128::new(-3.0, 4.0),
        Complex128::new(1e300, -1e-300),
        Complex128::new(7.0, 8.0),
    ]);
}

#[test]
fn element_types_map_to_dtypes() {
    assert_eq!(f32::DTYPE, DataType::DtFloat);
    assert_eq!(f64::DTYPE, DataType::DtDouble);
    assert_eq!(f16::DTYPE, DataType::DtHalf);
    assert_eq!(bf16::DTYPE, DataType::DtBfloat16);
    assert_eq!(i8::DTYPE, DataType::DtInt8);
    assert_eq!(u64::DTYPE, DataType::DtUint64);
    assert_eq!(bool::DTYPE, DataType::DtBool);
    assert_eq!(Complex64::DTYPE, DataType::DtComplex64);
    assert_eq!(Complex128::DTYPE, DataType::DtComplex128);
    assert_eq!(std::mem::size_of::<Complex64>(), 8);
    assert_eq!(std::mem::size_of::<Complex128>(), 16);
}

#[test]
fn string_tensors() {
    let data = vec![b"a".to_vec(), vec![], vec![0xff, 0], b"longer".to_vec()];
    let t = Tensor::from_strings([2, 2], data.clone()).unwrap();
    assert_eq!(t.dtype(), DataType::DtString);
    assert_eq!(t.as_strings().unwrap(), data.as_slice());
    assert!(t.as_slice::<u8>().is_err());
    assert!(t.as_bytes().is_err());
    assert!(
        Tensor::zeros(DataType::DtFloat, [1])
            .unwrap()
            .as_strings()
            .is_err()
    );

    let p = t.to_proto();
    assert_eq!(p.string_val, data);
    assert!(p.tensor_content.is_empty());
    assert_eq!(Tensor::from_proto(&p).unwrap(), t);
    assert_eq!(Tensor::from_proto(&t.to_proto_field()).unwrap(), t);

    let z = Tensor::zeros(DataType::DtString, [3]).unwrap();
    assert_eq!(z.as_strings().unwrap(), &[vec![], vec![], vec![]]);
    let s = Tensor::scalar_string("hi");
    assert_eq!(s.as_strings().unwrap(), &[b"hi".to_vec()]);

    // Shorthand, zero values, too many values.
    let mut p = proto(DataType::DtString, &[3]);
    p.string_val = vec![b"x".to_vec(), b"y".to_vec()];
    let r = Tensor::from_proto(&p).unwrap();
    assert_eq!(
        r.as_strings().unwrap(),
        &[b"x".to_vec(), b"y".to_vec(), b"y".to_vec()]
    );
    p.string_val.clear();
    assert_eq!(Tensor::from_proto(&p).unwrap(), z);
    p.string_val = vec![vec![]; 4];
    assert!(matches!(
        Tensor::from_proto(&p),
        Err(TensorError::TooManyValues {
            count: 4,
            expected: 3,
            ..
        })
    ));
    p.string_val.clear();
    p.tensor_content = vec![1, 2];
    assert_eq!(Tensor::from_proto(&p), Err(TensorError::StringContent));

    // Mutation when unique only.
    let mut m = Tensor::from_strings([1], vec![b"a".to_vec()]).unwrap();
    m.as_mut_strings().unwrap()[0].push(b'b');
    let shared = m.clone();
    assert!(matches!(
        m.as_mut_strings(),
        Err(TensorError::SharedBuffer { refs: 2 })
    ));
    assert_eq!(shared.as_strings().unwrap(), &[b"ab".to_vec()]);
}

#[test]
fn quantized_dtypes_via_proto() {
    for (dtype, vals, size) in [
        (DataType::DtQint8, vec![-3, 4], 1),
        (DataType::DtQuint8, vec![250, 4], 1),
        (DataType::DtQint16, vec![-300, 4], 2),
        (DataType::DtQuint16, vec![60000, 4], 2),
        (DataType::DtQint32, vec![-70000, 4], 4),
    ] {
        let mut p = proto(dtype, &[3]);
        p.int_val = vals.clone();
        let t = Tensor::from_proto(&p).unwrap();
        assert_eq!(t.dtype(), dtype);
        assert_eq!(t.as_bytes().unwrap().len(), 3 * size);
        let f = t.to_proto_field();
        assert_eq!(f.int_val, vec![vals[0], vals[1], vals[1]], "{dtype:?}");
        assert_eq!(Tensor::from_proto(&t.to_proto()).unwrap(), t);
        // Quantized tensors have no typed view of their plain integer type.
        assert!(t.as_slice::<i8>().is_err());
    }
}

#[test]
fn shapes_check_overflow_and_negative_dims() {
    let s = TensorShape::new([2, 3, 4]).unwrap();
    assert_eq!(
        (s.rank(), s.num_elements(), s.dim(1), s.dim(3)),
        (3, 24, Some(3), None)
    );
    assert_eq!(s.to_string(), "[2,3,4]");
    assert_eq!(TensorShape::scalar().num_elements(), 1);
    assert_eq!(TensorShape::new([5, 0]).unwrap().num_elements(), 0);
    assert_eq!(TensorShape::from_proto(&s.to_proto()).unwrap(), s);

    assert!(matches!(
        TensorShape::new([usize::MAX, 2]),
        Err(TensorError::ShapeOverflow { .. })
    ));
    assert!(matches!(
        TensorShape::new([1 << 32, 1 << 32]),
        Err(TensorError::ShapeOverflow { .. })
    ));
    // A dimension beyond i64 is refused even when another is 0.
    assert!(TensorShape::new([usize::MAX, 0]).is_err());
    assert_eq!(
        TensorShape::from_i64(&[2, -1, 3]),
        Err(TensorError::NegativeDim {
            dims: vec![2, -1, 3],
            index: 1
        })
    );
    assert!(matches!(
        TensorShape::from_i64(&[i64::MAX, 2]),
        Err(TensorError::ShapeOverflow { .. })
    ));
    let unknown = TensorShapeProto {
        dim: vec![],
        unknown_rank: true,
    };
    assert_eq!(
        TensorShape::from_proto(&unknown),
        Err(TensorError::UnknownRank)
    );

    // Constructors.
    assert!(matches!(
        Tensor::from_vec([2, 2], vec![1.0f32; 3]),
        Err(TensorError::ElementCount {
            expected: 4,
            actual: 3,
            ..
        })
    ));
    assert!(Tensor::zeros(DataType::DtFloat, [usize::MAX]).is_err());
    assert!(matches!(
        Tensor::zeros(DataType::DtResource, [1]),
        Err(TensorError::UnsupportedDtype(DataType::DtResource))
    ));
    // Error messages name dtype and shape.
    let msg = Tensor::from_vec([2, 2], vec![1u8; 3])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("[2,2]") && msg.contains('4') && msg.contains('3'),
        "{msg}"
    );
    let msg = Tensor::scalar(1i32)
        .as_slice::<f32>()
        .unwrap_err()
        .to_string();
    assert!(msg.contains("int32") && msg.contains("float"), "{msg}");
}

#[test]
fn buffers_are_shared_and_forwardable() {
    // Over 16 bytes: see `small_tensors_are_held_by_value` for the rest.
    let mut a = Tensor::from_vec([6], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    assert!(a.is_unique());
    let b = a.clone();
    assert!(a.shares_buffer_with(&b));
    assert!(!a.is_unique() && !b.is_unique());
    assert!(matches!(
        a.as_mut_slice::<i32>(),
        Err(TensorError::SharedBuffer { refs: 2 })
    ));
    let r = b.reshape([2, 3]).unwrap();
    assert!(r.shares_buffer_with(&a));
    assert_eq!(r.dims(), &[2, 3]);
    assert!(b.reshape([4]).is_err());
    drop(b);
    drop(r);
    // Unique again: a kernel may write in place (forward the input).
    assert!(a.is_unique());
    a.as_mut_slice::<i32>().unwrap()[0] = 10;
    assert_eq!(a.as_slice::<i32>().unwrap(), &[10, 2, 3, 4, 5, 6]);
    // Dtype is checked before uniqueness.
    assert!(matches!(
        a.as_mut_slice::<f32>(),
        Err(TensorError::DtypeMismatch { .. })
    ));
    let c = Tensor::from_vec([6], vec![10i32, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(a, c);
    assert!(!a.shares_buffer_with(&c));
    // Tensors move between threads.
    let h = std::thread::spawn(move || c.as_slice::<i32>().unwrap().iter().sum::<i32>());
    assert_eq!(h.join().unwrap(), 30);
}

#[test]
fn small_tensors_are_held_by_value() {
    // Every dtype's tensors of at most INLINE_CAPACITY bytes: a clone is an
    // equal, independent copy, so both stay unique and writable.
    let mut a = Tensor::from_vec([4], vec![1i32, 2, 3, 4]).unwrap();
    let b = a.clone();
    assert!(!a.shares_buffer_with(&b) && a.is_unique() && b.is_unique());
    a.as_mut_slice::<i32>().unwrap()[0] = 9;
    assert_eq!(a.as_slice::<i32>().unwrap(), &[9, 2, 3, 4]);
    assert_eq!(b.as_slice::<i32>().unwrap(), &[1, 2, 3, 4]);
    // A reshape is a copy too, of the same values.
    let r = b.reshape([2, 2]).unwrap();
    assert_eq!(r.as_slice::<i32>().unwrap(), b.as_slice::<i32>().unwrap());
    assert!(!r.shares_buffer_with(&b));
    // The boundary: 16 bytes by value, 17 shared.
    let at = Tensor::zeros(DataType::DtUint8, [INLINE_CAPACITY]).unwrap();
    assert!(at.clone().is_unique());
    let over = Tensor::zeros(DataType::DtUint8, [INLINE_CAPACITY + 1]).unwrap();
    let shared = over.clone();
    assert!(!over.is_unique() && shared.shares_buffer_with(&over));
    // A scalar of the widest type, and an empty tensor.
    let z = Tensor::scalar(Complex128 { re: 1.5, im: -2.0 });
    assert_eq!(
        z.as_bytes().unwrap().as_ptr() as usize % INLINE_ALIGNMENT,
        0
    );
    assert_eq!(z.clone(), z);
    let e = Tensor::zeros(DataType::DtDouble, [0, 3]).unwrap();
    assert!(e.clone().is_unique() && e.as_slice::<f64>().unwrap().is_empty());
    // Strings are shared whatever their size.
    let s = Tensor::from_strings([1], vec![b"a".to_vec()]).unwrap();
    assert!(s.clone().shares_buffer_with(&s));
}

#[test]
fn proto_shorthand_and_scalars() {
    let mut p = proto(DataType::DtInt32, &[2, 3]);
    p.int_val = vec![7];
    let t = Tensor::from_proto(&p).unwrap();
    assert_eq!(t.as_slice::<i32>().unwrap(), &[7; 6]);
    // A missing shape is a scalar.
    let p = TensorProto {
        dtype: DataType::DtDouble as i32,
        double_val: vec![2.5],
        ..Default::default()
    };
    assert_eq!(Tensor::from_proto(&p).unwrap(), Tensor::scalar(2.5f64));
    // Content is little-endian.
    let mut p = proto(DataType::DtUint16, &[2]);
    p.tensor_content = vec![0x01, 0x02, 0xff, 0x00];
    let t = Tensor::from_proto(&p).unwrap();
    assert_eq!(t.as_slice::<u16>().unwrap(), &[0x0201, 0x00ff]);
    // Non-zero bool bytes read as true.
    let mut p = proto(DataType::DtBool, &[3]);
    p.tensor_content = vec![0, 2, 1];
    let t = Tensor::from_proto(&p).unwrap();
    assert_eq!(t.as_slice::<bool>().unwrap(), &[false, true, true]);
    assert_eq!(t.to_proto().tensor_content, vec![0, 1, 1]);
    // Narrowing int_val as TF's static_cast.
    let mut p = proto(DataType::DtInt8, &[1]);
    p.int_val = vec![257];
    assert_eq!(
        Tensor::from_proto(&p).unwrap().as_slice::<i8>().unwrap(),
        &[1]
    );
    // Half and bfloat16 bit patterns.
    let mut p = proto(DataType::DtHalf, &[1]);
    p.half_val = vec![0x3c00];
    assert_eq!(
        Tensor::from_proto(&p).unwrap().as_slice::<f16>().unwrap(),
        &[f16::ONE]
    );
    let mut p = proto(DataType::DtBfloat16, &[1]);
    p.half_val = vec![0x3f80];
    assert_eq!(
        Tensor::from_proto(&p).unwrap().as_slice::<bf16>().unwrap(),
        &[bf16::ONE]
    );
}

#[test]
fn malformed_protos_are_errors() {
    // Unknown and unsupported dtypes.
    let mut p = proto(DataType::DtFloat, &[1]);
    p.dtype = 77;
    assert_eq!(Tensor::from_proto(&p), Err(TensorError::UnknownDtype(77)));
    for dt in [
        DataType::DtInvalid,
        DataType::DtResource,
        DataType::DtVariant,
        DataType::DtFloatRef,
    ] {
        assert_eq!(
            Tensor::from_proto(&proto(dt, &[1])),
            Err(TensorError::UnsupportedDtype(dt))
        );
    }
    // Negative dims and unknown rank.
    assert!(matches!(
        Tensor::from_proto(&proto(DataType::DtFloat, &[2, -1])),
        Err(TensorError::NegativeDim { index: 1, .. })
    ));
    let mut p = proto(DataType::DtFloat, &[]);
    p.tensor_shape.as_mut().unwrap().unknown_rank = true;
    assert_eq!(Tensor::from_proto(&p), Err(TensorError::UnknownRank));
    // Huge shapes: refused before allocating.
    let huge = proto(DataType::DtFloat, &[1 << 40, 1 << 20]);
    assert!(matches!(
        Tensor::from_proto(&huge),
        Err(TensorError::TooLarge { .. })
    ));
    assert!(matches!(
        Tensor::from_proto(&proto(DataType::DtFloat, &[i64::MAX, 4])),
        Err(TensorError::ShapeOverflow { .. })
    ));
    let mut s = proto(DataType::DtString, &[1 << 40]);
    s.string_val = vec![b"abc".to_vec()];
    assert!(matches!(
        Tensor::from_proto(&s),
        Err(TensorError::TooLarge { .. })
    ));
    // An explicit limit.
    let p = proto(DataType::DtDouble, &[100]);
    assert!(Tensor::from_proto_with_limit(&p, 800).is_ok());
    let err = Tensor::from_proto_with_limit(&p, 799).unwrap_err();
    assert!(
        matches!(
            err,
            TensorError::TooLarge {
                bytes: 800,
                limit: 799,
                ..
            }
        ),
        "{err}"
    );
    // Content on a zero-element tensor.
    let mut p = proto(DataType::DtFloat, &[0]);
    p.tensor_content = vec![0; 4];
    assert!(matches!(
        Tensor::from_proto(&p),
        Err(TensorError::ContentLength {
            expected: 0,
            actual: 4,
            ..
        })
    ));
    // Values for a zero-element tensor.
    let mut p = proto(DataType::DtFloat, &[0]);
    p.float_val = vec![1.0];
    assert!(matches!(
        Tensor::from_proto(&p),
        Err(TensorError::TooManyValues { .. })
    ));
    // Odd complex numbers.
    let mut p = proto(DataType::DtComplex64, &[2]);
    p.scomplex_val = vec![1.0, 2.0, 3.0];
    assert!(matches!(
        Tensor::from_proto(&p),
        Err(TensorError::OddComplexValues { count: 3, .. })
    ));
    let msg = Tensor::from_proto(&{
        let mut p = proto(DataType::DtInt64, &[2]);
        p.int64_val = vec![1, 2, 3];
        p
    })
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("int64") && msg.contains("[2]") && msg.contains("int64_val"),
        "{msg}"
    );
}

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

#[test]
fn shared_graph_consts_convert() {
    let dir = shared_dir().join("graphs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: no shared graphs at {}", dir.display());
        return;
    };
    let mut consts = 0;
    let mut dtypes = std::collections::BTreeSet::new();
    for entry in entries {
        let path = entry.unwrap().path().join("graph.pb");
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let graph = GraphDef::decode(bytes.as_slice()).unwrap();
        for node in graph.node.iter().filter(|n| n.op == "Const") {
            let Some(attr_value::Value::Tensor(tp)) =
                node.attr.get("value").and_then(|a| a.value.as_ref())
            else {
                panic!(
                    "{}: Const {} has no tensor value",
                    path.display(),
                    node.name
                );
            };
            let t = Tensor::from_proto(tp)
                .unwrap_or_else(|e| panic!("{}: Const {}: {e}", path.display(), node.name));
            let dims: Vec<i64> = tp
                .tensor_shape
                .as_ref()
                .map(|s| s.dim.iter().map(|d| d.size).collect())
                .unwrap_or_default();
            let expect: i64 = dims.iter().product();
            assert_eq!(t.num_elements() as i64, expect, "{}", node.name);
            assert_eq!(t.dtype() as i32, tp.dtype);
            match t.storage() {
                registry_core::tensor::Storage::Strings(s) => assert_eq!(s.len() as i64, expect),
                _ => assert_eq!(
                    t.as_bytes().unwrap().len(),
                    t.num_elements() * registry_core::tensor::element_size(t.dtype()).unwrap()
                ),
            }
            // Both encodings round-trip.
            assert_eq!(Tensor::from_proto(&t.to_proto()).unwrap(), t);
            assert_eq!(Tensor::from_proto(&t.to_proto_field()).unwrap(), t);
            consts += 1;
            dtypes.insert(t.dtype() as i32);
        }
    }
    assert!(consts > 0, "no Const nodes found under {}", dir.display());
    eprintln!("{consts} Const tensors converted; dtypes {dtypes:?}");
}

#[test]
fn large_buffers_are_zeroed_aligned_and_writable() {
    // 8 MiB: above the size where buffers become anonymous mappings.
    let mut t = Tensor::zeros(DataType::DtFloat, [2 * 1024 * 1024]).unwrap();
    assert_eq!(t.as_bytes().unwrap().as_ptr() as usize % 64, 0);
    assert!(t.as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
    let data = t.as_mut_slice::<f32>().unwrap();
    data[0] = 1.5;
    data[2 * 1024 * 1024 - 1] = -2.0;
    let shared = t.clone();
    assert_eq!(shared.as_slice::<f32>().unwrap()[2 * 1024 * 1024 - 1], -2.0);
    drop(t);
    assert_eq!(shared.as_slice::<f32>().unwrap()[0], 1.5);
}

/// The float8, float4 and 4- and 2-bit integer types convert from and to
/// TensorProto as TF 2.21 holds them: one byte per element in
/// `tensor_content`, `float8_val` bytes for the float8/float4 types, and
/// `int_val` wrapped to the integer's width (TF's `static_cast`).
#[test]
fn small_float_and_integer_types_convert() {
    let shape = |n: i64| shape_proto(&[n]);
    // int_val: int4 sign-extends its low 4 bits, uint2 keeps its low 2.
    let int4 = TensorProto {
        dtype: DataType::DtInt4 as i32,
        tensor_shape: shape(4),
        int_val: vec![1, -1, 8, 9],
        ..Default::default()
    };
    let t = Tensor::from_proto(&int4).unwrap();
    assert_eq!(t.as_bytes().unwrap(), &[1, 0xff, 0xf8, 0xf9]);
    assert_eq!(t.to_proto_field().int_val, vec![1, -1, -8, -7]);
    let int2 = TensorProto {
        dtype: DataType::DtInt2 as i32,
        tensor_shape: shape(3),
        int_val: vec![1, 2, 3],
        ..Default::default()
    };
    assert_eq!(
        Tensor::from_proto(&int2).unwrap().to_proto_field().int_val,
        vec![1, -2, -1],
        "TF reads int2 [1, 2, 3] as [1, -2, -1]"
    );
    let uint2 = TensorProto {
        dtype: DataType::DtUint2 as i32,
        tensor_shape: shape(2),
        int_val: vec![5, 3],
        ..Default::default()
    };
    assert_eq!(
        Tensor::from_proto(&uint2).unwrap().as_bytes().unwrap(),
        &[1, 3]
    );
    // tensor_content: a sub-byte integer is its byte's low bits.
    let raw = TensorProto {
        dtype: DataType::DtInt4 as i32,
        tensor_shape: shape(2),
        tensor_content: vec![0x7f, 0x13],
        ..Default::default()
    };
    assert_eq!(
        Tensor::from_proto(&raw).unwrap().to_proto_field().int_val,
        vec![-1, 3]
    );
    // float8_val: one byte per element; fewer values repeat the last.
    for dtype in [
        DataType::DtFloat8E4m3fn,
        DataType::DtFloat8E5m2,
        DataType::DtFloat8E4m3fnuz,
        DataType::DtFloat8E4m3b11fnuz,
        DataType::DtFloat8E5m2fnuz,
        DataType::DtFloat4E2m1fn,
    ] {
        let p = TensorProto {
            dtype: dtype as i32,
            tensor_shape: shape(3),
            float8_val: vec![0x38, 0xb8],
            ..Default::default()
        };
        let t = Tensor::from_proto(&p).unwrap();
        assert_eq!(t.dtype(), dtype);
        assert_eq!(t.as_bytes().unwrap(), &[0x38, 0xb8, 0xb8]);
        assert_eq!(t.to_proto_field().float8_val, vec![0x38, 0xb8, 0xb8]);
        // tensor_content round trip, one byte each.
        let content = t.to_proto();
        assert_eq!(content.tensor_content, vec![0x38, 0xb8, 0xb8]);
        assert_eq!(Tensor::from_proto(&content).unwrap(), t);
    }
    // A wrong content length is still an error.
    let short = TensorProto {
        dtype: DataType::DtFloat8E5m2 as i32,
        tensor_shape: shape(3),
        tensor_content: vec![1, 2],
        ..Default::default()
    };
    assert!(Tensor::from_proto(&short).is_err());
}
