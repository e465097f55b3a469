//! Binary arithmetic kernels with broadcasting: AddV2, Sub, Mul, RealDiv,
//! FloorDiv, FloorMod, Maximum, Minimum, Pow, SquaredDifference.
//!
//! Tolerances: integer, Maximum/Minimum and exactly representable float
//! results are compared exactly; Pow on floats within 2 ulps of an f64
//! reference; complex results within 1e-6 (relative) for complex64.

use crate::math_common;

use math_common::*;
use registry_core::kernel::KernelError;
use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Complex128, Tensor, TensorElement, f16};

fn bin(op: &str, x: Tensor, y: Tensor) -> Result<Tensor, KernelError> {
    run1(op, vec![x, y])
}

fn c64(re: f32, im: f32) -> Complex64 {
    Complex64::new(re, im)
}

#[test]
fn add_sub_mul_same_shape_all_kinds() {
    let x = t(&[3], vec![1.5f32, -2.0, 3.0]);
    let y = t(&[3], vec![0.5f32, 4.0, -1.0]);
    assert_eq!(
        vals::<f32>(&bin("AddV2", x.clone(), y.clone()).unwrap()),
        vec![2.0, 2.0, 2.0]
    );
    assert_eq!(
        vals::<f32>(&bin("Sub", x.clone(), y.clone()).unwrap()),
        vec![1.0, -6.0, 4.0]
    );
    assert_eq!(
        vals::<f32>(&bin("Mul", x, y).unwrap()),
        vec![0.75, -8.0, -3.0]
    );
    // Integers wrap.
    let z = bin("AddV2", t(&[2], vec![127i8, -128]), t(&[2], vec![1i8, -1])).unwrap();
    assert_eq!(vals::<i8>(&z), vec![-128, 127]);
    let z = bin("Sub", t(&[2], vec![0u8, 5]), t(&[2], vec![1u8, 3])).unwrap();
    assert_eq!(vals::<u8>(&z), vec![255, 2]);
    let z = bin("Mul", t(&[2], vec![i64::MAX, 3]), t(&[2], vec![2i64, -4])).unwrap();
    assert_eq!(vals::<i64>(&z), vec![-2, -12]);
    let z = bin("Mul", t(&[1], vec![65535u16]), t(&[1], vec![65535u16])).unwrap();
    assert_eq!(vals::<u16>(&z), vec![1]);
    let z = bin("AddV2", t(&[1], vec![u32::MAX]), t(&[1], vec![2u32])).unwrap();
    assert_eq!(vals::<u32>(&z), vec![1]);
    let z = bin("Sub", t(&[1], vec![0u64]), t(&[1], vec![1u64])).unwrap();
    assert_eq!(vals::<u64>(&z), vec![u64::MAX]);
    let z = bin("AddV2", t(&[1], vec![i16::MAX]), t(&[1], vec![1i16])).unwrap();
    assert_eq!(vals::<i16>(&z), vec![i16::MIN]);
    let z = bin(
        "Mul",
        t(&[1], vec![c64(1.0, 2.0)]),
        t(&[1], vec![c64(3.0, -1.0)]),
    )
    .unwrap();
    assert_eq!(vals::<Complex64>(&z), vec![c64(5.0, 5.0)]);
    let z = bin(
        "AddV2",
        t(&[1], vec![Complex128::new(1.0, 2.0)]),
        t(&[1], vec![Complex128::new(0.5, -3.0)]),
    )
    .unwrap();
    assert_eq!(vals::<Complex128>(&z), vec![Complex128::new(1.5, -1.0)]);
    // Half rounds each result: 2048 + 1 = 2048 in half.
    let z = bin(
        "AddV2",
        t(&[1], vec![f16::from_f32(2048.0)]),
        t(&[1], vec![f16::ONE]),
    )
    .unwrap();
    assert_eq!(vals::<f16>(&z), vec![f16::from_f32(2048.0)]);
}

/// Reference broadcasting with per-element index arithmetic.
fn naive<T: TensorElement + Copy>(
    xs: &[usize],
    ys: &[usize],
    x: &[T],
    y: &[T],
    f: impl Fn(T, T) -> T,
) -> (Vec<usize>, Vec<T>) {
    let rank = xs.len().max(ys.len());
    let pad = |s: &[usize]| {
        let mut v = vec![1; rank - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (px, py) = (pad(xs), pad(ys));
    let out: Vec<usize> = (0..rank)
        .map(|d| if px[d] == 1 { py[d] } else { px[d] })
        .collect();
    let n: usize = out.iter().product();
    let mut res = Vec::with_capacity(n);
    for i in 0..n {
        let (mut rem, mut ix, mut iy, mut sx, mut sy) = (i, 0, 0, 1, 1);
        for d in (0..rank).rev() {
            let c = rem % out[d];
            rem /= out[d];
            if px[d] != 1 {
                ix += c * sx;
            }
            if py[d] != 1 {
                iy += c * sy;
            }
            sx *= px[d];
            sy *= py[d];
        }
        res.push(f(x[ix], y[iy]));
    }
    (out, res)
}

#[test]
fn broadcasting_matches_reference_for_many_shapes() {
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3], &[3]),
        (&[3], &[2, 3]),
        (&[4, 1], &[1, 5]),
        (&[], &[2, 2]),
        (&[2, 2], &[]),
        (&[2, 1, 3], &[1, 4, 1]),
        (&[2, 1, 2, 1, 2, 1], &[1, 2, 1, 2, 1, 2]),
        (&[3, 1, 1, 1, 1, 1, 2], &[1, 2, 2]),
        (&[70, 1, 50], &[1, 30, 1]),
        (&[1, 40000], &[3, 1]),
        (&[5, 1, 7000], &[5, 3, 1]),
    ];
    for (xs, ys) in cases {
        let nx: usize = xs.iter().product();
        let ny: usize = ys.iter().product();
        let x: Vec<i32> = (0..nx as i32).map(|v| v * 7 - 3).collect();
        let y: Vec<i32> = (0..ny as i32).map(|v| v % 13 - 6).collect();
        for (op, f) in [
            (
                "AddV2",
                (|a: i32, b: i32| a.wrapping_add(b)) as fn(i32, i32) -> i32,
            ),
            ("Sub", |a, b| a.wrapping_sub(b)),
            ("Mul", |a, b| a.wrapping_mul(b)),
            ("Maximum", |a, b| a.max(b)),
        ] {
            let (shape, expected) = naive(xs, ys, &x, &y, f);
            // Shared inputs (allocated output) and unique ones (forwarded).
            let z = bin(op, t(xs, x.clone()), t(ys, y.clone())).unwrap();
            assert_eq!(z.dims(), shape.as_slice(), "{op} {xs:?} {ys:?}");
            assert_eq!(vals::<i32>(&z), expected, "{op} {xs:?} vs {ys:?}");
            let (xt, yt) = (t(xs, x.clone()), t(ys, y.clone()));
            let z2 = bin(op, xt.clone(), yt.clone()).unwrap();
            assert_eq!(vals::<i32>(&z2), expected, "{op} {xs:?} vs {ys:?} (shared)");
            assert_eq!(vals::<i32>(&xt), x, "shared x untouched");
            assert_eq!(vals::<i32>(&yt), y, "shared y untouched");
        }
    }
}

#[test]
fn broadcast_float_row_and_column() {
    let z = bin(
        "AddV2",
        t(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]),
        t(&[3], vec![10.0f32, 20.0, 30.0]),
    )
    .unwrap();
    assert_eq!(z.dims(), &[2, 3]);
    assert_eq!(vals::<f32>(&z), vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    let z = bin("Sub", Tensor::scalar(1.0f64), t(&[2, 1], vec![0.5f64, 2.0])).unwrap();
    assert_eq!(z.dims(), &[2, 1]);
    assert_eq!(vals::<f64>(&z), vec![0.5, -1.0]);
    let z = bin(
        "Mul",
        t(&[2, 1], vec![2.0f32, 3.0]),
        t(&[1, 2], vec![5.0f32, 7.0]),
    )
    .unwrap();
    assert_eq!(vals::<f32>(&z), vec![10.0, 14.0, 15.0, 21.0]);
}

#[test]
fn incompatible_shapes_error_like_tf() {
    for op in [
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Maximum",
        "Pow",
        "SquaredDifference",
        "FloorMod",
    ] {
        let err = bin(op, t(&[2, 3], vec![1.0f32; 6]), t(&[4], vec![1.0f32; 4])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Incompatible shapes: [2,3] vs. [4]",
            "{op}"
        );
        assert!(matches!(err, KernelError::InvalidArgument(_)));
    }
    let err = bin("AddV2", t(&[0], Vec::<i32>::new()), t(&[2], vec![1, 2])).unwrap_err();
    assert_eq!(err.to_string(), "Incompatible shapes: [0] vs. [2]");
}

#[test]
fn huge_broadcasts_are_errors_not_aborts() {
    // [2^40, 1, 0] x [1, 2^40, 0]: the element count overflows.
    let big = 1usize << 40;
    let x = Tensor::zeros(DataType::DtInt8, [big, 1, 0]).unwrap();
    let y = Tensor::zeros(DataType::DtInt8, [1, big, 0]).unwrap();
    let err = bin("AddV2", x, y).unwrap_err();
    assert!(matches!(err, KernelError::Tensor(_)), "{err}");
    // [2^24, 1] x [1, 2^24] int8: 2^48 bytes cannot be allocated.
    let n = 1usize << 24;
    let x = Tensor::zeros(DataType::DtInt8, [n, 1]).unwrap();
    let y = Tensor::zeros(DataType::DtInt8, [1, n]).unwrap();
    let err = bin("Mul", x, y).unwrap_err();
    assert!(matches!(err, KernelError::Tensor(_)), "{err}");
}

#[test]
fn empty_outputs() {
    let z = bin(
        "AddV2",
        t(&[0, 3], Vec::<f32>::new()),
        t(&[3], vec![1.0f32, 2.0, 3.0]),
    )
    .unwrap();
    assert_eq!(z.dims(), &[0, 3]);
    let z = bin("Mul", t(&[0], Vec::<i64>::new()), Tensor::scalar(2i64)).unwrap();
    assert_eq!(z.dims(), &[0]);
    // A zero divisor that is never used is no error.
    let z = bin(
        "FloorDiv",
        t(&[0, 2], Vec::<i32>::new()),
        t(&[1, 2], vec![0i32, 1]),
    )
    .unwrap();
    assert_eq!(z.dims(), &[0, 2]);
}

#[test]
fn real_div() {
    let z = bin(
        "RealDiv",
        t(&[3], vec![1.0f32, -1.0, 0.0]),
        t(&[3], vec![0.0f32, 4.0, 0.0]),
    )
    .unwrap();
    let v = vals::<f32>(&z);
    assert!(v[0] == f32::INFINITY && v[1] == -0.25 && v[2].is_nan());
    let z = bin(
        "RealDiv",
        t(&[1], vec![c64(1.0, 2.0)]),
        t(&[1], vec![c64(3.0, 4.0)]),
    )
    .unwrap();
    let v = vals::<Complex64>(&z)[0];
    assert!(
        (v.re - 0.44).abs() < 1e-6 && (v.im - 0.08).abs() < 1e-6,
        "{v:?}"
    );
    let z = bin(
        "RealDiv",
        t(&[2], vec![f16::from_f32(1.0), f16::from_f32(3.0)]),
        Tensor::scalar(f16::from_f32(3.0)),
    )
    .unwrap();
    assert_eq!(vals::<f16>(&z), vec![f16::from_f32(1.0 / 3.0), f16::ONE]);
    assert!(
        try_kernel_t("RealDiv", 2, DataType::DtInt32).is_err(),
        "TF has no CPU RealDiv for int32"
    );
}

#[test]
fn floor_div_and_mod_integers() {
    let x = vec![-7i32, 7, -7, 7, 0, -6, i32::MIN, i32::MIN];
    let y = vec![2i32, -2, -2, 2, 3, 2, -1, 3];
    let z = bin("FloorDiv", t(&[8], x.clone()), t(&[8], y.clone())).unwrap();
    assert_eq!(
        vals::<i32>(&z),
        vec![-4, -4, 3, 3, 0, -3, i32::MIN, -715_827_883]
    );
    let z = bin("FloorMod", t(&[8], x), t(&[8], y)).unwrap();
    assert_eq!(vals::<i32>(&z), vec![1, -1, -1, 1, 0, 0, 0, 1]);
    let z = bin("FloorDiv", t(&[2], vec![7u8, 255]), t(&[2], vec![2u8, 16])).unwrap();
    assert_eq!(vals::<u8>(&z), vec![3, 15]);
    let z = bin(
        "FloorMod",
        t(&[2], vec![7u64, 255]),
        t(&[2], vec![2u64, 16]),
    )
    .unwrap();
    assert_eq!(vals::<u64>(&z), vec![1, 15]);
    let z = bin("FloorMod", t(&[2], vec![-128i8, 5]), Tensor::scalar(-3i8)).unwrap();
    assert_eq!(vals::<i8>(&z), vec![-2, -1]);
    for (op, dt) in [
        ("FloorDiv", DataType::DtInt64),
        ("FloorMod", DataType::DtUint16),
    ] {
        let k = kernel(op, &[dt, dt]);
        let (x, y) = match dt {
            DataType::DtInt64 => (t(&[2], vec![4i64, 5]), t(&[2], vec![1i64, 0])),
            _ => (t(&[2], vec![4u16, 5]), t(&[1], vec![0u16])),
        };
        let err = k.compute([x, y]).unwrap_err();
        assert_eq!(err.to_string(), "Integer division by zero", "{op}");
        assert!(matches!(err, KernelError::InvalidArgument(_)));
    }
}

#[test]
fn floor_div_and_mod_floats() {
    let x = vec![-7.5f32, 7.5, 7.5, -7.5, 1.0, -4.0];
    let y = vec![2.0f32, -2.0, 2.0, -2.0, 0.0, 2.0];
    let z = bin("FloorDiv", t(&[6], x.clone()), t(&[6], y.clone())).unwrap();
    let v = vals::<f32>(&z);
    assert_eq!(&v[..4], &[-4.0, -4.0, 3.0, 3.0]);
    assert!(v[4] == f32::INFINITY && v[5] == -2.0);
    let z = bin("FloorMod", t(&[6], x), t(&[6], y)).unwrap();
    let v = vals::<f32>(&z);
    assert_eq!(&v[..4], &[0.5, -0.5, 1.5, -1.5]);
    assert!(v[4].is_nan());
    assert!(
        v[5] == 0.0 && v[5].is_sign_negative(),
        "fmod(-4, 2) = -0 is kept"
    );
    let z = bin(
        "FloorMod",
        t(&[2], vec![-1.0f64, 5.25]),
        Tensor::scalar(0.5f64),
    )
    .unwrap();
    assert_eq!(vals::<f64>(&z), vec![-0.0, 0.25]);
    let h = |v: f32| f16::from_f32(v);
    let z = bin(
        "FloorMod",
        t(&[2], vec![h(-7.5), h(7.5)]),
        t(&[2], vec![h(2.0), h(-2.0)]),
    )
    .unwrap();
    assert_eq!(vals::<f16>(&z), vec![h(0.5), h(-0.5)]);
    let z = bin("FloorDiv", t(&[1], vec![h(-7.5)]), t(&[1], vec![h(2.0)])).unwrap();
    assert_eq!(vals::<f16>(&z), vec![h(-4.0)]);
}

#[test]
fn maximum_minimum_propagate_nan() {
    let x = t(&[4], vec![f32::NAN, 1.0, 3.0, -0.5]);
    let y = t(&[4], vec![1.0f32, f32::NAN, 2.0, 4.0]);
    let v = vals::<f32>(&bin("Maximum", x.clone(), y.clone()).unwrap());
    assert!(v[0].is_nan() && v[1].is_nan() && v[2] == 3.0 && v[3] == 4.0);
    let v = vals::<f32>(&bin("Minimum", x, y).unwrap());
    assert!(v[0].is_nan() && v[1].is_nan() && v[2] == 2.0 && v[3] == -0.5);
    let z = bin(
        "Maximum",
        t(&[3], vec![1u64, u64::MAX, 7]),
        Tensor::scalar(5u64),
    )
    .unwrap();
    assert_eq!(vals::<u64>(&z), vec![5, u64::MAX, 7]);
    let z = bin("Minimum", t(&[2, 1], vec![-3i8, 4]), t(&[2], vec![0i8, 9])).unwrap();
    assert_eq!(vals::<i8>(&z), vec![-3, -3, 0, 4]);
    let h = |v: f32| f16::from_f32(v);
    let z = bin(
        "Maximum",
        t(&[2], vec![h(f32::NAN), h(2.0)]),
        t(&[2], vec![h(1.0), h(3.0)]),
    )
    .unwrap();
    let v = vals::<f16>(&z);
    assert!(v[0].is_nan() && v[1] == h(3.0));
}

#[test]
fn pow_all_kinds() {
    let z = bin(
        "Pow",
        t(&[4], vec![2.0f32, 4.0, 9.0, -8.0]),
        t(&[4], vec![3.0f32, 0.5, -1.0, 1.0 / 3.0]),
    )
    .unwrap();
    let v = vals::<f32>(&z);
    assert_f32_ulps(&v[..3], &[8.0, 2.0, 1.0 / 9.0], 1, "Pow f32");
    assert!(v[3].is_nan(), "negative base, fractional exponent");
    let z = bin(
        "Pow",
        t(&[2], vec![2.0f64, 10.0]),
        t(&[2], vec![0.5f64, -2.0]),
    )
    .unwrap();
    assert_f64_ulps(
        &vals::<f64>(&z),
        &[std::f64::consts::SQRT_2, 0.01],
        1,
        "Pow f64",
    );
    let z = bin(
        "Pow",
        t(&[5], vec![3i32, 2, -2, 0, 7]),
        t(&[5], vec![4i32, 31, 3, 0, 1]),
    )
    .unwrap();
    assert_eq!(vals::<i32>(&z), vec![81, i32::MIN, -8, 1, 7]);
    let z = bin("Pow", t(&[1], vec![3i8]), t(&[1], vec![5i8])).unwrap();
    assert_eq!(vals::<i8>(&z), vec![-13], "243 wraps to -13");
    let z = bin("Pow", t(&[1], vec![10i64]), t(&[1], vec![18i64])).unwrap();
    assert_eq!(vals::<i64>(&z), vec![1_000_000_000_000_000_000]);
    let z = bin(
        "Pow",
        t(&[1], vec![f16::from_f32(2.0)]),
        t(&[1], vec![f16::from_f32(10.0)]),
    )
    .unwrap();
    assert_eq!(vals::<f16>(&z), vec![f16::from_f32(1024.0)]);
    let z = bin(
        "Pow",
        t(&[1], vec![c64(0.0, 1.0)]),
        t(&[1], vec![c64(2.0, 0.0)]),
    )
    .unwrap();
    let v = vals::<Complex64>(&z)[0];
    assert!((v.re + 1.0).abs() < 1e-6 && v.im.abs() < 1e-6, "{v:?}");
    let k = kernel("Pow", &[DataType::DtInt16; 2]);
    let err = k
        .compute([t(&[2], vec![2i16, 3]), t(&[2], vec![1i16, -1])])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Integers to negative integer powers are not allowed"
    );
    assert!(
        try_kernel_t("Pow", 2, DataType::DtUint8).is_err(),
        "TF has no CPU Pow for uint8"
    );
}

#[test]
fn squared_difference() {
    let z = bin(
        "SquaredDifference",
        t(&[3], vec![3.0f32, -1.0, 0.5]),
        t(&[3], vec![5.0f32, 2.0, 0.5]),
    )
    .unwrap();
    assert_eq!(vals::<f32>(&z), vec![4.0, 9.0, 0.0]);
    let z = bin(
        "SquaredDifference",
        t(&[2], vec![i32::MIN, 4]),
        t(&[2], vec![1i32, -4]),
    )
    .unwrap();
    assert_eq!(
        vals::<i32>(&z),
        vec![(i32::MIN.wrapping_sub(1)).wrapping_mul(i32::MAX), 64]
    );
    let z = bin(
        "SquaredDifference",
        t(&[1], vec![c64(1.0, 2.0)]),
        t(&[1], vec![c64(0.0, 0.0)]),
    )
    .unwrap();
    assert_eq!(
        vals::<Complex64>(&z),
        vec![c64(5.0, 0.0)],
        "conj(d) * d = |d|^2"
    );
    let z = bin(
        "SquaredDifference",
        t(&[2, 1], vec![1i64, 2]),
        t(&[2], vec![4i64, 0]),
    )
    .unwrap();
    assert_eq!(vals::<i64>(&z), vec![9, 1, 4, 4]);
}

#[test]
fn forwarding_reuses_unique_input_buffers() {
    // x unique with the output's shape: its buffer becomes the output.
    let x = t(&[2, 3], vec![1.0f32; 6]);
    let px = x.as_bytes().unwrap().as_ptr();
    let z = bin("AddV2", x, t(&[3], vec![1.0f32, 2.0, 3.0])).unwrap();
    assert_eq!(z.as_bytes().unwrap().as_ptr(), px);
    assert_eq!(vals::<f32>(&z), vec![2.0, 3.0, 4.0, 2.0, 3.0, 4.0]);
    // x broadcast, y unique: y's buffer is used (and x - y keeps its order).
    let y = t(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let py = y.as_bytes().unwrap().as_ptr();
    let z = bin("Sub", t(&[3], vec![10.0f32, 20.0, 30.0]), y).unwrap();
    assert_eq!(z.as_bytes().unwrap().as_ptr(), py);
    assert_eq!(vals::<f32>(&z), vec![9.0, 18.0, 27.0, 6.0, 15.0, 24.0]);
    // Same element count, different rank: forwarded with the output's shape
    // (over 16 bytes: smaller buffers move with their tensor).
    let x = t(&[5], vec![1i32, 2, 3, 4, 5]);
    let px = x.as_bytes().unwrap().as_ptr();
    let z = bin("Mul", x, t(&[1, 5], vec![2i32; 5])).unwrap();
    assert_eq!(z.dims(), &[1, 5]);
    assert_eq!(z.as_bytes().unwrap().as_ptr(), px);
    assert_eq!(vals::<i32>(&z), vec![2, 4, 6, 8, 10]);
    // The same tensor twice is shared: nothing is overwritten.
    let x = t(&[2], vec![3i32, 4]);
    let z = bin("Mul", x.clone(), x.clone()).unwrap();
    assert_eq!(vals::<i32>(&z), vec![9, 16]);
    assert_eq!(vals::<i32>(&x), vec![3, 4]);
}

#[test]
fn large_same_shape_and_scalar_paths() {
    let n = 200_003;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (n - i) as f32).collect();
    let z = bin("AddV2", t(&[n], x.clone()), t(&[n], y.clone())).unwrap();
    let expected: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    assert_eq!(vals::<f32>(&z), expected);
    let z = bin("Mul", Tensor::scalar(2.0f32), t(&[n], x.clone())).unwrap();
    assert_eq!(
        vals::<f32>(&z),
        x.iter().map(|a| 2.0 * a).collect::<Vec<_>>()
    );
    let z = bin("Sub", t(&[n], x.clone()), Tensor::scalar(1.0f32)).unwrap();
    assert_eq!(
        vals::<f32>(&z),
        x.iter().map(|a| a - 1.0).collect::<Vec<_>>()
    );
}

#[test]
fn wrong_dtype_is_an_error() {
    let k = kernel("AddV2", &[DataType::DtFloat; 2]);
    let err = k
        .compute([t(&[1], vec![1.0f32]), t(&[1], vec![1.0f64])])
        .unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 1, .. }),
        "{err}"
    );
}
