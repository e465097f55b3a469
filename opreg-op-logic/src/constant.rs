//! `Const`'s `value` attr checked against its `dtype` attr (TF's `ConstantOp`,
//! with its message), shared by the CPU and GPU kernels.

use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::Tensor;

/// The `value` attr's tensor of a `Const` node; InvalidArgument when its
/// dtype is not the `dtype` attr.
pub fn const_value(attrs: &NodeAttrs<'_>) -> Result<Tensor, KernelError> {
    let value: Tensor = attrs.get("value")?;
    let dtype: DataType = attrs.get("dtype")?;
    check_dtype(&value, dtype)?;
    Ok(value)
}

/// InvalidArgument (TF's message) unless `value` has dtype `dtype`.
fn check_dtype(value: &Tensor, dtype: DataType) -> Result<(), KernelError> {
    if value.dtype() != dtype {
        return Err(KernelError::invalid_argument(format!(
            "Type mismatch between value ({}) and dtype ({})",
            value.dtype().type_name(),
            dtype.type_name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use opreg_standard_ops as _;
    use registry_core::OpRegistry;
    use registry_core::proto::{AttrValue, NodeDef, attr_value::Value};

    use super::*;

    fn build(value: &Tensor, dtype: DataType) -> Result<Tensor, KernelError> {
        let op_def = OpRegistry::global().look_up_op_def("Const").unwrap();
        let mut node = NodeDef {
            name: "c".into(),
            op: "Const".into(),
            ..Default::default()
        };
        node.attr.insert(
            "value".into(),
            AttrValue {
                value: Some(Value::Tensor(value.to_proto())),
            },
        );
        node.attr.insert(
            "dtype".into(),
            AttrValue {
                value: Some(Value::Type(dtype as i32)),
            },
        );
        const_value(&NodeAttrs::new(&node, op_def))
    }

    #[test]
    fn value_and_dtype_must_agree() {
        let v = build(&Tensor::scalar(1.5f32), DataType::DtFloat).unwrap();
        assert_eq!(v.as_slice::<f32>().unwrap(), &[1.5]);
        assert_eq!(
            build(&Tensor::scalar(1i32), DataType::DtFloat)
                .unwrap_err()
                .to_string(),
            "Type mismatch between value (int32) and dtype (float)"
        );
    }
}
