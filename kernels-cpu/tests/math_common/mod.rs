//! Helpers shared by the `math_*` kernel tests: build a NodeDef (with
//! `NodeDefBuilder`), create the CPU kernel through the public API and run
//! it; compare floats in ulps.
#![allow(dead_code)]

use std::fmt::Display;

pub use crate::common::node;

use registry_core::create_op_kernel;
use registry_core::kernel::{CreateKernelError, KernelError, KernelInstance, TensorVec};
use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::{Tensor, TensorElement, bf16, f16};

/// Creates the CPU kernel of `node` (panics with the reason if it fails).
pub fn create(node: &NodeDef) -> KernelInstance {
    kernels_cpu::link();
    create_op_kernel("CPU", node).unwrap_or_else(|e| panic!("{}: {e}", node.op))
}

/// Creates the CPU kernel of `op` for inputs of `dtypes`.
pub fn kernel(op: &str, dtypes: &[DataType]) -> KernelInstance {
    create(&node(op, dtypes, &[]))
}

/// Tries to create the CPU kernel of `op` (`inputs` inputs of type `T`)
/// with attr `T = t`, whether or not the op allows `t`: the node is built
/// for float inputs and then given `T = t`, so that refusing `t` is
/// `create_op_kernel`'s to do.
#[allow(clippy::result_large_err)] // the registry's error type, as returned
pub fn try_kernel_t(
    op: &str,
    inputs: usize,
    t: DataType,
) -> Result<KernelInstance, CreateKernelError> {
    kernels_cpu::link();
    let mut node = node(op, &vec![DataType::DtFloat; inputs], &[]);
    node.attr.insert("T".into(), t.into());
    create_op_kernel("CPU", &node)
}

/// Runs `op`, for inputs of `dtypes`, on `inputs`.
pub fn run(op: &str, dtypes: &[DataType], inputs: Vec<Tensor>) -> Result<TensorVec, KernelError> {
    kernel(op, dtypes).compute(inputs)
}

/// Runs a one-output op whose inputs are all of type `T`, the dtype of
/// the first.
pub fn run1(op: &str, inputs: Vec<Tensor>) -> Result<Tensor, KernelError> {
    let dtypes = vec![inputs[0].dtype(); inputs.len()];
    Ok(run(op, &dtypes, inputs)?.remove(0))
}

/// A tensor from a shape and values.
pub fn t<T: TensorElement>(shape: &[usize], v: Vec<T>) -> Tensor {
    Tensor::from_vec(shape, v).unwrap()
}

/// The values of a tensor.
pub fn vals<T: TensorElement>(t: &Tensor) -> Vec<T> {
    t.as_slice::<T>().unwrap().to_vec()
}

/// The distance between two floats of `bits` bits given by their bit
/// patterns, as sign-magnitude integers (adjacent floats differ by 1, the
/// distance is large across signs); 0 when `same` (equal, or both NaN).
fn ulps_of_bits(same: bool, a: u64, b: u64, bits: u32) -> u64 {
    if same {
        return 0;
    }
    let sign = 1u64 << (bits - 1);
    let key = |x: u64| {
        let magnitude = i128::from(x & !sign);
        if x & sign != 0 { -magnitude } else { magnitude }
    };
    u64::try_from(key(a).abs_diff(key(b))).unwrap_or(u64::MAX)
}

/// Distance in units in the last place between two f32 (0 for equal,
/// including two NaNs; large across signs).
pub fn ulps_f32(a: f32, b: f32) -> u64 {
    let same = a == b || (a.is_nan() && b.is_nan());
    ulps_of_bits(same, a.to_bits().into(), b.to_bits().into(), 32)
}

/// Distance in ulps between two f64.
pub fn ulps_f64(a: f64, b: f64) -> u64 {
    let same = a == b || (a.is_nan() && b.is_nan());
    ulps_of_bits(same, a.to_bits(), b.to_bits(), 64)
}

/// Distance in ulps between two halfs.
pub fn ulps_f16(a: f16, b: f16) -> u64 {
    let same = a == b || (a.is_nan() && b.is_nan());
    ulps_of_bits(same, a.to_bits().into(), b.to_bits().into(), 16)
}

/// Distance in ulps between two bfloat16s.
pub fn ulps_bf16(a: bf16, b: bf16) -> u64 {
    let same = a == b || (a.is_nan() && b.is_nan());
    ulps_of_bits(same, a.to_bits().into(), b.to_bits().into(), 16)
}

/// Asserts `actual` is within `max_ulps` of `expected` element-wise, in
/// the ulps `distance` counts.
#[track_caller]
pub fn assert_ulps<T: Copy + Display>(
    actual: &[T],
    expected: &[T],
    max_ulps: u64,
    what: &str,
    distance: fn(T, T) -> u64,
) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let d = distance(a, e);
        assert!(
            d <= max_ulps,
            "{what}[{i}]: {a} vs expected {e} ({d} ulps > {max_ulps})"
        );
    }
}

/// [`assert_ulps`] for f32.
#[track_caller]
pub fn assert_f32_ulps(actual: &[f32], expected: &[f32], max_ulps: u64, what: &str) {
    assert_ulps(actual, expected, max_ulps, what, ulps_f32);
}

/// [`assert_ulps`] for f64.
#[track_caller]
pub fn assert_f64_ulps(actual: &[f64], expected: &[f64], max_ulps: u64, what: &str) {
    assert_ulps(actual, expected, max_ulps, what, ulps_f64);
}

/// [`assert_ulps`] for halfs.
#[track_caller]
pub fn assert_f16_ulps(actual: &[f16], expected: &[f16], max_ulps: u64, what: &str) {
    assert_ulps(actual, expected, max_ulps, what, ulps_f16);
}

/// The ops of the `math` kernel group.
pub const MATH_OPS: &[&str] = &[
    "Abs",
    "Neg",
    "Exp",
    "Log",
    "Sqrt",
    "Rsqrt",
    "Square",
    "Sigmoid",
    "Tanh",
    "Floor",
    "AddV2",
    "Sub",
    "Mul",
    "RealDiv",
    "FloorDiv",
    "FloorMod",
    "Maximum",
    "Minimum",
    "Pow",
    "SquaredDifference",
    "Equal",
    "Greater",
    "LogicalAnd",
    "Select",
    "SelectV2",
    "Cast",
    "AddN",
];
