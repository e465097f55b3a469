//! Creating a kernel for a node in one call (TF's `CreateOpKernel`), and
//! [`KernelInstance`], the built kernel bound to its node.

use std::sync::Arc;

use opreg_proto::{DataType, NodeDef, OpDef};
use smallvec::SmallVec;

use super::call::collect_outputs;
use super::{
    KernelError, KernelLookupError, KernelRegistration, KernelRegistry, NodeInfo, OpKernel,
    OpKernelConstruction, OpKernelContext, TensorVec,
};
use crate::device::{Device, DeviceError, open_device};
use crate::node_def::{
    NodeDefError, add_defaults_to_node_def, in_out_types_for_node, validate_node_def,
};
use crate::registry::{OpRegistry, RegistryError};
use crate::tensor::Tensor;

/// Why a kernel could not be created for a node.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CreateKernelError {
    /// The node's op is not registered.
    #[error("node '{node}': {source}")]
    Op {
        /// The node's name.
        node: String,
        /// The registry's answer.
        #[source]
        source: Box<RegistryError>,
    },
    /// The node does not fit its OpDef.
    #[error(transparent)]
    NodeDef(#[from] NodeDefError),
    /// No kernel (or two) for the node and device.
    #[error(transparent)]
    Lookup(#[from] KernelLookupError),
    /// The device asked for cannot be opened.
    #[error("node '{node}': {source}")]
    Device {
        /// The node's name.
        node: String,
        /// Why the device cannot be opened.
        #[source]
        source: DeviceError,
    },
    /// The kernel's constructor refused the node.
    #[error("building kernel {kernel} for node '{node}' (op '{op}'): {source}")]
    Construction {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The kernel's Rust item.
        kernel: &'static str,
        /// Why.
        #[source]
        source: KernelError,
    },
}

/// A kernel built for one node: computes it on any number of input sets.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// # use registry_core::kernel::create_op_kernel;
/// # use registry_core::proto::NodeDef;
/// // With a kernels crate linked in (e.g. kernels-cpu):
/// // let abs = create_op_kernel("CPU", &node)?;
/// // let outputs = abs.compute([x])?;
/// ```
pub struct KernelInstance {
    kernel: Box<dyn OpKernel>,
    info: NodeInfo,
    device: Arc<dyn Device>,
    registration: &'static KernelRegistration,
}

impl std::fmt::Debug for KernelInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelInstance")
            .field("info", &self.info)
            .field("kernel", &self.registration.kernel_name)
            .finish()
    }
}

impl KernelInstance {
    /// Binds a built kernel to its node and the device it runs on.
    pub fn new(
        kernel: Box<dyn OpKernel>,
        info: NodeInfo,
        device: Arc<dyn Device>,
        registration: &'static KernelRegistration,
    ) -> Self {
        Self {
            kernel,
            info,
            device,
            registration,
        }
    }

    /// The device it runs on.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The node it was built for.
    pub fn info(&self) -> &NodeInfo {
        &self.info
    }

    /// The registration it was built from.
    pub fn registration(&self) -> &'static KernelRegistration {
        self.registration
    }

    /// The kernel itself.
    pub fn kernel(&self) -> &dyn OpKernel {
        &*self.kernel
    }

    /// Offers the kernel input `index`'s value, the same in every run (see
    /// [`OpKernel::prepare_constant_input`]); an index past the node's
    /// inputs or a value of another dtype is not offered. Best effort: a
    /// kernel that panics while preparing is left to compute without it.
    pub fn prepare_constant_input(&self, index: usize, value: &Tensor) {
        if self.info.input_types().get(index) == Some(&value.dtype()) {
            let prepare = || self.kernel.prepare_constant_input(index, value);
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(prepare));
        }
    }

    /// Runs the kernel on `inputs`, after checking their count and dtypes,
    /// and returns its outputs.
    #[inline]
    pub fn compute(
        &self,
        inputs: impl IntoIterator<Item = Tensor>,
    ) -> Result<TensorVec, KernelError> {
        // Filled in place: collecting into a temporary and moving it costs a
        // copy of every slot (measured: a third of a 1-element Abs).
        let mut slots: SmallVec<[Option<Tensor>; 4]> = SmallVec::new();
        for tensor in inputs {
            slots.push(Some(tensor));
        }
        let mut outputs: SmallVec<[Option<Tensor>; 2]> = SmallVec::new();
        for _ in 0..self.info.output_types().len() {
            outputs.push(None);
        }
        self.compute_in(&mut slots, &mut outputs)?;
        collect_outputs(&mut outputs)
    }

    /// Runs the kernel over slots the caller owns (what an executor calls,
    /// reusing its buffers): `inputs` has one `Some` per input of the node,
    /// `outputs` one slot per output. On success every output slot is set;
    /// inputs the kernel forwarded are left `None`.
    ///
    /// Errors when an input is missing or has the wrong dtype, when the
    /// slot counts differ from the node's, or when the kernel fails or
    /// leaves an output unset.
    #[inline]
    pub fn compute_in(
        &self,
        inputs: &mut [Option<Tensor>],
        outputs: &mut [Option<Tensor>],
    ) -> Result<(), KernelError> {
        self.check_inputs(inputs)?;
        let expected = self.info.output_types().len();
        if outputs.len() != expected {
            return Err(KernelError::internal(format!(
                "{} output slots were given for a node with {expected} outputs",
                outputs.len()
            )));
        }
        self.kernel.compute(&mut OpKernelContext::new(
            &self.info,
            &*self.device,
            inputs,
            outputs,
        ))?;
        match outputs.iter().position(Option::is_none) {
            Some(index) => Err(KernelError::MissingOutput { index }),
            None => Ok(()),
        }
    }

    #[inline]
    fn check_inputs(&self, inputs: &[Option<Tensor>]) -> Result<(), KernelError> {
        let expected = self.info.input_types();
        if inputs.len() != expected.len() {
            return Err(KernelError::InputCount {
                expected: expected.len(),
                actual: inputs.len(),
            });
        }
        for (index, (&dtype, input)) in expected.iter().zip(inputs).enumerate() {
            let Some(input) = input else {
                return Err(KernelError::internal(format!("input {index} has no value")));
            };
            let actual = input.dtype();
            if actual != dtype {
                return Err(KernelError::InputDtype {
                    index,
                    expected: dtype,
                    actual,
                });
            }
        }
        Ok(())
    }
}

/// Creates the kernel for `node` on the device of type `device_type` from
/// the global op and kernel registries (TF's `CreateOpKernel`): looks up
/// the op, adds the OpDef's defaults, validates the node, resolves its input
/// and output dtypes, chooses the kernel, opens the device and builds the
/// kernel there. (The kernel is chosen first: a node no kernel of the
/// device type serves gets TF's "no kernel" explanation, whether or not
/// such a device exists.)
pub fn create_op_kernel(
    device_type: &str,
    node: &NodeDef,
) -> Result<KernelInstance, CreateKernelError> {
    let chosen = choose_kernel(
        OpRegistry::global(),
        KernelRegistry::global(),
        device_type,
        node,
    )?;
    let device = open_device(device_type).map_err(|source| CreateKernelError::Device {
        node: node.name.clone(),
        source,
    })?;
    chosen.build(&device)
}

/// [`create_op_kernel`] on an opened device with explicit registries.
pub fn create_op_kernel_in(
    ops: &OpRegistry,
    kernels: &KernelRegistry,
    device: &Arc<dyn Device>,
    node: &NodeDef,
) -> Result<KernelInstance, CreateKernelError> {
    choose_kernel(ops, kernels, device.device_type(), node)?.build(device)
}

/// A node checked against its op, with the kernel chosen for it.
struct ChosenKernel<'a> {
    node: NodeDef,
    op_def: &'a OpDef,
    input_types: Vec<DataType>,
    output_types: Vec<DataType>,
    registration: &'static KernelRegistration,
}

/// Looks up `node`'s op, adds its defaults, validates the node, resolves
/// its dtypes and chooses its kernel for `device_type`.
fn choose_kernel<'a>(
    ops: &'a OpRegistry,
    kernels: &KernelRegistry,
    device_type: &str,
    node: &NodeDef,
) -> Result<ChosenKernel<'a>, CreateKernelError> {
    let op_def = ops
        .look_up_op_def(&node.op)
        .map_err(|e| CreateKernelError::Op {
            node: node.name.clone(),
            source: Box::new(e),
        })?;
    let mut node = node.clone();
    add_defaults_to_node_def(op_def, &mut node);
    validate_node_def(&node, op_def)?;
    let (input_types, output_types) = in_out_types_for_node(&node, op_def)?;
    let registration = kernels.find_kernel(&node, device_type)?;
    Ok(ChosenKernel {
        node,
        op_def,
        input_types,
        output_types,
        registration,
    })
}

impl ChosenKernel<'_> {
    /// Builds the chosen kernel on `device`.
    fn build(self, device: &Arc<dyn Device>) -> Result<KernelInstance, CreateKernelError> {
        let ChosenKernel {
            node,
            op_def,
            input_types,
            output_types,
            registration,
        } = self;
        let construction =
            OpKernelConstruction::new(&node, op_def, &**device, &input_types, &output_types);
        let kernel = (registration.factory)(&construction).map_err(|source| {
            CreateKernelError::Construction {
                node: node.name.clone(),
                op: node.op.clone(),
                kernel: registration.kernel_name,
                source,
            }
        })?;
        let (host_inputs, host_outputs) = host_memory_flags(&node, op_def, registration)?;
        let info = NodeInfo::new(
            node.name,
            node.op,
            registration.device,
            input_types,
            output_types,
        )
        .with_host_memory(host_inputs, host_outputs);
        Ok(KernelInstance::new(
            kernel,
            info,
            Arc::clone(device),
            registration,
        ))
    }
}

/// Per input and per output of `node`: whether it is one of the
/// registration's host-memory args (empty vectors when it has none).
fn host_memory_flags(
    node: &NodeDef,
    op_def: &opreg_proto::OpDef,
    registration: &KernelRegistration,
) -> Result<(Vec<bool>, Vec<bool>), CreateKernelError> {
    if registration.host_memory.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let (inputs, outputs) = crate::node_def::name_ranges_for_node(node, op_def)?;
    let flags = |ranges: &crate::node_def::NameRangeMap| {
        let len = ranges.values().map(|r| r.end).max().unwrap_or(0);
        let mut flags = vec![false; len];
        for name in registration.host_memory {
            if let Some(range) = ranges.get(*name) {
                flags[range.clone()].fill(true);
            }
        }
        flags
    };
    Ok((flags(&inputs), flags(&outputs)))
}
