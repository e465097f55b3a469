//! TensorFlow at scale: every op of TensorFlow 2.21's registry that spec
//! strings can express (1,736 of its 1,908), declared with
//! [`#[op]`](macro@registry_core::op) and registered in the op registry:
//! the standard op set's, re-exported, and the rest, generated.
//!
//! The declarations are generated from `conformance/tf_registry_2_21.json`
//! by the `tf-registry-ops-gen` package (`tf-ops/gen`) into
//! `src/generated.rs`, which is checked in; a test fails when it is stale.
//! Each op's OpDef serializes to exactly TensorFlow's bytes.
//!
//! Each struct is named like its op, except that `>` (TF's namespace
//! separator) becomes `_` (`Namespace>TestStringOutput` is
//! [`Namespace_TestStringOutput`]) and ops named like an item of Rust's
//! prelude get a trailing `_` ([`Copy_`], [`Iterator_`], [`None_`],
//! [`Send_`]; [`CopyOp`] is TF's op `CopyOp`).
//!
//! ```
//! use registry_core::Op;
//! use tf_registry_ops::{Conv2D, Namespace_TestStringOutput, Send_};
//!
//! assert_eq!(Conv2D::NAME, "Conv2D");
//! assert_eq!(Namespace_TestStringOutput::NAME, "Namespace>TestStringOutput");
//! assert_eq!(Send_::NAME, "Send");
//! assert!(Send_::op_def().is_stateful);
//! ```
//!
//! Each op is declared once: the standard op set (`opreg-standard-ops`,
//! whose declarations carry the shape functions the executor needs) is
//! re-exported here and left out of the generated set, so linking both
//! crates registers no op twice.
//!
//! ```
//! use std::any::TypeId;
//! assert_eq!(
//!     TypeId::of::<tf_registry_ops::MatMul>(),
//!     TypeId::of::<opreg_standard_ops::MatMul>()
//! );
//! ```
//!
//! The ops register themselves (through `inventory`) in every program that
//! links this crate.

#[rustfmt::skip]
mod generated;

pub use generated::*;
pub use opreg_standard_ops::ops::{array::*, control::*, logic::*, math::*, nn::*, reduce::*};
