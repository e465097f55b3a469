//! Helpers shared by the `math_*` kernel tests: build a NodeDef, create the
//! CPU kernel through the public API and run it; compare floats in ulps.
#![allow(dead_code)]

use registry_core::create_op_kernel;
use registry_core::kernel::{CreateKernelError, KernelError, KernelInstance, TensorVec};
use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::{Tensor, TensorElement, bf16, f16};

/// A `type` attr.
pub fn ty(t: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(t as i32)),
    }
}

/// A `bool` attr.
pub fn b(v: bool) -> AttrValue {
    AttrValue {
        value: Some(Value::B(v)),
    }
}

/// An `int` attr.
pub fn i(v: i64) -> AttrValue {
    AttrValue {
        value: Some(Value::I(v)),
    }
}

/// A node `n` of `op` with `inputs` inputs and the given attrs.
pub fn node(op: &str, inputs: usize, attrs: &[(&str, AttrValue)]) -> NodeDef {
    let mut node = NodeDef {
        name: "n".into(),
        op: op.into(),
        input: (0..inputs).map(|i| format!("in{i}")).collect(),
        ..Default::default()
    };
    for (k, v) in attrs {
        node.attr.insert((*k).into(), v.clone());
    }
    node
}

/// Creates the CPU kernel of `op` with attr `T = t`.
#[allow(clippy::result_large_err)]
pub fn kernel(op: &str, inputs: usize, t: DataType) -> Result<KernelInstance, CreateKernelError> {
    kernels_cpu::link();
    create_op_kernel("CPU", &node(op, inputs, &[("T", ty(t))]))
}

/// Runs `op` (attr `T` = the dtype of `inputs[t_from]`) on `inputs`.
pub fn run_t(op: &str, t_from: usize, inputs: Vec<Tensor>) -> Result<TensorVec, KernelError> {
    let t = inputs[t_from].dtype();
    let k = kernel(op, inputs.len(), t).unwrap_or_else(|e| panic!("{op} {t:?}: {e}"));
    k.compute(inputs)
}

/// Runs a one-output op whose `T` is the dtype of its first input.
pub fn run1(op: &str, inputs: Vec<Tensor>) -> Result<Tensor, KernelError> {
    Ok(run_t(op, 0, inputs)?.remove(0))
}

/// A tensor from a shape and values.
pub fn t<T: TensorElement>(shape: &[usize], v: Vec<T>) -> Tensor {
    Tensor::from_vec(shape, v).unwrap()
}

/// The values of a tensor.
pub fn vals<T: TensorElement>(t: &Tensor) -> Vec<T> {
    t.as_slice::<T>().unwrap().to_vec()
}

/// Distance in units in the last place between two f32 (0 for equal,
/// including two NaNs; large across signs).
pub fn ulps_f32(a: f32, b: f32) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i64::from(i32::MIN) - i64::from(i)
        } else {
            i64::from(i)
        }
    };
    key(a).abs_diff(key(b))
}

/// Distance in ulps between two f64.
pub fn ulps_f64(a: f64, b: f64) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    let key = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i128::from(i64::MIN) - i128::from(i)
        } else {
            i128::from(i)
        }
    };
    u64::try_from(key(a).abs_diff(key(b))).unwrap_or(u64::MAX)
}

/// Distance in ulps between two halfs.
pub fn ulps_f16(a: f16, b: f16) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    let key = |x: f16| {
        let i = x.to_bits() as i16;
        if i < 0 {
            i32::from(i16::MIN) - i32::from(i)
        } else {
            i32::from(i)
        }
    };
    u64::from(key(a).abs_diff(key(b)))
}

/// Distance in ulps between two bfloat16s.
pub fn ulps_bf16(a: bf16, b: bf16) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    let key = |x: bf16| {
        let i = x.to_bits() as i16;
        if i < 0 {
            i32::from(i16::MIN) - i32::from(i)
        } else {
            i32::from(i)
        }
    };
    u64::from(key(a).abs_diff(key(b)))
}

/// Asserts `actual` is within `max_ulps` of `expected` element-wise.
pub fn assert_f32_ulps(actual: &[f32], expected: &[f32], max_ulps: u64, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let d = ulps_f32(a, e);
        assert!(
            d <= max_ulps,
            "{what}[{i}]: {a} vs expected {e} ({d} ulps > {max_ulps})"
        );
    }
}

/// Asserts `actual` is within `max_ulps` of `expected` element-wise.
pub fn assert_f64_ulps(actual: &[f64], expected: &[f64], max_ulps: u64, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let d = ulps_f64(a, e);
        assert!(
            d <= max_ulps,
            "{what}[{i}]: {a} vs expected {e} ({d} ulps > {max_ulps})"
        );
    }
}

/// Asserts `actual` is within `max_ulps` of `expected` element-wise.
pub fn assert_f16_ulps(actual: &[f16], expected: &[f16], max_ulps: u64, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let d = ulps_f16(a, e);
        assert!(
            d <= max_ulps,
            "{what}[{i}]: {a} vs expected {e} ({d} ulps > {max_ulps})"
        );
    }
}

/// Every dtype name of tf_cpu_kernels.md with its enum value.
pub fn dtype_from_tf(name: &str) -> Option<DataType> {
    use DataType::*;
    Some(match name {
        "half" => DtHalf,
        "bfloat16" => DtBfloat16,
        "float" => DtFloat,
        "double" => DtDouble,
        "int8" => DtInt8,
        "int16" => DtInt16,
        "int32" => DtInt32,
        "int64" => DtInt64,
        "uint8" => DtUint8,
        "uint16" => DtUint16,
        "uint32" => DtUint32,
        "uint64" => DtUint64,
        "bool" => DtBool,
        "complex64" => DtComplex64,
        "complex128" => DtComplex128,
        "string" => DtString,
        "qint8" => DtQint8,
        "quint8" => DtQuint8,
        "qint16" => DtQint16,
        "quint16" => DtQuint16,
        "qint32" => DtQint32,
        _ => return None,
    })
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
