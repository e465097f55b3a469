//! `Slice`: the block of `size` elements starting at `begin` (`size[i] = -1`
//! takes the rest of dimension `i`), validated as TF's
//! `SharedSliceValidation` does and copied with a [`StridedPlan`].

use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::standard_ops::Slice;
use smallvec::SmallVec;

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use crate::util::index::{dim_i64, int_values, is_vector, shape_of, strides};

/// `Slice` for every type TF's CPU kernel has.
#[kernel(
    op = Slice,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    host_memory = ["begin", "size"]
)]
fn slice(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let begin_t = ctx.input(1)?;
    let size_t = ctx.input(2)?;
    let rank = input.shape().rank();
    registry_core::kernel_ensure!(
        is_vector(begin_t.shape())
            && is_vector(size_t.shape())
            && begin_t.num_elements() == rank
            && size_t.num_elements() == rank,
        "Expected begin and size arguments to be 1-D tensors of size {rank}, but got shapes {} \
         and {} instead.",
        begin_t.shape(),
        size_t.shape()
    );
    let begin = int_values(begin_t)?;
    let mut size = int_values(size_t)?;
    let dims = input.dims();
    let mut identity = true;
    let mut out_dims: SmallVec<[usize; 8]> = SmallVec::with_capacity(rank);
    for i in 0..rank {
        let dim = dim_i64(dims[i]);
        let b = begin[i];
        if size[i] == -1 {
            size[i] = dim.saturating_sub(b);
        }
        let s = size[i];
        if dim == 0 {
            registry_core::kernel_ensure!(
                b == 0 && s == 0,
                "Expected begin[{i}] == 0 (got {b}) and size[{i}] == 0 (got {s}) when \
                 input.dim_size({i}) == 0"
            );
        } else {
            registry_core::kernel_ensure!(
                0 <= b && b <= dim,
                "Expected begin[{i}] in [0, {dim}], but got {b}"
            );
            registry_core::kernel_ensure!(
                0 <= s && b.saturating_add(s) <= dim,
                "Expected size[{i}] in [0, {}], but got {s}",
                dim - b
            );
        }
        identity &= b == 0 && s == dim;
        // In [0, dim] by the checks above.
        out_dims.push(usize::try_from(s).unwrap_or(0));
    }
    let out_shape = shape_of(&out_dims)?;
    if identity {
        let input = ctx.take_input(0)?;
        return ctx.set_output(0, input);
    }
    let in_strides = strides(dims);
    let steps: SmallVec<[i64; 8]> = in_strides.iter().map(|&s| dim_i64(s)).collect();
    let base = if out_shape.num_elements() == 0 {
        0
    } else {
        begin
            .iter()
            .zip(&steps)
            .try_fold(0i64, |acc, (&b, &s)| b.checked_mul(s)?.checked_add(acc))
            .ok_or_else(|| KernelError::internal("slice offset overflows"))?
    };
    let plan = StridedPlan::new(input.num_elements(), base, &out_dims, &steps)?;
    let input = ctx.take_input(0)?;
    let out = ctx.allocate_output(0, out_shape)?;
    run_on_elements(&plan, &[&input], out)
}
