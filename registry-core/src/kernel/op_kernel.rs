//! The kernel traits: [`OpKernel`] (compute), [`BuildKernel`] (construct
//! from a node) and the function form [`FnKernel`].

use super::{KernelError, OpKernelConstruction, OpKernelContext};
use crate::tensor::Tensor;

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

    /// Offers the kernel input `index`'s value when it is the same in
    /// every run (a constant of the graph), before the first run: a kernel
    /// may prepare it once (a matrix product packs its constant weights)
    /// instead of in every `compute`. The default ignores it.
    ///
    /// A kernel that keeps something must still compute from the inputs it
    /// is given: a run may feed a different value for a constant, and a
    /// kernel may be offered values by more than one plan. Keeping a clone
    /// of `value` and checking [`Tensor::shares_buffer_with`] at compute
    /// time tells the two apart (the clone keeps the buffer alive, so no
    /// other tensor can take its place). Preparing is best effort: a kernel
    /// that cannot (no memory) computes as it would have without it.
    ///
    /// ```
    /// use std::sync::OnceLock;
    /// use registry_core::kernel::{KernelError, OpKernel, OpKernelContext};
    /// use registry_core::tensor::Tensor;
    ///
    /// /// Adds a vector; keeps the doubled constant it was offered.
    /// struct AddTwice { doubled: OnceLock<(Tensor, Vec<f32>)> }
    ///
    /// impl OpKernel for AddTwice {
    ///     fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ///         let (x, y) = (ctx.input(0)?.clone(), ctx.input(1)?.clone());
    ///         let doubled: Vec<f32> = match self.doubled.get() {
    ///             Some((source, ready)) if source.shares_buffer_with(&y) => ready.clone(),
    ///             _ => y.as_slice::<f32>()?.iter().map(|v| 2.0 * v).collect(),
    ///         };
    ///         let out = ctx.allocate_output(0, x.shape().clone())?;
    ///         for ((o, a), b) in out.as_mut_slice::<f32>()?.iter_mut().zip(x.as_slice::<f32>()?).zip(&doubled) {
    ///             *o = a + b;
    ///         }
    ///         Ok(())
    ///     }
    ///
    ///     fn prepare_constant_input(&self, index: usize, value: &Tensor) {
    ///         if let (1, Ok(v)) = (index, value.as_slice::<f32>()) {
    ///             let _ = self.doubled.set((value.clone(), v.iter().map(|v| 2.0 * v).collect()));
    ///         }
    ///     }
    /// }
    /// ```
    fn prepare_constant_input(&self, index: usize, value: &Tensor) {
        let _ = (index, value);
    }
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
