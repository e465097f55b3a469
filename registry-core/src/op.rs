//! The [`Op`] trait that `#[op]` implements, the `const` description of an op
//! ([`OpSignature`]) that other crates' macros check against at compile time,
//! and the registration record collected by `inventory`.

use opreg_proto::{DataType, OpDef};

use crate::shape::ShapeFn;

/// An op declared with `#[op]`.
///
/// ```
/// use registry_core::{op, Op};
/// #[op(input = "x: T", output = "y: T", attr = "T: <float, int32>")]
/// pub struct Square2;
/// assert_eq!(Square2::SIGNATURE.inputs[0].type_attr, "T");
/// assert!(Square2::SIGNATURE.allows_type("T", registry_core::proto::DataType::DtInt32));
/// ```
pub trait Op: 'static {
    /// The op's registered name.
    const NAME: &'static str;
    /// Args and attrs, as constants other macros can check against.
    const SIGNATURE: OpSignature;
    /// The op's OpDef, serialized at compile time by `#[op]` (TF's bytes).
    const OP_DEF_BYTES: &'static [u8];

    /// The op's OpDef.
    fn op_def() -> OpDef {
        decode_op_def(Self::OP_DEF_BYTES)
    }
}

/// Decodes an OpDef that `#[op]` serialized at compile time.
pub(crate) fn decode_op_def(bytes: &[u8]) -> OpDef {
    // The bytes come from `prost::Message::encode_to_vec` in the macro, with the
    // same message definitions; decoding them cannot fail.
    <OpDef as prost::Message>::decode(bytes).unwrap_or_default()
}

/// One input or output of an op, as a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgSignature {
    /// The arg's name.
    pub name: &'static str,
    /// Fixed dtype, or `DtInvalid` when an attr gives it.
    pub dtype: DataType,
    /// The `type` attr giving its dtype, or `""`.
    pub type_attr: &'static str,
    /// The `int` attr giving its length (`N * T`), or `""`.
    pub number_attr: &'static str,
    /// The `list(type)` attr giving its dtypes, or `""`.
    pub type_list_attr: &'static str,
    /// `Ref(...)`.
    pub is_ref: bool,
}

/// One attr of an op, as a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrSignature {
    /// The attr's name.
    pub name: &'static str,
    /// Its type: `type`, `list(type)`, `int`, `string`, ...
    pub attr_type: &'static str,
    /// For `type`/`list(type)` attrs with a restriction, the allowed types.
    pub allowed_types: Option<&'static [DataType]>,
    /// Whether the attr has a default value.
    pub has_default: bool,
    /// The minimum (`int >= 2`, implied 1 for `N * T`), if any.
    pub minimum: Option<i64>,
}

/// An op's name, args and attrs as constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSignature {
    /// The op's name.
    pub name: &'static str,
    /// Inputs in order.
    pub inputs: &'static [ArgSignature],
    /// Outputs in order.
    pub outputs: &'static [ArgSignature],
    /// Attrs in order.
    pub attrs: &'static [AttrSignature],
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl OpSignature {
    /// The attr called `name`, if the op has one. Usable in `const` context.
    pub const fn attr(&self, name: &str) -> Option<&AttrSignature> {
        let mut i = 0;
        while i < self.attrs.len() {
            if str_eq(self.attrs[i].name, name) {
                return Some(&self.attrs[i]);
            }
            i += 1;
        }
        None
    }

    /// Whether the op has an attr `name` of kind `type` or `list(type)`.
    /// Usable in `const` context.
    pub const fn is_type_attr(&self, name: &str) -> bool {
        match self.attr(name) {
            Some(attr) => str_eq(attr.attr_type, "type") || str_eq(attr.attr_type, "list(type)"),
            None => false,
        }
    }

    /// Whether the op has an input or output called `name`. Usable in
    /// `const` context (`#[kernel]` checks its `host_memory` args with it).
    pub const fn has_arg(&self, name: &str) -> bool {
        let mut i = 0;
        while i < self.inputs.len() {
            if str_eq(self.inputs[i].name, name) {
                return true;
            }
            i += 1;
        }
        let mut i = 0;
        while i < self.outputs.len() {
            if str_eq(self.outputs[i].name, name) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Whether `attr` is a `type` or `list(type)` attr that allows `dtype`.
    /// Usable in `const` context (the `#[kernel]` macro asserts it).
    pub const fn allows_type(&self, attr: &str, dtype: DataType) -> bool {
        let Some(attr) = self.attr(attr) else {
            return false;
        };
        if !str_eq(attr.attr_type, "type") && !str_eq(attr.attr_type, "list(type)") {
            return false;
        }
        let Some(allowed) = attr.allowed_types else {
            return true;
        };
        let mut i = 0;
        while i < allowed.len() {
            if allowed[i] as i32 == dtype as i32 {
                return true;
            }
            i += 1;
        }
        false
    }
}

/// Where a registration was written, for duplicate reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// `file!()` of the registration.
    pub file: &'static str,
    /// `line!()` of the registration.
    pub line: u32,
    /// `module_path!()` of the registration.
    pub module_path: &'static str,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.module_path)
    }
}

/// One op registration collected by `inventory` (emitted by `#[op]`).
#[derive(Debug)]
pub struct OpRegistration {
    /// The op's name.
    pub name: &'static str,
    /// The serialized OpDef, validated at compile time.
    pub op_def: &'static [u8],
    /// The shape function given with `shape_fn = path`, if any.
    pub shape_fn: Option<ShapeFn>,
    /// Where the op was declared.
    pub location: SourceLocation,
}

inventory::collect!(OpRegistration);
