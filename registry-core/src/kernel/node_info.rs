//! [`NodeInfo`]: the node-level facts a kernel call needs (names, device,
//! input and output dtypes), computed once when the kernel is created.

use opreg_proto::DataType;

/// The node a kernel instance belongs to: its name, op, device type and
/// the dtypes of its inputs and outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    node_name: String,
    op: String,
    device_type: String,
    /// `device_type` is the CPU's: every input and output is in host memory.
    on_cpu: bool,
    input_types: Vec<DataType>,
    output_types: Vec<DataType>,
    /// Per input: kept in host memory although the kernel runs on a device
    /// (the kernel's `host_memory` args). Empty: none.
    host_inputs: Vec<bool>,
    /// Per output: produced in host memory. Empty: none.
    host_outputs: Vec<bool>,
}

impl NodeInfo {
    /// Describes a node whose kernel runs on `device_type`.
    pub fn new(
        node_name: impl Into<String>,
        op: impl Into<String>,
        device_type: impl Into<String>,
        input_types: Vec<DataType>,
        output_types: Vec<DataType>,
    ) -> Self {
        let device_type = device_type.into();
        Self {
            node_name: node_name.into(),
            op: op.into(),
            on_cpu: device_type == crate::device::DEVICE_CPU,
            device_type,
            input_types,
            output_types,
            host_inputs: Vec::new(),
            host_outputs: Vec::new(),
        }
    }

    /// Marks which inputs and outputs stay in host memory although the
    /// kernel runs on a device (TF's `HostMemory` args: shapes, axes).
    ///
    /// ```
    /// use registry_core::kernel::NodeInfo;
    /// use registry_core::proto::DataType::{DtFloat, DtInt32};
    /// let info = NodeInfo::new("r", "Reshape", "GPU", vec![DtFloat, DtInt32], vec![DtFloat])
    ///     .with_host_memory(vec![false, true], vec![false]);
    /// assert!(!info.input_in_host_memory(0) && info.input_in_host_memory(1));
    /// assert!(!info.output_in_host_memory(0));
    /// ```
    pub fn with_host_memory(mut self, inputs: Vec<bool>, outputs: Vec<bool>) -> Self {
        self.host_inputs = inputs;
        self.host_outputs = outputs;
        self
    }

    /// True when input `index` is read from host memory: always on the
    /// CPU, and for the kernel's host-memory args on other devices.
    #[inline]
    pub fn input_in_host_memory(&self, index: usize) -> bool {
        self.on_cpu || self.host_inputs.get(index).copied().unwrap_or(false)
    }

    /// True when output `index` is produced in host memory.
    #[inline]
    pub fn output_in_host_memory(&self, index: usize) -> bool {
        self.on_cpu || self.host_outputs.get(index).copied().unwrap_or(false)
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
    pub fn device_type(&self) -> &str {
        &self.device_type
    }

    /// True when the kernel runs on the CPU (host memory throughout).
    #[inline]
    pub fn on_cpu(&self) -> bool {
        self.on_cpu
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
