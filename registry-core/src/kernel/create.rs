//! Creating a kernel for a node in one call (TF's `CreateOpKernel`), and
//! [`KernelInstance`], the built kernel bound to its node.

use opreg_proto::NodeDef;

use super::{
    KernelError, KernelLookupError, KernelRegistration, KernelRegistry, NodeInfo, OpKernel,
    OpKernelConstruction, OpKernelContext, TensorVec,
};
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
/// # use registry_core::kernel::create_op_kernel;
/// # use registry_core::proto::NodeDef;
/// // With a kernels crate linked in (e.g. kernels-cpu):
/// // let abs = create_op_kernel("CPU", &node)?;
/// // let outputs = abs.compute([x])?;
/// ```
pub struct KernelInstance {
    kernel: Box<dyn OpKernel>,
    info: NodeInfo,
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
    /// Binds a built kernel to its node.
    pub fn new(
        kernel: Box<dyn OpKernel>,
        info: NodeInfo,
        registration: &'static KernelRegistration,
    ) -> Self {
        Self {
            kernel,
            info,
            registration,
        }
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

    /// Runs the kernel on `inputs`, after checking their count and dtypes,
    /// and returns its outputs.
    #[inline]
    pub fn compute(
        &self,
        inputs: impl IntoIterator<Item = Tensor>,
    ) -> Result<TensorVec, KernelError> {
        let mut ctx = OpKernelContext::new(&self.info, inputs);
        self.check_inputs(&ctx)?;
        self.kernel.compute(&mut ctx)?;
        ctx.into_outputs()
    }

    #[inline]
    fn check_inputs(&self, ctx: &OpKernelContext<'_>) -> Result<(), KernelError> {
        let expected = self.info.input_types();
        if ctx.num_inputs() != expected.len() {
            return Err(KernelError::InputCount {
                expected: expected.len(),
                actual: ctx.num_inputs(),
            });
        }
        for (index, &dtype) in expected.iter().enumerate() {
            let actual = ctx.input(index)?.dtype();
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

/// Creates the kernel for `node` on `device` from the global op and kernel
/// registries (TF's `CreateOpKernel`): looks up the op, adds the OpDef's
/// defaults, validates the node, resolves its input and output dtypes,
/// chooses the kernel and builds it.
pub fn create_op_kernel(device: &str, node: &NodeDef) -> Result<KernelInstance, CreateKernelError> {
    create_op_kernel_in(OpRegistry::global(), KernelRegistry::global(), device, node)
}

/// [`create_op_kernel`] with explicit registries.
pub fn create_op_kernel_in(
    ops: &OpRegistry,
    kernels: &KernelRegistry,
    device: &str,
    node: &NodeDef,
) -> Result<KernelInstance, CreateKernelError> {
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
    let registration = kernels.find_kernel(&node, device)?;
    let construction = OpKernelConstruction::new(
        &node,
        op_def,
        registration.device,
        &input_types,
        &output_types,
    );
    let kernel = (registration.factory)(&construction).map_err(|source| {
        CreateKernelError::Construction {
            node: node.name.clone(),
            op: node.op.clone(),
            kernel: registration.kernel_name,
            source,
        }
    })?;
    let info = NodeInfo::new(
        node.name,
        node.op,
        registration.device,
        input_types,
        output_types,
    );
    Ok(KernelInstance::new(kernel, info, registration))
}
