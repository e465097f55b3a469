//! [`NodeInfo`]: the node-level facts a kernel call needs (names, device,
//! input and output dtypes), computed once when the kernel is created.

use opreg_proto::DataType;

/// The node a kernel instance belongs to: its name, op, device and the
/// dtypes of its inputs and outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    node_name: String,
    op: String,
    device: String,
    input_types: Vec<DataType>,
    output_types: Vec<DataType>,
}

impl NodeInfo {
    /// Describes a node.
    pub fn new(
        node_name: impl Into<String>,
        op: impl Into<String>,
        device: impl Into<String>,
        input_types: Vec<DataType>,
        output_types: Vec<DataType>,
    ) -> Self {
        Self {
            node_name: node_name.into(),
            op: op.into(),
            device: device.into(),
            input_types,
            output_types,
        }
    }

    /// The node's name.
    #[inline]
    pub fn node_name(&self) -> &str {
        &self.node_name
    }

    /// The node's op.
    #[inline]
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The device type the kernel runs on.
    #[inline]
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The dtype of every input.
    #[inline]
    pub fn input_types(&self) -> &[DataType] {
        &self.input_types
    }

    /// The dtype of every output.
    #[inline]
    pub fn output_types(&self) -> &[DataType] {
        &self.output_types
    }
}
