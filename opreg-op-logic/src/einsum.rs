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

use std::collections::BTreeMap;

use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;

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
