//! `MatrixBandPart`: each innermost matrix with the elements outside its
//! band zeroed (TF's `T()`: 0, `false`). Rows are filled in parallel: the
//! band's columns copied, the others left zero. The checks are
//! [`opreg_op_logic::band_part`]'s.

use opreg_standard_ops::MatrixBandPart;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::elements::{ElementOp, run_on_elements};
use super::parallel::for_each_row_chunk;
use opreg_op_logic::band_part::{Band, band};

/// Copies each row's band into a zero-filled output.
struct BandPlan(Band);

impl ElementOp for BandPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let band = &self.0;
        let src = inputs
            .first()
            .ok_or_else(|| KernelError::internal("band part without an input"))?;
        if src.len() != out.len() || out.len() != band.batch * band.rows * band.cols {
            return Err(KernelError::internal("band part: sizes differ"));
        }
        for_each_row_chunk(out, band.cols, |row0, chunk| {
            for (r, row) in chunk.chunks_exact_mut(band.cols).enumerate() {
                let global = row0 + r;
                let (start, end) = band.row_range(global % band.rows);
                let at = global * band.cols;
                row[start..end].clone_from_slice(&src[at + start..at + end]);
            }
        });
        Ok(())
    }
}

/// `MatrixBandPart` for the types TF's CPU kernel has.
#[kernel(
    op = MatrixBandPart,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
fn matrix_band_part(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let checked = band(ctx.input(0)?.shape(), ctx.input(1)?, ctx.input(2)?)?;
    let input = ctx.take_input(0)?;
    let Some(b) = checked else {
        return ctx.set_output(0, input);
    };
    // Allocated zero-filled: only the band is written.
    let out = ctx.allocate_output(0, input.shape().clone())?;
    run_on_elements(&BandPlan(b), &[&input], out)
}
