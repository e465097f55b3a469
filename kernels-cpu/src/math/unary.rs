//! Element-wise unary kernels: every entry of the standard ops' unary
//! table ([`opreg_op_logic::unary_functions!`]: `Abs`, `Neg`, `Square`,
//! `Floor`, `Exp`, `Log`, `Sqrt`, `Rsqrt`, `Sigmoid`, `Tanh`, `Relu`), for
//! the CPU types the table lists (TF's CPU kernels' types). The input is
//! updated in place when it can be forwarded.

use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::driver::unary;
#[allow(unused_imports)] // each is the bound of some entry of the table
use super::scalar::{AbsOp, NegOp, ReluOp, Transcendental};
#[allow(unused_imports)]
use super::special::{Relu6Op, RoundOp, SignOp, SpecialComplexible, SpecialFloat};
#[allow(unused_imports)]
use crate::numeric::{Denormal, Float, Number, flushing_denormals};

/// One CPU kernel per entry of the table, in the entry's feature group.
macro_rules! cpu_unary_kernels {
    ($($(#[$doc:meta])* $op:ident($x:ident) [$group:literal]:
        cpu <$t:ident: $bound:path> $cpu:expr, for [$($ct:ident),*];
        gpu {$($kind:ident: $gpu:literal),*} for [$($gt:ident),*];)*) => {$(
        $(#[$doc])*
        #[cfg(feature = $group)]
        #[allow(non_snake_case)]
        #[kernel(op = opreg_standard_ops::$op, device = CPU, T = [$($ct),*])]
        fn $op<$t: $bound>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
            // TF's arithmetic flushes denormal inputs and results (the C
            // library's functions here do not, so they are flushed around
            // them); its bit operations keep them.
            if flushing_denormals() && !opreg_op_logic::unary::keeps_denormals(stringify!($op)) {
                unary(ctx, |$x: $t| {
                    let $x = $x.flushed();
                    let y: $t = $cpu;
                    y.flushed()
                })
            } else {
                unary(ctx, |$x: $t| $cpu)
            }
        }
    )*};
}

opreg_op_logic::unary_functions!(cpu_unary_kernels);
