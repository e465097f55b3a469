//! `Reshape`, `ExpandDims` and `Squeeze` on the GPU: the output shares the
//! input's device buffer with a new shape (no copy, no launch). The
//! validation and messages are `kernels-cpu`'s (TF's).

use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::{ExpandDims, Reshape, Squeeze};
use registry_core::tensor::TensorShape;
use smallvec::SmallVec;

use super::index::{dim_i64, int_values, single_int};

/// TF's `TensorShape::MaxDimensions()`.
const MAX_DIMS: usize = 254;

/// Sets output 0 to input 0 with `shape` (same buffer).
fn forward_reshaped(ctx: &mut OpKernelContext<'_>, shape: TensorShape) -> Result<(), KernelError> {
    let input = ctx.take_input(0)?;
    let output = input.reshape(shape)?;
    drop(input);
    ctx.set_output(0, output)
}

/// `Reshape`, with at most one `-1` in `shape` (inferred).
#[kernel(
    op = Reshape,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tshape = [int32, int64],
    host_memory = ["shape"]
)]
fn reshape_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let sizes = ctx.input(1)?;
    registry_core::kernel_ensure!(
        sizes.shape().rank() <= 1,
        "sizes input must be 1-D, not {}",
        sizes.shape()
    );
    registry_core::kernel_ensure!(
        sizes.num_elements() < MAX_DIMS,
        "too many dimensions: must be < {MAX_DIMS}, but received {}",
        sizes.num_elements()
    );
    let sizes = int_values(sizes)?;
    let shape = reshape_target(input.shape(), &sizes)?;
    forward_reshaped(ctx, shape)
}

/// The shape `Reshape` produces for an input of `input` shape (TF's
/// `ReshapeOp::Compute` with `ValidateSizes`).
fn reshape_target(input: &TensorShape, sizes: &[i64]) -> Result<TensorShape, KernelError> {
    let mut dims: SmallVec<[usize; 8]> = SmallVec::with_capacity(sizes.len());
    let mut product: usize = 1;
    let mut unknown: Option<usize> = None;
    let mut has_zero_dim = false;
    for (d, &size) in sizes.iter().enumerate() {
        if size == -1 {
            if let Some(first) = unknown {
                return Err(KernelError::invalid_argument(format!(
                    "Only one input size may be -1, not both {first} and {d}"
                )));
            }
            unknown = Some(d);
            dims.push(1);
        } else if size < 0 {
            return Err(KernelError::invalid_argument(format!(
                "Size {d} must be non-negative, not {size}"
            )));
        } else if size == 0 {
            dims.push(0);
            has_zero_dim = true;
        } else {
            let too_many = || {
                let all: Vec<String> = sizes.iter().map(i64::to_string).collect();
                KernelError::invalid_argument(format!(
                    "Shape [{}] has too many elements",
                    all.join(", ")
                ))
            };
            let size = usize::try_from(size).map_err(|_| too_many())?;
            product = product
                .checked_mul(size)
                .filter(|&p| i64::try_from(p).is_ok())
                .ok_or_else(too_many)?;
            dims.push(size);
        }
    }
    let input_count = input.num_elements();
    if let Some(unknown) = unknown {
        // Zero input dimensions are left out of the count when `sizes` has a
        // zero, so that the other dimensions can still be inferred.
        let mut count: usize = 1;
        let mut input_has_zero_dim = false;
        for &d in input.dims() {
            if d > 0 || !has_zero_dim {
                count = count.saturating_mul(d);
            } else {
                input_has_zero_dim = true;
            }
        }
        let missing = count / product;
        if !input_has_zero_dim && product.checked_mul(missing) != Some(count) {
            return Err(KernelError::invalid_argument(format!(
                "Input to reshape is a tensor with {count} values, but the requested shape \
                 requires a multiple of {product}"
            )));
        }
        dims[unknown] = missing;
    }
    let shape = TensorShape::new(&dims)
        .ok()
        .filter(|s| s.num_elements() == input_count);
    shape.ok_or_else(|| {
        let requested = dims
            .iter()
            .try_fold(1u128, |n, &d| n.checked_mul(d as u128))
            .map_or_else(|| "too many".to_owned(), |n| n.to_string());
        KernelError::invalid_argument(format!(
            "Input to reshape is a tensor with {input_count} values, but the requested shape \
             has {requested}"
        ))
    })
}

/// `ExpandDims`: inserts a dimension of 1 at `dim` (`-1 - rank ..= rank`).
#[kernel(
    op = ExpandDims,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tdim = [int32, int64],
    host_memory = ["dim"]
)]
fn expand_dims_gpu(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let dim = single_int(ctx.input(1)?)?.ok_or_else(|| {
        KernelError::invalid_argument("'dim' must be a tensor with a single value")
    })?;
    let rank = dim_i64(input.shape().rank());
    registry_core::kernel_ensure!(
        dim >= -1 - rank && dim <= rank,
        "Tried to expand dim index {dim} for tensor with {rank} dimensions."
    );
    let at = if dim < 0 { dim + rank + 1 } else { dim };
    let mut dims: SmallVec<[usize; 8]> = SmallVec::from_slice(input.dims());
    dims.insert(usize::try_from(at).unwrap_or(0), 1);
    let shape = TensorShape::new(&dims)?;
    forward_reshaped(ctx, shape)
}

/// `Squeeze`: removes the dimensions of size 1 (all, or those listed in
/// `squeeze_dims`, which must have size 1).
#[kernel(
    op = Squeeze,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
#[derive(Debug)]
pub struct SqueezeGpu {
    squeeze_dims: Vec<i32>,
}

impl BuildKernel for SqueezeGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            squeeze_dims: ctx.attr("squeeze_dims")?,
        })
    }
}

impl OpKernel for SqueezeGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?;
        let dims = input.dims();
        let rank = dims.len();
        let rank_i = dim_i64(rank);
        let mut squeeze = vec![false; rank];
        for &dim in &self.squeeze_dims {
            let dim = i64::from(dim);
            registry_core::kernel_ensure!(
                dim >= -rank_i && dim < rank_i,
                "Tried to squeeze dim index {dim} for tensor with {rank} dimensions."
            );
            let d = if dim < 0 { dim + rank_i } else { dim };
            if let Some(s) = usize::try_from(d).ok().and_then(|d| squeeze.get_mut(d)) {
                *s = true;
            }
        }
        let mut out: SmallVec<[usize; 8]> = SmallVec::new();
        for (i, &d) in dims.iter().enumerate() {
            if self.squeeze_dims.is_empty() {
                if d != 1 {
                    out.push(d);
                }
            } else if squeeze[i] {
                registry_core::kernel_ensure!(
                    d == 1,
                    "Can not squeeze dim[{i}], expected a dimension of 1, got {d}"
                );
            } else {
                out.push(d);
            }
        }
        let shape = TensorShape::new(&out)?;
        forward_reshaped(ctx, shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(input: &[usize], sizes: &[i64]) -> Result<Vec<usize>, String> {
        reshape_target(&TensorShape::new(input).unwrap(), sizes)
            .map(|s| s.dims().to_vec())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reshape_targets_are_inferred_and_checked_as_tf_does() {
        assert_eq!(target(&[2, 3, 4], &[4, -1]), Ok(vec![4, 6]));
        assert_eq!(target(&[0, 3], &[-1, 0]), Ok(vec![3, 0]));
        assert_eq!(
            target(&[2, 3], &[]),
            Err("Input to reshape is a tensor with 6 values, but the requested shape has 1".into())
        );
        assert_eq!(
            target(&[2, 3], &[-1, -1]),
            Err("Only one input size may be -1, not both 0 and 1".into())
        );
        assert_eq!(
            target(&[2, 3], &[4, -1]),
            Err(
                "Input to reshape is a tensor with 6 values, but the requested shape requires \
                 a multiple of 4"
                    .into()
            )
        );
        assert_eq!(
            target(&[2, 3], &[-2, 3]),
            Err("Size 0 must be non-negative, not -2".into())
        );
    }
}
