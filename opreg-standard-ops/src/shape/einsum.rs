//! The shape function of `Einsum` (TF's `EinsumShape`).

use std::collections::HashMap;

use opreg_op_logic::einsum::{Equation, Subscripts};
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// `Einsum` (TF's `EinsumShape`): each input's rank fits its subscripts
/// (exactly, or at least the named labels with an ellipsis); a label's
/// dimensions merge across the inputs; the ellipsis dimensions of two
/// inputs broadcast; the output takes each output label's dimension and
/// the broadcast dimensions at its ellipsis (an output without an ellipsis
/// needs empty broadcast dimensions).
pub fn einsum(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let equation = c.attr::<&str>("equation")?;
    let eq = Equation::parse(equation).map_err(|e| c.invalid_attr("equation", e.to_string()))?;
    let n = c.num_inputs();
    if n == 0 || n > 2 {
        return Err(c.error(ShapeError::invalid_argument(format!(
            "Expected either 1 or 2 inputs but got: {n}"
        ))));
    }
    eq.check_inputs(n)
        .map_err(|e| c.error(ShapeError::invalid_argument(e.to_string())))?;
    let mut dims: HashMap<char, Dim> = HashMap::new();
    let mut broadcast = Vec::with_capacity(n);
    for (i, s) in eq.inputs.iter().enumerate() {
        let mut input = c.input(i)?.clone();
        if input.is_rank_known() {
            let checked = if s.ellipsis {
                input.with_rank_at_least(s.named())
            } else {
                input.with_rank(s.named())
            };
            input = checked.map_err(|e| {
                c.error(ShapeError::invalid_argument(format!(
                    "{e}\n\t for {i}th input and equation: {equation}"
                )))
            })?;
        }
        broadcast.push(input_broadcast(&input, s)?);
        let rank = input.rank();
        let labels = s.before.iter().enumerate().map(|(k, &l)| (l, k as i64));
        let after = s.after.iter().enumerate().map(|(k, &l)| {
            let from_end = (s.after.len() - k) as i64;
            (l, rank.map_or(-1, |r| r as i64 - from_end))
        });
        for (label, axis) in labels.chain(after) {
            let dim = match rank {
                Some(_) => input.dim(axis)?,
                None => Dim::UNKNOWN,
            };
            let merged = match dims.get(&label) {
                Some(&seen) => seen.merge(dim).map_err(|e| c.error(e))?,
                None => dim,
            };
            dims.insert(label, merged);
        }
    }
    let mut out_broadcast = match broadcast.as_slice() {
        [one] => one.clone(),
        [a, b] => a.broadcast(b).map_err(|e| c.error(e))?,
        _ => Shape::unknown(),
    };
    if eq.output.ellipsis {
        if !out_broadcast.is_rank_known() {
            return c.set_output(0, Shape::unknown());
        }
    } else {
        out_broadcast.with_rank_at_most(0).map_err(|e| {
            c.error(ShapeError::invalid_argument(format!(
                "{e}\n\t for einsum equation '{equation}' without ellipsis (...) in the output subscripts where input(s) have non-empty broadcasting shape"
            )))
        })?;
        out_broadcast = Shape::new([]);
    }
    let label_dim = |label: char| {
        dims.get(&label).copied().ok_or_else(|| {
            c.error(ShapeError::invalid_argument(format!(
                "Einsum output subscripts for equation '{equation}' has label '{label}' which is not present in the input subscripts"
            )))
        })
    };
    let mut out = Vec::new();
    for &label in &eq.output.before {
        out.push(label_dim(label)?);
    }
    if eq.output.ellipsis {
        out.extend(out_broadcast.dims().unwrap_or(&[]).iter().copied());
    }
    for &label in &eq.output.after {
        out.push(label_dim(label)?);
    }
    c.set_output(0, Shape::new(out))
}

/// The dimensions an input's ellipsis stands for (a scalar shape without
/// one; unknown when the input's rank is).
fn input_broadcast(input: &Shape, s: &Subscripts) -> Result<Shape, ShapeError> {
    if !s.ellipsis {
        return Ok(Shape::new([]));
    }
    let Some(rank) = input.rank() else {
        return Ok(Shape::unknown());
    };
    let start = s.before.len() as i64;
    let end = rank as i64 - s.after.len() as i64;
    input.subshape(start, end)
}
