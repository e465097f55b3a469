//! Cast: every pair among the number types, bool, complex, half/bfloat16
//! and the quantized types; TF's x86 float-to-int results; `Truncate`;
//! unsupported pairs. All results are exact.

use crate::math_common;

use math_common::*;
use registry_core::create_op_kernel;
use registry_core::kernel::{CreateKernelError, KernelError, KernelInstance};
use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

const ALL: [DataType; 15] = [
    DataType::DtBool,
    DataType::DtInt8,
    DataType::DtInt16,
    DataType::DtInt32,
    DataType::DtInt64,
    DataType::DtUint8,
    DataType::DtUint16,
    DataType::DtUint32,
    DataType::DtUint64,
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtComplex64,
    DataType::DtComplex128,
];

#[allow(clippy::result_large_err)]
fn cast_kernel(
    src: DataType,
    dst: DataType,
    truncate: bool,
) -> Result<KernelInstance, CreateKernelError> {
    kernels_cpu::link();
    let n = node(
        "Cast",
        &[src],
        &[("DstT", dst.into()), ("Truncate", truncate.into())],
    );
    create_op_kernel("CPU", &n)
}

fn cast(x: Tensor, dst: DataType) -> Tensor {
    cast_kernel(x.dtype(), dst, false)
        .unwrap()
        .compute([x])
        .unwrap()
        .remove(0)
}

fn cast_trunc(x: Tensor, dst: DataType) -> Tensor {
    cast_kernel(x.dtype(), dst, true)
        .unwrap()
        .compute([x])
        .unwrap()
        .remove(0)
}

#[test]
fn every_pair_builds_and_converts_small_integers() {
    // 0, 1 and 3 (1 for bool) survive every conversion.
    let sample = |dt: DataType| cast(t(&[3], vec![0i32, 1, 3]), dt);
    for src in ALL {
        for dst in ALL {
            let y = cast(sample(src), dst);
            assert_eq!(y.dtype(), dst);
            let back = cast(y, DataType::DtInt64);
            let expected: Vec<i64> = if src == DataType::DtBool || dst == DataType::DtBool {
                vec![0, 1, 1]
            } else {
                vec![0, 1, 3]
            };
            assert_eq!(vals::<i64>(&back), expected, "{src:?} -> {dst:?}");
        }
    }
}

#[test]
fn same_type_is_the_identity() {
    let x = t(&[5], vec![1.5f32, 2.5, 3.5, 4.5, 5.5]);
    let y = cast(x.clone(), DataType::DtFloat);
    assert!(y.shares_buffer_with(&x));
    // At most 16 bytes are held by value: an equal, independent copy.
    let x = t(&[2], vec![1.5f32, 2.5]);
    let y = cast(x.clone(), DataType::DtFloat);
    assert!(!y.shares_buffer_with(&x) && y == x);
    let s = Tensor::from_strings([1], vec![b"abc".to_vec()]).unwrap();
    let y = cast(s.clone(), DataType::DtString);
    assert_eq!(y, s);
}

#[test]
fn float_to_int_truncates_with_x86_results_out_of_range() {
    let x = t(&[6], vec![1.9f32, -1.9, f32::NAN, 3e9, -3e9, f32::INFINITY]);
    let y = cast(x.clone(), DataType::DtInt32);
    assert_eq!(
        vals::<i32>(&y),
        vec![1, -1, i32::MIN, i32::MIN, i32::MIN, i32::MIN]
    );
    let y = cast(x, DataType::DtInt64);
    assert_eq!(
        vals::<i64>(&y),
        vec![1, -1, i64::MIN, 3_000_000_000, -3_000_000_000, i64::MIN]
    );
    let y = cast(
        t(&[5], vec![-1.0f32, 256.0, 300.7, f32::NAN, 255.9]),
        DataType::DtUint8,
    );
    assert_eq!(vals::<u8>(&y), vec![255, 0, 44, 0, 255]);
    let y = cast(t(&[3], vec![40000.0f64, -40000.0, 1e10]), DataType::DtInt16);
    assert_eq!(vals::<i16>(&y), vec![-25536, 25536, 0]);
    let y = cast(t(&[3], vec![-1.0f64, 5e9, f64::NAN]), DataType::DtUint32);
    assert_eq!(vals::<u32>(&y), vec![u32::MAX, 705_032_704, 0]);
    let y = cast(
        t(&[4], vec![1e19f64, -1.0, f64::NAN, 2e19]),
        DataType::DtUint64,
    );
    assert_eq!(
        vals::<u64>(&y),
        vec![10_000_000_000_000_000_000, u64::MAX, 1 << 63, 1 << 63]
    );
    let y = cast(
        t(&[2], vec![f16::from_f32(-2.75), f16::INFINITY]),
        DataType::DtInt32,
    );
    assert_eq!(vals::<i32>(&y), vec![-2, i32::MIN]);
    let y = cast(t(&[1], vec![Complex64::new(7.9, 100.0)]), DataType::DtInt8);
    assert_eq!(vals::<i8>(&y), vec![7]);
}

#[test]
fn integer_and_bool_conversions() {
    let y = cast(t(&[3], vec![-1i32, 300, 65536]), DataType::DtUint16);
    assert_eq!(vals::<u16>(&y), vec![65535, 300, 0]);
    let y = cast(t(&[2], vec![u64::MAX, 1 << 63]), DataType::DtInt64);
    assert_eq!(vals::<i64>(&y), vec![-1, i64::MIN]);
    let y = cast(t(&[2], vec![16_777_217i32, -3]), DataType::DtFloat);
    assert_eq!(vals::<f32>(&y), vec![16_777_216.0, -3.0]);
    let y = cast(t(&[2], vec![u64::MAX, 3]), DataType::DtDouble);
    assert_eq!(vals::<f64>(&y), vec![18_446_744_073_709_551_616.0, 3.0]);
    let y = cast(t(&[2], vec![65520i64, 2049]), DataType::DtHalf);
    assert_eq!(vals::<f16>(&y), vec![f16::INFINITY, f16::from_f32(2048.0)]);
    let y = cast(t(&[3], vec![0.0f32, f32::NAN, -0.5]), DataType::DtBool);
    assert_eq!(vals::<bool>(&y), vec![false, true, true]);
    let y = cast(
        t(
            &[2],
            vec![Complex128::new(0.0, 1.0), Complex128::new(2.0, 0.0)],
        ),
        DataType::DtBool,
    );
    assert_eq!(
        vals::<bool>(&y),
        vec![false, true],
        "only the real part counts"
    );
    let y = cast(t(&[2], vec![true, false]), DataType::DtComplex64);
    assert_eq!(
        vals::<Complex64>(&y),
        vec![Complex64::new(1.0, 0.0), Complex64::new(0.0, 0.0)]
    );
    let y = cast(t(&[2], vec![5u8, 0]), DataType::DtBool);
    assert_eq!(vals::<bool>(&y), vec![true, false]);
}

#[test]
fn float_and_complex_conversions() {
    let y = cast(t(&[1], vec![Complex128::new(2.5, -1.0)]), DataType::DtFloat);
    assert_eq!(vals::<f32>(&y), vec![2.5]);
    let y = cast(
        t(&[1], vec![Complex128::new(0.1, -0.2)]),
        DataType::DtComplex64,
    );
    assert_eq!(vals::<Complex64>(&y), vec![Complex64::new(0.1, -0.2)]);
    let y = cast(t(&[1], vec![-1.5f32]), DataType::DtComplex128);
    assert_eq!(vals::<Complex128>(&y), vec![Complex128::new(-1.5, 0.0)]);
    let y = cast(t(&[2], vec![0.1f64, 1e40]), DataType::DtFloat);
    assert_eq!(vals::<f32>(&y), vec![0.1f32, f32::INFINITY]);
    let y = cast(
        t(&[2], vec![f16::from_f32(0.1), f16::MAX]),
        DataType::DtDouble,
    );
    assert_eq!(vals::<f64>(&y), vec![f16::from_f32(0.1).to_f64(), 65504.0]);
    let y = cast(t(&[1], vec![bf16::from_f32(1.5)]), DataType::DtHalf);
    assert_eq!(vals::<f16>(&y), vec![f16::from_f32(1.5)]);
    // f32 -> bf16 rounds to nearest even.
    let v = 1.0f32 + 2f32.powi(-8) + 2f32.powi(-20);
    let y = cast(t(&[1], vec![v]), DataType::DtBfloat16);
    assert_eq!(vals::<bf16>(&y), vec![bf16::from_f32(1.0 + 2f32.powi(-7))]);
    let y = cast(t(&[1], vec![f32::NAN]), DataType::DtHalf);
    assert!(vals::<f16>(&y)[0].is_nan());
}

#[test]
fn truncate_zeroes_low_mantissa_bits() {
    let v = 1.0f32 + 2f32.powi(-8) + 2f32.powi(-20);
    let y = cast_trunc(t(&[1], vec![v]), DataType::DtBfloat16);
    assert_eq!(vals::<bf16>(&y), vec![bf16::ONE]);
    let h = 1.0f32 + 2f32.powi(-11) + 2f32.powi(-20);
    assert_eq!(
        vals::<f16>(&cast(t(&[1], vec![h]), DataType::DtHalf)),
        vec![f16::from_f32(1.0 + 2f32.powi(-10))]
    );
    assert_eq!(
        vals::<f16>(&cast_trunc(t(&[1], vec![h]), DataType::DtHalf)),
        vec![f16::ONE]
    );
    let d = 1.0f64 + 2f64.powi(-24) + 2f64.powi(-40);
    assert_eq!(
        vals::<f32>(&cast(t(&[1], vec![d]), DataType::DtFloat)),
        vec![1.0 + 2f32.powi(-23)]
    );
    assert_eq!(
        vals::<f32>(&cast_trunc(t(&[1], vec![d]), DataType::DtFloat)),
        vec![1.0]
    );
    assert_eq!(
        vals::<f32>(&cast_trunc(t(&[1], vec![-d]), DataType::DtFloat)),
        vec![-1.0]
    );
    let c = Complex128::new(d, -d);
    assert_eq!(
        vals::<Complex64>(&cast_trunc(t(&[1], vec![c]), DataType::DtComplex64)),
        vec![Complex64::new(1.0, -1.0)]
    );
    assert_eq!(
        vals::<f16>(&cast_trunc(t(&[1], vec![f64::from(h)]), DataType::DtHalf)),
        vec![f16::ONE]
    );
    // NaN stays NaN; pairs TF does not truncate (f64 -> bf16) round.
    assert!(vals::<f32>(&cast_trunc(t(&[1], vec![f64::NAN]), DataType::DtFloat))[0].is_nan());
    let w = 1.0f64 + 2f64.powi(-8) + 2f64.powi(-20);
    assert_eq!(
        vals::<bf16>(&cast_trunc(t(&[1], vec![w]), DataType::DtBfloat16)),
        vec![bf16::from_f32(1.0 + 2f32.powi(-7))]
    );
}

/// A quantized tensor from raw bytes.
fn quantized(dtype: DataType, shape: &[usize], bytes: &[u8]) -> Tensor {
    let mut q = Tensor::zeros(dtype, shape).unwrap();
    q.as_mut_bytes().unwrap().copy_from_slice(bytes);
    q
}

#[test]
fn quantized_types_cast_as_their_integers() {
    let q = quantized(DataType::DtQint8, &[2], &[255, 3]);
    assert_eq!(
        vals::<f32>(&cast(q.clone(), DataType::DtFloat)),
        vec![-1.0, 3.0]
    );
    let y = cast(q.clone(), DataType::DtQint8);
    assert_eq!(y, q);
    let long = quantized(DataType::DtQint8, &[17], &[7; 17]);
    assert!(cast(long.clone(), DataType::DtQint8).shares_buffer_with(&long));
    let y = cast(q, DataType::DtQuint8);
    assert_eq!(y.dtype(), DataType::DtQuint8);
    assert_eq!(y.as_bytes().unwrap(), &[255, 3]);
    let y = cast(t(&[2], vec![300.0f32, -2.0]), DataType::DtQuint8);
    assert_eq!(y.as_bytes().unwrap(), &[44, 254]);
    let y = cast(t(&[1], vec![-2i64]), DataType::DtQint32);
    assert_eq!(y.as_bytes().unwrap(), &(-2i32).to_le_bytes());
    let q = quantized(DataType::DtQuint16, &[1], &[0xff, 0xff]);
    assert_eq!(vals::<i32>(&cast(q, DataType::DtInt32)), vec![65535]);
    let q = quantized(DataType::DtQint16, &[1], &[0xff, 0xff]);
    assert_eq!(
        vals::<Complex64>(&cast(q, DataType::DtComplex64)),
        vec![Complex64::new(-1.0, 0.0)]
    );
}

#[test]
fn unsupported_pairs_fail_at_construction() {
    let err = cast_kernel(DataType::DtString, DataType::DtFloat, false).unwrap_err();
    let CreateKernelError::Construction { source, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        source,
        &KernelError::Unimplemented("Cast string to float is not supported".into())
    );
    let err = cast_kernel(DataType::DtInt32, DataType::DtString, false).unwrap_err();
    assert!(
        err.to_string()
            .contains("Cast int32 to string is not supported"),
        "{err}"
    );
}

#[test]
fn empty_large_and_wrong_dtype() {
    let y = cast(t(&[0, 4], Vec::<f64>::new()), DataType::DtHalf);
    assert_eq!(y.dims(), &[0, 4]);
    let n = 100_000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 5000.0).collect();
    let y = cast(t(&[n], x.clone()), DataType::DtInt32);
    assert_eq!(
        vals::<i32>(&y),
        x.iter().map(|&v| v as i32).collect::<Vec<_>>()
    );
    let k = cast_kernel(DataType::DtFloat, DataType::DtInt32, false).unwrap();
    let err = k.compute([t(&[1], vec![1.0f64])]).unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 0, .. }),
        "{err}"
    );
}
