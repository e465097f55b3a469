//! Element-wise GPU kernels: unary math, binary arithmetic with TF's
//! broadcasting, comparisons, logical ops, `Select`/`SelectV2`, `Cast`
//! and `AddN`.
//!
//! - unary ([`unary`]): every entry of the standard ops' unary table
//!   (`Abs`, `Neg`, `Exp`, `Log`, `Floor`, `Ceil`, `Round`, `Sign`,
//!   `Rsqrt`, `Sqrt`, `Square`, `Reciprocal`, `Sigmoid`, `Tanh`, `Erf`,
//!   `Erfc`, `Log1p`, `Expm1`, `Sin`, `Cos`, and in `nn` `Relu`, `Relu6`,
//!   `Elu`, `Selu`, `Softplus`, `Softsign`), and `LogicalNot`;
//! - binary ([`binary`]): `AddV2`, `Sub`, `Mul`, `RealDiv`, `FloorDiv`,
//!   `FloorMod`, `Maximum`, `Minimum`, `Pow`, `SquaredDifference`, `Equal`,
//!   `NotEqual`, `Greater`, `GreaterEqual`, `Less`, `LessEqual`,
//!   `LogicalAnd`, `LogicalOr`;
//! - [`select`]: `Select`, `SelectV2`; [`cast`]: `Cast`; [`add_n`]: `AddN`;
//! - [`clip_cumsum`]: `ClipByValue` (the ternary kernels of `Select`) and
//!   `Cumsum`.
//!
//! Each (op, dtype) has its own CUDA source ([`source`]), compiled with
//! NVRTC when a kernel is built for a node (once per process: the device
//! caches it by key, e.g. `"binary/AddV2/float"`); each registration names
//! the function that lists its sources (`#[kernel(sources = ...)]`), so
//! tests reach every source through the kernel registry. Broadcasting is planned
//! on the host ([`broadcast`]). Inputs are updated in place when they can
//! be forwarded to the output. The scalar semantics, and the defined values
//! the GPU gives where the CPU kernels report errors (integer division by
//! zero, negative integer powers), are listed in [`source`].

#[cfg(feature = "math")]
pub mod add_n;
#[cfg(feature = "math")]
pub mod binary;
#[cfg(feature = "math")]
pub mod broadcast;
#[cfg(feature = "math")]
pub mod cast;
#[cfg(feature = "math")]
pub mod clip_cumsum;
mod io;
#[cfg(feature = "math")]
pub mod select;
#[cfg_attr(not(feature = "math"), allow(dead_code))]
pub mod source;
#[cfg(feature = "math")]
mod ternary;
pub mod unary;
