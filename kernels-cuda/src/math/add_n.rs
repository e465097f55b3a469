//! `AddN` on the GPU: the element-wise sum of `N` tensors of one shape.
//!
//! As TF's `AddNOp` (and the CPU kernel), the first input that can be
//! forwarded becomes the accumulator (moved to the front of the summation
//! order), sums run left to right in the element type (so `half` rounds
//! after every addition, integers wrap) and a single input is passed
//! through. Each launch adds up to [`ADD_N_BATCH`] inputs.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, DeviceRepr, PushKernelArg};
use opreg_op_logic::add_n::{SummationOrder, check_inputs, summation_order};
use opreg_standard_ops::AddN;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::TensorElement;

use super::io::{empty_output, flat_launch, forwarded_address, input_address, new_output};
use super::source::{ADD_N_BATCH, add_n_source, vector_width};
use opreg_cuda::{GpuDevice, gpu_error};

/// Up to [`ADD_N_BATCH`] device addresses passed by value: the source's
/// `struct ptr_arg { const T* p[8]; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PtrArg {
    p: [u64; ADD_N_BATCH],
}

// SAFETY: `PtrArg` is `repr(C)` plain data (an array of 64-bit addresses),
// laid out exactly as the source's `struct ptr_arg` of 8 pointers.
unsafe impl DeviceRepr for PtrArg {}

/// The launches that sum `summands` (in order) into the output: each is
/// `(addresses, accumulate)`; the first launch accumulates only when the
/// output already holds the first summand (`forwarded`).
fn batches(summands: &[u64], forwarded: bool) -> Vec<(Vec<u64>, bool)> {
    let mut out = Vec::new();
    let mut accumulate = forwarded;
    let mut rest = summands;
    while !rest.is_empty() {
        let take = rest.len().min(ADD_N_BATCH);
        out.push((rest[..take].to_vec(), accumulate));
        rest = &rest[take..];
        accumulate = true;
    }
    out
}

/// `AddN` on one dtype, compiled for the GPU.
pub struct AddNKernel {
    dev: Arc<GpuDevice>,
    func: CudaFunction,
    dtype: DataType,
}

impl std::fmt::Debug for AddNKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddNKernel")
            .field("dtype", &self.dtype)
            .finish()
    }
}

impl AddNKernel {
    /// Compiles (or finds cached) `AddN` for `dtype`.
    pub fn new(dtype: DataType) -> Result<Self, KernelError> {
        let source = add_n_source(dtype)?;
        let dev = GpuDevice::get()?;
        let func = dev.function(&source, "add_n")?;
        Ok(Self { dev, func, dtype })
    }

    /// The sum of the inputs.
    pub fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let shape = check_inputs(ctx, |i, x| {
            input_address(&self.dev, x, i, self.dtype).map(drop)
        })?;
        if ctx.num_inputs() == 1 {
            let x = ctx.take_input(0)?;
            return ctx.set_output(0, x);
        }
        let n = shape.num_elements();
        if n == 0 {
            let out = empty_output(&self.dev, ctx, self.dtype, shape)?;
            return ctx.set_output(0, out);
        }
        let SummationOrder {
            forwarded,
            summands,
        } = summation_order(ctx, &shape)?;
        let summands: Vec<u64> = summands
            .iter()
            .map(|&i| input_address(&self.dev, ctx.input(i)?, i, self.dtype))
            .collect::<Result<_, _>>()?;
        let mut new = None;
        let out = if forwarded {
            forwarded_address(ctx, 0)?
        } else {
            // SAFETY: the first launch below (accumulate = false) writes all
            // n elements.
            let (buffer, out) = unsafe { new_output(&self.dev, self.dtype, n)? };
            new = Some(buffer);
            out
        };
        let len = n as i64;
        let cfg = flat_launch(n, vector_width(&[self.dtype]));
        for (addresses, accumulate) in batches(&summands, forwarded) {
            let mut p = [0u64; ADD_N_BATCH];
            p[..addresses.len()].copy_from_slice(&addresses);
            let ptrs = PtrArg { p };
            let used = addresses.len() as i32;
            let accumulate = i32::from(accumulate);
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch
                .arg(&ptrs)
                .arg(&used)
                .arg(&accumulate)
                .arg(&out)
                .arg(&len);
            // SAFETY: `add_n(ptr_arg in, i32 count, i32 accumulate, T* out,
            // index_t n)` takes these arguments; the first `used` addresses
            // are inputs of n elements of T (none of them the output), out
            // holds n elements, and when accumulate is 0 `used` >= 2 (or the
            // output is written from in[0] alone), so every element is set.
            unsafe { launch.launch(cfg) }.map_err(|e| gpu_error("launching AddN", e))?;
        }
        if let Some(buffer) = new {
            let out = self.dev.tensor(self.dtype, shape, buffer)?;
            ctx.set_output(0, out)?;
        }
        Ok(())
    }
}

/// `AddN` on the GPU.
#[kernel(op = AddN, device = GPU, T = [half, bfloat16, float, double, int32, int64])]
#[derive(Debug)]
pub struct AddNGpu<T> {
    inner: AddNKernel,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for AddNGpu<T> {
    fn build(_ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            inner: AddNKernel::new(T::DTYPE)?,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for AddNGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.inner.compute(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_eight_accumulate_after_the_first() {
        let s: Vec<u64> = (1..=19).collect();
        let b = batches(&s, false);
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].0.len(), b[0].1), (8, false));
        assert_eq!((b[1].0.len(), b[1].1), (8, true));
        assert_eq!((b[2].0.clone(), b[2].1), (vec![17, 18, 19], true));
        let b = batches(&s[..3], true);
        assert_eq!(b, vec![(vec![1, 2, 3], true)]);
        // A forwarded accumulator and one summand.
        assert_eq!(batches(&[7], true), vec![(vec![7], true)]);
    }
}
