//! `DepthToSpace`'s and `SpaceToDepth`'s checks (TF's `DepthToSpaceOp` and
//! `SpaceToDepthOp`, with their messages) and the geometry of their NHWC
//! layout, shared by the CPU and GPU kernels.
//!
//! Both ops see the depth tensor `[batch, h, w, block, block, depth]` and
//! the space tensor `[batch, h, block, w, block, depth]` as the same
//! elements in two orders: `DepthToSpace` reads the first and writes the
//! second, `SpaceToDepth` the reverse.
//!
//! ```
//! use opreg_op_logic::depth_space::depth_to_space;
//! use registry_core::tensor::TensorShape;
//!
//! let g = depth_to_space(&TensorShape::new([1, 2, 3, 8]).unwrap(), 2).unwrap();
//! assert_eq!(g.out_shape.dims(), &[1, 4, 6, 2]);
//! assert_eq!((g.height, g.width, g.depth, g.block), (2, 3, 2, 2));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;

use super::index::shape_of;

/// The geometry of a rearrangement, in the depth tensor's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rearrangement {
    /// The batch.
    pub batch: usize,
    /// The depth tensor's height (the space tensor's divided by `block`).
    pub height: usize,
    /// The depth tensor's width (the space tensor's divided by `block`).
    pub width: usize,
    /// The space tensor's depth (the depth tensor's divided by `block²`).
    pub depth: usize,
    /// The block size.
    pub block: usize,
    /// The output's shape.
    pub out_shape: TensorShape,
}

/// The `block_size` attr: more than 1 (TF's kernels check it again).
pub fn block_size(block_size: i64) -> Result<usize, KernelError> {
    usize::try_from(block_size)
        .ok()
        .filter(|&b| b > 1)
        .ok_or_else(|| {
            KernelError::invalid_argument(format!("Block size should be > 1: {block_size}"))
        })
}

/// The `data_format` a CPU kernel accepts: TF registers its CPU kernels
/// for NHWC only.
pub fn check_cpu_data_format(data_format: &str) -> Result<(), KernelError> {
    registry_core::kernel_ensure!(
        data_format == "NHWC",
        "Only NHWC data_format supported on CPU. Got {data_format}"
    );
    Ok(())
}

/// The four dimensions of a rank-4 input.
fn nhwc(input: &TensorShape) -> Result<[usize; 4], KernelError> {
    <[usize; 4]>::try_from(input.dims()).map_err(|_| {
        KernelError::invalid_argument(format!(
            "Input rank should be: 4 instead of: {}",
            input.rank()
        ))
    })
}

/// `DepthToSpace`'s checks on an NHWC `input`: rank 4, depth divisible by
/// `block_size²`.
pub fn depth_to_space(input: &TensorShape, block_size: i64) -> Result<Rearrangement, KernelError> {
    let block = self::block_size(block_size)?;
    let [batch, height, width, in_depth] = nhwc(input)?;
    let square = block.saturating_mul(block);
    registry_core::kernel_ensure!(
        in_depth % square == 0,
        "Input depth dimension {in_depth} should be divisible by: {square}"
    );
    let depth = in_depth / square;
    let grow = |d: usize| {
        d.checked_mul(block)
            .ok_or_else(|| KernelError::invalid_argument("DepthToSpace: output size overflow"))
    };
    let out_shape = shape_of(&[batch, grow(height)?, grow(width)?, depth])?;
    Ok(Rearrangement {
        batch,
        height,
        width,
        depth,
        block,
        out_shape,
    })
}

/// `SpaceToDepth`'s checks on an NHWC `input`: rank 4, height and width
/// divisible by `block_size`.
pub fn space_to_depth(input: &TensorShape, block_size: i64) -> Result<Rearrangement, KernelError> {
    let block = self::block_size(block_size)?;
    let [batch, in_height, in_width, depth] = nhwc(input)?;
    registry_core::kernel_ensure!(
        in_width % block == 0 && in_height % block == 0,
        "Image width {in_width} and height {in_height} should be divisible by block_size: {block}"
    );
    let (height, width) = (in_height / block, in_width / block);
    let out_depth = depth
        .checked_mul(block * block)
        .ok_or_else(|| KernelError::invalid_argument("SpaceToDepth: output size overflow"))?;
    let out_shape = shape_of(&[batch, height, width, out_depth])?;
    Ok(Rearrangement {
        batch,
        height,
        width,
        depth,
        block,
        out_shape,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn geometry_and_checks() {
        let g = space_to_depth(&shape(&[2, 4, 6, 3]), 2).unwrap();
        assert_eq!(g.out_shape.dims(), &[2, 2, 3, 12]);
        assert_eq!((g.height, g.width, g.depth), (2, 3, 3));
        let err = |r: Result<Rearrangement, KernelError>| r.unwrap_err().to_string();
        assert_eq!(
            err(depth_to_space(&shape(&[1, 2, 2, 6]), 2)),
            "Input depth dimension 6 should be divisible by: 4"
        );
        assert_eq!(
            err(depth_to_space(&shape(&[2, 3, 8]), 2)),
            "Input rank should be: 4 instead of: 3"
        );
        assert_eq!(
            err(space_to_depth(&shape(&[1, 3, 4, 2]), 2)),
            "Image width 4 and height 3 should be divisible by block_size: 2"
        );
        assert_eq!(
            err(space_to_depth(&shape(&[1, 2, 2, 2]), 1)),
            "Block size should be > 1: 1"
        );
        assert_eq!(
            check_cpu_data_format("NCHW").unwrap_err().to_string(),
            "Only NHWC data_format supported on CPU. Got NCHW"
        );
        assert!(check_cpu_data_format("NHWC").is_ok());
    }
}
