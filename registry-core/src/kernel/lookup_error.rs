//! [`KernelLookupError`]: why no kernel could be chosen for a node, worded
//! like TensorFlow's best "No registered ... OpKernel" message.

/// Why [`KernelRegistry::find_kernel`](super::KernelRegistry::find_kernel)
/// found no kernel, or found two.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelLookupError {
    /// No registration of the op for the device matches the node's attrs and label.
    #[error(
        "No registered '{op}' OpKernel for '{device}' devices compatible with node '{node}'{label_note}\n\
         \t{mismatch_note}Requested attributes: {requested}\n\
         \tRegistered kernels of '{op}':\n{}",
        registered_lines(.registered)
    )]
    NotFound {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The device type asked for.
        device: String,
        /// The node's attrs, summarized (`T=DT_STRING, ...`).
        requested: String,
        /// ` (label 'x')` when the node asks for a kernel label, else empty.
        label_note: String,
        /// Whether a kernel for this op and device exists but its
        /// constraints did not match the node's attrs.
        attr_mismatch: bool,
        /// The explanation shown before the requested attrs.
        mismatch_note: String,
        /// Every registered kernel of the op, summarized (any device).
        registered: Vec<String>,
    },
    /// Two kernels match with the same (highest) priority.
    #[error(
        "Multiple OpKernel registrations match node '{node}' (op '{op}', device '{device}') \
         with priority {priority}: {first} ({first_kernel}) and {second} ({second_kernel}); \
         give one a higher priority or a label"
    )]
    Ambiguous {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The device type asked for.
        device: String,
        /// The shared priority.
        priority: i32,
        /// The first match, summarized.
        first: String,
        /// Its Rust item.
        first_kernel: String,
        /// The second match, summarized.
        second: String,
        /// Its Rust item.
        second_kernel: String,
    },
    /// A kernel constrains an attr the node does not have.
    #[error(
        "OpKernel '{kernel}' for op '{op}' has a constraint on attr '{attr}', which node '{node}' does not have"
    )]
    ConstraintAttrMissing {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The constrained attr.
        attr: String,
        /// The kernel's Rust item.
        kernel: String,
    },
    /// A kernel constrains an attr whose value on the node is not a type.
    #[error(
        "OpKernel '{kernel}' for op '{op}' has a type constraint on attr '{attr}', but node '{node}' \
         sets it to a {found}, not a type or list of types"
    )]
    ConstraintAttrKind {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The constrained attr.
        attr: String,
        /// The kernel's Rust item.
        kernel: String,
        /// The kind of value the node has.
        found: String,
    },
}

fn registered_lines(lines: &[String]) -> String {
    if lines.is_empty() {
        return "\t  <no registered kernels>".to_owned();
    }
    lines
        .iter()
        .map(|l| format!("\t  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
