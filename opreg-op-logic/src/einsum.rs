//! `Einsum`'s equation (TF's `ValidateEinsumEquation` and
//! `ValidateEinsumEllipsis`, with their messages) and, for concrete input
//! shapes, the plan its kernels follow: every axis of every operand named by
//! a [`Label`] (the axes under an ellipsis by broadcast labels, aligned from
//! the right), each label's size, and the output's labels and shape.
//!
//! ```
//! use opreg_op_logic::einsum::{Equation, EinsumPlan};
//! use registry_core::tensor::TensorShape;
//!
//! let eq = Equation::parse("...ij,...jk->...ik").unwrap();
//! let x = TensorShape::new([2, 1, 3, 4]).unwrap();
//! let y = TensorShape::new([5, 4, 6]).unwrap();
//! let plan = EinsumPlan::new(&eq, &[&x, &y]).unwrap();
//! assert_eq!(plan.out_shape.dims(), &[2, 5, 3, 6]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;

use crate::index::strides;

/// The name of an axis: a letter of the equation, or the `i`-th of the
/// dimensions an ellipsis stands for, counted from the innermost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    /// A named label (a character of the equation).
    Named(char),
    /// A broadcast dimension under `...` (0 = the one just before the
    /// labels that follow the ellipsis).
    Broadcast(usize),
}

/// One operand's (or the output's) subscripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscripts {
    /// The text, as in the equation.
    pub text: String,
    /// The labels before the ellipsis (all of them without one).
    pub before: Vec<char>,
    /// Whether there is an ellipsis.
    pub ellipsis: bool,
    /// The labels after the ellipsis.
    pub after: Vec<char>,
}

impl Subscripts {
    /// TF's `ValidateEinsumEllipsis`: at most one ellipsis, and no other
    /// periods.
    fn parse(text: &str) -> Result<Self, KernelError> {
        let periods = text.matches('.').count();
        registry_core::kernel_ensure!(
            periods == 0 || periods == 3,
            "Expected at most one ellipsis (...), but found {periods} periods (.) in the input subscript: {text}"
        );
        registry_core::kernel_ensure!(
            periods == 0 || text.contains("..."),
            "Periods found outside of ellipsis in subscript: {text}"
        );
        let (before, after, ellipsis) = match text.split_once("...") {
            Some((b, a)) => (b, a, true),
            None => (text, "", false),
        };
        Ok(Self {
            text: text.to_owned(),
            before: before.chars().collect(),
            ellipsis,
            after: after.chars().collect(),
        })
    }

    /// The number of named labels.
    pub fn named(&self) -> usize {
        self.before.len() + self.after.len()
    }
}

/// A validated equation: one or two inputs' subscripts and the output's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Equation {
    /// The equation's text.
    pub text: String,
    /// Each input's subscripts.
    pub inputs: Vec<Subscripts>,
    /// The output's subscripts.
    pub output: Subscripts,
}

impl Equation {
    /// Parses `equation` (TF's `ValidateEinsumEquation`, with its messages):
    /// exactly one `->`, one or two comma-separated inputs, at most one
    /// ellipsis in each part.
    pub fn parse(equation: &str) -> Result<Self, KernelError> {
        let parts: Vec<&str> = equation.split("->").collect();
        registry_core::kernel_ensure!(
            parts.len() == 2,
            "Expecting exactly one '->' in einsum equation: {equation}"
        );
        let inputs: Vec<&str> = parts[0].split(',').collect();
        registry_core::kernel_ensure!(
            inputs.len() == 1 || inputs.len() == 2,
            "Expecting 1 or 2 input subscripts in equation '{equation}' but got: {}",
            inputs.len()
        );
        Ok(Self {
            text: equation.to_owned(),
            inputs: inputs
                .into_iter()
                .map(Subscripts::parse)
                .collect::<Result<_, _>>()?,
            output: Subscripts::parse(parts[1])?,
        })
    }

    /// Checks the number of inputs against the equation's.
    pub fn check_inputs(&self, n: usize) -> Result<(), KernelError> {
        registry_core::kernel_ensure!(
            n == self.inputs.len(),
            "Expected {} inputs for equation {} but got: {n}",
            self.inputs.len(),
            self.text
        );
        Ok(())
    }
}

/// The labels of each axis of an operand of rank `rank` with subscripts
/// `s` (`None` when the rank does not fit them).
fn axis_labels(s: &Subscripts, rank: usize) -> Option<Vec<Label>> {
    let named = s.named();
    if (!s.ellipsis && rank != named) || rank < named {
        return None;
    }
    let broadcast = rank - named;
    let mut labels: Vec<Label> = s.before.iter().map(|&c| Label::Named(c)).collect();
    labels.extend((0..broadcast).rev().map(Label::Broadcast));
    labels.extend(s.after.iter().map(|&c| Label::Named(c)));
    Some(labels)
}

/// An einsum on concrete shapes (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EinsumPlan {
    /// The labels of each input's axes.
    pub inputs: Vec<Vec<Label>>,
    /// The output's labels, in output order.
    pub output: Vec<Label>,
    /// The size of each label (broadcast labels: the broadcast size).
    pub sizes: BTreeMap<Label, usize>,
    /// The output's shape.
    pub out_shape: TensorShape,
}

impl EinsumPlan {
    /// Checks `shapes` against `eq` (ranks, equal sizes of a named label,
    /// broadcastable ellipsis dimensions, output labels found in the
    /// inputs), with TF's messages.
    pub fn new(eq: &Equation, shapes: &[&TensorShape]) -> Result<Self, KernelError> {
        eq.check_inputs(shapes.len())?;
        let mut inputs = Vec::with_capacity(shapes.len());
        let mut sizes: BTreeMap<Label, usize> = BTreeMap::new();
        let mut broadcast_rank = 0;
        for (i, (s, shape)) in eq.inputs.iter().zip(shapes).enumerate() {
            let labels = axis_labels(s, shape.rank()).ok_or_else(|| {
                KernelError::invalid_argument(if s.ellipsis {
                    format!(
                        "Input {i} to einsum has rank {} but the subscript '{}' needs at least {} dimensions",
                        shape.rank(),
                        s.text,
                        s.named()
                    )
                } else {
                    format!(
                        "Expected input {i} to have rank {} but got: {}",
                        s.named(),
                        shape.rank()
                    )
                })
            })?;
            for (axis, (&label, &size)) in labels.iter().zip(shape.dims()).enumerate() {
                match label {
                    Label::Broadcast(b) => {
                        broadcast_rank = broadcast_rank.max(b + 1);
                        let entry = sizes.entry(label).or_insert(size);
                        if *entry == 1 {
                            *entry = size;
                        } else if size != 1 && size != *entry {
                            return Err(KernelError::invalid_argument(format!(
                                "Expected input {i} to be broadcastable: dimension {axis} of shape {shape} is {size}, which does not broadcast with {entry}"
                            )));
                        }
                    }
                    Label::Named(c) => {
                        let entry = sizes.entry(label).or_insert(size);
                        registry_core::kernel_ensure!(
                            *entry == size,
                            "Expected dimension {entry} at axis {axis} of the input shaped {shape} but got dimension {size} (label '{c}')"
                        );
                    }
                }
            }
            inputs.push(labels);
        }
        let mut output = Vec::new();
        for &c in &eq.output.before {
            output.push(Label::Named(c));
        }
        if eq.output.ellipsis {
            output.extend((0..broadcast_rank).rev().map(Label::Broadcast));
        } else {
            let nonempty = (0..broadcast_rank).any(|b| sizes[&Label::Broadcast(b)] != 1);
            registry_core::kernel_ensure!(
                !nonempty,
                "Output subscripts of equation '{}' have no ellipsis (...) but the inputs have non-empty broadcasting dimensions",
                eq.text
            );
        }
        for &c in &eq.output.after {
            output.push(Label::Named(c));
        }
        let mut out_dims = Vec::with_capacity(output.len());
        // A label may repeat in the output (`ij->ii`): TF places the
        // values on that diagonal and zeros elsewhere.
        for label in &output {
            let size = sizes.get(label).ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Einsum output subscripts for equation '{}' has label '{}' which is not present in the input subscripts",
                    eq.text,
                    match label {
                        Label::Named(c) => *c,
                        Label::Broadcast(_) => '.',
                    }
                ))
            })?;
            out_dims.push(*size);
        }
        Ok(Self {
            inputs,
            output,
            sizes,
            out_shape: TensorShape::new(&out_dims)?,
        })
    }

    /// The size of `label`.
    pub fn size(&self, label: Label) -> usize {
        self.sizes.get(&label).copied().unwrap_or(1)
    }

    /// The output elements one step of each of `labels` moves by: the sum
    /// of the row-major strides of the output axes it labels (several when
    /// a label repeats in the output, as `i` in `ij->iij`).
    pub fn output_steps(&self, labels: &[Label]) -> Vec<i64> {
        let out_strides = row_major_steps(self.out_shape.dims());
        labels
            .iter()
            .map(|&l| {
                self.output
                    .iter()
                    .zip(&out_strides)
                    .filter(|(m, _)| **m == l)
                    .map(|(_, &s)| s)
                    .sum()
            })
            .collect()
    }
}

/// The labels of `labels`, each once, in order of first appearance.
pub fn unique_labels(labels: &[Label]) -> Vec<Label> {
    let mut seen = BTreeSet::new();
    labels.iter().copied().filter(|&l| seen.insert(l)).collect()
}

/// Row-major element strides of `dims`, as steps.
fn row_major_steps(dims: &[usize]) -> Vec<i64> {
    strides(dims).iter().map(|&s| s as i64).collect()
}

/// A strided gather of a row-major tensor: element `i` of the result (of
/// dimensions `dims`, row-major) is element `Σ idx[d] · steps[d]` of the
/// source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gather {
    /// The result's dimensions.
    pub dims: Vec<usize>,
    /// The source step of each dimension, in elements.
    pub steps: Vec<i64>,
}

impl Gather {
    /// The gather of a tensor of dimensions `dims` whose axes carry
    /// `labels` into label order `order`: a label found on several axes
    /// reads their diagonal (its step is the sum of theirs), a label not
    /// found has size 1.
    pub fn new(dims: &[usize], labels: &[Label], order: &[Label]) -> Self {
        let row_steps = row_major_steps(dims);
        let (dims, steps) = order
            .iter()
            .map(|&l| {
                labels
                    .iter()
                    .zip(dims.iter().zip(&row_steps))
                    .filter(|(m, _)| **m == l)
                    .fold((1, 0), |(_, step), (_, (&size, &stride))| {
                        (size, step + stride)
                    })
            })
            .unzip();
        Self { dims, steps }
    }

    /// The number of elements of the result.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Whether the result is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the result is the source as it is (the same elements in the
    /// same order): every dimension of more than one element steps as the
    /// row-major layout of `dims` does, and the source has `source_len`
    /// elements, as many as the result.
    pub fn is_identity(&self, source_len: usize) -> bool {
        let row_steps = row_major_steps(&self.dims);
        self.len() == source_len
            && self
                .dims
                .iter()
                .zip(self.steps.iter().zip(&row_steps))
                .all(|(&d, (s, r))| d == 1 || s == r)
    }
}

/// One operand laid out for the contraction: its gather into the labels it
/// keeps followed by those only it has (which are then summed out, the
/// last `summed` dimensions of the gather).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandLayout {
    /// The gather of the operand (kept labels, then summed ones).
    pub gather: Gather,
    /// The labels it keeps, in the gather's order.
    pub kept: Vec<Label>,
    /// How many trailing dimensions of the gather are summed out.
    pub summed: usize,
}

impl OperandLayout {
    /// The dimensions it keeps.
    pub fn kept_dims(&self) -> &[usize] {
        &self.gather.dims[..self.kept.len()]
    }

    /// The number of elements each kept element sums (1 when nothing is
    /// summed).
    pub fn summed_len(&self) -> usize {
        self.gather.dims[self.kept.len()..].iter().product()
    }
}

/// The batched matrix product of two operands laid out as `x: [batch...,
/// m, k]` and `y: [batch..., k, n]` (`BatchMatMulV2` without adjoints, the
/// batch dimensions broadcasting), whose result `[batch..., m, n]` has the
/// labels `labels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    /// The shape of `x`.
    pub x_shape: TensorShape,
    /// The shape of `y`.
    pub y_shape: TensorShape,
    /// The result's labels: the batch labels, `x`'s free labels, `y`'s.
    pub labels: Vec<Label>,
    /// The gather of the result into the output's labels (each once).
    pub to_output: Gather,
}

/// How `Einsum` computes a plan (TF's `EinsumOp`): each operand takes its
/// diagonals and sums out the labels no other operand and not the output
/// has ([`OperandLayout`]); one operand is then the result; two are
/// multiplied as a batched matrix product ([`Product`]) whose result is
/// laid out in the output's order. The result has each output label once;
/// where a label repeats in the output, the result goes on that diagonal of
/// a zero output ([`Contraction::inflate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contraction {
    /// The output's labels, each once, in output order: the result's.
    pub labels: Vec<Label>,
    /// Each operand's layout: for one operand, its kept labels are
    /// `labels`; for two, `x` keeps `[batch, free x, contracted]` and `y`
    /// `[batch, contracted, free y]`.
    pub operands: Vec<OperandLayout>,
    /// The product of two operands.
    pub product: Option<Product>,
    /// Where a label repeats in the output: the result scattered into the
    /// zero output, result element `i` (row-major over the result's
    /// dimensions) to output element `Σ idx[d] · steps[d]`.
    pub inflate: Option<Gather>,
}

impl Contraction {
    /// The contraction of `plan`, whose inputs have dimensions `dims`.
    pub fn new(plan: &EinsumPlan, dims: &[&[usize]]) -> Result<Self, KernelError> {
        registry_core::kernel_ensure!(
            dims.len() == plan.inputs.len() && (1..=2).contains(&dims.len()),
            "Einsum: {} input shapes for a plan of {} inputs",
            dims.len(),
            plan.inputs.len()
        );
        let labels = unique_labels(&plan.output);
        let layout = |i: usize, kept: Vec<Label>| {
            let own = &plan.inputs[i];
            let elsewhere = |l: &Label| {
                labels.contains(l)
                    || plan
                        .inputs
                        .iter()
                        .enumerate()
                        .any(|(j, other)| j != i && other.contains(l))
            };
            let summed: Vec<Label> = unique_labels(own)
                .into_iter()
                .filter(|l| !elsewhere(l))
                .collect();
            let order = [&kept[..], &summed].concat();
            OperandLayout {
                gather: Gather::new(dims[i], own, &order),
                kept,
                summed: summed.len(),
            }
        };
        let inflate = (labels.len() != plan.output.len()).then(|| Gather {
            dims: labels.iter().map(|&l| plan.size(l)).collect(),
            steps: plan.output_steps(&labels),
        });
        if dims.len() == 1 {
            return Ok(Self {
                operands: vec![layout(0, labels.clone())],
                labels,
                product: None,
                inflate,
            });
        }
        let (x, y) = (&plan.inputs[0], &plan.inputs[1]);
        let pick = |keep: &dyn Fn(&Label) -> bool| -> Vec<Label> {
            labels.iter().copied().filter(|l| keep(l)).collect()
        };
        let batch = pick(&|l| x.contains(l) && y.contains(l));
        let free_x = pick(&|l| x.contains(l) && !y.contains(l));
        let free_y = pick(&|l| y.contains(l) && !x.contains(l));
        let contracted: Vec<Label> = unique_labels(x)
            .into_iter()
            .filter(|l| y.contains(l) && !labels.contains(l))
            .collect();
        let lx = layout(0, [&batch[..], &free_x, &contracted].concat());
        let ly = layout(1, [&batch[..], &contracted, &free_y].concat());
        let nb = batch.len();
        let product_of = |d: &[usize]| d.iter().product::<usize>();
        let (xd, yd) = (lx.kept_dims(), ly.kept_dims());
        let (m, k) = (
            product_of(&xd[nb..nb + free_x.len()]),
            product_of(&xd[nb + free_x.len()..]),
        );
        let n = product_of(&yd[nb + contracted.len()..]);
        let x_shape = TensorShape::new([&xd[..nb], &[m, k][..]].concat())?;
        let y_shape = TensorShape::new([&yd[..nb], &[k, n][..]].concat())?;
        let product_labels = [&batch[..], &free_x, &free_y].concat();
        let product_dims: Vec<usize> = product_labels.iter().map(|&l| plan.size(l)).collect();
        Ok(Self {
            operands: vec![lx, ly],
            product: Some(Product {
                x_shape,
                y_shape,
                to_output: Gather::new(&product_dims, &product_labels, &labels),
                labels: product_labels,
            }),
            labels,
            inflate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn parses_and_reports_as_tensorflow() {
        let eq = Equation::parse("ab...c,cd->...d").unwrap();
        assert_eq!(eq.inputs[0].before, vec!['a', 'b']);
        assert!(eq.inputs[0].ellipsis && eq.output.ellipsis);
        let e = Equation::parse("ij,jk").unwrap_err();
        assert!(
            e.to_string()
                .contains("Expecting exactly one '->' in einsum equation: ij,jk")
        );
        let e = Equation::parse("i,j,k->ijk").unwrap_err();
        assert!(
            e.to_string().contains("Expecting 1 or 2 input subscripts"),
            "{e}"
        );
        let e = Equation::parse("i..j->ij").unwrap_err();
        assert!(e.to_string().contains("found 2 periods"), "{e}");
        let e = Equation::parse("i.j.k.->ij").unwrap_err();
        assert!(
            e.to_string().contains("Periods found outside of ellipsis"),
            "{e}"
        );
    }

    fn contraction(eq: &str, shapes: &[&[usize]]) -> Contraction {
        let eq = Equation::parse(eq).unwrap();
        let shapes: Vec<TensorShape> = shapes.iter().map(|d| shape(d)).collect();
        let refs: Vec<&TensorShape> = shapes.iter().collect();
        let plan = EinsumPlan::new(&eq, &refs).unwrap();
        let dims: Vec<&[usize]> = shapes.iter().map(TensorShape::dims).collect();
        Contraction::new(&plan, &dims).unwrap()
    }

    #[test]
    fn gathers_read_diagonals_and_detect_identities() {
        let (i, j) = (Label::Named('i'), Label::Named('j'));
        let g = Gather::new(&[3, 3], &[i, i], &[i]);
        assert_eq!((g.dims.clone(), g.steps.clone()), (vec![3], vec![4]));
        assert!(!g.is_identity(9));
        let g = Gather::new(&[2, 3], &[i, j], &[j, i]);
        assert_eq!((g.dims.clone(), g.steps.clone()), (vec![3, 2], vec![1, 3]));
        assert!(!g.is_identity(6));
        assert!(Gather::new(&[2, 3], &[i, j], &[i, j]).is_identity(6));
        // A size-1 dimension may step anywhere.
        assert!(Gather::new(&[1, 3], &[i, j], &[j, i]).is_identity(3));
        // A label the operand lacks has size 1.
        let g = Gather::new(&[2], &[i], &[j, i]);
        assert_eq!((g.dims.clone(), g.steps.clone()), (vec![1, 2], vec![0, 1]));
    }

    #[test]
    fn contractions_plan_operands_product_and_inflation() {
        let (b, i, j, k) = (
            Label::Named('b'),
            Label::Named('i'),
            Label::Named('j'),
            Label::Named('k'),
        );
        // A batched matrix product with a summed label in x.
        let c = contraction("bij,bjk->bki", &[&[2, 3, 4], &[2, 4, 5]]);
        assert_eq!(c.labels, vec![b, k, i]);
        assert_eq!(c.operands[0].kept, vec![b, i, j]);
        assert_eq!(c.operands[1].kept, vec![b, j, k]);
        let p = c.product.as_ref().unwrap();
        assert_eq!(p.x_shape.dims(), &[2, 3, 4]);
        assert_eq!(p.y_shape.dims(), &[2, 4, 5]);
        assert_eq!(p.labels, vec![b, i, k]);
        assert_eq!(p.to_output.dims, vec![2, 5, 3]);
        assert!(c.inflate.is_none());
        // Labels only one operand has are summed out first.
        let c = contraction("ijz,jk->ik", &[&[3, 4, 6], &[4, 5]]);
        assert_eq!(c.operands[0].summed, 1);
        assert_eq!(c.operands[0].summed_len(), 6);
        assert_eq!(c.operands[0].kept_dims(), &[3, 4]);
        assert!(c.product.unwrap().to_output.is_identity(15));
        // One operand: a trace, then a repeated output label.
        let c = contraction("ii->", &[&[3, 3]]);
        assert_eq!(c.operands[0].gather.dims, vec![3]);
        assert_eq!(c.operands[0].summed, 1);
        let c = contraction("ij->iij", &[&[2, 3]]);
        let inflate = c.inflate.unwrap();
        assert_eq!((inflate.dims, inflate.steps), (vec![2, 3], vec![9, 1]));
        // Broadcast batch dimensions keep each operand's own size; one only
        // x has is a free label of x.
        let c = contraction("...ij,...jk->...ik", &[&[2, 1, 3, 4], &[5, 4, 6]]);
        let p = c.product.unwrap();
        assert_eq!(p.x_shape.dims(), &[1, 6, 4]);
        assert_eq!(p.y_shape.dims(), &[5, 4, 6]);
        assert_eq!(p.to_output.dims, vec![2, 5, 3, 6]);
    }

    #[test]
    fn plans_labels_and_sizes() {
        let eq = Equation::parse("ii->i").unwrap();
        let plan = EinsumPlan::new(&eq, &[&shape(&[3, 3])]).unwrap();
        assert_eq!(plan.out_shape.dims(), &[3]);
        assert!(EinsumPlan::new(&eq, &[&shape(&[3, 4])]).is_err());
        let eq = Equation::parse("...ij,...jk->...ik").unwrap();
        let plan = EinsumPlan::new(&eq, &[&shape(&[4, 1, 2, 3]), &shape(&[5, 3, 2])]).unwrap();
        assert_eq!(plan.out_shape.dims(), &[4, 5, 2, 2]);
        assert!(EinsumPlan::new(&eq, &[&shape(&[4, 2, 3]), &shape(&[5, 3, 2])]).is_err());
        let eq = Equation::parse("ij->kj").unwrap();
        let e = EinsumPlan::new(&eq, &[&shape(&[2, 3])]).unwrap_err();
        assert!(
            e.to_string().contains("has label 'k' which is not present"),
            "{e}"
        );
    }
}
