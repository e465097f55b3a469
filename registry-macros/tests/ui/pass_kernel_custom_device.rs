// A device type of one's own (here on host memory), found by
// create_op_kernel for that device only.
use std::sync::Arc;

use registry_core::device::HostDevice;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::Tensor;
use registry_core::{create_op_kernel, kernel};
use opreg_standard_ops::Abs;

#[kernel(op = Abs, device = "MyDevice", T = [float])]
fn abs_on_my_device(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let x = ctx.take_input(0)?;
    ctx.set_output(0, x)
}

registry_core::register_device!("MyDevice", || Ok(Arc::new(HostDevice::new("MyDevice"))));

fn main() {
    let mut node = NodeDef {
        name: "a".into(),
        op: "Abs".into(),
        input: vec!["x".into()],
        ..Default::default()
    };
    node.attr.insert(
        "T".into(),
        AttrValue { value: Some(Value::Type(DataType::DtFloat as i32)) },
    );
    let k = create_op_kernel("MyDevice", &node).unwrap();
    assert_eq!(k.info().device_type(), "MyDevice");
    assert_eq!(k.device().device_type(), "MyDevice");
    let out = k.compute([Tensor::scalar(-1.0f32)]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[-1.0]);
    assert!(create_op_kernel("CPU", &node).is_err());
}
