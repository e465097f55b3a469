//! Element-wise math, casts, comparisons, logic, Select and AddN:
//!
//! - unary ([`unary`]): `Abs`, `Neg`, `Exp`, `Log`, `Sqrt`, `Rsqrt`,
//!   `Square`, `Sigmoid`, `Tanh`, `Floor`;
//! - binary ([`binary`]): `AddV2`, `Sub`, `Mul`, `RealDiv`, `FloorDiv`,
//!   `FloorMod`, `Maximum`, `Minimum`, `Pow`, `SquaredDifference` with TF's
//!   broadcasting;
//! - comparisons ([`compare`]): `Equal`, `Greater`, `LogicalAnd`;
//! - selection ([`select`]): `Select`, `SelectV2`;
//! - casts ([`cast`], rules in [`cast_rules`]): `Cast`;
//! - sums ([`add_n`]): `AddN`.
//!
//! Per-type scalar semantics are in [`scalar`]; the kernels share the
//! bodies in `driver` (forward an input or allocate, then loop).

pub mod add_n;
pub mod binary;
pub mod cast;
pub mod cast_rules;
pub mod compare;
pub mod data;
mod driver;
pub mod scalar;
pub mod select;
pub mod unary;
