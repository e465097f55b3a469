//! `AddN` on the GPU: the element-wise sum of `N` tensors of one shape.
//!
//! As TF's `AddNOp` (and the CPU kernel), the first input that can be
//! forwarded becomes the accumulator (moved to the front of the summation
//! order), sums run left to right in the element type (so `half` rounds
//! after every addition, integers wrap) and a single input is passed
//! through. Each launch adds up to [`ADD_N_BATCH`] inputs.

use cudarc::driver::{CudaFunction, DeviceRepr, PushKernelArg};
use opreg_op_logic::add_n::{SummationOrder, check_inputs, summation_order};
use opreg_standard_ops::AddN;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::proto::DataType;

use super::io::flat_launch;
use super::source::{ADD_N_BATCH, add_n_source, vector_width};
use crate::sources_of_type;
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, gpu_input_ptr};

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

/// The sources a registration of [`AddNGpu`] compiles.
pub fn add_n_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    sources_of_type(reg, "T", add_n_source)
}

/// `AddN` on the GPU.
#[kernel(
    op = AddN,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    sources = add_n_sources
)]
#[derive(Debug)]
pub struct AddNGpu {
    func: CudaFunction,
    dtype: DataType,
}

impl BuildKernel for AddNGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        let func = ctx.gpu()?.function(&add_n_source(dtype)?, "add_n")?;
        Ok(Self { func, dtype })
    }
}

impl OpKernel for AddNGpu {
    /// The sum of the inputs.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let shape = check_inputs(ctx, |i, x| gpu_input_ptr(x, i, self.dtype).map(drop))?;
        if ctx.num_inputs() == 1 {
            let x = ctx.take_input(0)?;
            return ctx.set_output(0, x);
        }
        let n = shape.num_elements();
        if n == 0 {
            ctx.allocate_output(0, shape)?;
            return Ok(());
        }
        let SummationOrder {
            forwarded,
            summands,
        } = summation_order(ctx, &shape)?;
        let summands: Vec<u64> = summands
            .iter()
            .map(|&i| ctx.gpu_input(i, self.dtype))
            .collect::<Result<_, _>>()?;
        if !forwarded {
            // The first launch below (accumulate = false) writes all n
            // elements.
            ctx.allocate_output(0, shape)?;
        }
        let out = ctx.gpu_output(0)?;
        let len = n as i64;
        let cfg = flat_launch(n, vector_width(&[self.dtype]));
        let stream = ctx.gpu()?.stream();
        for (addresses, accumulate) in batches(&summands, forwarded) {
            let mut p = [0u64; ADD_N_BATCH];
            p[..addresses.len()].copy_from_slice(&addresses);
            let ptrs = PtrArg { p };
            let used = addresses.len() as i32;
            let accumulate = i32::from(accumulate);
            let mut launch = stream.launch_builder(&self.func);
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
        Ok(())
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
