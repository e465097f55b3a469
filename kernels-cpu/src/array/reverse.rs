//! `ReverseV2`: a [`StridedPlan`] reading the reversed dimensions with
//! negative steps from their last element. The axes are checked by
//! [`opreg_op_logic::reverse`] (TF's messages).

use opreg_standard_ops::ReverseV2;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use smallvec::SmallVec;

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::index::{dim_i64, strides};
use opreg_op_logic::reverse::{Reverse, reversed_axes};

/// `ReverseV2` for every type TF's CPU kernel has.
#[kernel(
    op = ReverseV2,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         string, uint16, uint32, uint64, uint8],
    Tidx = [int32, int64],
    host_memory = ["axis"]
)]
fn reverse_v2(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let reversed = match reversed_axes(input.shape(), ctx.input(1)?)? {
        Reverse::Forward => {
            let input = ctx.take_input(0)?;
            return ctx.set_output(0, input);
        }
        Reverse::Dims(dims) => dims,
    };
    let dims = input.dims().to_vec();
    let in_strides = strides(&dims);
    let mut base = 0i64;
    let mut steps: SmallVec<[i64; 8]> = SmallVec::with_capacity(dims.len());
    for ((&rev, &d), &s) in reversed.iter().zip(&dims).zip(&in_strides) {
        let s = dim_i64(s);
        if rev {
            base += (dim_i64(d) - 1) * s;
            steps.push(-s);
        } else {
            steps.push(s);
        }
    }
    let plan = StridedPlan::new(input.num_elements(), base, &dims, &steps)?;
    let input = ctx.take_input(0)?;
    // Every element is written.
    let out = ctx.allocate_output_to_overwrite(0, input.shape().clone())?;
    run_on_elements(&plan, &[&input], out)
}
