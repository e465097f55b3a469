//! Shape functions of `MatMul` and `BiasAdd`.

use registry_core::shape::{InferenceContext, Shape, ShapeError};

/// `MatMul` (TF's `MatMulShape`): `a` and `b` are matrices; with the
/// `transpose_a` and `transpose_b` attrs applied, the inner dimensions must
/// agree and the output is `[rows(a), cols(b)]`.
pub fn matmul(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let a = c.input_with_rank(0, 2)?;
    let b = c.input_with_rank(1, 2)?;
    let transpose_a = c.attr::<bool>("transpose_a")?;
    let transpose_b = c.attr::<bool>("transpose_b")?;
    let (rows, inner_a) = if transpose_a {
        (a.dim(1)?, a.dim(0)?)
    } else {
        (a.dim(0)?, a.dim(1)?)
    };
    let (inner_b, cols) = if transpose_b {
        (b.dim(1)?, b.dim(0)?)
    } else {
        (b.dim(0)?, b.dim(1)?)
    };
    inner_a.merge(inner_b).map_err(|e| c.input_error(1, e))?;
    c.set_output(0, Shape::matrix(rows, cols))
}

/// `BiasAdd` (TF's `BiasAddShape`): `value` has rank >= 2 (>= 3 for
/// `NCHW`), `bias` is a vector whose length merges with the channel
/// dimension of `value` (the last one for `NHWC`, dimension 1 for `NCHW`);
/// the output has the shape of `value`.
pub fn bias_add(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let nchw = match c.attr_value("data_format") {
        Some(_) => match c.attr::<&str>("data_format")? {
            "NHWC" => false,
            "NCHW" => true,
            other => {
                return Err(c.invalid_attr(
                    "data_format",
                    format!("BiasAdd supports NHWC and NCHW, got '{other}'"),
                ));
            }
        },
        None => false,
    };
    let input = c.input_with_rank_at_least(0, if nchw { 3 } else { 2 })?;
    let bias = c.input_with_rank(1, 1)?;
    let bias_dim = bias.dim(0)?;
    if !input.is_rank_known() {
        return c.set_output(0, Shape::unknown());
    }
    let channel: i64 = if nchw { 1 } else { -1 };
    let merged = input
        .dim(channel)?
        .merge(bias_dim)
        .map_err(|e| c.input_error(1, e))?;
    let output = input.replace_dim(channel, merged)?;
    c.set_output(0, output)
}

/// `BatchMatMulV2` and `BatchMatMulV3` (TF's `BatchMatMulV2Shape`): both
/// inputs have rank >= 2; with `adj_x`/`adj_y` applied the inner dimensions
/// must agree; the batch dimensions (all but the last two) broadcast; the
/// output is the broadcast batch shape then `[rows(x), cols(y)]`.
pub fn batch_matmul_v2(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let x = c.input_with_rank_at_least(0, 2)?;
    let y = c.input_with_rank_at_least(1, 2)?;
    let adj_x = c.attr::<bool>("adj_x")?;
    let adj_y = c.attr::<bool>("adj_y")?;
    let dim = |s: &Shape, i: i64| -> Result<registry_core::shape::Dim, ShapeError> {
        if s.is_rank_known() {
            s.dim(i)
        } else {
            Ok(registry_core::shape::Dim::UNKNOWN)
        }
    };
    let rows = dim(&x, if adj_x { -1 } else { -2 })?;
    let cols = dim(&y, if adj_y { -2 } else { -1 })?;
    dim(&x, if adj_x { -2 } else { -1 })?
        .merge(dim(&y, if adj_y { -1 } else { -2 })?)
        .map_err(|e| c.error(e))?;
    let x_batch = x.subshape(0, -2)?;
    let y_batch = y.subshape(0, -2)?;
    let batch = x_batch.broadcast(&y_batch).map_err(|e| c.error(e))?;
    c.set_output(0, batch.concatenate(&Shape::matrix(rows, cols)))
}
