//! `Pad` with zeros (TF's `T()`: 0, `false`, the empty string), `PadV2`
//! with `constant_values` and `MirrorPad`, all three a [`RowGather`]: each
//! output row (the last dimension) comes from one input row, or is padding.
//! `Pad` and `PadV2` copy the input row into the middle of the output row
//! (the output starts zero-filled, so `Pad` writes nothing else);
//! `MirrorPad` copies it in and mirrors its ends, the outer dimensions
//! mirrored through their tables.

use opreg_standard_ops::{MirrorPad, Pad, PadV2};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::elements::{ElementOp, run_on_elements};
use super::rows::{RowGather, Tables};
use opreg_op_logic::index::strides;
use opreg_op_logic::pad::{
    MirrorMode, PadDim, Padding, check_constant_values, merge_unpadded, mirror_padding, padding,
};

/// The tables of the outer dimensions `dims` of an input with row-major
/// `steps`: index `i` of a dimension reads input index `source(dim, i)`
/// (`None`: padding).
fn outer_tables(
    dims: &[PadDim],
    steps: &[usize],
    source: impl Fn(&PadDim, usize) -> Option<usize>,
) -> Tables {
    dims.iter()
        .zip(steps)
        .map(|(d, &step)| (0..d.out).map(|i| source(d, i).map(|s| s * step)).collect())
        .collect()
}

/// Copies the input into the box of the output; the rest is `inputs[1]`'s
/// single element when there is one (`PadV2`), else left zero (`Pad`).
struct PadPlan {
    /// The outer dimensions' rows.
    gather: RowGather,
    /// The last dimension (with the dimensions without padding after it
    /// merged in).
    last: PadDim,
}

impl PadPlan {
    /// The plan of `padding` for an input of `input_len` elements.
    fn new(padding: &Padding, input_len: usize) -> Result<Self, KernelError> {
        let dims = merge_unpadded(&padding.dims)?;
        let Some((&last, outer)) = dims.split_last() else {
            return Err(KernelError::internal("pad: a scalar has nothing to pad"));
        };
        let sizes: Vec<usize> = dims.iter().map(|d| d.size).collect();
        let steps = strides(&sizes);
        let tables = outer_tables(outer, &steps, |d, i| {
            i.checked_sub(d.before).filter(|&s| s < d.size)
        });
        Ok(Self {
            gather: RowGather::new(tables, last.out, last.size, input_len)?,
            last,
        })
    }
}

impl ElementOp for PadPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let [src, rest @ ..] = inputs else {
            return Err(KernelError::internal("pad without an input"));
        };
        let fill = rest.first().and_then(|c| c.first());
        let PadDim { size, before, .. } = self.last;
        self.gather.run(out, |at, row| match at {
            Some(at) => {
                row[before..before + size].clone_from_slice(&src[at..at + size]);
                if let Some(v) = fill {
                    row[..before].fill(v.clone());
                    row[before + size..].fill(v.clone());
                }
            }
            None => {
                if let Some(v) = fill {
                    row.fill(v.clone());
                }
            }
        })
    }
}

/// `Pad` and `PadV2`: checks, then shares the input when nothing is padded,
/// else runs a [`PadPlan`] (with `constant_values` for `PadV2`).
fn pad_with(ctx: &mut OpKernelContext<'_>, constant: bool) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let p = padding(input.shape(), ctx.input(1)?)?;
    if constant {
        check_constant_values(ctx.input(2)?.shape())?;
    }
    if p.out_shape.num_elements() == input.num_elements() {
        // No padding (or nothing at all): share the input.
        let input = ctx.take_input(0)?;
        let output = input.reshape(p.out_shape)?;
        drop(input);
        return ctx.set_output(0, output);
    }
    let plan = PadPlan::new(&p, input.num_elements())?;
    let input = ctx.take_input(0)?;
    let value = if constant {
        Some(ctx.take_input(2)?)
    } else {
        None
    };
    let out = ctx.allocate_output(0, p.out_shape)?;
    match &value {
        Some(v) => run_on_elements(&plan, &[&input, v], out),
        None => run_on_elements(&plan, &[&input], out),
    }
}

/// `Pad` for every type TF's CPU kernel has.
#[kernel(
    op = Pad,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    Tpaddings = [int32, int64],
    host_memory = ["paddings"]
)]
fn pad(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    pad_with(ctx, false)
}

/// `PadV2` for every type TF's CPU kernel has (`constant_values` in host
/// memory, as TF registers it).
#[kernel(
    op = PadV2,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    Tpaddings = [int32, int64],
    host_memory = ["paddings", "constant_values"]
)]
fn pad_v2(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    pad_with(ctx, true)
}

/// Mirrors the input into the output: the outer dimensions through their
/// tables, the last padded dimension (in units of the unpadded dimensions
/// after it) in each row.
struct MirrorPlan {
    gather: RowGather,
    /// The last padded dimension.
    last: PadDim,
    /// The elements of one index of `last` (the product of the unpadded
    /// dimensions after it).
    unit: usize,
    mode: MirrorMode,
}

impl MirrorPlan {
    /// The plan of `padding` (with at least one padded dimension) in `mode`.
    fn new(padding: &Padding, mode: MirrorMode, input_len: usize) -> Result<Self, KernelError> {
        let dims = &padding.dims;
        let Some(at) = dims.iter().rposition(|d| d.out != d.size) else {
            return Err(KernelError::internal("mirror pad: nothing to pad"));
        };
        let sizes: Vec<usize> = dims.iter().map(|d| d.size).collect();
        let steps = strides(&sizes);
        let last = dims[at];
        let unit = steps[at];
        let tables = outer_tables(&dims[..at], &steps[..at], |d, i| Some(mode.source(d, i)));
        let read = last.size.saturating_mul(unit);
        Ok(Self {
            gather: RowGather::new(tables, last.out.saturating_mul(unit), read, input_len)?,
            last,
            unit,
            mode,
        })
    }
}

impl ElementOp for MirrorPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let src = inputs
            .first()
            .ok_or_else(|| KernelError::internal("mirror pad without an input"))?;
        let (last, u) = (self.last, self.unit);
        self.gather.run(out, |at, row| {
            // Every index of a mirrored dimension reads the input.
            let at = at.unwrap_or(0);
            let middle = last.before * u..(last.before + last.size) * u;
            row[middle].clone_from_slice(&src[at..at + last.size * u]);
            let edges = (0..last.before).chain(last.before + last.size..last.out);
            for j in edges {
                let s = at + self.mode.source(&last, j) * u;
                row[j * u..(j + 1) * u].clone_from_slice(&src[s..s + u]);
            }
        })
    }
}

/// `MirrorPad` for every type TF's CPU kernel has.
#[kernel(
    op = MirrorPad,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    Tpaddings = [int32, int64],
    host_memory = ["paddings"]
)]
struct MirrorPadKernel {
    mode: MirrorMode,
}

impl BuildKernel for MirrorPadKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mode: MirrorMode::parse(ctx.attr::<&str>("mode")?)?,
        })
    }
}

impl OpKernel for MirrorPadKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?;
        let p = mirror_padding(input.shape(), ctx.input(1)?, self.mode)?;
        if p.out_shape.num_elements() == input.num_elements() {
            // Nothing padded (or nothing at all, or a scalar): share the
            // input.
            let input = ctx.take_input(0)?;
            let output = input.reshape(p.out_shape)?;
            drop(input);
            return ctx.set_output(0, output);
        }
        let plan = MirrorPlan::new(&p, self.mode, input.num_elements())?;
        let input = ctx.take_input(0)?;
        let out = ctx.allocate_output(0, p.out_shape)?;
        run_on_elements(&plan, &[&input], out)
    }
}
