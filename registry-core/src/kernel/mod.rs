//! Kernels: implementations of ops per device and type (TensorFlow's
//! `OpKernel` and `REGISTER_KERNEL_BUILDER`).
//!
//! - [`#[kernel]`](macro@crate::kernel) registers a kernel struct
//!   ([`BuildKernel`] + [`OpKernel`]) or a plain function ([`ComputeFn`])
//!   for an op, a device and type constraints, checked against the op at
//!   compile time.
//! - [`KernelRegistry`] holds every registration, exports TF's `KernelList`
//!   and chooses a kernel for a node with TF's rules.
//! - [`create_op_kernel`] builds the kernel for a NodeDef in one call;
//!   [`KernelInstance::compute`] runs it.
//! - Kernels read attrs from an [`OpKernelConstruction`] and inputs from an
//!   [`OpKernelContext`], which allocates or forwards their outputs.

// Lookup and creation errors carry TF's whole "no kernel" explanation (node,
// op, device, requested attrs, every registered kernel). They are returned
// once per node, on a cold path, so their size does not matter; boxing them
// would only make matching on them clumsier.
#![allow(clippy::result_large_err)]

mod call;
mod construction;
mod context;
mod create;
mod error;
mod lookup_error;
mod node_info;
mod op_index;
mod op_kernel;
mod registration;
mod registry;
mod source;

pub use call::KernelCall;
pub use construction::OpKernelConstruction;
pub use context::{ForeignForwarding, Forwarded, OpKernelContext, TensorVec};
pub use create::{CreateKernelError, KernelInstance, create_op_kernel, create_op_kernel_in};
pub use error::{KernelError, StatusCode};
pub use lookup_error::KernelLookupError;
pub use node_info::NodeInfo;
pub use op_kernel::{BuildKernel, ComputeFn, FnKernel, KernelFactory, OpKernel, build_boxed};
pub use registration::{KernelRegistration, TypeConstraint, summarize_registration};
pub use registry::{KERNEL_LABEL_ATTR, KernelRegistry, constraint_types, node_label};
pub use source::{KernelSource, KernelSourcesFn};
