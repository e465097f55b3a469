//! `Const`, `Placeholder`, `Identity` and `NoOp`: TF registers each once for
//! the CPU with no type constraint, and so do we.

use opreg_standard_ops::{Const, Identity, NoOp, Placeholder};
use registry_core::attr::summarize_shape;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataTypeExt, TensorShapeProto};
use registry_core::tensor::Tensor;

use opreg_op_logic::constant::const_value;

/// `Const`: the `value` attr's tensor, decoded once when the kernel is built
/// and shared (not copied) by every output.
#[kernel(op = Const, device = CPU)]
struct ConstKernel {
    value: Tensor,
}

impl BuildKernel for ConstKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            value: const_value(ctx.attrs())?,
        })
    }
}

impl OpKernel for ConstKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        ctx.set_output(0, self.value.clone())
    }
}

/// `Placeholder`: running it is an error, since its value must be fed.
#[kernel(op = Placeholder, device = CPU)]
struct PlaceholderKernel {
    /// The `shape` attr as TF prints it (`[2,?]`), when its rank is known and
    /// not 0.
    shape: Option<String>,
}

impl BuildKernel for PlaceholderKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let shape: TensorShapeProto = ctx.attr("shape")?;
        let shape = (!shape.unknown_rank && !shape.dim.is_empty()).then(|| summarize_shape(&shape));
        Ok(Self { shape })
    }
}

impl OpKernel for PlaceholderKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let dtype = ctx.output_type(0)?.type_name();
        let name = ctx.node_name();
        Err(KernelError::invalid_argument(match &self.shape {
            Some(shape) => format!(
                "You must feed a value for placeholder tensor '{name}' with dtype {dtype} and \
                 shape {shape}"
            ),
            None => {
                format!("You must feed a value for placeholder tensor '{name}' with dtype {dtype}")
            }
        }))
    }
}

/// `Identity`: forwards its input (no copy).
#[kernel(op = Identity, device = CPU)]
fn identity(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.forward_every_input()
}

/// `NoOp`: nothing to do.
#[kernel(op = NoOp, device = CPU)]
fn no_op(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}
