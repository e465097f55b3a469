//! The kernel traits: [`OpKernel`] (compute), [`BuildKernel`] (construct
//! from a node) and the function form [`FnKernel`].

use super::{KernelError, OpKernelConstruction, OpKernelContext};

/// An implementation of an op for one device and one set of attr values,
/// built once per node and computed many times (TF's `OpKernel`).
///
/// Kernels are shared between threads, so `compute` takes `&self`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel: it does not implement `OpKernel`",
    label = "needs `impl OpKernel for {Self}`",
    note = "a #[kernel] struct implements `OpKernel` (compute) and `BuildKernel` (build from the node's attrs)"
)]
pub trait OpKernel: Send + Sync + 'static {
    /// Reads the inputs from `ctx` and sets every output, or returns why not.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError>;
}

/// A kernel struct that `#[kernel]` can register: built from the node's
/// attrs (TF's kernel constructor).
///
/// ```
/// use registry_core::kernel::{BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext};
///
/// struct Scale { factor: f32 }
///
/// impl BuildKernel for Scale {
///     fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
///         Ok(Scale { factor: ctx.attr("factor")? })
///     }
/// }
///
/// impl OpKernel for Scale {
///     fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
///         let x = ctx.input(0)?.clone();
///         let out = ctx.allocate_output(0, x.shape().clone())?;
///         for (o, i) in out.as_mut_slice::<f32>()?.iter_mut().zip(x.as_slice::<f32>()?) {
///             *o = i * self.factor;
///         }
///         Ok(())
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "#[kernel] cannot build `{Self}`: it does not implement `BuildKernel`",
    label = "needs `impl BuildKernel for {Self}`",
    note = "a #[kernel] struct implements `BuildKernel` (build from the node's attrs) and `OpKernel` (compute); a stateless kernel can be a function instead"
)]
pub trait BuildKernel: OpKernel + Sized {
    /// Builds the kernel for the node described by `ctx`.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError>;
}

/// The signature of a stateless kernel written as a plain function.
pub type ComputeFn = fn(&mut OpKernelContext<'_>) -> Result<(), KernelError>;

/// A stateless kernel: a plain function (what `#[kernel]` on a `fn` registers).
#[derive(Debug, Clone, Copy)]
pub struct FnKernel(pub ComputeFn);

impl OpKernel for FnKernel {
    #[inline]
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        (self.0)(ctx)
    }
}

/// Builds a boxed kernel for a node (what a registration stores).
pub type KernelFactory = fn(&OpKernelConstruction<'_>) -> Result<Box<dyn OpKernel>, KernelError>;

/// The factory of a [`BuildKernel`] type (used by `#[kernel]` on structs).
pub fn build_boxed<K: BuildKernel>(
    ctx: &OpKernelConstruction<'_>,
) -> Result<Box<dyn OpKernel>, KernelError> {
    Ok(Box::new(K::build(ctx)?))
}
