// The function form: a generic stateless kernel, one registration per type,
// run through create_op_kernel.
use registry_core::kernel::{KernelError, KernelRegistry, OpKernelContext};
use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
use registry_core::tensor::{Tensor, TensorElement};
use registry_core::{create_op_kernel, kernel};
use opreg_standard_ops::Abs;

/// Abs that ignores signs of zero.
#[kernel(op = Abs, device = CPU, T = [float, f64, DT_INT32])]
fn abs<T: TensorElement + PartialOrd + std::ops::Neg<Output = T> + Default>(
    ctx: &mut OpKernelContext<'_>,
) -> Result<(), KernelError> {
    let x = ctx.input(0)?.clone();
    let out = ctx.allocate_output(0, x.shape())?;
    for (o, &v) in out.as_mut_slice::<T>()?.iter_mut().zip(x.as_slice::<T>()?) {
        *o = if v < T::default() { -v } else { v };
    }
    Ok(())
}

fn main() {
    let regs = KernelRegistry::global().kernels_for_op("Abs");
    assert_eq!(regs.len(), 3);
    let mut node = NodeDef {
        name: "a".into(),
        op: "Abs".into(),
        input: vec!["x".into()],
        ..Default::default()
    };
    node.attr.insert(
        "T".into(),
        AttrValue { value: Some(Value::Type(DataType::DtInt32 as i32)) },
    );
    let k = create_op_kernel("CPU", &node).unwrap();
    assert!(k.registration().kernel_name.ends_with("::abs::<i32>"));
    let out = k.compute([Tensor::from_vec([2], vec![-3i32, 4]).unwrap()]).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[3, 4]);
}
