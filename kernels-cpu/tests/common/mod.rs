//! The nodes and runs the kernel tests share: valid nodes built from their
//! inputs' dtypes with `NodeDefBuilder`, kernels run through
//! `create_op_kernel`, and tensor shorthands. (Each test binary uses part.)

#![allow(dead_code)]

use registry_core::create_op_kernel;
use registry_core::kernel::{CreateKernelError, KernelError, KernelInstance};
use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{AttrValue, DataType, NodeDef};
use registry_core::tensor::{Tensor, TensorElement};

/// A node `n` of `op` whose inputs have `dtypes` (setting the type attrs
/// and `N` they imply), with `attrs` and the op's defaults; panics unless
/// it is valid.
pub fn node(op: &str, dtypes: &[DataType], attrs: &[(&str, AttrValue)]) -> NodeDef {
    attrs
        .iter()
        .fold(
            NodeDefBuilder::new("n", op).fake_inputs(dtypes),
            |builder, (name, value)| builder.attr(*name, value.clone()),
        )
        .finalize()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The CPU kernel of a node of `op` on `inputs`; panics when there is none.
pub fn kernel(op: &str, inputs: &[Tensor], attrs: &[(&str, AttrValue)]) -> KernelInstance {
    let dtypes: Vec<DataType> = inputs.iter().map(Tensor::dtype).collect();
    create_op_kernel("CPU", &node(op, &dtypes, attrs)).unwrap_or_else(|e| panic!("{op}: {e}"))
}

/// Runs `op` on `inputs`: every output, or the error of the kernel's
/// construction (a kernel that refuses its attrs) or of its run.
pub fn try_run(
    op: &str,
    inputs: Vec<Tensor>,
    attrs: &[(&str, AttrValue)],
) -> Result<Vec<Tensor>, KernelError> {
    kernels_cpu::link();
    let dtypes: Vec<DataType> = inputs.iter().map(Tensor::dtype).collect();
    let k = match create_op_kernel("CPU", &node(op, &dtypes, attrs)) {
        Ok(k) => k,
        Err(CreateKernelError::Construction { source, .. }) => return Err(source),
        Err(e) => panic!("{op}: {e}"),
    };
    Ok(k.compute(inputs)?.into_vec())
}

/// Every output of `op` on `inputs`; panics on an error.
pub fn run_all(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)]) -> Vec<Tensor> {
    try_run(op, inputs, attrs).unwrap_or_else(|e| panic!("{op}: {e}"))
}

/// The one output of `op` on `inputs`; panics on an error.
pub fn run(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)]) -> Tensor {
    let mut out = run_all(op, inputs, attrs);
    assert_eq!(out.len(), 1, "{op}: one output");
    out.remove(0)
}

/// The message of the `InvalidArgument` error `op` gives on `inputs`.
pub fn invalid(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)]) -> String {
    match try_run(op, inputs, attrs) {
        Err(KernelError::InvalidArgument(m)) => m,
        other => panic!("{op}: expected InvalidArgument, got {other:?}"),
    }
}

/// A tensor of `shape` holding `v`.
pub fn t<T: TensorElement>(shape: &[usize], v: &[T]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

/// A scalar.
pub fn s<T: TensorElement>(v: T) -> Tensor {
    Tensor::scalar(v)
}

/// A string tensor of `shape`.
pub fn strt(shape: &[usize], v: &[&str]) -> Tensor {
    Tensor::from_strings(shape, v.iter().map(|s| s.as_bytes().to_vec()).collect()).unwrap()
}

/// The elements of `t`.
pub fn vals<T: TensorElement>(t: &Tensor) -> Vec<T> {
    t.as_slice::<T>().unwrap().to_vec()
}

/// The strings of `t`, as UTF-8.
pub fn strs(t: &Tensor) -> Vec<String> {
    t.as_strings()
        .unwrap()
        .iter()
        .map(|s| String::from_utf8(s.clone()).unwrap())
        .collect()
}

/// The dims and `int32` elements of `t`.
pub fn shaped(t: &Tensor) -> (Vec<usize>, Vec<i32>) {
    (t.dims().to_vec(), vals(t))
}
