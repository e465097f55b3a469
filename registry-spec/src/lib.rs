//! The op spec language of TensorFlow's `REGISTER_OP`, parsed into
//! TensorFlow-identical [`OpDef`](opreg_proto::OpDef) protobufs.
//!
//! This is the one parser of opreg: the `#[op]` macro runs it at compile time
//! and the runtime builder API runs it at run time, so a spec the compiler
//! accepted cannot fail later.
//!
//! ```
//! use registry_spec::OpSpec;
//!
//! let op_def = OpSpec::new("Abs")
//!     .input("x: T")
//!     .output("y: T")
//!     .attr("T: {half, float, double, int32, int64}")
//!     .build()
//!     .unwrap();
//! assert_eq!(op_def.attr[0].name, "T");
//!
//! let err = OpSpec::new("Abs").attr("T: {flaot}").build().unwrap_err();
//! assert!(err.to_string().contains("did you mean 'float'"), "{err}");
//! ```

mod arg;
mod attr;
mod default_value;
mod doc;
mod error;
pub mod number;
pub mod render;
mod scanner;
mod spec;
pub mod suggest;
mod type_ctor;
mod type_sets;
mod validate;

pub use default_value::parse_op_def_text;
pub use error::{SpecError, SpecErrorKind, SpecErrors, SpecSite};
pub use render::op_spec;
pub use spec::{Deprecation, OpFlags, OpSpec};
pub use type_ctor::TypeConstructor;
pub use type_sets::{NUMBER_TYPES, QUANTIZED_TYPES, REAL_NUMBER_TYPES, alias_set};
pub use validate::{
    ValidationContext, ValidationError, ValidationSubject, validate_attr_value, validate_op_def,
};

/// The protobuf crate the specs build (its `FullTypeId` names type
/// constructors' types); not a separate API.
#[doc(hidden)]
pub use opreg_proto as __proto;
