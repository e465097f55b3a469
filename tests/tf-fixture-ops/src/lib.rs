//! Test fixture of the TensorFlow host tests (see the README): ops whose
//! kernels panic, clash with TensorFlow's, or check an attr and forward.

use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::shape::common::unchanged_shape;
use registry_core::{kernel, op};

/// A kernel that panics: the panic must reach TensorFlow as an error.
#[op(input = "x: float", output = "y: float", shape_fn = unchanged_shape)]
pub struct FixturePanic;

#[kernel(op = FixturePanic, device = CPU)]
fn fixture_panic(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    panic!("the fixture kernel panicked on purpose")
}

/// `Abs` with another definition than TensorFlow's: TensorFlow keeps its
/// own, and this op's kernel is not registered.
#[op(name = "Abs", input = "x: int8", output = "y: int8", shape_fn = unchanged_shape)]
pub struct ClashingAbs;

#[kernel(op = ClashingAbs, device = CPU)]
fn clashing_abs(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let x = ctx.take_input(0)?;
    ctx.set_output(0, x)
}

/// `x * factor`, computed in place when the input can be forwarded; a
/// non-finite `factor` is refused when the kernel is built.
#[op(
    input = "x: float",
    output = "y: float",
    attr = "factor: float",
    shape_fn = unchanged_shape
)]
pub struct FixtureScale;

#[kernel(op = FixtureScale, device = CPU)]
struct FixtureScaleKernel {
    factor: f32,
}

impl BuildKernel for FixtureScaleKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let factor: f32 = ctx.attr("factor")?;
        if !factor.is_finite() {
            return Err(ctx.attr_error("factor", format!("must be finite, got {factor}")));
        }
        Ok(Self { factor })
    }
}

impl OpKernel for FixtureScaleKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let shape = ctx.input(0)?.shape().clone();
        if ctx
            .forward_input_or_allocate_output(&[0], 0, shape)?
            .is_some()
        {
            for v in ctx.output_mut(0)?.as_mut_slice::<f32>()? {
                *v *= self.factor;
            }
            return Ok(());
        }
        let (x, y) = ctx.input_and_new_output(0, 0)?;
        for (y, x) in y
            .as_mut_slice::<f32>()?
            .iter_mut()
            .zip(x.as_slice::<f32>()?)
        {
            *y = x * self.factor;
        }
        Ok(())
    }
}

/// Every flag TensorFlow's C API can set, a deprecation and defaults: the
/// OpDef TensorFlow holds must still be opreg's, byte for byte. No kernel.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: T",
    attr = "T: {float, int32} = DT_INT32",
    attr = "mode: {'fast', 'exact'} = 'exact'",
    attr = "scale: float = 0.1",
    attr = "axes: list(int) = [0, -1]",
    commutative,
    aggregate,
    stateful,
    allows_uninitialized_input,
    deprecated(version = 7, explanation = "Use AddV2"),
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct FixtureFlags;

opreg_tensorflow::export_tensorflow_library!(tf_fixture_ops);
opreg_jax::export_jax_library!(tf_fixture_ops);
