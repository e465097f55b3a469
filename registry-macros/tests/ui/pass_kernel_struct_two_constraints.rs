// The struct form with two constrained attrs (`T` and `Tidx` of Sum): one
// registration per combination, each instantiated with its Rust types.
use std::marker::PhantomData;

use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistry, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::TensorElement;
use registry_core::kernel;
use opreg_standard_ops::Sum;

/// A Sum kernel generic over the element and index types.
#[kernel(op = Sum, device = CPU, T = [float, int64], Tidx = [int32, int64])]
pub struct SumKernel<T, Tidx> {
    keep_dims: bool,
    _types: PhantomData<fn() -> (T, Tidx)>,
}

impl<T: TensorElement, Tidx: TensorElement> BuildKernel for SumKernel<T, Tidx> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self { keep_dims: ctx.attr("keep_dims")?, _types: PhantomData })
    }
}

impl<T: TensorElement, Tidx: TensorElement> OpKernel for SumKernel<T, Tidx> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let _ = (self.keep_dims, ctx.input_slice::<Tidx>(1)?);
        Err(KernelError::unimplemented("example"))
    }
}

fn main() {
    let regs = KernelRegistry::global().kernels_for_op("Sum");
    assert_eq!(regs.len(), 4);
    let mut names: Vec<&str> = regs.iter().map(|r| r.kernel_name).collect();
    names.sort();
    assert!(names[0].ends_with("::SumKernel::<f32, i32>"), "{names:?}");
    assert!(names[3].ends_with("::SumKernel::<i64, i64>"), "{names:?}");
    for r in &regs {
        assert_eq!(r.constraints.len(), 2);
        assert_eq!(r.constraints[0].attr, "T");
        assert_eq!(r.constraints[1].attr, "Tidx");
        assert!([DataType::DtInt32, DataType::DtInt64].contains(&r.constraints[1].types[0]));
    }
}
