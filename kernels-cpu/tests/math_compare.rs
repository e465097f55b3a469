//! Comparison and logic kernels: Equal (all TF types, strings and
//! quantized types included, `incompatible_shape_error`), Greater,
//! LogicalAnd. Outputs are bools and compared exactly.

use crate::math_common;

use math_common::*;
use registry_core::kernel::KernelError;
use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

fn cmp(op: &str, x: Tensor, y: Tensor) -> Result<Tensor, KernelError> {
    run1(op, vec![x, y])
}

fn bools(t: &Tensor) -> Vec<bool> {
    vals::<bool>(t)
}

#[test]
fn equal_numbers_with_broadcasting() {
    let z = cmp(
        "Equal",
        t(&[4], vec![1.0f32, f32::NAN, 0.0, 2.0]),
        t(&[4], vec![1.0f32, f32::NAN, -0.0, 3.0]),
    )
    .unwrap();
    assert_eq!(
        bools(&z),
        vec![true, false, true, false],
        "IEEE: NaN != NaN, 0 == -0"
    );
    let z = cmp(
        "Equal",
        t(&[2, 2], vec![1i32, 2, 3, 1]),
        Tensor::scalar(1i32),
    )
    .unwrap();
    assert_eq!(z.dims(), &[2, 2]);
    assert_eq!(bools(&z), vec![true, false, false, true]);
    let z = cmp(
        "Equal",
        t(&[2, 1], vec![1u64, 2]),
        t(&[1, 3], vec![1u64, 2, 3]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true, false, false, false, true, false]);
    let z = cmp(
        "Equal",
        t(&[2], vec![true, false]),
        t(&[2], vec![true, true]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true, false]);
    let c = |re, im| Complex64::new(re, im);
    let z = cmp(
        "Equal",
        t(&[2], vec![c(1.0, 2.0), c(1.0, 2.0)]),
        t(&[2], vec![c(1.0, 2.0), c(1.0, -2.0)]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true, false]);
    let z = cmp(
        "Equal",
        t(&[1], vec![Complex128::new(0.0, 1.0)]),
        t(&[1], vec![Complex128::new(0.0, 1.0)]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true]);
    let z = cmp(
        "Equal",
        t(&[2], vec![f16::from_f32(0.5), f16::ONE]),
        Tensor::scalar(f16::ONE),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![false, true]);
    let z = cmp(
        "Equal",
        t(&[1], vec![bf16::from_f32(3.0)]),
        t(&[1], vec![bf16::from_f32(3.0)]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true]);
    let z = cmp("Equal", t(&[2], vec![-1i8, 5]), t(&[2], vec![-1i8, 6])).unwrap();
    assert_eq!(bools(&z), vec![true, false]);
}

#[test]
fn equal_strings() {
    let x = Tensor::from_strings([3], vec![b"a".to_vec(), b"bc".to_vec(), Vec::new()]).unwrap();
    let y = Tensor::from_strings([3], vec![b"a".to_vec(), b"b".to_vec(), Vec::new()]).unwrap();
    let z = cmp("Equal", x.clone(), y).unwrap();
    assert_eq!(bools(&z), vec![true, false, true]);
    let z = cmp("Equal", x, Tensor::scalar_string("bc")).unwrap();
    assert_eq!(bools(&z), vec![false, true, false]);
}

/// A quantized tensor from its raw little-endian bytes.
fn quantized(dtype: DataType, shape: &[usize], bytes: &[u8]) -> Tensor {
    let mut q = Tensor::zeros(dtype, shape).unwrap();
    q.as_mut_bytes().unwrap().copy_from_slice(bytes);
    q
}

#[test]
fn equal_quantized_compares_stored_integers() {
    let x = quantized(DataType::DtQint8, &[3], &[1, 255, 7]);
    let y = quantized(DataType::DtQint8, &[3], &[1, 254, 7]);
    assert_eq!(bools(&cmp("Equal", x, y).unwrap()), vec![true, false, true]);
    let x = quantized(DataType::DtQuint16, &[2], &[1, 2, 3, 4]);
    let y = quantized(DataType::DtQuint16, &[1], &[3, 4]);
    assert_eq!(bools(&cmp("Equal", x, y).unwrap()), vec![false, true]);
    let x = quantized(DataType::DtQint32, &[2, 1], &[1, 0, 0, 0, 9, 9, 9, 9]);
    let y = quantized(DataType::DtQint32, &[2], &[9, 9, 9, 9, 1, 0, 0, 0]);
    assert_eq!(
        bools(&cmp("Equal", x, y).unwrap()),
        vec![false, true, true, false]
    );
    for dt in [DataType::DtQuint8, DataType::DtQint16] {
        let x = quantized(
            dt,
            &[1],
            &vec![5; registry_core::tensor::element_size(dt).unwrap()],
        );
        assert_eq!(bools(&cmp("Equal", x.clone(), x).unwrap()), vec![true]);
    }
}

fn equal_kernel(t: DataType, incompatible_shape_error: bool) -> registry_core::KernelInstance {
    create(&node(
        "Equal",
        &[t, t],
        &[("incompatible_shape_error", incompatible_shape_error.into())],
    ))
}

#[test]
fn equal_incompatible_shapes() {
    let k = equal_kernel(DataType::DtFloat, false);
    let z = k
        .compute([t(&[2, 3], vec![1.0f32; 6]), t(&[4], vec![1.0f32; 4])])
        .unwrap();
    assert_eq!(z[0].dims(), &[] as &[usize], "a scalar false, as TF");
    assert_eq!(bools(&z[0]), vec![false]);
    // Compatible shapes still compare element-wise.
    let z = k
        .compute([t(&[2], vec![1.0f32, 2.0]), Tensor::scalar(2.0f32)])
        .unwrap();
    assert_eq!(bools(&z[0]), vec![false, true]);
    let k = equal_kernel(DataType::DtFloat, true);
    let err = k
        .compute([t(&[2, 3], vec![1.0f32; 6]), t(&[4], vec![1.0f32; 4])])
        .unwrap_err();
    assert_eq!(err.to_string(), "Incompatible shapes: [2,3] vs. [4]");
    let k = equal_kernel(DataType::DtString, false);
    let x = Tensor::from_strings([2], vec![b"a".to_vec(), b"b".to_vec()]).unwrap();
    let y = Tensor::from_strings([3], vec![Vec::new(); 3]).unwrap();
    let z = k.compute([x, y]).unwrap();
    assert_eq!(bools(&z[0]), vec![false]);
}

#[test]
fn greater() {
    let z = cmp(
        "Greater",
        t(&[4], vec![2.0f32, f32::NAN, 1.0, 1.0]),
        t(&[4], vec![1.0f32, 0.0, f32::NAN, 1.0]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true, false, false, false]);
    let z = cmp(
        "Greater",
        t(&[3], vec![0u8, 128, 255]),
        Tensor::scalar(127u8),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![false, true, true]);
    let z = cmp(
        "Greater",
        t(&[2, 1], vec![-1i64, 5]),
        t(&[3], vec![-2i64, 4, 6]),
    )
    .unwrap();
    assert_eq!(z.dims(), &[2, 3]);
    assert_eq!(bools(&z), vec![true, false, false, true, true, false]);
    let z = cmp(
        "Greater",
        t(&[1], vec![f16::from_f32(1.5)]),
        t(&[1], vec![f16::ONE]),
    )
    .unwrap();
    assert_eq!(bools(&z), vec![true]);
    let err = cmp("Greater", t(&[3], vec![1i32; 3]), t(&[2], vec![1i32; 2])).unwrap_err();
    assert_eq!(err.to_string(), "Incompatible shapes: [3] vs. [2]");
    assert!(try_kernel_t("Greater", 2, DataType::DtComplex64).is_err());
    assert!(try_kernel_t("Greater", 2, DataType::DtBool).is_err());
}

#[test]
fn logical_and() {
    kernels_cpu::link();
    let k = kernel("LogicalAnd", &[DataType::DtBool; 2]);
    let z = k
        .compute([
            t(&[2, 2], vec![true, true, false, false]),
            t(&[2], vec![true, false]),
        ])
        .unwrap();
    assert_eq!(bools(&z[0]), vec![true, false, false, false]);
    // Forwarded (unique, same shape) input; over 16 bytes, as smaller
    // buffers move with their tensor.
    let mut values = vec![true; 20];
    values[2] = false;
    let x = t(&[20], values.clone());
    let px = x.as_bytes().unwrap().as_ptr();
    let z = k.compute([x, Tensor::scalar(true)]).unwrap();
    assert_eq!(z[0].as_bytes().unwrap().as_ptr(), px);
    assert_eq!(bools(&z[0]), values);
    let err = k
        .compute([t(&[2], vec![true; 2]), t(&[3], vec![true; 3])])
        .unwrap_err();
    assert_eq!(err.to_string(), "Incompatible shapes: [2] vs. [3]");
    let err = k
        .compute([t(&[2], vec![1u8, 0]), t(&[2], vec![true; 2])])
        .unwrap_err();
    assert!(matches!(err, KernelError::InputDtype { index: 0, .. }));
    let z = k
        .compute([t(&[0], Vec::<bool>::new()), Tensor::scalar(true)])
        .unwrap();
    assert_eq!(z[0].dims(), &[0]);
}

#[test]
fn empty_and_large() {
    let z = cmp(
        "Equal",
        t(&[0, 2], Vec::<i32>::new()),
        t(&[2], vec![1i32, 2]),
    )
    .unwrap();
    assert_eq!(z.dims(), &[0, 2]);
    let n = 100_000;
    let x: Vec<i32> = (0..n).map(|i| i % 7).collect();
    let z = cmp("Greater", t(&[n as usize], x.clone()), Tensor::scalar(3i32)).unwrap();
    assert_eq!(bools(&z), x.iter().map(|&v| v > 3).collect::<Vec<_>>());
}

#[test]
fn wrong_dtype() {
    let k = kernel("Equal", &[DataType::DtInt32; 2]);
    let err = k
        .compute([t(&[1], vec![1i32]), t(&[1], vec![1i64])])
        .unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 1, .. }),
        "{err}"
    );
}
