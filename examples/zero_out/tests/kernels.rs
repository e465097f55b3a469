//! The CPU kernels of ZeroOut and WeightedSum, created through
//! `create_op_kernel` and run with `KernelInstance::compute`: values, every
//! allowed type, the `normalize` default, and bad inputs as errors.
#![cfg(feature = "cpu")]

mod common;

use common::*;
use registry_core::create_op_kernel;
use registry_core::kernel::{CreateKernelError, KernelError, KernelInstance};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorElement};

fn zero_out_kernel() -> KernelInstance {
    create_op_kernel("CPU", &node("z", "ZeroOut", &["x"], &[])).expect("ZeroOut has a CPU kernel")
}

fn zero_out(x: Tensor) -> Result<Tensor, KernelError> {
    Ok(zero_out_kernel().compute([x])?.remove(0))
}

#[allow(clippy::result_large_err)]
fn weighted_sum_kernel(
    n: usize,
    dtype: DataType,
    normalize: Option<bool>,
) -> Result<KernelInstance, CreateKernelError> {
    let inputs: Vec<String> = (0..n)
        .map(|i| format!("v{i}"))
        .chain(["w".into()])
        .collect();
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let mut attrs = vec![("N", int(n as i64)), ("T", ty(dtype))];
    if let Some(normalize) = normalize {
        attrs.push(("normalize", boolean(normalize)));
    }
    create_op_kernel("CPU", &node("ws", "WeightedSum", &inputs, &attrs))
}

fn weighted_sum<T: TensorElement>(
    values: Vec<Tensor>,
    weights: Vec<T>,
    normalize: Option<bool>,
) -> Result<Tensor, KernelError> {
    let k = weighted_sum_kernel(values.len(), T::DTYPE, normalize).expect("kernel");
    let n = weights.len();
    let inputs = values.into_iter().chain([t(&[n], weights)]);
    Ok(k.compute(inputs)?.remove(0))
}

#[test]
fn zero_out_keeps_the_first_element() {
    let z = zero_out(t(&[2, 3], vec![5, -2, 7, 1, 9, 3])).unwrap();
    assert_eq!(z.dims(), &[2, 3]);
    assert_eq!(vals::<i32>(&z), vec![5, 0, 0, 0, 0, 0]);
    let z = zero_out(Tensor::scalar(-4i32)).unwrap();
    assert_eq!(z.dims(), &[] as &[usize]);
    assert_eq!(vals::<i32>(&z), vec![-4]);
    let z = zero_out(t(&[0, 4], Vec::<i32>::new())).unwrap();
    assert_eq!(z.dims(), &[0, 4]);
}

#[test]
fn zero_out_computes_in_place_only_on_unshared_inputs() {
    // Unshared: the input's buffer becomes the output (over 16 bytes:
    // smaller buffers are held by value and move with their tensor).
    let x = t(&[5], vec![1, 2, 3, 4, 5]);
    let buffer = x.as_bytes().unwrap().as_ptr();
    let z = zero_out(x).unwrap();
    assert_eq!(z.as_bytes().unwrap().as_ptr(), buffer);
    assert_eq!(vals::<i32>(&z), vec![1, 0, 0, 0, 0]);
    // Shared: the caller's tensor is left alone.
    for values in [vec![1, 2, 3, 4], vec![1, 2, 3, 4, 5]] {
        let x = t(&[values.len()], values.clone());
        let z = zero_out(x.clone()).unwrap();
        assert!(!z.shares_buffer_with(&x));
        assert_eq!(vals::<i32>(&z)[1..], vec![0; values.len() - 1]);
        assert_eq!(vals::<i32>(&x), values);
    }
}

#[test]
fn zero_out_rejects_bad_inputs() {
    let k = zero_out_kernel();
    let err = k.compute([t(&[2], vec![1.0f32, 2.0])]).unwrap_err();
    assert!(
        matches!(
            err,
            KernelError::InputDtype {
                index: 0,
                expected: DataType::DtInt32,
                actual: DataType::DtFloat
            }
        ),
        "{err}"
    );
    let err = k.compute([t(&[1], vec![1]), t(&[1], vec![2])]).unwrap_err();
    assert!(
        matches!(
            err,
            KernelError::InputCount {
                expected: 1,
                actual: 2
            }
        ),
        "{err}"
    );
    // A node with an attr the op does not have is refused before any kernel is built.
    let bad = node("z", "ZeroOut", &["x"], &[("T", ty(DataType::DtInt32))]);
    let err = create_op_kernel("CPU", &bad).unwrap_err();
    assert!(matches!(err, CreateKernelError::NodeDef(_)), "{err}");
    // No GPU kernel (yet): the lookup error says which kernels exist.
    let err = create_op_kernel("GPU", &node("z", "ZeroOut", &["x"], &[])).unwrap_err();
    assert!(matches!(err, CreateKernelError::Lookup(_)), "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "No registered 'ZeroOut' OpKernel for 'GPU' devices compatible with node 'z'"
        ) && msg.contains("device='CPU'"),
        "{msg}"
    );
}

#[test]
fn weighted_sum_for_every_allowed_type() {
    let values = vec![
        t(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]),
        t(&[2, 2], vec![10.0f32, 20.0, 30.0, 40.0]),
    ];
    let s = weighted_sum(values, vec![2.0f32, 0.5], None).unwrap();
    assert_eq!(s.dims(), &[2, 2]);
    assert_eq!(vals::<f32>(&s), vec![7.0, 14.0, 21.0, 28.0]);

    let values = vec![t(&[3], vec![1.0f64, -2.0, 0.25]); 3];
    let s = weighted_sum(values, vec![1.0f64, 2.0, -4.0], None).unwrap();
    assert_eq!(vals::<f64>(&s), vec![-1.0, 2.0, -0.25]);

    let values = vec![t(&[3], vec![1i32, 2, 3]), t(&[3], vec![100i32, 200, 300])];
    let s = weighted_sum(values, vec![-3i32, 1], None).unwrap();
    assert_eq!(vals::<i32>(&s), vec![97, 194, 291]);

    // N = 1, a scalar: weight times value.
    let s = weighted_sum(vec![Tensor::scalar(6i32)], vec![7i32], None).unwrap();
    assert_eq!(vals::<i32>(&s), vec![42]);
}

#[test]
fn weighted_sum_normalize_defaults_to_false() {
    let values = || vec![t(&[2], vec![2.0f32, 4.0]), t(&[2], vec![6.0f32, 8.0])];
    let default = weighted_sum(values(), vec![1.0f32, 3.0], None).unwrap();
    let explicit = weighted_sum(values(), vec![1.0f32, 3.0], Some(false)).unwrap();
    assert_eq!(vals::<f32>(&default), vec![20.0, 28.0]);
    assert_eq!(vals::<f32>(&explicit), vals::<f32>(&default));
    // normalize: the weighted mean.
    let mean = weighted_sum(values(), vec![1.0f32, 3.0], Some(true)).unwrap();
    assert_eq!(vals::<f32>(&mean), vec![5.0, 7.0]);
    // int32 rounds toward zero.
    let values = vec![t(&[2], vec![7i32, -7]), t(&[2], vec![0i32, 0])];
    let mean = weighted_sum(values, vec![1i32, 1], Some(true)).unwrap();
    assert_eq!(vals::<i32>(&mean), vec![3, -3]);
}

#[test]
fn weighted_sum_int32_wraps_around() {
    let values = vec![t(&[1], vec![i32::MAX]), t(&[1], vec![1i32])];
    let s = weighted_sum(values, vec![1i32, 1], None).unwrap();
    assert_eq!(vals::<i32>(&s), vec![i32::MIN]);
    // MIN * -1 and MIN / -1 wrap instead of panicking.
    let values = vec![t(&[1], vec![i32::MIN]), t(&[1], vec![0i32])];
    let s = weighted_sum(values, vec![-1i32, 0], Some(true)).unwrap();
    assert_eq!(vals::<i32>(&s), vec![i32::MIN]);
}

#[test]
fn weighted_sum_rejects_bad_inputs() {
    // Values of different shapes.
    let err = weighted_sum(
        vec![t(&[2], vec![1.0f32, 2.0]), t(&[3], vec![1.0f32, 2.0, 3.0])],
        vec![1.0f32, 1.0],
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "WeightedSum node 'ws': all values must have one shape, but values[0] has shape [2] \
         and values[1] has shape [3]"
    );
    // Weights that are not a vector of N.
    let err = weighted_sum(vec![t(&[2], vec![1i32, 2]); 2], vec![1i32, 2, 3], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "WeightedSum node 'ws': weights must be a vector of N = 2 elements (one per value), \
         but has shape [3]"
    );
    let k = weighted_sum_kernel(1, DataType::DtDouble, None).unwrap();
    let err = k
        .compute([t(&[2], vec![1.0f64, 2.0]), Tensor::scalar(1.0f64)])
        .unwrap_err();
    assert!(err.to_string().contains("but has shape []"), "{err}");
    // Weights summing to zero with normalize.
    let err = weighted_sum(
        vec![t(&[1], vec![1.0f64]); 2],
        vec![1.0f64, -1.0],
        Some(true),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("normalize is set, but the weights sum to zero"),
        "{err}"
    );
    // Mixed dtypes and wrong input counts.
    let k = weighted_sum_kernel(2, DataType::DtFloat, None).unwrap();
    let err = k
        .compute([
            t(&[1], vec![1.0f32]),
            t(&[1], vec![1i32]),
            t(&[2], vec![1.0f32, 1.0]),
        ])
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
                expected: 3,
                actual: 1
            }
        ),
        "{err}"
    );
}

#[test]
fn weighted_sum_kernels_follow_the_op() {
    // A type the op does not allow is refused by the NodeDef check.
    let err = weighted_sum_kernel(2, DataType::DtInt64, None).unwrap_err();
    assert!(matches!(err, CreateKernelError::NodeDef(_)), "{err}");
    // N below the op's minimum of 1.
    let err = weighted_sum_kernel(0, DataType::DtFloat, None).unwrap_err();
    assert!(matches!(err, CreateKernelError::NodeDef(_)), "{err}");
    // One CPU kernel per allowed type.
    let kernels = registry_core::KernelRegistry::global().kernels_for_op("WeightedSum");
    let mut types: Vec<DataType> = kernels.iter().map(|k| k.constraints[0].types[0]).collect();
    types.sort_by_key(|t| *t as i32);
    assert_eq!(
        types,
        [DataType::DtFloat, DataType::DtDouble, DataType::DtInt32]
    );
}
