//! Select (TF's v1 rules) and SelectV2 (broadcasting), all types incl.
//! strings; values are copied, so results are compared exactly.

use crate::math_common;

use math_common::*;
use registry_core::kernel::KernelError;
use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Tensor, f16};

/// Runs `op` with `T` the dtype of `x`.
fn sel(op: &str, c: Tensor, x: Tensor, y: Tensor) -> Result<Tensor, KernelError> {
    let t = x.dtype();
    Ok(run(op, &[DataType::DtBool, t, t], vec![c, x, y])?.remove(0))
}

fn strings(v: &[&str]) -> Tensor {
    Tensor::from_strings([v.len()], v.iter().map(|s| s.as_bytes().to_vec()).collect()).unwrap()
}

#[test]
fn select_scalar_condition_picks_a_whole_operand() {
    let x = t(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let y = t(&[2, 3], vec![5.0f32, 6.0, 7.0, 8.0, 9.0, 10.0]);
    let z = sel("Select", Tensor::scalar(true), x.clone(), y.clone()).unwrap();
    assert!(z.shares_buffer_with(&x), "no copy");
    let z = sel("Select", Tensor::scalar(false), x, y.clone()).unwrap();
    assert_eq!(vals::<f32>(&z), vec![5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
    let err = sel(
        "Select",
        Tensor::scalar(true),
        t(&[2], vec![1i32, 2]),
        t(&[3], vec![1i32, 2, 3]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "'then' and 'else' must have the same size.  but received: [2] vs. [3]"
    );
}

#[test]
fn select_elementwise_and_rows() {
    let c = t(&[2, 2], vec![true, false, false, true]);
    let z = sel(
        "Select",
        c,
        t(&[2, 2], vec![1i64, 2, 3, 4]),
        t(&[2, 2], vec![-1i64, -2, -3, -4]),
    )
    .unwrap();
    assert_eq!(vals::<i64>(&z), vec![1, -2, -3, 4]);
    // Vector condition and vector operands: element-wise.
    let z = sel(
        "Select",
        t(&[3], vec![false, true, false]),
        t(&[3], vec![1u8, 2, 3]),
        t(&[3], vec![7u8, 8, 9]),
    )
    .unwrap();
    assert_eq!(vals::<u8>(&z), vec![7, 2, 9]);
    // Vector condition, matrix operands: whole rows.
    let z = sel(
        "Select",
        t(&[3], vec![true, false, true]),
        t(&[3, 2], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]),
        t(&[3, 2], vec![-1.0f64, -2.0, -3.0, -4.0, -5.0, -6.0]),
    )
    .unwrap();
    assert_eq!(z.dims(), &[3, 2]);
    assert_eq!(vals::<f64>(&z), vec![1.0, 2.0, -3.0, -4.0, 5.0, 6.0]);
    let z = sel(
        "Select",
        t(&[2], vec![false, true]),
        t(&[2, 1, 2], vec![Complex64::new(1.0, 1.0); 4]),
        t(&[2, 1, 2], vec![Complex64::new(0.0, 0.0); 4]),
    )
    .unwrap();
    assert_eq!(
        vals::<Complex64>(&z),
        vec![
            Complex64::new(0.0, 0.0),
            Complex64::new(0.0, 0.0),
            Complex64::new(1.0, 1.0),
            Complex64::new(1.0, 1.0)
        ]
    );
    let z = sel(
        "Select",
        t(&[2], vec![true, false]),
        strings(&["a", "b"]),
        strings(&["x", "y"]),
    )
    .unwrap();
    assert_eq!(z.as_strings().unwrap(), &[b"a".to_vec(), b"y".to_vec()]);
    let z = sel(
        "Select",
        t(&[2], vec![false, true]),
        t(&[2], vec![true, true]),
        t(&[2], vec![false, false]),
    )
    .unwrap();
    assert_eq!(vals::<bool>(&z), vec![false, true]);
}

#[test]
fn select_errors_like_tf() {
    let err = sel(
        "Select",
        t(&[2], vec![true; 2]),
        t(&[3, 2], vec![0i32; 6]),
        t(&[3, 2], vec![0i32; 6]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Number of batches of 'then' must match size of 'cond', but saw: 3 vs. 2"
    );
    let err = sel(
        "Select",
        t(&[2], vec![true; 2]),
        Tensor::scalar(1i32),
        Tensor::scalar(2i32),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "'then' must be at least a vector, but saw shape: []"
    );
    let err = sel(
        "Select",
        t(&[2], vec![true; 2]),
        t(&[2, 2], vec![0i32; 4]),
        t(&[2, 1], vec![0i32; 2]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "'then' and 'else' must have the same size.  but received: [2,2] vs. [2,1]"
    );
    let err = sel(
        "Select",
        t(&[2, 2], vec![true; 4]),
        t(&[2, 3], vec![0i32; 6]),
        t(&[2, 3], vec![0i32; 6]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Inputs to operation n of type Select must have the same size and shape.  \
         Input 0: [2,2] != input 1: [2,3]"
    );
    let k = kernel(
        "Select",
        &[DataType::DtBool, DataType::DtFloat, DataType::DtFloat],
    );
    let err = k
        .compute([
            t(&[1], vec![1u8]),
            t(&[1], vec![1.0f32]),
            t(&[1], vec![1.0f32]),
        ])
        .unwrap_err();
    assert!(matches!(err, KernelError::InputDtype { index: 0, .. }));
}

#[test]
fn select_forwards_then_or_else() {
    // Over 16 bytes: smaller buffers move with their tensor.
    let x = t(&[5], vec![1i32, 2, 3, 4, 5]);
    let px = x.as_bytes().unwrap().as_ptr();
    let y = t(&[5], vec![-1i32, -2, -3, -4, -5]);
    let z = sel(
        "Select",
        t(&[5], vec![true, false, true, false, true]),
        x,
        y.clone(),
    )
    .unwrap();
    assert_eq!(z.as_bytes().unwrap().as_ptr(), px, "then forwarded");
    assert_eq!(vals::<i32>(&z), vec![1, -2, 3, -4, 5]);
    let x = t(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]);
    let y = t(&[2, 3], vec![-1i32, -2, -3, -4, -5, -6]);
    let py = y.as_bytes().unwrap().as_ptr();
    let z = sel("Select", t(&[2], vec![true, false]), x.clone(), y).unwrap();
    assert_eq!(z.as_bytes().unwrap().as_ptr(), py, "else forwarded");
    assert_eq!(vals::<i32>(&z), vec![1, 2, 3, -4, -5, -6]);
    assert_eq!(vals::<i32>(&x), vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn select_v2_broadcasts() {
    let z = sel(
        "SelectV2",
        t(&[2, 1], vec![true, false]),
        t(&[1, 3], vec![1.0f32, 2.0, 3.0]),
        Tensor::scalar(0.0f32),
    )
    .unwrap();
    assert_eq!(z.dims(), &[2, 3]);
    assert_eq!(vals::<f32>(&z), vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
    let z = sel(
        "SelectV2",
        Tensor::scalar(false),
        t(&[2], vec![1i8, 2]),
        t(&[2], vec![3i8, 4]),
    )
    .unwrap();
    assert_eq!(vals::<i8>(&z), vec![3, 4]);
    let z = sel(
        "SelectV2",
        t(&[3], vec![true, false, true]),
        strings(&["a", "b", "c"]),
        Tensor::scalar_string("-"),
    )
    .unwrap();
    assert_eq!(
        z.as_strings().unwrap(),
        &[b"a".to_vec(), b"-".to_vec(), b"c".to_vec()]
    );
    let h = |v: f32| f16::from_f32(v);
    let z = sel(
        "SelectV2",
        t(&[2], vec![false, true]),
        t(&[2, 2], vec![h(1.0); 4]),
        t(&[2, 1], vec![h(2.0), h(3.0)]),
    )
    .unwrap();
    assert_eq!(vals::<f16>(&z), vec![h(2.0), h(1.0), h(3.0), h(1.0)]);
    let err = sel(
        "SelectV2",
        t(&[2], vec![true; 2]),
        t(&[3], vec![0i32; 3]),
        Tensor::scalar(0i32),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "condition [2], then [3], and else [] must be broadcastable"
    );
}

#[test]
fn select_v2_large_matches_reference() {
    // cond [50, 1, 40], t [1, 30, 40], e [50, 30, 1]: 60000 elements.
    let (a, b, c) = (50usize, 30usize, 40usize);
    let cond: Vec<bool> = (0..a * c).map(|i| i % 3 == 0).collect();
    let tv: Vec<i32> = (0..(b * c) as i32).collect();
    let ev: Vec<i32> = (0..(a * b) as i32).map(|v| -v).collect();
    for unique in [false, true] {
        let tt = t(&[1, b, c], tv.clone());
        let et = t(&[a, b, 1], ev.clone());
        let keep = (tt.clone(), et.clone());
        let (tt, et) = if unique {
            (tt, et)
        } else {
            (keep.0.clone(), keep.1.clone())
        };
        drop(keep);
        let z = sel("SelectV2", t(&[a, 1, c], cond.clone()), tt, et).unwrap();
        let out = vals::<i32>(&z);
        for i in 0..a {
            for j in 0..b {
                for k in 0..c {
                    let expected = if cond[i * c + k] {
                        tv[j * c + k]
                    } else {
                        ev[i * b + j]
                    };
                    assert_eq!(out[(i * b + j) * c + k], expected);
                }
            }
        }
    }
    // Same shapes, large: the flat path, with `e` forwarded.
    let n = 70_000;
    let cond: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
    let x: Vec<u16> = (0..n).map(|i| i as u16).collect();
    let shared_t = t(&[n], x.clone());
    let z = sel(
        "SelectV2",
        t(&[n], cond.clone()),
        shared_t,
        t(&[n], vec![7u16; n]),
    )
    .unwrap();
    let expected: Vec<u16> = (0..n).map(|i| if cond[i] { x[i] } else { 7 }).collect();
    assert_eq!(vals::<u16>(&z), expected);
}

#[test]
fn empty_selects() {
    let z = sel(
        "Select",
        t(&[0], Vec::<bool>::new()),
        t(&[0, 3], Vec::<f32>::new()),
        t(&[0, 3], Vec::<f32>::new()),
    )
    .unwrap();
    assert_eq!(z.dims(), &[0, 3]);
    let z = sel(
        "SelectV2",
        t(&[0], Vec::<bool>::new()),
        Tensor::scalar(1i32),
        Tensor::scalar(2i32),
    )
    .unwrap();
    assert_eq!(z.dims(), &[0]);
    let z = sel(
        "Select",
        t(&[2], vec![true, false]),
        t(&[2, 0], Vec::<i32>::new()),
        t(&[2, 0], Vec::<i32>::new()),
    )
    .unwrap();
    assert_eq!(z.dims(), &[2, 0]);
}
