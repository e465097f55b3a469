//! Shape functions of `FusedBatchNormV3` (TF's `FusedBatchNormV3Shape`)
//! and `TopKV2` (TF's `TopKShapeFn`).

use opreg_op_logic::batch_norm::Layout;
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// `FusedBatchNormV3`: `x` is 4-D (`NHWC`, `NCHW`) or 5-D (`NDHWC`,
/// `NCDHW`); `scale` and `offset` (and `mean` and `variance`, unless
/// training with `exponential_avg_factor` 1) are vectors of the channel
/// count. Output `y` has the shape of `x`; `batch_mean`,
/// `batch_variance`, `reserve_space_1` and `reserve_space_2` are vectors
/// of the channel count; `reserve_space_3` is unknown.
pub fn fused_batch_norm_v3(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let format = c.attr::<&str>("data_format")?;
    // The kernels' parser; TF's shape function has its own message.
    let layout = Layout::parse(format).map_err(|_| {
        c.invalid_attr(
            "data_format",
            format!("Invalid data format string: {format}"),
        )
    })?;
    let rank = format.len();
    let channel_index: i64 = match layout {
        Layout::ChannelsLast => -1,
        Layout::ChannelsFirst => 1,
    };
    let x = c.input_with_rank(0, rank)?;
    let is_training = c.attr::<bool>("is_training")?;
    let factor = c.attr_or("exponential_avg_factor", 1.0)?;
    // In training with a factor of 1 the mean and variance inputs are unused.
    let vectors = if is_training && factor == 1.0 { 3 } else { 5 };
    let mut channels = x.dim(channel_index)?;
    for i in 1..vectors.min(c.num_inputs()) {
        let v = c.input_with_rank(i, 1)?;
        channels = channels.merge(v.dim(0)?).map_err(|e| c.input_error(i, e))?;
    }
    let y = x.replace_dim(channel_index, channels)?;
    c.set_output(0, y)?;
    for i in 1..5 {
        c.set_output(i, Shape::vector(channels))?;
    }
    c.set_output(5, Shape::unknown())
}

/// `TopKV2` (TF's `TopKShapeFn`): `values` and `indices` have the shape of
/// `input` (rank at least 1) with the last dimension replaced by `k` (the
/// scalar input 1, non-negative), which must not exceed it.
pub fn top_k_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input_with_rank_at_least(0, 1)?;
    // TF's MakeDimForScalarInput, with its messages.
    let k = match c.input_tensor(1)? {
        None => Dim::UNKNOWN,
        Some(t) if !t.dims().is_empty() => {
            return Err(c.input_error(
                1,
                ShapeError::invalid_argument(format!(
                    "Input must be scalar but has rank {}",
                    t.dims().len()
                )),
            ));
        }
        Some(_) => match c.input_scalar_int(1)? {
            Some(v) if v < 0 => {
                return Err(c.input_error(
                    1,
                    ShapeError::invalid_argument(format!(
                        "Dimension size, given by scalar input 1, must be non-negative but is {v}"
                    )),
                ));
            }
            v => Dim::from(v),
        },
    };
    if let (Some(last), Some(k)) = (input.dim(-1)?.value(), k.value())
        && last < k
    {
        return Err(c.error(ShapeError::invalid_argument(format!(
            "input must have last dimension >= k = {k} but is {last}"
        ))));
    }
    let out = input.subshape(0, -1)?.concatenate(&Shape::vector(k));
    c.set_output(0, out.clone())?;
    c.set_output(1, out)
}
