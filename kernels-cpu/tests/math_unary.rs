//! Unary kernels: Abs, Neg, Exp, Log, Sqrt, Rsqrt, Square, Sigmoid, Tanh,
//! Floor, through `create_op_kernel` + `compute`.
//!
//! Tolerances: integers, Abs/Neg/Square/Floor exact; transcendental f32/f64
//! results within 2 ulps of an f64 (or std) reference; half/bfloat16 are
//! computed in f32 and rounded, so they equal the rounded f32 result
//! exactly (TF's own half kernels may differ from that by 1 ulp of half).

use crate::math_common;

use math_common::*;
use registry_core::kernel::KernelError;
use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

fn c64(re: f32, im: f32) -> Complex64 {
    Complex64::new(re, im)
}

fn near_c(a: Complex64, re: f32, im: f32) -> bool {
    (a.re - re).abs() <= 1e-6 * re.abs().max(1.0) && (a.im - im).abs() <= 1e-6 * im.abs().max(1.0)
}

#[test]
fn abs_all_kinds() {
    let y = run1(
        "Abs",
        vec![t(&[5], vec![-1.5f32, 0.0, -0.0, 2.0, f32::NEG_INFINITY])],
    )
    .unwrap();
    let v = vals::<f32>(&y);
    assert_eq!(v, vec![1.5, 0.0, 0.0, 2.0, f32::INFINITY]);
    assert!(v[2].is_sign_positive(), "fabs clears the sign of -0");
    let y = run1("Abs", vec![t(&[3], vec![i32::MIN, -3, 4])]).unwrap();
    assert_eq!(
        vals::<i32>(&y),
        vec![i32::MIN, 3, 4],
        "abs(MIN) wraps to MIN"
    );
    let y = run1("Abs", vec![t(&[2], vec![-128i8, -1])]).unwrap();
    assert_eq!(vals::<i8>(&y), vec![-128, 1]);
    let y = run1("Abs", vec![t(&[2], vec![i64::MIN + 1, -7])]).unwrap();
    assert_eq!(vals::<i64>(&y), vec![i64::MAX, 7]);
    let y = run1("Abs", vec![t(&[2], vec![-300i16, 300])]).unwrap();
    assert_eq!(vals::<i16>(&y), vec![300, 300]);
    let y = run1(
        "Abs",
        vec![t(&[2], vec![f16::from_f32(-2.5), f16::from_f32(3.0)])],
    )
    .unwrap();
    assert_eq!(
        vals::<f16>(&y),
        vec![f16::from_f32(2.5), f16::from_f32(3.0)]
    );
    let y = run1("Abs", vec![t(&[1], vec![bf16::from_f32(-0.75)])]).unwrap();
    assert_eq!(vals::<bf16>(&y), vec![bf16::from_f32(0.75)]);
    let y = run1("Abs", vec![t(&[2, 1], vec![-1e300f64, 2.0])]).unwrap();
    assert_eq!(vals::<f64>(&y), vec![1e300, 2.0]);
    assert_eq!(y.dims(), &[2, 1]);
}

#[test]
fn neg_all_kinds() {
    let y = run1("Neg", vec![t(&[2], vec![i64::MIN, 5])]).unwrap();
    assert_eq!(vals::<i64>(&y), vec![i64::MIN, -5]);
    let y = run1("Neg", vec![t(&[1], vec![c64(1.0, -2.0)])]).unwrap();
    assert_eq!(vals::<Complex64>(&y), vec![c64(-1.0, 2.0)]);
    let y = run1("Neg", vec![t(&[1], vec![Complex128::new(0.5, 0.25)])]).unwrap();
    assert_eq!(vals::<Complex128>(&y), vec![Complex128::new(-0.5, -0.25)]);
    let y = run1("Neg", vec![t(&[2], vec![0.0f32, 1.5])]).unwrap();
    let v = vals::<f32>(&y);
    assert!(v[0] == 0.0 && v[0].is_sign_negative() && v[1] == -1.5);
    let y = run1("Neg", vec![t(&[1], vec![f16::from_f32(1.5)])]).unwrap();
    assert_eq!(vals::<f16>(&y), vec![f16::from_f32(-1.5)]);
    let y = run1("Neg", vec![t(&[2], vec![-128i8, 3])]).unwrap();
    assert_eq!(vals::<i8>(&y), vec![-128, -3]);
}

#[test]
fn square_wraps_and_handles_complex() {
    let y = run1("Square", vec![t(&[3], vec![16u8, 3, 255])]).unwrap();
    assert_eq!(vals::<u8>(&y), vec![0, 9, 1]);
    let y = run1("Square", vec![t(&[2], vec![46341i32, -3])]).unwrap();
    assert_eq!(vals::<i32>(&y), vec![46341i32.wrapping_mul(46341), 9]);
    let y = run1("Square", vec![t(&[1], vec![c64(1.0, 2.0)])]).unwrap();
    assert_eq!(vals::<Complex64>(&y), vec![c64(-3.0, 4.0)]);
    let y = run1("Square", vec![t(&[2], vec![1.5f32, -3.0])]).unwrap();
    assert_eq!(vals::<f32>(&y), vec![2.25, 9.0]);
    let y = run1("Square", vec![t(&[1], vec![u64::MAX])]).unwrap();
    assert_eq!(vals::<u64>(&y), vec![1]);
    // Half rounds the product: 1.001 ~ 1 + 2^-10; squared 1 + 2^-9 + 2^-20 -> 1 + 2^-9.
    let h = f16::from_f32(1.0 + 2f32.powi(-10));
    let y = run1("Square", vec![t(&[1], vec![h])]).unwrap();
    assert_eq!(vals::<f16>(&y), vec![f16::from_f32(1.0 + 2f32.powi(-9))]);
}

#[test]
fn floor_rounds_down() {
    let y = run1("Floor", vec![t(&[5], vec![-1.5f32, 1.5, -0.0, 2.0, -0.25])]).unwrap();
    let v = vals::<f32>(&y);
    assert_eq!(v, vec![-2.0, 1.0, 0.0, 2.0, -1.0]);
    assert!(v[2].is_sign_negative());
    let y = run1("Floor", vec![t(&[2], vec![-2.5f64, 7.999])]).unwrap();
    assert_eq!(vals::<f64>(&y), vec![-3.0, 7.0]);
    let y = run1(
        "Floor",
        vec![t(&[2], vec![f16::from_f32(-0.5), f16::from_f32(2.75)])],
    )
    .unwrap();
    assert_eq!(
        vals::<f16>(&y),
        vec![f16::from_f32(-1.0), f16::from_f32(2.0)]
    );
    let y = run1("Floor", vec![t(&[1], vec![bf16::from_f32(3.5)])]).unwrap();
    assert_eq!(vals::<bf16>(&y), vec![bf16::from_f32(3.0)]);
}

/// f32 kernels against an f64 reference, within 2 ulps.
fn check_f32(op: &str, xs: &[f32], reference: fn(f64) -> f64) {
    let y = run1(op, vec![t(&[xs.len()], xs.to_vec())]).unwrap();
    let expected: Vec<f32> = xs.iter().map(|&x| reference(f64::from(x)) as f32).collect();
    assert_f32_ulps(&vals::<f32>(&y), &expected, 2, op);
}

/// f64 kernels against std, within 2 ulps.
fn check_f64(op: &str, xs: &[f64], reference: fn(f64) -> f64) {
    let y = run1(op, vec![t(&[xs.len()], xs.to_vec())]).unwrap();
    let expected: Vec<f64> = xs.iter().map(|&x| reference(x)).collect();
    assert_f64_ulps(&vals::<f64>(&y), &expected, 2, op);
}

/// Half kernels equal the f32 result rounded to half.
fn check_f16(op: &str, xs: &[f32], reference: fn(f64) -> f64) {
    let h: Vec<f16> = xs.iter().map(|&x| f16::from_f32(x)).collect();
    let y = run1(op, vec![t(&[h.len()], h.clone())]).unwrap();
    let expected: Vec<f16> = h
        .iter()
        .map(|x| f16::from_f64(reference(x.to_f64())))
        .collect();
    // Reference in f64 rounded once; the kernel rounds f32 then half: 1 ulp.
    assert_f16_ulps(&vals::<f16>(&y), &expected, 1, op);
    let bh: Vec<bf16> = xs.iter().map(|&x| bf16::from_f32(x)).collect();
    let y = run1(op, vec![t(&[bh.len()], bh.clone())]).unwrap();
    for (i, (a, x)) in vals::<bf16>(&y).iter().zip(&bh).enumerate() {
        let e = bf16::from_f64(reference(x.to_f64()));
        assert!(ulps_bf16(*a, e) <= 1, "{op} bf16[{i}]: {a} vs {e}");
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

#[test]
fn transcendental_real_types() {
    let xs = [0.0f32, 0.5, -0.5, 1.0, 2.0, -3.25, 10.0, 0.001];
    let pos = [0.25f32, 1.0, 2.0, 4.0, 100.0, 1e-3, 3.5];
    check_f32("Exp", &xs, f64::exp);
    check_f32("Tanh", &xs, f64::tanh);
    check_f32(
        "Sigmoid",
        &[0.0, 2.0, -2.0, 20.0, -20.0, 100.0, -80.0],
        sigmoid,
    );
    check_f32("Log", &pos, f64::ln);
    check_f32("Sqrt", &pos, f64::sqrt);
    check_f32("Rsqrt", &pos, rsqrt);
    let xd = [0.0f64, 0.5, -0.5, 1.0, 2.0, -3.25, 10.0, 700.0];
    let pd = [0.25f64, 1.0, 2.0, 4.0, 1e300, 1e-300, 3.5];
    check_f64("Exp", &xd, f64::exp);
    check_f64("Tanh", &xd, f64::tanh);
    check_f64("Log", &pd, f64::ln);
    check_f64("Sqrt", &pd, f64::sqrt);
    check_f64("Rsqrt", &pd, rsqrt);
    check_f64(
        "Sigmoid",
        &[0.0, 1.0, -1.0, 30.0, -30.0, 700.0, -700.0],
        sigmoid,
    );
    check_f16("Exp", &xs, f64::exp);
    check_f16("Tanh", &xs, f64::tanh);
    check_f16("Sigmoid", &xs, sigmoid);
    check_f16("Log", &pos, f64::ln);
    check_f16("Sqrt", &pos, f64::sqrt);
    check_f16("Rsqrt", &pos, rsqrt);
}

#[test]
fn transcendental_special_values() {
    let y = run1(
        "Exp",
        vec![t(&[3], vec![f32::NEG_INFINITY, f32::INFINITY, 100.0])],
    )
    .unwrap();
    assert_eq!(vals::<f32>(&y), vec![0.0, f32::INFINITY, f32::INFINITY]);
    let y = run1("Log", vec![t(&[3], vec![0.0f32, -1.0, 1.0])]).unwrap();
    let v = vals::<f32>(&y);
    assert!(v[0] == f32::NEG_INFINITY && v[1].is_nan() && v[2] == 0.0);
    let y = run1("Sqrt", vec![t(&[2], vec![-1.0f64, 0.0])]).unwrap();
    let v = vals::<f64>(&y);
    assert!(v[0].is_nan() && v[1] == 0.0);
    let y = run1("Rsqrt", vec![t(&[1], vec![0.0f32])]).unwrap();
    assert_eq!(vals::<f32>(&y), vec![f32::INFINITY]);
    // Sigmoid is stable at the extremes (no NaN from inf/inf).
    let y = run1(
        "Sigmoid",
        vec![t(
            &[4],
            vec![1000.0f32, -1000.0, f32::INFINITY, f32::NEG_INFINITY],
        )],
    )
    .unwrap();
    assert_eq!(vals::<f32>(&y), vec![1.0, 0.0, 1.0, 0.0]);
    let y = run1("Tanh", vec![t(&[2], vec![f64::INFINITY, -50.0])]).unwrap();
    assert_eq!(vals::<f64>(&y), vec![1.0, -1.0]);
}

#[test]
fn transcendental_complex() {
    let pi = std::f32::consts::PI;
    let y = run1("Exp", vec![t(&[2], vec![c64(0.0, pi), c64(1.0, 0.0)])]).unwrap();
    let v = vals::<Complex64>(&y);
    assert!(
        near_c(v[0], -1.0, 0.0) && near_c(v[1], std::f32::consts::E, 0.0),
        "{v:?}"
    );
    let y = run1("Log", vec![t(&[2], vec![c64(-1.0, 0.0), c64(0.0, 1.0)])]).unwrap();
    let v = vals::<Complex64>(&y);
    assert!(
        near_c(v[0], 0.0, pi) && near_c(v[1], 0.0, pi / 2.0),
        "{v:?}"
    );
    let y = run1(
        "Sqrt",
        vec![t(&[3], vec![c64(-4.0, 0.0), c64(3.0, 4.0), c64(3.0, -4.0)])],
    )
    .unwrap();
    let v = vals::<Complex64>(&y);
    assert!(
        near_c(v[0], 0.0, 2.0) && near_c(v[1], 2.0, 1.0) && near_c(v[2], 2.0, -1.0),
        "{v:?}"
    );
    let y = run1("Rsqrt", vec![t(&[2], vec![c64(-4.0, 0.0), c64(4.0, 0.0)])]).unwrap();
    let v = vals::<Complex64>(&y);
    assert!(near_c(v[0], 0.0, -0.5) && near_c(v[1], 0.5, 0.0), "{v:?}");
    // tanh(1 + i) = 1.0839233273386946 + 0.2717525853195117i
    let y = run1("Tanh", vec![t(&[1], vec![Complex128::new(1.0, 1.0)])]).unwrap();
    let v = vals::<Complex128>(&y)[0];
    assert!((v.re - 1.0839233273386946).abs() < 1e-15 && (v.im - 0.2717525853195117).abs() < 1e-15);
    // sigmoid(i*pi/2) = 1 / (1 + e^{-i pi/2}) = 1 / (1 - i) = 0.5 + 0.5i
    let y = run1(
        "Sigmoid",
        vec![t(
            &[1],
            vec![Complex128::new(0.0, std::f64::consts::FRAC_PI_2)],
        )],
    )
    .unwrap();
    let v = vals::<Complex128>(&y)[0];
    assert!(
        (v.re - 0.5).abs() < 1e-15 && (v.im - 0.5).abs() < 1e-15,
        "{v:?}"
    );
}

#[test]
fn forwards_unique_inputs_and_keeps_shared_ones() {
    // Over 16 bytes: smaller buffers are held by value, moving with their
    // tensor (and copied, never shared, when it is cloned).
    let x = t(&[5], vec![1.0f32, -2.0, 3.0, -4.0, 5.0]);
    let ptr = x.as_bytes().unwrap().as_ptr();
    let y = run1("Neg", vec![x]).unwrap();
    assert_eq!(
        y.as_bytes().unwrap().as_ptr(),
        ptr,
        "a unique input is computed in place"
    );
    assert_eq!(vals::<f32>(&y), vec![-1.0, 2.0, -3.0, 4.0, -5.0]);
    let x = t(&[4], vec![1.0f32, -2.0, 3.0, -4.0]);
    let y = run1("Neg", vec![x.clone()]).unwrap();
    assert!(!y.shares_buffer_with(&x));
    assert_eq!(
        vals::<f32>(&x),
        vec![1.0, -2.0, 3.0, -4.0],
        "a shared input is untouched"
    );
    assert_eq!(vals::<f32>(&y), vec![-1.0, 2.0, -3.0, 4.0]);
}

#[test]
fn large_tensors_run_in_parallel_chunks() {
    let n = 300_001;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32 * 0.001).sin() * 5.0).collect();
    let shared = t(&[n], xs.clone());
    let a = run1("Exp", vec![shared.clone()]).unwrap();
    let b = run1("Exp", vec![t(&[n], xs.clone())]).unwrap();
    // Each chunk element for element as the one-element function.
    let expected: Vec<f32> = xs
        .iter()
        .map(|&x| kernels_cpu::math::exp::exp_f32(x))
        .collect();
    assert_eq!(vals::<f32>(&a), expected);
    assert_eq!(vals::<f32>(&b), expected);
    let ints: Vec<i32> = (0..n as i32).map(|i| i - 150_000).collect();
    let y = run1("Abs", vec![t(&[n], ints.clone())]).unwrap();
    assert_eq!(
        vals::<i32>(&y),
        ints.iter().map(|v| v.abs()).collect::<Vec<_>>()
    );
}

#[test]
fn empty_and_scalar_tensors() {
    for op in [
        "Abs", "Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Sigmoid", "Tanh", "Floor",
    ] {
        let y = run1(op, vec![t(&[0, 3], Vec::<f32>::new())]).unwrap();
        assert_eq!(y.dims(), &[0, 3], "{op}");
    }
    let y = run1("Square", vec![Tensor::scalar(-3i64)]).unwrap();
    assert_eq!(y.dims(), &[] as &[usize]);
    assert_eq!(vals::<i64>(&y), vec![9]);
}

#[test]
fn wrong_dtype_and_input_count_are_errors() {
    let k = kernel("Exp", &[DataType::DtFloat]);
    let err = k.compute([t(&[1], vec![1i32])]).unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 0, .. }),
        "{err}"
    );
    let err = k.compute([]).unwrap_err();
    assert!(
        matches!(
            err,
            KernelError::InputCount {
                expected: 1,
                actual: 0
            }
        ),
        "{err}"
    );
    // Types TF has no kernel for are rejected when the kernel is created.
    assert!(try_kernel_t("Exp", 1, DataType::DtInt32).is_err());
    assert!(try_kernel_t("Abs", 1, DataType::DtUint8).is_err());
    assert!(try_kernel_t("Floor", 1, DataType::DtComplex64).is_err());
}
