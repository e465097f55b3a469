//! Element-wise math, casts, comparisons, logic, Select and AddN:
//!
//! - unary ([`unary`]): the standard ops' unary table (`Abs`, `Neg`, `Exp`,
//!   `Log`, `Sqrt`, `Rsqrt`, `Square`, `Sigmoid`, `Tanh`, `Floor`, and
//!   `Relu` of the `nn` group);
//! - binary ([`binary`]): `AddV2`, `Sub`, `Mul`, `RealDiv`, `FloorDiv`,
//!   `FloorMod`, `Maximum`, `Minimum`, `Pow`, `SquaredDifference` with TF's
//!   broadcasting;
//! - comparisons ([`compare`]): `Equal`, `Greater`, `LogicalAnd`;
//! - selection ([`select`]): `Select`, `SelectV2`;
//! - casts ([`cast`], rules in [`cast_rules`]): `Cast`;
//! - sums ([`add_n`]): `AddN`;
//! - clipping and running sums ([`clip_cumsum`]): `ClipByValue`, `Cumsum`.
//!
//! Per-type scalar semantics are in [`scalar`]; the kernels share the
//! bodies in `driver` (forward an input or allocate, then loop).

#[cfg(feature = "math")]
pub mod add_n;
#[cfg(feature = "math")]
pub mod binary;
#[cfg(feature = "math")]
pub mod cast;
#[cfg(feature = "math")]
pub use crate::cast_rules;
#[cfg(feature = "math")]
pub mod clip_cumsum;
#[cfg(feature = "math")]
pub mod compare;
// With only `nn`, the unary driver alone is used.
#[cfg_attr(not(feature = "math"), allow(dead_code))]
pub mod data;
#[cfg_attr(not(feature = "math"), allow(dead_code))]
pub(crate) mod driver;
pub mod exp;
pub mod scalar;
#[cfg(feature = "math")]
pub mod select;
pub mod special;
pub mod unary;
