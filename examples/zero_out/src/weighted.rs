//! What the CPU and GPU kernels of `WeightedSum` share: the element
//! arithmetic and the checks of the inputs (with their messages).

use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{Tensor, TensorElement, TensorShape};

/// The arithmetic `WeightedSum` needs from an element type.
pub(crate) trait Weighted: TensorElement {
    /// The additive identity.
    const ZERO: Self;
    /// `acc + w * x` (wrapping for integers).
    fn mul_add(acc: Self, w: Self, x: Self) -> Self;
    /// `self + other` (wrapping for integers).
    fn plus(self, other: Self) -> Self;
    /// `self / divisor`, `divisor` not zero (integers round toward zero).
    fn divide(self, divisor: Self) -> Self;
}

macro_rules! float_weighted {
    ($($t:ty),*) => {$(
        impl Weighted for $t {
            const ZERO: Self = 0.0;
            fn mul_add(acc: Self, w: Self, x: Self) -> Self {
                acc + w * x
            }
            fn plus(self, other: Self) -> Self {
                self + other
            }
            fn divide(self, divisor: Self) -> Self {
                self / divisor
            }
        }
    )*};
}
float_weighted!(f32, f64);

impl Weighted for i32 {
    const ZERO: Self = 0;
    fn mul_add(acc: Self, w: Self, x: Self) -> Self {
        acc.wrapping_add(w.wrapping_mul(x))
    }
    fn plus(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn divide(self, divisor: Self) -> Self {
        // `i32::MIN / -1` wraps to `i32::MIN` instead of panicking.
        self.wrapping_div(divisor)
    }
}

/// The checked inputs of a `WeightedSum` call.
pub(crate) struct WeightedInputs<T> {
    /// The `N` values (in the memory the kernel reads them from).
    pub(crate) values: Vec<Tensor>,
    /// Their common shape.
    pub(crate) shape: TensorShape,
    /// The `N` weights (host memory).
    pub(crate) weights: Vec<T>,
    /// The sum of the weights when `normalize` is set (never zero).
    pub(crate) divisor: Option<T>,
}

/// Checks a call's inputs: at least one value, one shape for all, a
/// vector of `N` weights (read on the host), and weights that do not sum
/// to zero when `normalize` is set. Errors name the node.
pub(crate) fn weighted_inputs<T: Weighted>(
    ctx: &OpKernelContext<'_>,
    normalize: bool,
) -> Result<WeightedInputs<T>, KernelError> {
    let invalid = |ctx: &OpKernelContext<'_>, message: String| {
        KernelError::invalid_argument(format!("WeightedSum node '{}': {message}", ctx.node_name()))
    };
    // `values` are inputs 0..n, `weights` is input n.
    let n = match ctx.num_inputs() {
        0 | 1 => {
            let message = format!(
                "expected N >= 1 values and the weights, got {} input(s)",
                ctx.num_inputs()
            );
            return Err(invalid(ctx, message));
        }
        count => count - 1,
    };
    let values: Vec<Tensor> = (0..n)
        .map(|i| ctx.input(i).cloned())
        .collect::<Result<_, _>>()?;
    let shape = values[0].shape().clone();
    for (i, v) in values.iter().enumerate().skip(1) {
        if v.shape() != &shape {
            let message = format!(
                "all values must have one shape, but values[0] has shape {shape} \
                 and values[{i}] has shape {}",
                v.shape()
            );
            return Err(invalid(ctx, message));
        }
    }
    let weights = ctx.input(n)?;
    if weights.dims() != [n] {
        let message = format!(
            "weights must be a vector of N = {n} elements (one per value), \
             but has shape {}",
            weights.shape()
        );
        return Err(invalid(ctx, message));
    }
    let weights = weights.as_slice::<T>()?.to_vec();
    let divisor = if normalize {
        let total = weights.iter().fold(T::ZERO, |acc, &w| acc.plus(w));
        if total == T::ZERO {
            let message = "normalize is set, but the weights sum to zero".to_owned();
            return Err(invalid(ctx, message));
        }
        Some(total)
    } else {
        None
    };
    Ok(WeightedInputs {
        values,
        shape,
        weights,
        divisor,
    })
}
