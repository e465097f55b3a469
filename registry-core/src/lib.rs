//! The opreg registries: ops declared with [`#[op]`](macro@op) (TensorFlow's `REGISTER_OP`,
//! checked at compile time), collected into a global, lazily finalized
//! [`OpRegistry`].
//!
//! ```
//! use registry_core::{op, Op};
//!
//! /// Computes the absolute value of a tensor.
//! #[op(input = "x: T", output = "y: T", attr = "T: {half, float, double, int32, int64}")]
//! pub struct MyAbs;
//!
//! assert_eq!(MyAbs::NAME, "MyAbs");
//! assert_eq!(MyAbs::op_def().attr[0].name, "T");
//! ```

// Lets `#[op]` used inside this crate name it as `::registry_core`.
extern crate self as registry_core;

pub mod attr;
pub mod denormal;
pub mod device;
pub mod kernel;
pub mod library;
pub mod limits;
pub mod memory;
pub mod node_def;
pub mod op;
pub mod registry;
pub mod shape;
pub mod tensor;

pub use kernel::{
    BuildKernel, KernelError, KernelInstance, KernelRegistry, OpKernel, OpKernelConstruction,
    OpKernelContext, create_op_kernel,
};
pub use op::{ArgSignature, AttrSignature, Op, OpSignature};
pub use registry::{OpRegistrationData, OpRegistry, RegistryError};
pub use registry_macros::{kernel, op};

pub use opreg_proto as proto;
pub use registry_spec as spec;

/// Items used by the code that `#[op]` and `#[kernel]` generate. Not a
/// public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::kernel::{FnKernel, KernelRegistration, OpKernel, TypeConstraint, build_boxed};
    pub use crate::op::{OpRegistration, SourceLocation};
    pub use crate::tensor::TensorElement;
    pub use inventory;
    pub use opreg_proto::DataType;
    pub use registry_macros::__check_kernel as check_kernel;
}

/// The README's Rust examples, compiled and run as doctests so they stay true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
