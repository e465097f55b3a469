//! [`KernelCall`]: owned input and output slots for running a kernel by
//! hand, outside [`KernelInstance`](super::KernelInstance) and the executor.

use std::sync::Arc;

use smallvec::SmallVec;

use super::{KernelError, NodeInfo, OpKernelContext, TensorVec};
use crate::device::{Device, cpu_device};
use crate::tensor::Tensor;

/// The input and output slots of one kernel call, owned, and the device it
/// runs on: what a test or a hand-written driver builds an
/// [`OpKernelContext`] from.
///
/// ```
/// use registry_core::kernel::{KernelCall, KernelError, NodeInfo};
/// use registry_core::proto::DataType;
/// use registry_core::tensor::Tensor;
///
/// let info = NodeInfo::new("id", "Identity", "CPU", vec![DataType::DtInt32], vec![DataType::DtInt32]);
/// let mut call = KernelCall::new(&info, [Tensor::scalar(7i32)]);
/// let mut ctx = call.context(&info);
/// let x = ctx.take_input(0)?;
/// ctx.set_output(0, x)?;
/// assert_eq!(call.into_outputs()?[0].as_slice::<i32>()?, &[7]);
/// # Ok::<(), KernelError>(())
/// ```
#[derive(Debug)]
pub struct KernelCall {
    device: Arc<dyn Device>,
    inputs: SmallVec<[Option<Tensor>; 4]>,
    outputs: SmallVec<[Option<Tensor>; 2]>,
}

impl KernelCall {
    /// Slots holding `inputs`, and one empty output slot per output of
    /// `info`'s node, for a call on the CPU.
    pub fn new(info: &NodeInfo, inputs: impl IntoIterator<Item = Tensor>) -> Self {
        Self::on(Arc::clone(cpu_device()), info, inputs)
    }

    /// Like [`new`](Self::new), for a call on `device`.
    pub fn on(
        device: Arc<dyn Device>,
        info: &NodeInfo,
        inputs: impl IntoIterator<Item = Tensor>,
    ) -> Self {
        let mut call = Self {
            device,
            inputs: SmallVec::new(),
            outputs: SmallVec::new(),
        };
        call.inputs.extend(inputs.into_iter().map(Some));
        call.outputs.resize_with(info.output_types().len(), || None);
        call
    }

    /// A context over these slots for a call of `info`'s kernel.
    pub fn context<'a>(&'a mut self, info: &'a NodeInfo) -> OpKernelContext<'a> {
        OpKernelContext::new(info, &*self.device, &mut self.inputs, &mut self.outputs)
    }

    /// The outputs, in order; errors if the kernel left one unset.
    pub fn into_outputs(mut self) -> Result<TensorVec, KernelError> {
        collect_outputs(&mut self.outputs)
    }
}

/// Moves every output out of its slot, in order; errors at the first one
/// the kernel left unset.
#[inline]
pub(crate) fn collect_outputs(slots: &mut [Option<Tensor>]) -> Result<TensorVec, KernelError> {
    let mut out = TensorVec::new();
    for (index, slot) in slots.iter_mut().enumerate() {
        out.push(
            slot.take()
                .ok_or_else(|| KernelError::MissingOutput { index })?,
        );
    }
    Ok(out)
}
