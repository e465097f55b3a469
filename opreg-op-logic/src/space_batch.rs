//! `SpaceToBatchND`'s and `BatchToSpaceND`'s checks (TF's
//! `SpaceToBatchOpCompute` and `BatchToSpaceOpCompute`, with their
//! messages, in their order) and the geometry both compute, shared by the
//! CPU and GPU kernels.
//!
//! Both ops move elements between a "space" tensor `[batch, s_1, ..., s_k,
//! depth]` and a "batch" tensor `[prod(block) * batch, p_1, ..., p_k,
//! depth]`: batch element `(j * batch + n, p_1, ..., p_k, d)`, where `j`
//! is the row-major index of the block offsets `(o_1, ..., o_k)`, is the
//! space element `(n, x_1, ..., x_k, d)` with `x_i = p_i * block_i + o_i -
//! before_i`, or padding when some `x_i` is outside `0..s_i`.
//! `SpaceToBatchND` fills the batch tensor from the space tensor,
//! `BatchToSpaceND` the (cropped) space tensor from the batch tensor.
//!
//! Block dimensions with block size 1 and no padding (or cropping) at the
//! start of the list are merged into the batch, those at the end into the
//! depth (TF does the same); when none is left the output is the input.
//!
//! ```
//! use opreg_op_logic::space_batch::space_to_batch;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let block = Tensor::from_vec([2], vec![2i32, 2]).unwrap();
//! let paddings = Tensor::from_vec([2, 2], vec![0i32, 0, 1, 1]).unwrap();
//! let g = space_to_batch(&TensorShape::new([1, 2, 2, 3]).unwrap(), &block, &paddings).unwrap();
//! assert_eq!(g.out_shape.dims(), &[4, 1, 2, 3]);
//! let plan = g.plan.unwrap();
//! assert_eq!((plan.batch, plan.depth, plan.dims.len()), (1, 3, 2));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, int_values, is_vector, shape_of, to_dim};

/// The most block dimensions left after merging (TF's
/// `kMaxSpaceToBatchBlockDims`).
pub const MAX_BLOCK_DIMS: usize = 4;

/// One block dimension that is left after merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDim {
    /// The block size.
    pub block: usize,
    /// The size in the space tensor (`SpaceToBatchND`'s input,
    /// `BatchToSpaceND`'s cropped output).
    pub space: usize,
    /// The size in the batch tensor (`SpaceToBatchND`'s output,
    /// `BatchToSpaceND`'s input).
    pub batched: usize,
    /// The padding (or cropping) before the space tensor's elements.
    pub before: usize,
}

impl BlockDim {
    /// The space index of batch index `p` at block offset `offset`, if it
    /// is inside the space tensor (not padding).
    pub fn space_index(&self, p: usize, offset: usize) -> Option<usize> {
        (p * self.block + offset)
            .checked_sub(self.before)
            .filter(|&x| x < self.space)
    }

    /// The (batch index, block offset) of space index `x` (always inside
    /// the batch tensor).
    pub fn batch_index(&self, x: usize) -> (usize, usize) {
        let t = x + self.before;
        (t / self.block, t % self.block)
    }
}

/// The geometry of a move between the space and the batch tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    /// The space tensor's batch (the input's batch times the merged
    /// leading dimensions).
    pub batch: usize,
    /// The block dimensions left (1 to [`MAX_BLOCK_DIMS`]).
    pub dims: SmallVec<[BlockDim; 4]>,
    /// The product of the dimensions after the block dimensions left.
    pub depth: usize,
    /// The product of the block sizes.
    pub blocks: usize,
}

/// A checked `SpaceToBatchND` or `BatchToSpaceND`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceBatch {
    /// The output's shape.
    pub out_shape: TensorShape,
    /// `None` when no block dimension is left: the output is the input.
    pub plan: Option<BlockPlan>,
}

/// Which op is checked (their messages differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    SpaceToBatch,
    BatchToSpace,
}

/// The values of `block_shape` and of `amounts` (paddings or crops) once
/// their shapes are checked, and the number of leading and trailing block
/// dimensions that merge away.
struct Amounts {
    block: SmallVec<[i64; 4]>,
    amounts: SmallVec<[i64; 8]>,
    prefix: usize,
    suffix: usize,
}

/// The shape checks both ops start with, in TF's order; `what` names the
/// amounts (`paddings`, `crops`).
fn read_amounts(
    input: &TensorShape,
    block_shape: &Tensor,
    amounts: &Tensor,
    what: &str,
) -> Result<Amounts, KernelError> {
    registry_core::kernel_ensure!(
        is_vector(block_shape.shape()),
        "block_shape rank should be 1 instead of {}",
        block_shape.shape().rank()
    );
    let k = block_shape.shape().dims()[0];
    registry_core::kernel_ensure!(
        input.rank() > k,
        "input rank should be >= {} instead of {}",
        k + 1,
        input.rank()
    );
    let ashape = amounts.shape();
    registry_core::kernel_ensure!(
        ashape.rank() == 2 && ashape.dims() == [k, 2],
        "{what} should have shape [{k}, 2] instead of {ashape}"
    );
    let block: SmallVec<[i64; 4]> = int_values(block_shape)?.into_iter().collect();
    let amounts: SmallVec<[i64; 8]> = int_values(amounts)?.into_iter().collect();
    let trivial = |d: usize| amounts[2 * d] == 0 && amounts[2 * d + 1] == 0 && block[d] == 1;
    let prefix = (0..k).take_while(|&d| trivial(d)).count();
    let suffix = (prefix..k).rev().take_while(|&d| trivial(d)).count();
    Ok(Amounts {
        block,
        amounts,
        prefix,
        suffix,
    })
}

/// TF's `MultiplyWithoutOverflow`: the product of two non-negative
/// numbers, or -1 when it overflows (or either is negative).
fn multiply_without_overflow(a: i64, b: i64) -> i64 {
    if a < 0 || b < 0 {
        return -1;
    }
    a.checked_mul(b).unwrap_or(-1)
}

/// The product of the block sizes: positive, or TF's message.
fn block_product(block: &[i64], direction: Direction) -> Result<usize, KernelError> {
    let mut product: i64 = 1;
    for (i, &b) in block.iter().enumerate() {
        if direction == Direction::SpaceToBatch {
            registry_core::kernel_ensure!(
                b >= 1,
                "All values in block_shape must be positive, got value, {b} at index {i}."
            );
            product = multiply_without_overflow(product, b);
        } else {
            // BatchToSpaceOpCompute multiplies plainly; an overflow is
            // reported as TF's MultiplyWithoutOverflow would.
            product = product.checked_mul(b).unwrap_or(-1);
        }
    }
    registry_core::kernel_ensure!(
        product > 0,
        "Product of block sizes must be positive, got {product}"
    );
    // BatchToSpaceND only checks the product: an even number of negative
    // sizes must still be refused before any index is computed.
    if let Some((i, &b)) = block.iter().enumerate().find(|&(_, &b)| b < 1) {
        return Err(KernelError::invalid_argument(format!(
            "All values in block_shape must be positive, got value, {b} at index {i}."
        )));
    }
    to_dim(product).ok_or_else(|| KernelError::internal("block product out of range"))
}

/// Too many block dimensions left after merging.
fn check_block_dims(left: usize) -> Result<(), KernelError> {
    registry_core::kernel_ensure!(
        left <= MAX_BLOCK_DIMS,
        "Maximum number of non-combined block dimensions is {left} but must not exceed \
         {MAX_BLOCK_DIMS}"
    );
    Ok(())
}

/// `SpaceToBatchND`'s checks and geometry: `input` is the space tensor,
/// `block_shape` a host integer vector of `k` sizes (each at least 1),
/// `paddings` a host integer `[k, 2]` matrix of non-negative paddings with
/// each padded dimension divisible by its block size.
pub fn space_to_batch(
    input: &TensorShape,
    block_shape: &Tensor,
    paddings: &Tensor,
) -> Result<SpaceBatch, KernelError> {
    let Amounts {
        block,
        amounts,
        prefix,
        suffix,
    } = read_amounts(input, block_shape, paddings, "paddings")?;
    let blocks = block_product(&block, Direction::SpaceToBatch)?;
    let k = block.len();
    let left = k - prefix - suffix;
    check_block_dims(left)?;
    if left == 0 {
        return Ok(SpaceBatch {
            out_shape: input.clone(),
            plan: None,
        });
    }
    let in_dims = input.dims();
    let out_batch = multiply_without_overflow(dim_i64(in_dims[0]), dim_i64(blocks));
    let out_batch = to_dim(out_batch).ok_or_else(|| {
        KernelError::invalid_argument(format!(
            "Negative output dimension size caused by overflow when multiplying {} and {blocks}",
            in_dims[0]
        ))
    })?;
    let mut out: Dims = Dims::new();
    out.push(out_batch);
    out.extend_from_slice(&in_dims[1..=prefix]);
    let batch = in_dims[..=prefix].iter().product();
    let mut dims: SmallVec<[BlockDim; 4]> = SmallVec::new();
    for d in prefix..k - suffix {
        let (start, end) = (amounts[2 * d], amounts[2 * d + 1]);
        let (Some(before), Some(after)) = (to_dim(start), to_dim(end)) else {
            return Err(KernelError::invalid_argument(
                "Paddings must be non-negative",
            ));
        };
        let space = in_dims[d + 1];
        let b = to_dim(block[d]).unwrap_or(1);
        let padded = space
            .checked_add(before)
            .and_then(|n| n.checked_add(after))
            .filter(|&n| i64::try_from(n).is_ok())
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Encountered overflow when padding dimension {} of size {space} with \
                     {start} and {end}",
                    d + 1
                ))
            })?;
        registry_core::kernel_ensure!(
            padded % b == 0,
            "padded_shape[{d}]={padded} is not divisible by block_shape[{d}]={b}"
        );
        let batched = padded / b;
        out.push(batched);
        dims.push(BlockDim {
            block: b,
            space,
            batched,
            before,
        });
    }
    finish(out, &in_dims[k - suffix + 1..], batch, dims, blocks)
}

/// The geometry once the blocked dimensions are planned: `out` (the
/// output's dims so far) gains the trailing dims `rest`, which move as one
/// contiguous run per element.
fn finish(
    mut out: Dims,
    rest: &[usize],
    batch: usize,
    dims: SmallVec<[BlockDim; 4]>,
    blocks: usize,
) -> Result<SpaceBatch, KernelError> {
    out.extend_from_slice(rest);
    Ok(SpaceBatch {
        out_shape: shape_of(&out)?,
        plan: Some(BlockPlan {
            batch,
            dims,
            depth: rest.iter().product(),
            blocks,
        }),
    })
}

/// `BatchToSpaceND`'s checks and geometry: `input` is the batch tensor,
/// whose batch must be divisible by the product of `block_shape` (a host
/// integer vector of `k` sizes); `crops` a host integer `[k, 2]` matrix of
/// non-negative crops, at most each dimension times its block size.
pub fn batch_to_space(
    input: &TensorShape,
    block_shape: &Tensor,
    crops: &Tensor,
) -> Result<SpaceBatch, KernelError> {
    let Amounts {
        block,
        amounts,
        prefix,
        suffix,
    } = read_amounts(input, block_shape, crops, "crops")?;
    let blocks = block_product(&block, Direction::BatchToSpace)?;
    let in_dims = input.dims();
    registry_core::kernel_ensure!(
        in_dims[0].is_multiple_of(blocks),
        "Input batch dimension ({}) is not divisible by product of block sizes ({blocks})",
        in_dims[0]
    );
    let k = block.len();
    let left = k - prefix - suffix;
    check_block_dims(left)?;
    if left == 0 {
        return Ok(SpaceBatch {
            out_shape: input.clone(),
            plan: None,
        });
    }
    let mut out: Dims = Dims::new();
    out.push(in_dims[0] / blocks);
    out.extend_from_slice(&in_dims[1..=prefix]);
    let batch = in_dims[1..=prefix]
        .iter()
        .product::<usize>()
        .saturating_mul(in_dims[0] / blocks);
    let mut dims: SmallVec<[BlockDim; 4]> = SmallVec::new();
    for d in prefix..k - suffix {
        let (start, end) = (amounts[2 * d], amounts[2 * d + 1]);
        let (Some(before), Some(_)) = (to_dim(start), to_dim(end)) else {
            return Err(KernelError::invalid_argument("Crops must be non-negative"));
        };
        let batched = in_dims[d + 1];
        let b = to_dim(block[d]).unwrap_or(1);
        let cropped = dim_i64(batched)
            .checked_mul(block[d])
            .and_then(|n| n.checked_sub(start))
            .and_then(|n| n.checked_sub(end))
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Encountered overflow when computing cropped_shape[{d}]"
                ))
            })?;
        let space = to_dim(cropped).ok_or_else(|| {
            KernelError::invalid_argument(format!(
                "cropped_shape[{d}]={cropped} must be non-negative"
            ))
        })?;
        out.push(space);
        dims.push(BlockDim {
            block: b,
            space,
            batched,
            before,
        });
    }
    finish(out, &in_dims[k - suffix + 1..], batch, dims, blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn ints(dims: &[usize], v: Vec<i64>) -> Tensor {
        Tensor::from_vec(dims.to_vec(), v).unwrap()
    }

    fn s2b(input: &[usize], block: Vec<i64>, pads: Vec<i64>) -> Result<SpaceBatch, String> {
        let k = block.len();
        space_to_batch(&shape(input), &ints(&[k], block), &ints(&[k, 2], pads))
            .map_err(|e| e.to_string())
    }

    fn b2s(input: &[usize], block: Vec<i64>, crops: Vec<i64>) -> Result<SpaceBatch, String> {
        let k = block.len();
        batch_to_space(&shape(input), &ints(&[k], block), &ints(&[k, 2], crops))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn space_to_batch_geometry() {
        let g = s2b(&[2, 4, 6, 3], vec![2, 3], vec![0, 0, 0, 0]).unwrap();
        assert_eq!(g.out_shape.dims(), &[12, 2, 2, 3]);
        let p = g.plan.unwrap();
        assert_eq!((p.batch, p.depth, p.blocks), (2, 3, 6));
        // A leading trivial block dimension merges into the batch, a
        // trailing one into the depth.
        let g = s2b(&[2, 5, 4, 7, 3], vec![1, 2, 1], vec![0, 0, 1, 1, 0, 0]).unwrap();
        assert_eq!(g.out_shape.dims(), &[4, 5, 3, 7, 3]);
        let p = g.plan.unwrap();
        assert_eq!((p.batch, p.depth, p.dims.len()), (10, 21, 1));
        assert_eq!(p.dims[0].space_index(0, 0), None);
        assert_eq!(p.dims[0].space_index(0, 1), Some(0));
        // Nothing left: the input is the output.
        let g = s2b(&[1, 2, 3, 2], vec![1, 1], vec![0, 0, 0, 0]).unwrap();
        assert_eq!((g.out_shape.dims(), g.plan), (&[1, 2, 3, 2][..], None));
    }

    #[test]
    fn space_to_batch_is_checked_as_tf_does() {
        assert_eq!(
            s2b(&[1, 2, 3, 2], vec![2, 2], vec![0, 0, 0, 0]).unwrap_err(),
            "padded_shape[1]=3 is not divisible by block_shape[1]=2"
        );
        assert_eq!(
            s2b(&[1, 2, 3, 2], vec![2, 0], vec![0, 0, 0, 0]).unwrap_err(),
            "All values in block_shape must be positive, got value, 0 at index 1."
        );
        assert_eq!(
            s2b(&[1, 2, 4, 2], vec![2, 2], vec![-1, 1, 0, 0]).unwrap_err(),
            "Paddings must be non-negative"
        );
        assert_eq!(
            s2b(&[4, 4], vec![2, 2], vec![0, 0, 0, 0]).unwrap_err(),
            "input rank should be >= 3 instead of 2"
        );
        let err = space_to_batch(
            &shape(&[1, 2, 2, 1]),
            &ints(&[1, 2], vec![2, 2]),
            &ints(&[2, 2], vec![0; 4]),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "block_shape rank should be 1 instead of 2"
        );
        let err = space_to_batch(
            &shape(&[1, 2, 2, 1]),
            &ints(&[2], vec![2, 2]),
            &ints(&[2, 3], vec![0; 6]),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "paddings should have shape [2, 2] instead of [2,3]"
        );
        assert_eq!(
            s2b(&[1, 2, 2, 2, 2, 2, 1], vec![2; 5], vec![0; 10]).unwrap_err(),
            "Maximum number of non-combined block dimensions is 5 but must not exceed 4"
        );
        assert_eq!(
            s2b(&[1 << 40, 2, 1], vec![1 << 30], vec![0, (1 << 30) - 2]).unwrap_err(),
            format!(
                "Negative output dimension size caused by overflow when multiplying {} and {}",
                1u64 << 40,
                1u64 << 30
            )
        );
        assert!(s2b(&[1, 2, 1], vec![2], vec![i64::MAX, 0]).is_err());
    }

    #[test]
    fn batch_to_space_geometry_and_checks() {
        let g = b2s(&[12, 2, 2, 2], vec![2, 3], vec![0, 0, 1, 2]).unwrap();
        assert_eq!(g.out_shape.dims(), &[2, 4, 3, 2]);
        let p = g.plan.unwrap();
        assert_eq!(p.dims[1].batch_index(0), (0, 1));
        assert_eq!(p.dims[1].batch_index(2), (1, 0));
        assert_eq!(
            b2s(&[8, 2, 3, 1], vec![3, 1], vec![0, 0, 0, 0]).unwrap_err(),
            "Input batch dimension (8) is not divisible by product of block sizes (3)"
        );
        assert_eq!(
            b2s(&[8, 2, 3, 1], vec![0, 2], vec![0; 4]).unwrap_err(),
            "Product of block sizes must be positive, got 0"
        );
        assert_eq!(
            b2s(&[8, 2, 3, 1], vec![-2, -2], vec![0; 4]).unwrap_err(),
            "All values in block_shape must be positive, got value, -2 at index 0."
        );
        assert_eq!(
            b2s(&[8, 2, 3, 1], vec![2, 2], vec![-1, 0, 0, 0]).unwrap_err(),
            "Crops must be non-negative"
        );
        assert_eq!(
            b2s(&[8, 2, 3, 1], vec![2, 2], vec![3, 2, 0, 0]).unwrap_err(),
            "cropped_shape[0]=-1 must be non-negative"
        );
        let err = batch_to_space(
            &shape(&[8, 2, 3, 1]),
            &ints(&[2], vec![2, 2]),
            &ints(&[2], vec![0, 0]),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "crops should have shape [2, 2] instead of [2]"
        );
        assert!(b2s(&[8, 2, 1], vec![2], vec![i64::MAX, i64::MAX]).is_err());
    }
}
