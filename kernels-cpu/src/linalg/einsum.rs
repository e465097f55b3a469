//! `Einsum` on the CPU, as TF's `EinsumOp` computes it: the equation and
//! the shapes are planned by [`opreg_op_logic::einsum`]; then each operand
//! takes its diagonal where a label repeats and sums out the labels no other
//! operand and not the output has (one strided gather, then contiguous
//! sums); a single operand is then the output; two are laid out as
//! `[batch, free, contracted]` and `[batch, contracted, free]` and
//! multiplied by the batched product of `BatchMatMulV2` (broadcasting the
//! ellipsis dimensions), whose result is laid out in the output's order.

use std::marker::PhantomData;

use opreg_op_logic::batch_matmul::BatchMatMulGeometry;
use opreg_op_logic::einsum::{EinsumPlan, Equation, Label, unique_labels as unique};
use opreg_standard_ops::Einsum;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Tensor, TensorShape};

use super::batch_matmul::{BatchElement, batch_matmul};
use crate::array::elements::ElementOp;
use crate::array::strided::StridedPlan;
use crate::numeric::Number;

/// An element type `Einsum` computes on.
pub(crate) trait EinsumElement: BatchElement + Number {}
impl<T: BatchElement + Number> EinsumElement for T {}

/// A dense row-major operand with a label per axis.
struct Operand<T> {
    data: Vec<T>,
    dims: Vec<usize>,
    labels: Vec<Label>,
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<i64> {
    let mut s = vec![0i64; dims.len()];
    let mut acc = 1i64;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc = acc.saturating_mul(dims[d] as i64);
    }
    s
}

/// Lays `src` (labels `labels`, dims `dims`) out as `keep` followed by
/// `summed` (labels of `labels`, each once): one strided gather, in which
/// a repeated label reads the diagonal; then the `summed` labels are added
/// up, leaving an operand with labels `keep`.
fn relayout<T: EinsumElement>(
    src: &[T],
    dims: &[usize],
    labels: &[Label],
    keep: &[Label],
    summed: &[Label],
) -> Result<Operand<T>, KernelError> {
    let src_strides = strides(dims);
    let axis_of = |l: Label| -> (usize, i64) {
        let mut size = 1;
        let mut step = 0;
        for (i, &lab) in labels.iter().enumerate() {
            if lab == l {
                size = dims[i];
                step += src_strides[i];
            }
        }
        (size, step)
    };
    let order: Vec<Label> = keep.iter().chain(summed).copied().collect();
    let (out_dims, steps): (Vec<usize>, Vec<i64>) = order.iter().map(|&l| axis_of(l)).unzip();
    let total: usize = out_dims.iter().product();
    let plan = StridedPlan::new(src.len(), 0, &out_dims, &steps)?;
    let mut gathered = vec![T::default(); total];
    plan.run(&[src], &mut gathered)?;
    let keep_dims: Vec<usize> = out_dims[..keep.len()].to_vec();
    let run: usize = out_dims[keep.len()..].iter().product();
    let data = if summed.is_empty() || run == 1 {
        gathered
    } else if run == 0 {
        vec![T::ZERO; keep_dims.iter().product()]
    } else {
        gathered
            .chunks_exact(run)
            .map(|c| c.iter().fold(T::ZERO, |a, &v| a.add_wrap(v)))
            .collect()
    };
    Ok(Operand {
        data,
        dims: keep_dims,
        labels: keep.to_vec(),
    })
}

/// The einsum of `inputs` by `plan`, as a dense output: computed with each
/// output label once, then placed on the output's diagonals where a label
/// repeats (TF's `StridedInflate`; zeros elsewhere).
fn einsum<T: EinsumElement>(plan: &EinsumPlan, inputs: &[&Tensor]) -> Result<Vec<T>, KernelError> {
    let unique_out = unique(&plan.output);
    let result = contract(plan, inputs, &unique_out)?;
    if unique_out.len() == plan.output.len() {
        return Ok(result);
    }
    Ok(inflate(plan, &unique_out, &result))
}

/// Writes `result` (labels `labels`, each once) into a zero output whose
/// axes are `plan.output` (labels repeating): element `(.., l = v, ..)`
/// goes where every axis labelled `l` is `v`.
fn inflate<T: EinsumElement>(plan: &EinsumPlan, labels: &[Label], result: &[T]) -> Vec<T> {
    let steps: Vec<usize> = plan
        .output_steps(labels)
        .into_iter()
        .map(|s| s as usize)
        .collect();
    let sizes: Vec<usize> = labels.iter().map(|&l| plan.size(l)).collect();
    let mut out = vec![T::ZERO; plan.out_shape.num_elements()];
    let mut index = vec![0usize; labels.len()];
    for &v in result {
        let at: usize = index.iter().zip(&steps).map(|(i, s)| i * s).sum();
        if let Some(slot) = out.get_mut(at) {
            *slot = v;
        }
        // The next index, last label fastest (row-major).
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < sizes[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// The einsum of `inputs` by `plan` with output labels `out_labels` (each
/// once), as a dense output.
fn contract<T: EinsumElement>(
    plan: &EinsumPlan,
    inputs: &[&Tensor],
    out_labels: &[Label],
) -> Result<Vec<T>, KernelError> {
    // Each operand: its own diagonal, and the labels only it has summed out.
    let mut operands = Vec::with_capacity(inputs.len());
    for (i, (t, labels)) in inputs.iter().zip(&plan.inputs).enumerate() {
        let elsewhere = |l: &Label| {
            out_labels.contains(l)
                || plan
                    .inputs
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != i && other.contains(l))
        };
        let all = unique(labels);
        let keep: Vec<Label> = if inputs.len() == 1 {
            out_labels.to_vec()
        } else {
            all.iter().copied().filter(|l| elsewhere(l)).collect()
        };
        let summed: Vec<Label> = all.iter().copied().filter(|l| !elsewhere(l)).collect();
        operands.push(relayout(
            t.as_slice::<T>()?,
            t.dims(),
            labels,
            &keep,
            &summed,
        )?);
    }
    if operands.len() == 1 {
        return Ok(operands.remove(0).data);
    }
    let (x, y) = (&operands[0], &operands[1]);
    let size_in = |op: &Operand<T>, l: Label| {
        op.labels
            .iter()
            .position(|&m| m == l)
            .map_or(1, |i| op.dims[i])
    };
    let batch: Vec<Label> = out_labels
        .iter()
        .copied()
        .filter(|l| x.labels.contains(l) && y.labels.contains(l))
        .collect();
    let free_x: Vec<Label> = out_labels
        .iter()
        .copied()
        .filter(|l| x.labels.contains(l) && !y.labels.contains(l))
        .collect();
    let free_y: Vec<Label> = out_labels
        .iter()
        .copied()
        .filter(|l| y.labels.contains(l) && !x.labels.contains(l))
        .collect();
    let contract: Vec<Label> = x
        .labels
        .iter()
        .copied()
        .filter(|l| y.labels.contains(l) && !out_labels.contains(l))
        .collect();
    let xs = [&batch[..], &free_x, &contract].concat();
    let ys = [&batch[..], &contract, &free_y].concat();
    let x2 = relayout(&x.data, &x.dims, &x.labels, &xs, &[])?;
    let y2 = relayout(&y.data, &y.dims, &y.labels, &ys, &[])?;
    let m: usize = free_x.iter().map(|&l| size_in(x, l)).product();
    let n: usize = free_y.iter().map(|&l| size_in(y, l)).product();
    let k: usize = contract.iter().map(|&l| size_in(x, l)).product();
    let mut x_shape: Vec<usize> = batch.iter().map(|&l| size_in(x, l)).collect();
    let mut y_shape: Vec<usize> = batch.iter().map(|&l| size_in(y, l)).collect();
    x_shape.extend([m, k]);
    y_shape.extend([k, n]);
    let g = BatchMatMulGeometry::new(
        &TensorShape::new(&x_shape)?,
        &TensorShape::new(&y_shape)?,
        false,
        false,
    )?;
    let mut product = vec![T::default(); g.out_shape.num_elements()];
    batch_matmul(&g, &x2.data, &y2.data, false, false, &mut product)?;
    // The product's labels: batch (broadcast sizes), free x, free y.
    let product_labels: Vec<Label> = [&batch[..], &free_x, &free_y].concat();
    let product_dims: Vec<usize> = product_labels.iter().map(|&l| plan.size(l)).collect();
    Ok(relayout(&product, &product_dims, &product_labels, out_labels, &[])?.data)
}

/// `Einsum` on the CPU, for every type TF's CPU kernel has.
#[kernel(
    op = Einsum,
    device = CPU,
    T = [bfloat16, half, float, double, int32, int64, complex64, complex128]
)]
#[derive(Debug)]
pub struct EinsumKernel<T> {
    equation: Equation,
    _t: PhantomData<fn() -> T>,
}

impl<T: EinsumElement> BuildKernel for EinsumKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let text: &str = ctx.attr("equation")?;
        let equation = Equation::parse(text)?;
        equation.check_inputs(ctx.input_types().len())?;
        Ok(Self {
            equation,
            _t: PhantomData,
        })
    }
}

impl<T: EinsumElement> OpKernel for EinsumKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let inputs: Vec<Tensor> = (0..ctx.num_inputs())
            .map(|i| ctx.input(i).cloned())
            .collect::<Result<_, _>>()?;
        let shapes: Vec<&TensorShape> = inputs.iter().map(Tensor::shape).collect();
        let plan = EinsumPlan::new(&self.equation, &shapes)?;
        let refs: Vec<&Tensor> = inputs.iter().collect();
        let result = einsum::<T>(&plan, &refs)?;
        let out = ctx.allocate_output(0, plan.out_shape.clone())?;
        out.as_mut_slice::<T>()?.copy_from_slice(&result);
        Ok(())
    }
}
