//! The kernels reach the global registry and run through `create_op_kernel`.

use registry_core::create_op_kernel;
use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::Tensor;

fn node(op: &str, t: DataType) -> NodeDef {
    NodeDefBuilder::new("n", op)
        .input(("x", t))
        .finalize()
        .unwrap()
}

#[test]
fn abs_runs_through_create_op_kernel() {
    kernels_cpu::link();
    let k = create_op_kernel("CPU", &node("Abs", DataType::DtFloat)).unwrap();
    let x = Tensor::from_vec([3], vec![-1.5f32, 0.0, 2.0]).unwrap();
    let out = k.compute([x.clone()]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.5, 0.0, 2.0]);
    // The input was shared (x is still alive), so it was not overwritten.
    assert_eq!(x.as_slice::<f32>().unwrap(), &[-1.5, 0.0, 2.0]);
}

#[test]
fn missing_kernel_explains_itself() {
    kernels_cpu::link();
    let err = create_op_kernel("TPU", &node("Abs", DataType::DtFloat)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("No registered 'Abs' OpKernel for 'TPU' devices"),
        "{msg}"
    );
    assert!(msg.contains("device='CPU'; T in [DT_FLOAT]"), "{msg}");
}
