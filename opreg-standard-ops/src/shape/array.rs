//! Shape functions of the standard array ops (TF's `array_ops.cc`).

use registry_core::shape::common::merged_inputs;
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// `i64` of a rank or count (saturating; ranks never come near it).
fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `axis` (negative: from the end) as an index into `0..len`, or an
/// [`ShapeError::AxisOutOfRange`] naming it `what`.
fn normalize_axis(what: &'static str, axis: i64, len: usize) -> Result<usize, ShapeError> {
    let n = to_i64(len);
    let out_of_range = ShapeError::AxisOutOfRange {
        what,
        value: axis,
        min: -n,
        max: n,
    };
    if axis < -n || axis >= n {
        return Err(out_of_range);
    }
    usize::try_from(if axis < 0 { axis + n } else { axis }).map_err(|_| out_of_range)
}

/// `Const`: the shape of the tensor in the `value` attr, which must be
/// fully defined.
pub fn const_op(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let proto = c.attr::<&registry_core::proto::TensorProto>("value")?;
    let shape = match &proto.tensor_shape {
        Some(s) => Shape::from_proto(s).map_err(|e| c.invalid_attr("value", e.to_string()))?,
        None => Shape::scalar(),
    };
    if !shape.is_fully_defined() {
        return Err(c.invalid_attr(
            "value",
            format!("a constant's shape must be fully defined, but is {shape}"),
        ));
    }
    c.set_output(0, shape)
}

/// `Placeholder`: the `shape` attr (unknown rank when it says
/// `unknown_rank`, -1 dimensions unknown).
pub fn placeholder(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let shape = c.attr::<Shape>("shape")?;
    c.set_output(0, shape)
}

/// The product of the known dimensions, the index of the unknown one, and
/// whether there is more than one unknown.
fn known_product(dims: &[Dim]) -> Result<(i64, Option<usize>, bool), ShapeError> {
    let mut product = Dim::new(1);
    let mut unknown = None;
    for (i, d) in dims.iter().enumerate() {
        if d.is_known() {
            product = product.multiply(*d)?;
        } else if unknown.is_some() {
            return Ok((0, unknown, true));
        } else {
            unknown = Some(i);
        }
    }
    Ok((product.value().unwrap_or(0), unknown, false))
}

/// `Reshape` (TF's `SetOutputShapeForReshape`): the shape held by input 1
/// (`shape`), where one -1 is inferred from the element count of input 0.
/// The element counts must agree when both are known.
///
/// When the value of `shape` is unknown, the output has as many unknown
/// dimensions as `shape` has elements (unknown rank if that is unknown).
pub fn reshape(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?;
    let mut out = c.make_shape_from_shape_tensor(1)?;
    let (Some(in_dims), Some(out_dims)) = (input.dims(), out.dims()) else {
        return c.set_output(0, out);
    };
    let (in_known, in_unknown, in_many) = known_product(in_dims)?;
    let (out_known, out_unknown, out_many) = known_product(out_dims)?;
    if !in_many && !out_many {
        match (in_unknown, out_unknown) {
            (None, None) if in_known != out_known => {
                return Err(c.error(ShapeError::Reshape {
                    elements: in_known,
                    shape: out,
                    shape_elements: out_known,
                }));
            }
            (None, Some(index)) if out_known > 0 => {
                if in_known % out_known != 0 {
                    return Err(c.error(ShapeError::ReshapeNotDivisible {
                        elements: in_known,
                        shape: out,
                        known: out_known,
                    }));
                }
                out = out.replace_dim(to_i64(index), in_known / out_known)?;
            }
            (Some(_), None) if in_known != 0 => {
                // The input's unknown dimension must make the counts agree.
                Dim::new(out_known).divide(in_known, true)?;
            }
            _ => {}
        }
    }
    c.set_output(0, out)
}

/// `Transpose` (TF's `TransposeShapeFn`): dimension `i` of the output is
/// dimension `perm[i]` of `x` (negative entries count from the end; each
/// dimension must appear once). With `perm` unknown, the output has the
/// rank of `x` (or the length of `perm`) with unknown dimensions.
pub fn transpose(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?;
    let perm_shape = c.input(1)?;
    let perm = c.input_ints(1)?;
    let perm_elems = perm_shape.num_elements();
    let rank = match (input.rank(), perm_elems, &perm) {
        (Some(r), _, _) => r,
        (None, Some(n), _) => usize::try_from(n).unwrap_or(0),
        (None, None, Some(p)) => p.len(),
        (None, None, None) => return c.set_output(0, Shape::unknown()),
    };
    if !input.is_rank_known() && rank < 2 {
        // A one-element permutation leaves a scalar or a vector unchanged.
        return c.set_output(0, input.clone());
    }
    let input = c.input_with_rank(0, rank)?;
    let perm_shape = c.input_with_rank(1, 1)?;
    let perm_len = perm_shape.dim(0)?;
    if !perm_len.is_compatible(to_i64(rank)) {
        return Err(c.input_error(
            1,
            ShapeError::DimValue {
                expected: to_i64(rank),
                found: perm_len.to_i64(),
            },
        ));
    }
    let Some(perm) = perm else {
        return c.set_output(0, Shape::unknown_of_rank(rank));
    };
    if perm.len() != rank {
        return Err(c.input_error(
            1,
            ShapeError::InvalidConstant {
                input: 1,
                message: format!(
                    "perm has {} entries, but the input has rank {rank}",
                    perm.len()
                ),
            },
        ));
    }
    let mut seen = vec![false; rank];
    let mut dims = Vec::with_capacity(rank);
    for &p in &perm {
        let i = normalize_axis("perm dim", p, rank).map_err(|e| c.input_error(1, e))?;
        if std::mem::replace(&mut seen[i], true) {
            return Err(c.input_error(
                1,
                ShapeError::invalid_argument(format!("{p} is duplicated in perm")),
            ));
        }
        dims.push(input.dim(to_i64(i))?);
    }
    c.set_output(0, Shape::new(dims))
}

/// `Pack`: the `N` inputs, merged into one shape, stacked along a new
/// dimension of size `N` at `axis` (in `[-(R+1), R+1)` for inputs of rank
/// `R`).
pub fn pack(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let merged = merged_inputs(c)?;
    let Some(dims) = merged.dims() else {
        return c.set_output(0, Shape::unknown());
    };
    let axis = c.attr::<i64>("axis")?;
    let at = normalize_axis("axis", axis, dims.len() + 1).map_err(|e| c.error(e))?;
    let mut out = dims.to_vec();
    out.insert(at, Dim::from(c.num_inputs()));
    c.set_output(0, Shape::new(out))
}

/// `Slice` (TF's `SliceShapeFn`): `begin` and `size` are vectors of the
/// input's rank; output dimension `i` is `size[i]`, or `input[i] -
/// begin[i]` where `size[i]` is -1. Unknown values give unknown dimensions.
pub fn slice(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let begin_shape = c.input_with_rank(1, 1)?;
    let sizes_shape = c.input_with_rank(2, 1)?;
    let begin_shape = begin_shape
        .merge(&sizes_shape)
        .map_err(|e| c.input_error(2, e))?;
    let input = match begin_shape.dim(0)?.value() {
        Some(n) => c.input_with_rank(0, usize::try_from(n).unwrap_or(0))?,
        None => c.input(0)?.clone(),
    };
    let begin = c.make_shape_from_shape_tensor(1)?;
    if let Some(sizes) = c.input_ints(2)? {
        let begin = begin
            .with_rank(sizes.len())
            .map_err(|e| c.input_error(1, e))?;
        let mut dims = Vec::with_capacity(sizes.len());
        for (i, &size) in sizes.iter().enumerate() {
            let dim = input.dim(to_i64(i)).map_err(|e| c.input_error(2, e))?;
            let start = begin.dim(to_i64(i))?;
            if let (Some(d), Some(b)) = (dim.value(), start.value())
                && b > d
            {
                return Err(c.input_error(
                    1,
                    ShapeError::invalid_argument(format!(
                        "Expected begin[{i}] in [0, {d}], but got {b}"
                    )),
                ));
            }
            if size == -1 {
                dims.push(dim.subtract(start).map_err(|e| c.input_error(1, e))?);
                continue;
            }
            if size < -1 {
                return Err(c.input_error(
                    2,
                    ShapeError::invalid_argument(format!(
                        "Out of bounds slicing on dimension {i} of length {dim}: \
                         sizes vector cannot be < -1, but was {size}"
                    )),
                ));
            }
            if let (Some(d), Some(b)) = (dim.value(), start.value())
                && b.saturating_add(size) > d
            {
                return Err(c.input_error(
                    2,
                    ShapeError::invalid_argument(format!(
                        "Expected size[{i}] in [0, {}], but got {size}",
                        d - b
                    )),
                ));
            }
            dims.push(Dim::new(size));
        }
        return c.set_output(0, Shape::new(dims));
    }
    // Sizes unknown: what is known of them (-1 reads as unknown).
    let sizes = c.make_shape_from_shape_tensor(2)?;
    if let Some(rank) = sizes.rank() {
        begin.with_rank(rank).map_err(|e| c.input_error(1, e))?;
        return c.set_output(0, sizes);
    }
    let out = input
        .rank()
        .map_or_else(Shape::unknown, Shape::unknown_of_rank);
    c.set_output(0, out)
}

/// `ExpandDims`: a dimension of 1 inserted at the scalar input `dim` (in
/// `[-(R+1), R]` for an input of rank `R`). Unknown when `dim` or the
/// input's rank is unknown.
pub fn expand_dims(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let dim = c.input_scalar_int(1)?;
    let input = c.input(0)?;
    let (Some(dim), Some(dims)) = (dim, input.dims()) else {
        return c.set_output(0, Shape::unknown());
    };
    let at = normalize_axis("dim", dim, dims.len() + 1).map_err(|e| c.input_error(1, e))?;
    let mut out = dims.to_vec();
    out.insert(at, Dim::new(1));
    c.set_output(0, Shape::new(out))
}

/// `Squeeze`: drops the dimensions listed in `squeeze_dims` (negative:
/// from the end), which must be 1, or without a list every dimension of
/// size 1. An unknown dimension listed is assumed to be 1; without a list,
/// any unknown dimension makes the output unknown.
pub fn squeeze(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?;
    let Some(dims) = input.dims() else {
        return c.set_output(0, Shape::unknown());
    };
    let listed = c.attr::<&[i64]>("squeeze_dims")?;
    let mut squeeze = Vec::with_capacity(listed.len());
    for &d in listed {
        squeeze.push(normalize_axis("squeeze_dims entry", d, dims.len()).map_err(|e| c.error(e))?);
    }
    let mut out = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let listed_here = squeeze.contains(&i);
        match d.value() {
            None if listed_here => continue,
            None if squeeze.is_empty() => return c.set_output(0, Shape::unknown()),
            Some(1) if listed_here || squeeze.is_empty() => continue,
            Some(size) if listed_here => {
                return Err(c.input_error(0, ShapeError::Squeeze { index: i, size }));
            }
            _ => {}
        }
        out.push(*d);
    }
    c.set_output(0, Shape::new(out))
}

/// `Tile`: dimension `i` of the output is `input[i] * multiples[i]`;
/// `multiples` is a vector of the input's rank.
pub fn tile(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?;
    let mut multiples = c.make_shape_from_shape_tensor(1)?;
    if let Some(rank) = input.rank() {
        multiples = multiples.with_rank(rank).map_err(|e| c.input_error(1, e))?;
        c.input(1)?
            .merge(&Shape::vector(rank))
            .map_err(|e| c.input_error(1, e))?;
    }
    let Some(rank) = multiples.rank() else {
        return c.set_output(0, Shape::unknown());
    };
    let input = c.input_with_rank(0, rank)?;
    let mut dims = Vec::with_capacity(rank);
    for i in 0..to_i64(rank) {
        dims.push(input.dim(i)?.multiply(multiples.dim(i)?)?);
    }
    c.set_output(0, Shape::new(dims))
}

/// `Pad` (TF's `PadShapeFn`): `paddings` is an `[R, 2]` matrix for an
/// input of rank `R`; output dimension `i` is `input[i] + paddings[i, 0] +
/// paddings[i, 1]` (paddings must be non-negative). With the paddings
/// unknown, the output has rank `R` with unknown dimensions.
pub fn pad(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let paddings = c.input_with_rank(1, 2)?;
    let pair = paddings.dim(1)?;
    if !pair.is_compatible(2) {
        return Err(c.input_error(
            1,
            ShapeError::DimValue {
                expected: 2,
                found: pair.to_i64(),
            },
        ));
    }
    let mut input = c.input(0)?.clone();
    let mut n_dim = paddings.dim(0)?;
    if let Some(n) = n_dim.value() {
        input = c.input_with_rank(0, usize::try_from(n).unwrap_or(0))?;
    } else if let Some(rank) = input.rank() {
        n_dim = Dim::from(rank);
    }
    let Some(t) = c.input_tensor(1)? else {
        let out = n_dim.value().map_or_else(Shape::unknown, |n| {
            Shape::unknown_of_rank(usize::try_from(n).unwrap_or(0))
        });
        return c.set_output(0, out);
    };
    let invalid =
        |message: String| c.input_error(1, ShapeError::InvalidConstant { input: 1, message });
    let rank = match t.dims() {
        [n, 2] => *n,
        other => {
            return Err(invalid(format!(
                "paddings must be a [rank, 2] matrix, got shape {other:?}"
            )));
        }
    };
    let input = input.with_rank(rank).map_err(|e| c.input_error(0, e))?;
    let values = t.int_values().map_err(|e| invalid(e.to_string()))?;
    let mut dims = Vec::with_capacity(rank);
    for (i, p) in values.chunks_exact(2).enumerate() {
        let (before, after) = (p[0], p[1]);
        if before < 0 || after < 0 {
            return Err(c.input_error(
                1,
                ShapeError::Negative {
                    what: "Paddings",
                    value: before.min(after),
                },
            ));
        }
        let total = before.checked_add(after).ok_or(ShapeError::DimOverflow {
            a: before,
            op: '+',
            b: after,
        })?;
        dims.push(input.dim(to_i64(i))?.add(total)?);
    }
    c.set_output(0, Shape::new(dims))
}

/// `OneHot`: the shape of `indices` with a dimension of size `depth` (the
/// scalar input 1) inserted at `axis` (-1: last). `on_value` and
/// `off_value` are scalars.
pub fn one_hot(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let axis = c.attr::<i64>("axis")?;
    if axis < -1 {
        return Err(c.invalid_attr("axis", format!("axis must be >= -1, but is {axis}")));
    }
    let depth = c.make_dim_for_scalar_input(1)?;
    c.input_with_rank(2, 0)?;
    c.input_with_rank(3, 0)?;
    let indices = c.input(0)?;
    let Some(dims) = indices.dims() else {
        return c.set_output(0, Shape::unknown());
    };
    let at = if axis == -1 {
        dims.len()
    } else {
        normalize_axis("axis", axis, dims.len() + 1).map_err(|e| c.error(e))?
    };
    let mut out = dims.to_vec();
    out.insert(at, depth);
    c.set_output(0, Shape::new(out))
}

/// `GatherV2`: `params` with dimension `axis` (the scalar input 2) replaced
/// by the dimensions of `indices` after its first `batch_dims` (which
/// `params` and `indices` share). With `axis` unknown, only the rank is
/// known.
pub fn gather_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let params = c.input_with_rank_at_least(0, 1)?;
    let indices = c.input(1)?.clone();
    c.input_with_rank(2, 0)?;
    let batch_dims = c.attr::<i64>("batch_dims")?;
    // batch_dims in [-rank(indices), rank(indices)], made non-negative.
    let batch = match indices.rank() {
        Some(r) => {
            let r = to_i64(r);
            if batch_dims < -r || batch_dims > r {
                return Err(c.error(ShapeError::AxisOutOfRange {
                    what: "batch_dims",
                    value: batch_dims,
                    min: -r,
                    max: r + 1,
                }));
            }
            Some(if batch_dims < 0 {
                batch_dims + r
            } else {
                batch_dims
            })
        }
        None if batch_dims >= 0 => Some(batch_dims),
        None => None,
    };
    let Some(axis) = c.input_scalar_int(2)? else {
        let out = match (params.rank(), indices.rank(), batch) {
            (Some(p), Some(i), Some(b)) => {
                let rank = to_i64(p) + to_i64(i) - 1 - b;
                Shape::unknown_of_rank(usize::try_from(rank).unwrap_or(0))
            }
            _ => Shape::unknown(),
        };
        return c.set_output(0, out);
    };
    let Some(batch) = batch else {
        return c.set_output(0, Shape::unknown());
    };
    let (Some(p_dims), Some(_)) = (params.dims(), indices.rank()) else {
        // Unknown ranks: only the minimum ranks can be checked.
        let min = if axis < 0 {
            axis.unsigned_abs()
        } else {
            axis.unsigned_abs() + 1
        };
        c.input_with_rank_at_least(0, usize::try_from(min).unwrap_or(usize::MAX))?;
        return c.set_output(0, Shape::unknown());
    };
    let axis = normalize_axis("axis", axis, p_dims.len()).map_err(|e| c.input_error(2, e))?;
    let axis = to_i64(axis);
    if batch > axis {
        return Err(c.error(ShapeError::invalid_argument(format!(
            "batch_dims ({batch_dims}) must be less than or equal to axis ({axis})"
        ))));
    }
    let batch_shape = params
        .subshape(0, batch)?
        .merge(&indices.subshape(0, batch)?)
        .map_err(|e| c.input_error(1, e))?;
    let out = batch_shape
        .concatenate(&params.subshape(batch, axis)?)
        .concatenate(&indices.subshape_from(batch)?)
        .concatenate(&params.subshape_from(axis + 1)?);
    c.set_output(0, out)
}

/// `IdentityN`: output `i` has the shape of input `i`.
pub fn identity_n(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    for (i, shape) in c.inputs().iter().enumerate() {
        c.set_output(i, shape.clone())?;
    }
    Ok(())
}

/// `Shape` and `ShapeN` (TF's `ShapeShapeFn`): output `i` is a vector as
/// long as the rank of input `i` (unknown length for an unknown rank).
pub fn shape_n(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    for (i, shape) in c.inputs().iter().enumerate() {
        let len = shape.rank().map_or(Dim::UNKNOWN, Dim::from);
        c.set_output(i, Shape::vector(len))?;
    }
    Ok(())
}

/// `Fill`: `dims` is a vector and `value` a scalar; the output's shape is
/// the value of `dims` (every entry must be non-negative), or as much of it
/// as is known.
pub fn fill(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.input_with_rank(0, 1)?;
    c.input_with_rank(1, 0)?;
    // Entries below -1 are refused while reading the shape (TF's shape
    // refiner does so before running the shape function).
    let out = c.make_shape_from_shape_tensor(0)?;
    if let Some(dims) = c.input_ints(0)?
        && dims.iter().any(|&d| d < 0)
    {
        return Err(c.error(ShapeError::invalid_argument("Fill dimensions must be >= 0")));
    }
    c.set_output(0, out)
}

/// `BroadcastTo`: the shape held by `shape` (a vector), where the input's
/// dimensions above 1 fill in (or must equal) the dimensions they broadcast
/// to; the input's rank must not exceed the output's.
pub fn broadcast_to(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.input_with_rank(1, 1)?;
    let mut out = c.make_shape_from_shape_tensor(1)?;
    let (Some(out_rank), Some(_)) = (out.rank(), c.input(0)?.rank()) else {
        return c.set_output(0, out);
    };
    let input = c.input_with_rank_at_most(0, out_rank)?;
    let in_dims = input.dims().unwrap_or_default();
    let offset = out_rank - in_dims.len();
    for (i, &in_dim) in in_dims.iter().enumerate() {
        // Only dimensions above 1 constrain the output (1 broadcasts, 0 is
        // left to the kernel).
        if in_dim.value().is_some_and(|v| v > 1) {
            let at = to_i64(offset + i);
            let merged = in_dim.merge(out.dim(at)?).map_err(|e| c.error(e))?;
            out = out.replace_dim(at, merged)?;
        }
    }
    c.set_output(0, out)
}

/// `ResizeBilinear` and `ResizeNearestNeighbor` (TF's `ResizeShapeFn`):
/// `images` has rank 4, `size` is a vector of 2 values; the output is
/// `[batch, size[0], size[1], channels]` (unknown sizes when `size` is not
/// a constant).
pub fn resize(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input_with_rank(0, 4)?;
    let size = c.input_with_rank(1, 1)?;
    if let Some(n) = size.dim(0)?.value()
        && n != 2
    {
        return Err(c.input_error(
            1,
            ShapeError::DimValue {
                expected: 2,
                found: n,
            },
        ));
    }
    let (height, width) = match c.input_ints(1)? {
        Some(v) if v.len() == 2 => {
            let dim = |x: i64| {
                if x < 0 {
                    Err(c.input_error(
                        1,
                        ShapeError::Negative {
                            what: "Dimension size, given by the size input,",
                            value: x,
                        },
                    ))
                } else {
                    Ok(Dim::new(x))
                }
            };
            (dim(v[0])?, dim(v[1])?)
        }
        _ => (Dim::UNKNOWN, Dim::UNKNOWN),
    };
    c.set_output(0, Shape::new([input.dim(0)?, height, width, input.dim(3)?]))
}

/// TF's `MakeDimForScalarInputWithNegativeIndexing`: the dimension index
/// held by the scalar input `index` for a shape of rank `rank`, made
/// non-negative (`None` when the value is unknown, or negative with the rank
/// unknown). A known value must be a scalar ("Input must be scalar but has
/// rank 1") in `[-rank, rank)` when the rank is known.
fn scalar_dim_index(
    c: &InferenceContext<'_>,
    index: usize,
    rank: Option<usize>,
) -> Result<Option<i64>, ShapeError> {
    let Some(t) = c.input_tensor(index)? else {
        return Ok(None);
    };
    if !t.dims().is_empty() {
        return Err(c.input_error(
            index,
            ShapeError::invalid_argument(format!(
                "Input must be scalar but has rank {}",
                t.dims().len()
            )),
        ));
    }
    let Some(value) = c.input_scalar_int(index)? else {
        return Ok(None);
    };
    let Some(rank) = rank.map(to_i64) else {
        return Ok((value >= 0).then_some(value));
    };
    if value < -rank || value >= rank {
        return Err(c.input_error(
            index,
            ShapeError::invalid_argument(format!(
                "Dimension size, given by scalar input {value} must be in range [-{rank}, {rank})"
            )),
        ));
    }
    Ok(Some(if value < 0 { value + rank } else { value }))
}

/// `Split`: `value` with dimension `split_dim` (a scalar, negative: from
/// the end) divided by `num_split`, which must divide it evenly; every
/// output has that shape. With `split_dim` unknown, only the rank is known.
pub fn split(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(1)?.clone();
    let n = c.num_outputs();
    let out = match scalar_dim_index(c, 0, input.rank())? {
        None => input
            .rank()
            .map_or_else(Shape::unknown, Shape::unknown_of_rank),
        Some(axis) => {
            let input = c.input_with_rank_at_least(1, usize::try_from(axis + 1).unwrap_or(0))?;
            let size = input.dim(axis)?.divide(Dim::from(n), true).map_err(|e| {
                c.error(ShapeError::invalid_argument(format!(
                    "{e}\n\tNumber of ways to split should evenly divide the split dimension"
                )))
            })?;
            input.replace_dim(axis, size)?
        }
    };
    for i in 0..n {
        c.set_output(i, out.clone())?;
    }
    Ok(())
}

/// `SplitV`: `value` with dimension `split_dim` replaced, for output `i`,
/// by `size_splits[i]` (one -1 takes what the others leave). The sizes
/// must add up to the dimension (at most to it with a -1), and none may
/// end up negative. Without the sizes, the split dimension is unknown (or,
/// with `split_dim` unknown too, every dimension).
///
/// As TF's shape function, a known `size_splits` with an unknown
/// `split_dim` splits the last dimension (TF reads the unknown dimension
/// index as -1). Unlike it, `size_splits` of int8 or of another shape than
/// a vector are read (or refused) rather than aborting the process.
pub fn split_v(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?.clone();
    let n = c.num_outputs();
    if input.rank() == Some(0) {
        return Err(c.error(ShapeError::invalid_argument("Can't split scalars")));
    }
    let split_dim = scalar_dim_index(c, 2, input.rank())?;
    let Some(rank) = input.rank() else {
        for i in 0..n {
            c.set_output(i, Shape::unknown())?;
        }
        return Ok(());
    };
    let sizes = c.input_ints(1)?;
    let (Some(sizes), split_dim) = (sizes, split_dim) else {
        let out = match split_dim {
            Some(axis) => input.replace_dim(axis, Dim::UNKNOWN)?,
            None => Shape::unknown_of_rank(rank),
        };
        for i in 0..n {
            c.set_output(i, out.clone())?;
        }
        return Ok(());
    };
    if let Some(t) = c.input_tensor(1)?
        && t.dims().len() != 1
    {
        return Err(c.input_error(
            1,
            ShapeError::Rank {
                expected: 1,
                found: t.dims().len(),
            },
        ));
    }
    // An unknown split dimension reads as -1, the last one (TF's Value()).
    let axis = split_dim.unwrap_or(-1);
    let input = c.input_with_rank_at_least(0, usize::try_from(axis + 1).unwrap_or(0))?;
    if sizes.len() != n {
        return Err(c.error(ShapeError::invalid_argument(
            "Length of size_splits should be equal to num_outputs",
        )));
    }
    let mut total: i64 = 0;
    let mut has_minus_one = false;
    for &size in &sizes {
        if size == -1 {
            if has_minus_one {
                return Err(c.error(ShapeError::invalid_argument(
                    "size_splits can only have one -1",
                )));
            }
            has_minus_one = true;
        } else {
            total = total.saturating_add(size);
        }
    }
    let dim_size = input.dim(axis)?.value();
    for (i, &given) in sizes.iter().enumerate() {
        let size = match (given, dim_size) {
            (-1, Some(d)) => d.saturating_sub(total),
            (-1, None) => {
                c.set_output(i, input.replace_dim(axis, Dim::UNKNOWN)?)?;
                continue;
            }
            (size, _) => size,
        };
        if size < 0 {
            return Err(c.error(ShapeError::invalid_argument(format!(
                "Split size at index {i} must be >= 0. Got: {size}"
            ))));
        }
        c.set_output(i, input.replace_dim(axis, size)?)?;
    }
    if let Some(d) = dim_size
        && (if has_minus_one { total > d } else { total != d })
    {
        let pieces: Vec<String> = sizes.iter().map(i64::to_string).collect();
        return Err(c.error(ShapeError::invalid_argument(format!(
            "can't split axis of size {d} into pieces of size [{}]",
            pieces.join(",")
        ))));
    }
    Ok(())
}

/// `Unpack`: `value` without dimension `axis` (in `[-R, R)`), which must be
/// `num`; every output has that shape (unknown with the rank unknown).
pub fn unpack(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?.clone();
    let n = c.num_outputs();
    let out = match input.dims() {
        None => Shape::unknown(),
        Some(dims) => {
            let axis = c.attr::<i64>("axis")?;
            let rank = to_i64(dims.len());
            if axis < -rank || axis >= rank {
                return Err(c.error(ShapeError::invalid_argument(format!(
                    "Invalid axis: {axis}; must be in [{},{rank})",
                    -rank
                ))));
            }
            let axis = usize::try_from(if axis < 0 { axis + rank } else { axis }).unwrap_or(0);
            let size = dims[axis];
            if !size.is_compatible(Dim::from(n)) {
                return Err(c.input_error(
                    0,
                    ShapeError::DimValue {
                        expected: to_i64(n),
                        found: size.to_i64(),
                    },
                ));
            }
            let mut out = dims.to_vec();
            out.remove(axis);
            Shape::new(out)
        }
    };
    for i in 0..n {
        c.set_output(i, out.clone())?;
    }
    Ok(())
}

/// `ReverseV2`: the shape of `tensor` (of rank at most 8); `axis` is a
/// vector whose known entries must be distinct dimensions of it.
pub fn reverse_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?.clone();
    c.input_with_rank(1, 1)?;
    if input.rank().is_some_and(|r| r > 8) {
        return Err(c.error(ShapeError::invalid_argument(
            "reverse does not work on tensors with more than 8 dimensions",
        )));
    }
    if let (Some(axes), Some(rank)) = (c.input_ints(1)?, input.rank()) {
        let rank = to_i64(rank);
        let mut seen = vec![false; usize::try_from(rank).unwrap_or(0)];
        for (i, &axis) in axes.iter().enumerate() {
            let canonical = if axis < 0 { rank + axis } else { axis };
            let Some(slot) = usize::try_from(canonical)
                .ok()
                .and_then(|a| seen.get_mut(a))
            else {
                return Err(c.error(ShapeError::invalid_argument(format!(
                    "'axis'[{i}] = {axis} is out of valid range [0, {}",
                    rank - 1
                ))));
            };
            if std::mem::replace(slot, true) {
                return Err(c.error(ShapeError::invalid_argument(format!(
                    "axis {canonical} specified more than once."
                ))));
            }
        }
    }
    c.set_output(0, input)
}

/// `GatherNd`: `indices.shape[:-1] + params.shape[K:]` for index vectors of
/// length `K = indices.shape[-1]`, which must not exceed the rank of
/// `params` (unknown when `K` or that rank is).
pub fn gather_nd(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let params = c.input(0)?.clone();
    let indices = c.input_with_rank_at_least(1, 1)?;
    let r_dim = indices.dim(-1)?;
    let (Some(rank), Some(k)) = (params.rank(), r_dim.value()) else {
        return c.set_output(0, Shape::unknown());
    };
    if k > to_i64(rank) {
        return Err(c.error(ShapeError::invalid_argument(format!(
            "indices.shape[-1] must be <= params.rank, but saw indices shape: {indices} and \
             params shape: {params}"
        ))));
    }
    let out = indices
        .subshape(0, -1)?
        .concatenate(&params.subshape_from(k)?);
    c.set_output(0, out)
}
