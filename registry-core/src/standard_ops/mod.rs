//! The standard op set: TensorFlow 2.21's definitions, byte for byte, of the
//! ops every opreg backend defines and runs (the list in `graphs/README.md`).
//!
//! Each op is declared with [`op`](macro@crate::op) from the same spec strings as
//! TensorFlow's `REGISTER_OP` (TF's source strings where they give TF 2.21's
//! OpDef, otherwise TF 2.21's registry written back as strings), with the same
//! name and flags. The doc comment of each op is its TF Doc text (summary and
//! description). `tests/standard_ops.rs` compares every OpDef with TF 2.21's
//! registry.
//!
//! The module is compiled with the `standard-ops` feature (on by default).
//! Every op is re-exported here:
//!
//! ```
//! use registry_core::{standard_ops::MatMul, Op};
//!
//! assert_eq!(MatMul::NAME, "MatMul");
//! assert_eq!(MatMul::op_def().input_arg.len(), 2);
//! ```

pub mod array;
pub mod control;
pub mod logic;
pub mod math;
pub mod nn;
pub mod reduce;

pub use array::*;
pub use control::*;
pub use logic::*;
pub use math::*;
pub use nn::*;
pub use reduce::*;
