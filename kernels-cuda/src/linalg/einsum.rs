//! `Einsum` on the GPU, as TF's `EinsumOp` computes it and as the CPU
//! kernel does, from the same plan ([`opreg_op_logic::einsum`]: the
//! equation, its labels and sizes on the inputs' shapes, and the
//! [`Contraction`]):
//!
//! 1. each operand is gathered into the order of the contraction, reading
//!    its diagonal where a label repeats (`strided_copy`, the layout kernel
//!    of `Transpose`; skipped when the order is already the operand's), and
//!    the labels only it has are summed out (the `Sum` reduction's
//!    kernels);
//! 2. one operand is then the result; two are multiplied as `[batch..., m,
//!    k]` by `[batch..., k, n]` with `BatchMatMulV2`'s cuBLAS call (one
//!    strided batched GEMM, the batch dimensions broadcasting), and the
//!    product is gathered into the output's order (skipped when it is
//!    already in it);
//! 3. where a label repeats in the output (`i->ii`), the result is
//!    scattered onto that diagonal of a zero output (`strided_scatter`).
//!
//! The last step writes the output; the others write temporaries of the
//! GPU's stream-ordered pool. A gather or scatter of more than 8
//! dimensions that do not merge runs as several launches. An empty output
//! is allocated without work, and an empty input with a non-empty output
//! (a sum over an empty label) gives zeros. Sums over labels one operand
//! has accumulate as `Sum` does (`half`/`bfloat16` in `float`, rounded
//! once; the CPU kernel rounds after each addition), products as
//! `BatchMatMulV2` does.

use std::marker::PhantomData;

use opreg_op_logic::batch_matmul::BatchMatMulGeometry;
use opreg_op_logic::einsum::{Contraction, EinsumPlan, Equation, Gather, OperandLayout};
use opreg_standard_ops::Einsum;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext, constraint_types,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorShape, element_size};

use super::batch_matmul::{BatchedGemmPlan, run_batched};
use crate::array::{Mover, StridedPlan, entry, move_source, strided_parts};
use crate::gemm::GemmElement;
use crate::reduce::{ReduceFunctions, ReduceOp, acc_size, reduce_into, source_of};
use opreg_cuda::{GpuContext, GpuDevice, GpuTensors, gpu_ptr_mut};

/// The element size of `dtype`, or why the GPU's Einsum lacks it.
fn unit_of(dtype: DataType) -> Result<usize, KernelError> {
    element_size(dtype).ok_or_else(|| {
        KernelError::unimplemented(format!(
            "Einsum has no GPU kernel for {}",
            dtype.type_name()
        ))
    })
}

/// The sources a registration of [`EinsumGpu`] compiles, for each of its
/// types: `Sum`'s reduction source and the data-movement source of its
/// element size.
pub fn einsum_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    let mut sources = Vec::new();
    for &dtype in constraint_types(reg, "T").unwrap_or(&[]) {
        sources.push(source_of(ReduceOp::Sum, dtype)?);
        let unit = unit_of(dtype)?;
        sources.push(move_source(unit).ok_or_else(|| {
            KernelError::unimplemented(format!("no GPU copy kernel for {unit}-byte elements"))
        })?);
    }
    Ok(sources)
}

/// A strided gather (or scatter) of one step, planned on the host: its
/// launches ([`strided_parts`]) and the length of its dense side.
#[derive(Debug)]
struct Strided {
    parts: Vec<(usize, StridedPlan)>,
    len: usize,
}

impl Strided {
    /// `gather`, reading (or, for a scatter, writing) a tensor of
    /// `strided_len` elements.
    fn new(gather: &Gather, strided_len: usize) -> Result<Self, KernelError> {
        Ok(Self {
            parts: strided_parts("Einsum", strided_len, &gather.dims, &gather.steps)?,
            len: gather.len(),
        })
    }

    /// The gather of `gather` from a tensor of `len` elements, or `None`
    /// when it would copy the tensor as it is.
    fn unless_identity(gather: &Gather, len: usize) -> Result<Option<Self>, KernelError> {
        if gather.is_identity(len) {
            Ok(None)
        } else {
            Self::new(gather, len).map(Some)
        }
    }
}

/// One operand's steps: its gather (unless it is the identity) and the
/// `[outer, r]` sum of its summed labels (unless there is nothing to add).
#[derive(Debug)]
struct OperandSteps {
    gather: Option<Strided>,
    sum: Option<(usize, usize)>,
}

impl OperandSteps {
    fn new(layout: &OperandLayout, input_len: usize) -> Result<Self, KernelError> {
        let gather = Strided::unless_identity(&layout.gather, input_len)?;
        let kept: usize = layout.kept_dims().iter().product();
        let r = layout.summed_len();
        Ok(Self {
            gather,
            sum: (r > 1).then_some((kept, r)),
        })
    }

    fn is_empty(&self) -> bool {
        self.gather.is_none() && self.sum.is_none()
    }
}

/// The batched product of two operands: its geometry and cuBLAS plan, and
/// the gather of its result into the output's order (unless it is in it).
#[derive(Debug)]
struct ProductSteps {
    geometry: BatchMatMulGeometry,
    gemm: BatchedGemmPlan,
    to_output: Option<Strided>,
}

/// Everything a call does, planned (and checked) on the host before any
/// device work.
#[derive(Debug)]
struct Steps {
    operands: Vec<OperandSteps>,
    product: Option<ProductSteps>,
    inflate: Option<Strided>,
}

impl Steps {
    fn new(c: &Contraction, inputs: &[Tensor], out_len: usize) -> Result<Self, KernelError> {
        let operands = c
            .operands
            .iter()
            .zip(inputs)
            .map(|(layout, t)| OperandSteps::new(layout, t.num_elements()))
            .collect::<Result<Vec<_>, _>>()?;
        let product = match &c.product {
            None => None,
            Some(p) => {
                let geometry = BatchMatMulGeometry::new(&p.x_shape, &p.y_shape, false, false)?;
                let gemm = BatchedGemmPlan::new(&geometry, &p.x_shape, &p.y_shape, false, false)?;
                gemm.gemm.cublas_dims_of("Einsum")?;
                let len = geometry.out_shape.num_elements();
                Some(ProductSteps {
                    to_output: Strided::unless_identity(&p.to_output, len)?,
                    geometry,
                    gemm,
                })
            }
        };
        let inflate = match &c.inflate {
            Some(g) => Some(Strided::new(g, out_len)?),
            None => None,
        };
        Ok(Self {
            operands,
            product,
            inflate,
        })
    }
}

/// Where a step writes: the output when it is the last step, else a new
/// temporary of the kernel's device, kept until the call ends.
struct Buffers<'c, 'k> {
    ctx: &'c OpKernelContext<'k>,
    dtype: DataType,
    out: u64,
    temps: Vec<Tensor>,
}

impl Buffers<'_, '_> {
    fn destination(&mut self, last: bool, len: usize) -> Result<u64, KernelError> {
        if last {
            return Ok(self.out);
        }
        let mut temp = self.ctx.allocate_temp(self.dtype, [len])?;
        let ptr = gpu_ptr_mut(&mut temp)?;
        self.temps.push(temp);
        Ok(ptr)
    }
}

/// `Einsum` on the GPU (half, bfloat16, float, double: the types of the
/// GPU's `BatchMatMulV2`; TF's GPU kernel also has complex types, which
/// stay on the CPU here), from the CPU kernel's plan (see the module doc).
#[kernel(op = Einsum, device = GPU, T = [half, bfloat16, float, double], sources = einsum_sources)]
#[derive(Debug)]
pub struct EinsumGpu<T> {
    equation: Equation,
    gather: Mover,
    scatter: Mover,
    sum: ReduceFunctions,
    acc_size: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement> BuildKernel for EinsumGpu<T> {
    /// Parses the equation (TF's checks) and compiles (or finds cached)
    /// the gather, scatter and sum kernels for `T`.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let text: &str = ctx.attr("equation")?;
        let equation = Equation::parse(text)?;
        equation.check_inputs(ctx.input_types().len())?;
        let gpu = ctx.gpu()?;
        let acc = acc_size(ReduceOp::Sum, T::DTYPE).ok_or_else(|| {
            KernelError::unimplemented(format!(
                "Einsum has no GPU kernel for {}",
                T::DTYPE.type_name()
            ))
        })?;
        Ok(Self {
            equation,
            gather: Mover::new(ctx, T::DTYPE, entry::STRIDED)?,
            scatter: Mover::new(ctx, T::DTYPE, entry::SCATTER)?,
            sum: ReduceFunctions::new(gpu, &source_of(ReduceOp::Sum, T::DTYPE)?)?,
            acc_size: acc,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement> EinsumGpu<T> {
    /// Queues `s` from `x` to `y` with `mover` (a gather: `x` strided, `y`
    /// dense; a scatter: the converse).
    ///
    /// # Safety
    /// As [`Mover::strided_between`] for each part: `x` and `y` are device
    /// buffers of `T` on `gpu` holding, on the strided side, the length `s`
    /// was planned for, and on the dense side `s.len` elements.
    unsafe fn strided(
        &self,
        mover: &Mover,
        gpu: &GpuDevice,
        s: &Strided,
        x: u64,
        y: u64,
        scatter: bool,
    ) -> Result<(), KernelError> {
        let size = std::mem::size_of::<T>() as u64;
        for (offset, plan) in &s.parts {
            let dense = *offset as u64 * size;
            let (x, y) = if scatter {
                (x + dense, y)
            } else {
                (x, y + dense)
            };
            // SAFETY: the caller's contract; the part's dense elements
            // `offset..offset + plan.len` lie within the dense buffer's
            // `s.len` (strided_parts tiles them), its strided addresses
            // within the strided buffer's planned length.
            unsafe { mover.strided_between(gpu, x, y, plan, "launching Einsum's layout copy")? };
        }
        Ok(())
    }

    /// Queues one operand's steps from `x` (the device address of the input
    /// they were planned for), the last one writing the output when
    /// `last`; returns the address of the operand's result.
    fn operand(
        &self,
        buffers: &mut Buffers<'_, '_>,
        steps: &OperandSteps,
        x: u64,
        last: bool,
    ) -> Result<u64, KernelError> {
        let ctx = buffers.ctx;
        let gpu = ctx.gpu()?;
        let mut cur = x;
        if let Some(g) = &steps.gather {
            let dst = buffers.destination(last && steps.sum.is_none(), g.len)?;
            // SAFETY: `x` is the input the gather was planned for (its
            // length), `dst` a new buffer (or the output) of `g.len`.
            unsafe { self.strided(&self.gather, gpu, g, cur, dst, false)? };
            cur = dst;
        }
        if let Some((outer, r)) = steps.sum {
            let dst = buffers.destination(last, outer)?;
            reduce_into(ctx, &self.sum, cur, dst, (outer, r, 1), self.acc_size)?;
            cur = dst;
        }
        Ok(cur)
    }
}

impl<T: GemmElement> OpKernel for EinsumGpu<T> {
    /// Plans the call on the host (TF's checks and messages, as on the
    /// CPU), then queues its steps on the GPU.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let inputs: Vec<Tensor> = (0..ctx.num_inputs())
            .map(|i| ctx.input(i).cloned())
            .collect::<Result<_, _>>()?;
        let ptrs: Vec<u64> = (0..inputs.len())
            .map(|i| ctx.gpu_input(i, T::DTYPE))
            .collect::<Result<_, _>>()?;
        let shapes: Vec<&TensorShape> = inputs.iter().map(Tensor::shape).collect();
        let plan = EinsumPlan::new(&self.equation, &shapes)?;
        let out_shape = plan.out_shape.clone();
        let out_len = out_shape.num_elements();
        if out_len == 0 {
            ctx.allocate_output(0, out_shape)?;
            return Ok(());
        }
        if inputs.iter().any(|t| t.num_elements() == 0) {
            // Every label of the output has elements: an empty one is
            // summed over, and sums of nothing are zeros.
            let zeros = ctx.gpu()?.zeros(T::DTYPE, out_shape)?;
            return ctx.set_output(0, zeros);
        }
        let dims: Vec<&[usize]> = inputs.iter().map(Tensor::dims).collect();
        let contraction = Contraction::new(&plan, &dims)?;
        let steps = Steps::new(&contraction, &inputs, out_len)?;
        let single = steps.product.is_none();
        if single && steps.operands[0].is_empty() && steps.inflate.is_none() {
            // The input is the output as it is.
            return ctx.set_output(0, inputs[0].reshape(out_shape)?);
        }
        // The output: zeros to scatter into, or written whole by the last
        // step.
        if steps.inflate.is_some() {
            let zeros = ctx.gpu()?.zeros(T::DTYPE, out_shape)?;
            ctx.set_output(0, zeros)?;
        } else {
            ctx.allocate_output(0, out_shape)?;
        }
        let out = ctx.gpu_output(0)?;
        let ctx: &OpKernelContext<'_> = ctx;
        let gpu = ctx.gpu()?;
        let mut buffers = Buffers {
            ctx,
            dtype: T::DTYPE,
            out,
            temps: Vec::new(),
        };
        let no_inflate = steps.inflate.is_none();
        let result = match &steps.product {
            None => self.operand(&mut buffers, &steps.operands[0], ptrs[0], no_inflate)?,
            Some(p) => {
                let x = self.operand(&mut buffers, &steps.operands[0], ptrs[0], false)?;
                let y = self.operand(&mut buffers, &steps.operands[1], ptrs[1], false)?;
                let len = p.geometry.out_shape.num_elements();
                let product = buffers.destination(no_inflate && p.to_output.is_none(), len)?;
                // SAFETY: x and y hold the operands laid out as the
                // geometry's `[batch..., m, k]` and `[batch..., k, n]` (their
                // steps' results, of `len` elements each), `product` is a
                // new buffer (or the output) of the product's elements; all
                // are on this GPU's stream, and none overlap.
                unsafe { run_batched::<T>(gpu, &p.geometry, &p.gemm, [x, y, product], "Einsum")? };
                match &p.to_output {
                    None => product,
                    Some(g) => {
                        let dst = buffers.destination(no_inflate, g.len)?;
                        // SAFETY: `product` holds the product it was planned
                        // for, `dst` is new (or the output) of `g.len`.
                        unsafe { self.strided(&self.gather, gpu, g, product, dst, false)? };
                        dst
                    }
                }
            }
        };
        if let Some(s) = &steps.inflate {
            // SAFETY: `result` holds the `s.len` elements of the result
            // (each output label once); the scatter's addresses were proved
            // inside the output, which it was planned for, and are
            // distinct (each sums the strides of distinct output axes).
            unsafe { self.strided(&self.scatter, gpu, s, result, out, true)? };
        }
        Ok(())
    }
}
