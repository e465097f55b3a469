//! Shape functions that reduce or join along axes given as input values:
//! reductions (`Sum`, `Mean`, `Max`) and `ConcatV2`.

use std::collections::BTreeSet;

use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// Reductions (TF's `ReductionShape`): input 0 reduced over the axes held
/// by input 1 (`reduction_indices`, a scalar or vector; negative axes count
/// from the end; repeated axes count once). Reduced dimensions are dropped,
/// or kept as 1 with the `keep_dims` attr.
///
/// When the axes or the input's rank are unknown the output is unknown,
/// except that with `keep_dims` a known input rank is kept.
pub fn reduction(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?.clone();
    c.input_with_rank_at_most(1, 1)?;
    let keep_dims = c.attr::<bool>("keep_dims")?;
    let axes = c.input_ints(1)?;
    let (Some(axes), Some(dims)) = (axes, input.dims()) else {
        let out = match (keep_dims, input.rank()) {
            (true, Some(rank)) => Shape::unknown_of_rank(rank),
            _ => Shape::unknown(),
        };
        return c.set_output(0, out);
    };
    let rank = i64::try_from(dims.len()).unwrap_or(i64::MAX);
    let mut reduced = BTreeSet::new();
    for axis in axes {
        if axis < -rank || axis >= rank {
            return Err(c.input_error(
                1,
                ShapeError::AxisOutOfRange {
                    what: "reduction dimension",
                    value: axis,
                    min: -rank,
                    max: rank,
                },
            ));
        }
        reduced.insert(if axis < 0 { axis + rank } else { axis });
    }
    let mut out = Vec::with_capacity(dims.len());
    for (i, d) in (0i64..).zip(dims) {
        if !reduced.contains(&i) {
            out.push(*d);
        } else if keep_dims {
            out.push(Dim::new(1));
        }
    }
    c.set_output(0, Shape::new(out))
}

/// `ConcatV2` (TF's `ConcatV2Shape`): the `N` inputs `values` joined along
/// the scalar input `axis` (negative: from the end). All values must have
/// the same rank and agree in every other dimension; the output's `axis`
/// dimension is the sum of theirs.
///
/// When `axis` is unknown, the output has the inputs' rank with unknown
/// dimensions (unknown rank if no input's rank is known).
pub fn concat_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let num_values = c.num_inputs().saturating_sub(1);
    let axis_index = num_values;
    c.input_with_rank(axis_index, 0)?;
    let Some(axis) = c.input_scalar_int(axis_index)? else {
        let Some(rank) = c.inputs()[..num_values].iter().find_map(Shape::rank) else {
            return c.set_output(0, Shape::unknown());
        };
        if rank == 0 {
            return Err(c.error(ShapeError::invalid_argument(
                "Can't concatenate scalars (use tf.stack instead)",
            )));
        }
        for i in 0..num_values {
            c.input_with_rank(i, rank)?;
        }
        return c.set_output(0, Shape::unknown_of_rank(rank));
    };
    if num_values == 0 {
        return Err(c.error(ShapeError::invalid_argument(
            "ConcatV2 needs at least one value",
        )));
    }
    // The rank every value needs for `axis` to be valid.
    let min_rank = usize::try_from(if axis < 0 {
        axis.unsigned_abs()
    } else {
        axis.unsigned_abs() + 1
    })
    .unwrap_or(usize::MAX);
    // Splits a value around the axis: (before, axis dim, after).
    let split = |c: &InferenceContext<'_>, i: usize| -> Result<(Shape, Dim, Shape), ShapeError> {
        let value = c.input_with_rank_at_least(i, min_rank)?;
        let parts = (|| {
            let before = value.subshape(0, axis)?;
            let middle = value.dim(axis)?;
            let after = if axis == -1 {
                Shape::scalar()
            } else {
                value.subshape_from(axis.saturating_add(1))?
            };
            Ok((before, middle, after))
        })();
        parts.map_err(|e| c.input_error(i, e))
    };
    let last = num_values - 1;
    let (mut before, mut middle, mut after) = split(c, last)?;
    for i in (0..last).rev() {
        let (b, m, a) = split(c, i)?;
        before = b.merge(&before).map_err(|e| c.input_error(i, e))?;
        middle = middle.add(m)?;
        after = a.merge(&after).map_err(|e| c.input_error(i, e))?;
    }
    let out = before
        .concatenate(&Shape::vector(middle))
        .concatenate(&after);
    c.set_output(0, out)
}
