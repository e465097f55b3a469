//! Shape functions of the rearrangements between space, batch and depth
//! (TF's `SpaceToBatchShapeHelper`, `BatchToSpaceShapeHelper` and the
//! `DepthToSpace`/`SpaceToDepth` shape functions of `array_ops.cc`).
//!
//! They follow TF's, not the kernels': the block sizes, paddings and crops
//! are used when they are constants, and their checks carry TF's shape
//! function messages ("block_shape must be positive", "paddings cannot be
//! negative"), which differ from the kernels' (`opreg_op_logic::space_batch`).

use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

use super::conv::ImageFormat;
use opreg_op_logic::window::DataFormat;

/// Which way the block dimensions move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    SpaceToBatch,
    BatchToSpace,
}

/// `SpaceToBatchND`: `[batch * prod(block_shape), (s_i + pad_start_i +
/// pad_end_i) / block_shape[i] ..., rest]`, each division exact. The batch
/// is unknown without the block sizes, each spatial dimension without the
/// block sizes and paddings.
pub fn space_to_batch_nd(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    block_shape_fn(c, Direction::SpaceToBatch)
}

/// `BatchToSpaceND`: `[batch / prod(block_shape), s_i * block_shape[i] -
/// crop_start_i - crop_end_i ..., rest]`, the batch divided exactly and no
/// dimension negative. Unknown parts as for `SpaceToBatchND`.
pub fn batch_to_space_nd(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    block_shape_fn(c, Direction::BatchToSpace)
}

/// TF's `SpaceToBatchShapeHelper` and `BatchToSpaceShapeHelper`.
fn block_shape_fn(c: &mut InferenceContext<'_>, direction: Direction) -> Result<(), ShapeError> {
    let invalid = |message: &str| c.error(ShapeError::invalid_argument(message));
    let block_shape = c.input(1)?;
    if block_shape.rank() != Some(1) {
        return Err(invalid("block_shape must have rank 1."));
    }
    let Some(k) = block_shape.dim(0)?.value() else {
        return Err(invalid("block_shape must have known size."));
    };
    let k = usize::try_from(k).map_err(|_| invalid("block_shape must have known size."))?;
    let input = c.input_with_rank_at_least(0, k + 1)?;
    c.input(2)?
        .merge(&Shape::matrix(Dim::from(k), 2))
        .map_err(|e| c.input_error(2, e))?;
    // As in TF, the constant inputs count only when their sizes agree with
    // block_shape's shape.
    let block = c.input_ints(1)?.filter(|b| b.len() == k);
    let mut batch = input.dim(0)?;
    if let Some(block) = &block {
        for &b in block {
            if b < 1 {
                return Err(invalid("block_shape must be positive"));
            }
            if batch.is_known() {
                batch = match direction {
                    Direction::SpaceToBatch => batch.multiply(b),
                    Direction::BatchToSpace => batch.divide(b, true),
                }
                .map_err(|e| c.error(e))?;
            }
        }
    } else if k > 0 {
        batch = Dim::UNKNOWN;
    }
    // With the input's rank unknown the output's is too, and `k` (then
    // read only from block_shape's shape) sizes nothing.
    let mut dims = match input.rank() {
        Some(_) => vec![Dim::UNKNOWN; k + 1],
        None => Vec::new(),
    };
    if let Some(first) = dims.first_mut() {
        *first = batch;
    }
    let amounts = c
        .input_ints(2)?
        .filter(|a| Some(a.len()) == k.checked_mul(2));
    if let Some(amounts) = amounts {
        for (d, pair) in amounts.chunks_exact(2).enumerate() {
            let (start, end) = (pair[0], pair[1]);
            if start < 0 || end < 0 {
                return Err(invalid(match direction {
                    Direction::SpaceToBatch => "paddings cannot be negative",
                    Direction::BatchToSpace => "crops cannot be negative",
                }));
            }
            let (Some(block), Some(at), true) =
                (&block, i64::try_from(d + 1).ok(), d + 1 < dims.len())
            else {
                continue;
            };
            let size = input.dim(at)?;
            dims[d + 1] = match direction {
                Direction::SpaceToBatch => size.add(start)?.add(end)?.divide(block[d], true),
                Direction::BatchToSpace => size.multiply(block[d])?.subtract(start)?.subtract(end),
            }
            .map_err(|e| c.error(e))?;
        }
    }
    if input.rank().is_none() {
        return c.set_output(0, Shape::unknown());
    }
    let rest = input.subshape_from(i64::try_from(k + 1).unwrap_or(i64::MAX))?;
    c.set_output(0, Shape::new(dims).concatenate(&rest))
}

/// `DepthToSpace`: an image in `data_format` (NHWC, NCHW or NCHW_VECT_C)
/// with its height and width times `block_size` and its depth divided
/// (exactly) by `block_size²`.
pub fn depth_to_space(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    rearrangement(c, true)
}

/// `SpaceToDepth`: an image in `data_format` with its height and width
/// divided (exactly) by `block_size` and its depth times `block_size²`.
pub fn space_to_depth(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    rearrangement(c, false)
}

/// TF's shape function of `DepthToSpace` (`to_space`: moving depth into
/// space) and `SpaceToDepth`.
fn rearrangement(c: &mut InferenceContext<'_>, to_space: bool) -> Result<(), ShapeError> {
    let format = ImageFormat::parse(c, true)?;
    let input = c.input_with_rank(0, format.rank())?;
    let block = c.attr::<i64>("block_size")?;
    let at = |d: char| input.dim(i64::try_from(format.index(d)).unwrap_or(0));
    let (batch, height, width, depth) = (at('N')?, at('H')?, at('W')?, at('C')?);
    let square = block.checked_mul(block).ok_or(ShapeError::DimOverflow {
        a: block,
        op: '*',
        b: block,
    })?;
    let (height, width, depth) = if to_space {
        (
            height.multiply(block),
            width.multiply(block),
            depth.divide(square, true),
        )
    } else {
        (
            height.divide(block, true),
            width.divide(block, true),
            depth.multiply(square),
        )
    };
    let wrap = |r: Result<Dim, ShapeError>| r.map_err(|e| c.error(e));
    let (height, width, depth) = (wrap(height)?, wrap(width)?, wrap(depth)?);
    let shape = match (format.layout, format.vect_c) {
        (DataFormat::Nhwc, _) => Shape::new([batch, height, width, depth]),
        (DataFormat::Nchw, false) => Shape::new([batch, depth, height, width]),
        // TF's MakeShapeFromFormat: the inner depth is 4.
        (DataFormat::Nchw, true) => Shape::new([batch, depth, height, width, Dim::new(4)]),
    };
    c.set_output(0, shape)
}
