//! [`OpKernelContext`]: what a kernel sees each time it computes (TF's
//! `OpKernelContext`): its device, its inputs, typed views, output
//! allocation in the right memory and input forwarding.

use opreg_proto::DataType;
use smallvec::SmallVec;

use super::{KernelError, NodeInfo};
use crate::device::Device;
use crate::tensor::{IntoShape, Tensor, TensorElement, TensorShape};

/// A small vector of tensors: a kernel's outputs, inline up to one (most
/// ops have one output; a larger inline buffer costs a `memcpy` per return).
pub type TensorVec = SmallVec<[Tensor; 1]>;

/// One call of a kernel: the node it belongs to, the device it runs on, its
/// input slots and its output slots.
///
/// The slots are borrowed from whoever runs the kernel (an executor's own
/// buffers, or a [`KernelCall`](super::KernelCall)), so a context is a few pointers: building
/// one per call costs nothing. Inputs are owned by their slots, so a kernel
/// can [forward](Self::forward_input) an input's buffer to an output and
/// compute in place when nothing else shares it (TF's
/// `forward_input_or_allocate_output`).
///
/// Outputs are allocated where the node's consumers expect them: in the
/// device's memory ([`Device::allocate`]), or in host memory for the CPU
/// and for a kernel's `host_memory` outputs (as TF's `AllocatorAttributes`).
///
/// ```
/// use registry_core::kernel::{KernelCall, KernelError, NodeInfo};
/// use registry_core::proto::DataType;
/// use registry_core::tensor::Tensor;
///
/// let info = NodeInfo::new("neg", "Neg", "CPU", vec![DataType::DtFloat], vec![DataType::DtFloat]);
/// let mut call = KernelCall::new(&info, [Tensor::from_vec([2], vec![1.0f32, -2.0]).unwrap()]);
/// let mut ctx = call.context(&info);
/// assert_eq!(ctx.device().device_type(), "CPU");
/// let shape = ctx.input(0)?.shape().clone();
/// // The input is unique: it becomes the output, computed in place.
/// assert_eq!(ctx.forward_input_or_allocate_output(&[0], 0, shape)?, Some(0));
/// for v in ctx.output_mut(0)?.as_mut_slice::<f32>()? {
///     *v = -*v;
/// }
/// let outputs = call.into_outputs()?;
/// assert_eq!(outputs[0].as_slice::<f32>()?, &[-1.0, 2.0]);
/// # Ok::<(), KernelError>(())
/// ```
#[derive(Debug)]
pub struct OpKernelContext<'a> {
    info: &'a NodeInfo,
    device: &'a dyn Device,
    inputs: &'a mut [Option<Tensor>],
    outputs: &'a mut [Option<Tensor>],
    foreign: Option<&'a mut dyn ForeignForwarding>,
}

/// How a context forwards an input whose memory another framework owns
/// (a [foreign](crate::tensor::HostBuffer::from_foreign) buffer, held read-only): that
/// framework decides whether the kernel may write to it (TensorFlow's
/// `forward_input_or_allocate_output` checks its own reference count).
///
/// A bridge that runs opreg kernels inside another framework implements it
/// and attaches it with [`OpKernelContext::with_foreign_forwarding`].
pub trait ForeignForwarding: std::fmt::Debug {
    /// Asks the framework to hand input `input`'s buffer over as output
    /// `output` with `shape` (the input's element count). The context has
    /// already dropped its handle of the input. Returns the output to write
    /// in place, or the input again (for reading) when the framework keeps
    /// the buffer.
    fn forward(
        &mut self,
        input: usize,
        output: usize,
        shape: &TensorShape,
    ) -> Result<Forwarded, KernelError>;

    /// Output `index` of `dtype` and `shape` in the framework's memory
    /// (TensorFlow allocates the output when it refuses a forward, and its
    /// allocator reuses memory), zero-filled when `zeroed` (else its values
    /// are unspecified: the kernel writes every element), or `None` to
    /// allocate as usual.
    fn allocated_output(
        &mut self,
        index: usize,
        dtype: DataType,
        shape: &TensorShape,
        zeroed: bool,
    ) -> Result<Option<Tensor>, KernelError>;
}

/// The answer of [`ForeignForwarding::forward`].
#[derive(Debug)]
pub enum Forwarded {
    /// The buffer became the output, writable.
    Output(Tensor),
    /// The framework kept the buffer: the input, to read as before.
    Kept(Tensor),
}

impl<'a> OpKernelContext<'a> {
    /// A context for one call of the kernel of `info`'s node on `device`,
    /// over `inputs` (one slot per input, `Some`) and `outputs` (one slot
    /// per output of the node, normally `None`). Neither is checked here
    /// ([`KernelInstance::compute_in`](super::KernelInstance::compute_in)
    /// checks the inputs' count and dtypes and that every output was set).
    #[inline]
    pub fn new(
        info: &'a NodeInfo,
        device: &'a dyn Device,
        inputs: &'a mut [Option<Tensor>],
        outputs: &'a mut [Option<Tensor>],
    ) -> Self {
        Self {
            info,
            device,
            inputs,
            outputs,
            foreign: None,
        }
    }

    /// The context, with `forwarding` deciding whether inputs in foreign
    /// memory ([`HostBuffer::from_foreign`](crate::tensor::HostBuffer::from_foreign)) may be forwarded to outputs.
    #[inline]
    pub fn with_foreign_forwarding(mut self, forwarding: &'a mut dyn ForeignForwarding) -> Self {
        self.foreign = Some(forwarding);
        self
    }

    /// The device the kernel runs on (TF's `device()`): a backend's kernels
    /// downcast it to their own device type
    /// (`downcast` on `dyn Device`) for its stream and launches.
    #[inline]
    pub fn device(&self) -> &'a dyn Device {
        self.device
    }

    /// The node this call belongs to.
    #[inline]
    pub fn info(&self) -> &'a NodeInfo {
        self.info
    }

    /// The node's name.
    #[inline]
    pub fn node_name(&self) -> &'a str {
        self.info.node_name()
    }

    /// The number of inputs.
    #[inline]
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Input `index`.
    #[inline]
    pub fn input(&self, index: usize) -> Result<&Tensor, KernelError> {
        match self.inputs.get(index) {
            Some(Some(t)) => Ok(t),
            Some(None) => Err(KernelError::InputForwarded { index }),
            None => Err(KernelError::InputIndex {
                index,
                count: self.inputs.len(),
            }),
        }
    }

    /// Input `index` viewed as a slice of `T` (errors when its dtype is not `T`'s).
    #[inline]
    pub fn input_slice<T: TensorElement>(&self, index: usize) -> Result<&[T], KernelError> {
        Ok(self.input(index)?.as_slice::<T>()?)
    }

    /// Takes input `index` out of the context (it cannot be read again).
    #[inline]
    pub fn take_input(&mut self, index: usize) -> Result<Tensor, KernelError> {
        let count = self.inputs.len();
        match self.inputs.get_mut(index) {
            Some(slot @ Some(_)) => slot
                .take()
                .ok_or_else(|| KernelError::InputForwarded { index }),
            Some(None) => Err(KernelError::InputForwarded { index }),
            None => Err(KernelError::InputIndex { index, count }),
        }
    }

    /// The number of outputs.
    #[inline]
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// The dtype the node declares for output `index`.
    #[inline]
    pub fn output_type(&self, index: usize) -> Result<DataType, KernelError> {
        self.info
            .output_types()
            .get(index)
            .copied()
            .ok_or_else(|| KernelError::OutputIndex {
                index,
                count: self.outputs.len(),
            })
    }

    /// Allocates output `index` with `shape` and the node's dtype for it
    /// where it belongs (the device's memory, or host memory on the CPU and
    /// for `host_memory` outputs), and returns it for writing. Host memory
    /// is zero-filled; device memory holds unspecified values until the
    /// kernel writes them.
    #[inline]
    pub fn allocate_output(
        &mut self,
        index: usize,
        shape: impl IntoShape,
    ) -> Result<&mut Tensor, KernelError> {
        self.allocate_output_as(index, shape.into_shape()?, true)
    }

    /// [`allocate_output`](Self::allocate_output) for a kernel that writes
    /// every element of the output: its values are unspecified until then
    /// (in host memory, zeros or what a reused buffer held, not zero-filled
    /// first; whatever the allocator held when the memory comes from
    /// another framework's allocator, such as TensorFlow's). A `bool`
    /// output is still zero-filled.
    #[inline]
    pub fn allocate_output_to_overwrite(
        &mut self,
        index: usize,
        shape: impl IntoShape,
    ) -> Result<&mut Tensor, KernelError> {
        self.allocate_output_as(index, shape.into_shape()?, false)
    }

    #[inline]
    fn allocate_output_as(
        &mut self,
        index: usize,
        shape: TensorShape,
        zeroed: bool,
    ) -> Result<&mut Tensor, KernelError> {
        let dtype = self.output_type(index)?;
        if let Some(foreign) = self.foreign.as_deref_mut()
            && let Some(tensor) = foreign.allocated_output(index, dtype, &shape, zeroed)?
        {
            return Ok(self.output_slot(index)?.insert(tensor));
        }
        if self.info.output_in_host_memory(index) {
            let slot = self.output_slot(index)?;
            return Ok(if zeroed {
                Tensor::zeros_in(slot, dtype, shape)?
            } else {
                Tensor::for_overwrite_in(slot, dtype, shape)?
            });
        }
        let tensor = self.device.allocate(dtype, shape)?;
        Ok(self.output_slot(index)?.insert(tensor))
    }

    /// A scratch tensor of `dtype` and `shape` in the device's memory (host
    /// memory on the CPU), for the kernel's own use during this call (TF's
    /// `allocate_temp`). Its contents are unspecified on a device.
    #[inline]
    pub fn allocate_temp(
        &self,
        dtype: DataType,
        shape: impl IntoShape,
    ) -> Result<Tensor, KernelError> {
        let shape = shape.into_shape()?;
        if self.info.on_cpu() {
            return Ok(Tensor::zeros(dtype, shape)?);
        }
        Ok(self.device.allocate(dtype, shape)?)
    }

    /// Allocates output `output` with the shape of input `input` (the
    /// node's dtype for the output, where [`allocate_output`](Self::allocate_output)
    /// puts it) and returns both, the input to read and the output to
    /// write, without cloning the input.
    #[inline]
    pub fn input_and_new_output(
        &mut self,
        input: usize,
        output: usize,
    ) -> Result<(&Tensor, &mut Tensor), KernelError> {
        self.input_and_output_as(input, output, true)
    }

    /// [`input_and_new_output`](Self::input_and_new_output) for a kernel
    /// that writes every element of the output (its values are unspecified
    /// until then, as with [`allocate_output_to_overwrite`](Self::allocate_output_to_overwrite)).
    #[inline]
    pub fn input_and_output_to_overwrite(
        &mut self,
        input: usize,
        output: usize,
    ) -> Result<(&Tensor, &mut Tensor), KernelError> {
        self.input_and_output_as(input, output, false)
    }

    #[inline]
    fn input_and_output_as(
        &mut self,
        input: usize,
        output: usize,
        zeroed: bool,
    ) -> Result<(&Tensor, &mut Tensor), KernelError> {
        let shape = self.input(input)?.shape().clone();
        self.allocate_output_as(output, shape, zeroed)?;
        let count = self.outputs.len();
        let out = match self.outputs.get_mut(output) {
            Some(Some(t)) => t,
            _ => {
                return Err(KernelError::OutputIndex {
                    index: output,
                    count,
                });
            }
        };
        match self.inputs.get(input) {
            Some(Some(t)) => Ok((t, out)),
            _ => Err(KernelError::InputForwarded { index: input }),
        }
    }

    /// Forwards the first of `candidates` (input indices) that can become
    /// output `output` with `shape` (TF's `forward_input_or_allocate_output`):
    /// same dtype, same element count, in the memory the output belongs in,
    /// and shared with nothing else. Returns the input forwarded, whose
    /// values the output now holds (reshaped to `shape`; the input can no
    /// longer be read), or `None` when none could be and the output was
    /// [allocated](Self::allocate_output) instead.
    #[inline]
    pub fn forward_input_or_allocate_output(
        &mut self,
        candidates: &[usize],
        output: usize,
        shape: impl IntoShape,
    ) -> Result<Option<usize>, KernelError> {
        let shape = shape.into_shape()?;
        for &input in candidates {
            if self.forward_input_with_shape(input, output, &shape)? {
                return Ok(Some(input));
            }
        }
        self.allocate_output(output, shape)?;
        Ok(None)
    }

    /// Moves input `input` into output `output` when the kernel may write to
    /// it in place: it has the output's dtype, is in the memory the output
    /// belongs in, and nothing else shares its buffer. Returns whether it
    /// did; after `true` the input can no longer be read and the output
    /// holds the input's values (with its shape).
    #[inline]
    pub fn forward_input(&mut self, input: usize, output: usize) -> Result<bool, KernelError> {
        self.forward_input_as(input, output, None)
    }

    /// [`forward_input`](Self::forward_input), the output to get `shape`
    /// when given (a foreign buffer's owner is asked for that shape).
    #[inline]
    fn forward_input_as(
        &mut self,
        input: usize,
        output: usize,
        shape: Option<&TensorShape>,
    ) -> Result<bool, KernelError> {
        let dtype = self.output_type(output)?;
        let tensor = self.input(input)?;
        if tensor.dtype() != dtype || tensor.is_on_host() != self.info.output_in_host_memory(output)
        {
            return Ok(false);
        }
        if !tensor.is_unique() {
            return self.forward_foreign_input(input, output, shape);
        }
        let tensor = self.take_input(input)?;
        *self.output_slot(output)? = Some(tensor);
        Ok(true)
    }

    /// [`forward_input`](Self::forward_input) for an input that is not
    /// unique: when it is foreign memory held by this context alone, the
    /// [`ForeignForwarding`] asks its owner.
    #[cold]
    fn forward_foreign_input(
        &mut self,
        input: usize,
        output: usize,
        shape: Option<&TensorShape>,
    ) -> Result<bool, KernelError> {
        let held_here_only = self
            .input(input)?
            .host_buffer()
            .is_some_and(|b| b.is_foreign() && b.ref_count() == 1);
        if !held_here_only {
            return Ok(false);
        }
        let Some(forwarding) = self.foreign.take() else {
            return Ok(false);
        };
        let released = self.take_input(input)?;
        let shape = shape.unwrap_or(released.shape()).clone();
        drop(released);
        let answer = forwarding.forward(input, output, &shape);
        self.foreign = Some(forwarding);
        match answer? {
            Forwarded::Output(tensor) => {
                *self.output_slot(output)? = Some(tensor);
                Ok(true)
            }
            Forwarded::Kept(tensor) => {
                if let Some(slot) = self.inputs.get_mut(input) {
                    *slot = Some(tensor);
                }
                Ok(false)
            }
        }
    }

    /// Like [`forward_input`](Self::forward_input), but the output gets
    /// `shape` (which must have the input's element count, else nothing is
    /// forwarded).
    #[inline]
    pub fn forward_input_with_shape(
        &mut self,
        input: usize,
        output: usize,
        shape: &TensorShape,
    ) -> Result<bool, KernelError> {
        if self.input(input)?.num_elements() != shape.num_elements() {
            return Ok(false);
        }
        if !self.forward_input_as(input, output, Some(shape))? {
            return Ok(false);
        }
        let slot = self.output_slot(output)?;
        if let Some(t) = slot.as_ref()
            && t.shape() != shape
        {
            *slot = Some(t.reshape(shape.clone())?);
        }
        Ok(true)
    }

    /// Sets output `index` to `tensor`, which must have the node's dtype for it.
    #[inline]
    pub fn set_output(&mut self, index: usize, tensor: Tensor) -> Result<(), KernelError> {
        let expected = self.output_type(index)?;
        if tensor.dtype() != expected {
            return Err(KernelError::OutputDtype {
                index,
                expected,
                actual: tensor.dtype(),
            });
        }
        *self.output_slot(index)? = Some(tensor);
        Ok(())
    }

    /// Sets each output `i` to input `i`, taken without a copy, wherever
    /// it is: the whole of the identity kernels (`Identity`,
    /// `StopGradient`, `PreventGradient`, `IdentityN`) on any device. An
    /// error when the node has as many outputs as inputs not.
    pub fn forward_every_input(&mut self) -> Result<(), KernelError> {
        if self.num_inputs() != self.num_outputs() {
            return Err(KernelError::internal(format!(
                "{} has {} inputs but {} outputs",
                self.info.op(),
                self.num_inputs(),
                self.num_outputs()
            )));
        }
        for i in 0..self.num_inputs() {
            let input = self.take_input(i)?;
            self.set_output(i, input)?;
        }
        Ok(())
    }

    /// Output `index`, if it was set.
    #[inline]
    pub fn output(&self, index: usize) -> Option<&Tensor> {
        self.outputs.get(index).and_then(Option::as_ref)
    }

    /// Output `index` for writing; errors when it was not allocated or set.
    #[inline]
    pub fn output_mut(&mut self, index: usize) -> Result<&mut Tensor, KernelError> {
        let count = self.outputs.len();
        match self.outputs.get_mut(index) {
            Some(Some(t)) => Ok(t),
            Some(None) => Err(KernelError::MissingOutput { index }),
            None => Err(KernelError::OutputIndex { index, count }),
        }
    }

    /// The slot of output `index`.
    #[inline]
    fn output_slot(&mut self, index: usize) -> Result<&mut Option<Tensor>, KernelError> {
        let count = self.outputs.len();
        self.outputs
            .get_mut(index)
            .ok_or_else(|| KernelError::OutputIndex { index, count })
    }
}
