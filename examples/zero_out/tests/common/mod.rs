//! Helpers shared by the tests: attr values, NodeDefs and tensors.
#![allow(dead_code)]

use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::{Tensor, TensorElement};

// The crate's ops and kernels, and the standard CPU kernels, linked in.
registry_core::link_ops!(zero_out);

/// Names kernels-cpu so that its kernels are linked.
pub fn link_kernels() {
    kernels_cpu::link();
}

/// A `type` attr.
pub fn ty(t: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(t as i32)),
    }
}

/// An `int` attr.
pub fn int(v: i64) -> AttrValue {
    AttrValue {
        value: Some(Value::I(v)),
    }
}

/// A `bool` attr.
pub fn boolean(v: bool) -> AttrValue {
    AttrValue {
        value: Some(Value::B(v)),
    }
}

/// A `tensor` attr.
pub fn tensor_attr(t: &Tensor) -> AttrValue {
    AttrValue {
        value: Some(Value::Tensor(t.to_proto())),
    }
}

/// A node `name` of `op` with these inputs and attrs.
pub fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| (*s).to_owned()).collect(),
        attr: attrs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        ..Default::default()
    }
}

/// A tensor from a shape and row-major values.
pub fn t<T: TensorElement>(shape: &[usize], values: Vec<T>) -> Tensor {
    Tensor::from_vec(shape, values).expect("values fill the shape")
}

/// A tensor's values.
pub fn vals<T: TensorElement>(t: &Tensor) -> Vec<T> {
    t.as_slice::<T>().expect("dtype").to_vec()
}
