//! Shape functions of `ArgMax`, `Select` and `SelectV2` (TF's
//! `math_ops.cc`).

use registry_core::shape::{InferenceContext, Shape, ShapeError};

/// `ArgMax` (TF's `ArgOpShape`): the input without the dimension given by
/// the scalar input `dimension` (negative: from the end). A scalar or
/// vector input gives a scalar; with `dimension` unknown the output has
/// rank `R - 1` with unknown dimensions.
pub fn arg_max(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.input_with_rank(1, 0)?;
    let input = c.input(0)?;
    let Some(dims) = input.dims() else {
        return c.set_output(0, Shape::unknown());
    };
    let rank = dims.len();
    if rank <= 1 {
        return c.set_output(0, Shape::scalar());
    }
    let Some(dimension) = c.input_scalar_int(1)? else {
        return c.set_output(0, Shape::unknown_of_rank(rank - 1));
    };
    let n = i64::try_from(rank).unwrap_or(i64::MAX);
    let axis = if dimension < 0 {
        dimension + n
    } else {
        dimension
    };
    let Some(axis) = usize::try_from(axis).ok().filter(|&a| a < rank) else {
        return Err(c.input_error(
            1,
            ShapeError::AxisOutOfRange {
                what: "dimension",
                value: dimension,
                min: -n,
                max: n,
            },
        ));
    };
    let out = dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != axis)
        .map(|(_, d)| *d);
    c.set_output(0, Shape::new(out))
}

/// `Select`: `t` and `e` have the same shape, which is the output's.
/// `condition` is a scalar, a vector as long as the first dimension of `t`
/// (when `t` is not a scalar), or of the shape of `t`.
pub fn select(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let data = c
        .input(1)?
        .merge(c.input(2)?)
        .map_err(|e| c.input_error(2, e))?;
    let cond = c.input(0)?;
    let (Some(cond_rank), Some(data_rank)) = (cond.rank(), data.rank()) else {
        return c.set_output(0, data);
    };
    let data = match (cond_rank, data_rank) {
        (0, _) => data,
        (1, r) if r > 0 => {
            cond.merge(&Shape::vector(data.dim(0)?))
                .map_err(|e| c.input_error(0, e))?;
            data
        }
        _ => data.merge(cond).map_err(|e| c.input_error(0, e))?,
    };
    c.set_output(0, data)
}

/// `SelectV2`: `condition`, `t` and `e` broadcast to one shape (TF
/// broadcasts `t` with `e`, then `condition` with the result).
pub fn select_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let values = c.input(1)?.broadcast(c.input(2)?)?;
    let out = c.input(0)?.broadcast(&values)?;
    c.set_output(0, out)
}
