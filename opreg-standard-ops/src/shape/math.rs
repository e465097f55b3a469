//! Shape functions of `ArgMax`, `Range`, `Select` and `SelectV2` (TF's
//! `math_ops.cc`).

use opreg_op_logic::range::{RangeElement, shape_fn_size};
use registry_core::proto::DataType;
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};
use registry_core::tensor::{Tensor, bf16};

/// `Range`: a vector whose length is the size of the range when `start`,
/// `limit` and `delta` (scalars) are known, computed and checked as TF's
/// shape function does ([`shape_fn_size`]); TF's shape function has no
/// `half` case ("Unsupported dtype19") although the kernel has.
pub fn range(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    for i in 0..3 {
        c.input_with_rank(i, 0)?;
    }
    let (Some(start), Some(limit), Some(delta)) =
        (c.input_tensor(0)?, c.input_tensor(1)?, c.input_tensor(2)?)
    else {
        return c.set_output(0, Shape::vector(Dim::UNKNOWN));
    };
    let values = [start, limit, delta];
    let dtype = c.attr::<DataType>("Tidx")?;
    let size = match dtype {
        DataType::DtInt32 => typed_range_size::<i32>(c, values),
        DataType::DtInt16 => typed_range_size::<i16>(c, values),
        DataType::DtInt8 => typed_range_size::<i8>(c, values),
        DataType::DtInt64 => typed_range_size::<i64>(c, values),
        DataType::DtUint16 => typed_range_size::<u16>(c, values),
        DataType::DtUint32 => typed_range_size::<u32>(c, values),
        DataType::DtUint64 => typed_range_size::<u64>(c, values),
        DataType::DtFloat => typed_range_size::<f32>(c, values),
        DataType::DtDouble => typed_range_size::<f64>(c, values),
        DataType::DtBfloat16 => typed_range_size::<bf16>(c, values),
        other => Err(ShapeError::invalid_argument(format!(
            "Unsupported dtype{}",
            other as i32
        ))),
    }?;
    c.set_output(0, Shape::vector(Dim::from(size)))
}

/// The size of the range held by the scalars `values` of type `T`.
fn typed_range_size<T: RangeElement>(
    c: &InferenceContext<'_>,
    values: [&Tensor; 3],
) -> Result<Option<i64>, ShapeError> {
    let mut scalars = [T::ZERO; 3];
    for (i, (t, v)) in values.iter().zip(&mut scalars).enumerate() {
        *v = match t.as_slice::<T>() {
            Ok([x]) => *x,
            _ => {
                return Err(c.input_error(
                    i,
                    ShapeError::InvalidConstant {
                        input: i,
                        message: format!(
                            "expected a scalar of the node's Tidx, got {:?} of shape {}",
                            t.dtype(),
                            t.shape()
                        ),
                    },
                ));
            }
        };
    }
    let [start, limit, delta] = scalars;
    shape_fn_size(start, limit, delta).map_err(ShapeError::invalid_argument)
}

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
