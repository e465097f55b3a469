//! AddN: N same-shape inputs summed left to right in the element type.
//! Integer and exactly representable sums are compared exactly.

use crate::math_common;

use math_common::*;
use registry_core::kernel::{KernelError, KernelInstance};
use registry_core::proto::DataType;
use registry_core::tensor::{Complex128, Tensor, f16};

fn add_n_kernel(n: usize, dt: DataType) -> KernelInstance {
    kernel("AddN", &vec![dt; n])
}

fn add_n(inputs: Vec<Tensor>) -> Result<Tensor, KernelError> {
    let k = add_n_kernel(inputs.len(), inputs[0].dtype());
    Ok(k.compute(inputs)?.remove(0))
}

#[test]
fn sums_several_types() {
    let z = add_n(vec![t(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]); 3]).unwrap();
    assert_eq!(vals::<f32>(&z), vec![3.0, 6.0, 9.0, 12.0]);
    let z = add_n(vec![t(&[2], vec![i8::MAX, -1]), t(&[2], vec![1i8, -1])]).unwrap();
    assert_eq!(vals::<i8>(&z), vec![i8::MIN, -2], "integers wrap");
    let z = add_n(vec![
        t(&[1], vec![u32::MAX]),
        t(&[1], vec![1u32]),
        t(&[1], vec![5u32]),
    ])
    .unwrap();
    assert_eq!(vals::<u32>(&z), vec![5]);
    let c = |re, im| Complex128::new(re, im);
    let z = add_n(vec![
        t(&[1], vec![c(1.0, 2.0)]),
        t(&[1], vec![c(-3.0, 0.5)]),
    ])
    .unwrap();
    assert_eq!(vals::<Complex128>(&z), vec![c(-2.0, 2.5)]);
    // Half rounds after each addition: (2048 + 1) + 1 = 2048, 1 + 1 + 2048 = 2050.
    let h = |v: f32| t(&[1], vec![f16::from_f32(v)]);
    assert_eq!(
        vals::<f16>(&add_n(vec![h(2048.0), h(1.0), h(1.0)]).unwrap()),
        vec![f16::from_f32(2048.0)]
    );
    assert_eq!(
        vals::<f16>(&add_n(vec![h(1.0), h(1.0), h(2048.0)]).unwrap()),
        vec![f16::from_f32(2050.0)]
    );
    let z = add_n(vec![Tensor::scalar(1.5f64), Tensor::scalar(2.25f64)]).unwrap();
    assert_eq!(vals::<f64>(&z), vec![3.75]);
}

#[test]
fn many_inputs_and_large_tensors() {
    let n = 70_001;
    let inputs: Vec<Tensor> = (0..11)
        .map(|k| t(&[n], (0..n as i64).map(|i| i * k).collect()))
        .collect();
    let keep = inputs[3].clone();
    let z = add_n(inputs).unwrap();
    let expected: Vec<i64> = (0..n as i64).map(|i| i * 55).collect();
    assert_eq!(vals::<i64>(&z), expected);
    assert_eq!(vals::<i64>(&keep)[2], 6, "a shared input is untouched");
}

#[test]
fn single_input_passes_through_and_forwarding() {
    // (Over 16 bytes: smaller tensors are held by value, never shared.)
    let x = t(&[5], vec![1i32, 2, 3, 4, 5]);
    let z = add_n(vec![x.clone()]).unwrap();
    assert!(z.shares_buffer_with(&x));
    // Input 0 shared, input 1 unique: input 1's buffer is the accumulator.
    let x = t(&[5], vec![1i32, 2, 3, 4, 5]);
    let y = t(&[5], vec![10i32, 20, 30, 40, 50]);
    let py = y.as_bytes().unwrap().as_ptr();
    let z = add_n(vec![x.clone(), y, t(&[5], vec![100i32; 5])]).unwrap();
    assert_eq!(z.as_bytes().unwrap().as_ptr(), py);
    assert_eq!(vals::<i32>(&z), vec![111, 122, 133, 144, 155]);
    assert_eq!(vals::<i32>(&x), vec![1, 2, 3, 4, 5]);
}

#[test]
fn shape_mismatch_and_bad_inputs() {
    let err = add_n(vec![t(&[2, 3], vec![0.0f32; 6]), t(&[2], vec![0.0f32; 2])]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Inputs to operation n of type AddN must have the same size and shape.  \
         Input 0: [2,3] != input 1: [2]"
    );
    let k = add_n_kernel(2, DataType::DtFloat);
    let err = k
        .compute([t(&[1], vec![1.0f32]), t(&[1], vec![1i32])])
        .unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 1, .. }),
        "{err}"
    );
    let err = k.compute([t(&[1], vec![1.0f32])]).unwrap_err();
    assert!(
        matches!(
            err,
            KernelError::InputCount {
                expected: 2,
                actual: 1
            }
        ),
        "{err}"
    );
    let z = add_n(vec![t(&[0, 5], Vec::<f32>::new()); 3]).unwrap();
    assert_eq!(z.dims(), &[0, 5]);
}
