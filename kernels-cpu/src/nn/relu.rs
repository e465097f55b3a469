//! `Relu`: `max(features, 0)`.

use opreg_standard_ops::Relu;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{bf16, f16};

use crate::numeric::Element;

/// Elements below this count are computed on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// An element with TensorFlow's Relu.
///
/// TF computes `x.cwiseMax(0)` with Eigen, whose max returns its first
/// argument when the comparison fails: `Relu(NaN) = NaN` and
/// `Relu(-0.0) = -0.0`. Here: `if x < 0 { 0 } else { x }`, the same.
pub(crate) trait ReluElement: Element {
    /// `max(self, 0)`, keeping NaN and -0.0.
    fn relu(self) -> Self;
}

macro_rules! relu_signed {
    ($($t:ty = $zero:expr),*) => {$(
        impl ReluElement for $t {
            #[inline(always)]
            fn relu(self) -> Self {
                if self < $zero { $zero } else { self }
            }
        }
    )*};
}

relu_signed!(i8 = 0, i16 = 0, i32 = 0, i64 = 0, f32 = 0.0, f64 = 0.0);

macro_rules! relu_unsigned {
    ($($t:ty),*) => {$(
        impl ReluElement for $t {
            #[inline(always)]
            fn relu(self) -> Self {
                self
            }
        }
    )*};
}

relu_unsigned!(u8, u16, u32, u64);

macro_rules! relu_half {
    ($($t:ty = $inf:expr),*) => {$(
        impl ReluElement for $t {
            /// On the bits: negative (sign set), non-zero and not NaN.
            #[inline(always)]
            fn relu(self) -> Self {
                let bits = self.to_bits();
                let magnitude = bits & 0x7fff;
                if bits & 0x8000 != 0 && magnitude != 0 && magnitude <= $inf {
                    <$t>::ZERO
                } else {
                    self
                }
            }
        }
    )*};
}

relu_half!(f16 = 0x7c00, bf16 = 0x7f80);

/// `Relu` on the CPU for every real type TensorFlow's CPU kernel has; in
/// place when the input's buffer is not shared.
#[kernel(op = Relu, device = CPU, T = [float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64])]
fn relu<T: ReluElement>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    if ctx.forward_input(0, 0)? {
        apply_in_place(ctx.output_mut(0)?.as_mut_slice::<T>()?);
        return Ok(());
    }
    let x = ctx.input(0)?.clone();
    let out = ctx.allocate_output(0, x.shape().clone())?;
    let out = out.as_mut_slice::<T>()?;
    let x = x.as_slice::<T>()?;
    if out.len() < PARALLEL_ELEMENTS {
        out.iter_mut().zip(x).for_each(|(o, &v)| *o = v.relu());
    } else {
        out.par_chunks_mut(PARALLEL_ELEMENTS)
            .zip(x.par_chunks(PARALLEL_ELEMENTS))
            .for_each(|(o, x)| o.iter_mut().zip(x).for_each(|(o, &v)| *o = v.relu()));
    }
    Ok(())
}

fn apply_in_place<T: ReluElement>(data: &mut [T]) {
    if data.len() < PARALLEL_ELEMENTS {
        data.iter_mut().for_each(|v| *v = v.relu());
    } else {
        data.par_chunks_mut(PARALLEL_ELEMENTS)
            .for_each(|c| c.iter_mut().for_each(|v| *v = v.relu()));
    }
}
