//! `OpregAbs` and `OpregMatMul`: opreg's standard `Abs` and `MatMul` CPU
//! kernels under op names TensorFlow does not have, for timing them inside
//! TensorFlow (see the README).

use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::shape::common::unchanged_shape;
use registry_core::{kernel, op};

/// `Abs` of float tensors, by opreg's standard kernel.
#[op(input = "x: T", output = "y: T", attr = "T: {float}", shape_fn = unchanged_shape)]
pub struct OpregAbs;

/// `MatMul` of float matrices, by opreg's standard kernel.
#[op(
    input = "a: T",
    input = "b: T",
    output = "product: T",
    attr = "transpose_a: bool = false",
    attr = "transpose_b: bool = false",
    attr = "T: {float}",
    shape_fn = opreg_standard_ops::shape::matmul
)]
pub struct OpregMatMul;

/// A kernel that is the standard op's kernel, built for a copy of the node
/// with the standard op's name.
struct Standard {
    inner: registry_core::kernel::KernelInstance,
}

impl Standard {
    fn build(ctx: &OpKernelConstruction<'_>, standard_op: &str) -> Result<Self, KernelError> {
        // Keeps kernels-cpu's registrations in the library.
        kernels_cpu::link();
        let mut node = ctx.node_def().clone();
        node.op = standard_op.to_owned();
        // TensorFlow's eager NodeDefs name no inputs; the standard kernel's
        // checks count them.
        node.input = (0..ctx.input_types().len())
            .map(|i| format!("input_{i}"))
            .collect();
        node.attr.retain(|name, _| !name.starts_with('_'));
        let inner = registry_core::create_op_kernel("CPU", &node)
            .map_err(|e| KernelError::internal(e.to_string()))?;
        Ok(Self { inner })
    }
}

impl OpKernel for Standard {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.inner.kernel().compute(ctx)
    }
}

#[kernel(op = OpregAbs, device = CPU, T = [float])]
struct OpregAbsKernel(Standard);

impl BuildKernel for OpregAbsKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self(Standard::build(ctx, "Abs")?))
    }
}

impl OpKernel for OpregAbsKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.0.compute(ctx)
    }
}

#[kernel(op = OpregMatMul, device = CPU, T = [float])]
struct OpregMatMulKernel(Standard);

impl BuildKernel for OpregMatMulKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self(Standard::build(ctx, "MatMul")?))
    }
}

impl OpKernel for OpregMatMulKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.0.compute(ctx)
    }
}

opreg_tensorflow::export_tensorflow_library!(tf_bench_ops);
