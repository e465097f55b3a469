//! `Split`, `SplitV` and `Unpack`: each output is a run of the input along
//! one axis ([`SplitParts`], checked as TF checks it). Viewing the input as
//! `[outer, dim, inner]`, output `i` is `outer` contiguous blocks of
//! `sizes[i] * inner` elements, one from each outer row of the input, so
//! every output is filled with memcpy-sized copies, in parallel when large.

use opreg_standard_ops::{Split, SplitV, Unpack};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::Tensor;

use super::elements::{ElementOp, run_on_elements};
use super::parallel::{copy, for_each_row_chunk};
use opreg_op_logic::split::{SplitParts, split_parts, split_v_parts, unpack_parts};

/// Output rows of `len` elements, row `o` read from `start + o * stride` of
/// the input.
struct RunsPlan {
    start: usize,
    stride: usize,
    len: usize,
}

impl ElementOp for RunsPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let src = inputs
            .first()
            .ok_or_else(|| KernelError::internal("split without an input"))?;
        let rows = out.len().checked_div(self.len).unwrap_or(0);
        let last_end = rows
            .checked_sub(1)
            .map_or(0, |r| self.start + r * self.stride + self.len);
        if rows * self.len != out.len() || last_end > src.len() {
            return Err(KernelError::internal(
                "split: the parts do not fit the input",
            ));
        }
        for_each_row_chunk(out, self.len, |row0, chunk| {
            for (r, row) in chunk.chunks_exact_mut(self.len).enumerate() {
                let at = self.start + (row0 + r) * self.stride;
                copy(row, &src[at..at + self.len]);
            }
        });
        Ok(())
    }
}

/// Sets every output to its part of `input` (moved, not copied, when there
/// is a single part covering all of it).
fn write_parts(
    ctx: &mut OpKernelContext<'_>,
    input: &Tensor,
    parts: SplitParts,
) -> Result<(), KernelError> {
    let SplitParts {
        inner,
        dim,
        sizes,
        offsets,
        shapes,
        ..
    } = parts;
    for (i, ((size, offset), shape)) in sizes.into_iter().zip(offsets).zip(shapes).enumerate() {
        if size == dim {
            // The whole input (one part, or the others empty).
            ctx.set_output(i, input.reshape(shape)?)?;
            continue;
        }
        let out = ctx.allocate_output(i, shape)?;
        if out.num_elements() == 0 {
            continue;
        }
        let plan = RunsPlan {
            start: offset * inner,
            stride: dim * inner,
            len: size * inner,
        };
        run_on_elements(&plan, &[input], out)?;
    }
    Ok(())
}

/// `Split` for the types TF's CPU kernel has (but variants and resources).
#[kernel(
    op = Split,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, float8_e4m3fn, float8_e5m2, half,
         int16, int32, int4, int64, int8, quint8, string, uint16, uint32, uint4, uint64, uint8],
    host_memory = ["split_dim"]
)]
fn split(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let parts = split_parts(ctx.input(0)?, ctx.input(1)?.shape(), ctx.num_outputs())?;
    let input = ctx.take_input(1)?;
    write_parts(ctx, &input, parts)
}

/// `SplitV` for the types TF's CPU kernel has (but variants and resources).
#[kernel(
    op = SplitV,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, float8_e4m3fn, float8_e5m2, half,
         int16, int32, int4, int64, int8, quint8, string, uint16, uint32, uint4, uint64, uint8],
    Tlen = [int8, int32, int64],
    host_memory = ["size_splits", "split_dim"]
)]
fn split_v(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let parts = split_v_parts(
        ctx.input(0)?.shape(),
        ctx.input(1)?,
        ctx.input(2)?,
        ctx.num_outputs(),
    )?;
    let input = ctx.take_input(0)?;
    write_parts(ctx, &input, parts)
}

/// `Unpack` for the types TF's CPU kernel has (but variants and
/// resources).
#[kernel(
    op = Unpack,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, float8_e4m3fn, float8_e5m2, half,
         int16, int32, int64, int8, string, uint16, uint32, uint64, uint8]
)]
struct UnpackKernel {
    axis: i64,
}

impl BuildKernel for UnpackKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            axis: ctx.attr("axis")?,
        })
    }
}

impl OpKernel for UnpackKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let parts = unpack_parts(ctx.input(0)?.shape(), ctx.num_outputs(), self.axis)?;
        let input = ctx.take_input(0)?;
        write_parts(ctx, &input, parts)
    }
}
