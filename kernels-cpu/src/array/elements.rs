//! Running one data-movement algorithm on the elements of any dtype.
//!
//! The array kernels copy elements without looking at them, so each
//! algorithm is an [`ElementOp`], generic over the element "unit" it moves,
//! and [`run_on_elements`] picks the unit from the dtype at run time:
//! `[u8; N]` for the fixed-size dtypes of `N` bytes (numbers, complex and
//! quantized types alike, viewed through `as_bytes`/`as_mut_bytes`), `bool`
//! (typed views, so that no byte other than 0 or 1 is ever written) and
//! `Vec<u8>` for `DT_STRING`. That is seven instantiations per algorithm,
//! however many dtypes the kernel is registered for.

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, element_size};
use smallvec::SmallVec;

/// A data-movement algorithm: fills `out` from `inputs`, which all hold
/// elements of the output's dtype, viewed as units `T`.
pub(crate) trait ElementOp: Sync {
    /// Runs the algorithm on one unit type.
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError>;
}

/// Runs `op` with `inputs` on the unit type of `out`'s dtype. Every input
/// must have `out`'s dtype and `out` must not be shared.
pub(crate) fn run_on_elements<Op: ElementOp>(
    op: &Op,
    inputs: &[&Tensor],
    out: &mut Tensor,
) -> Result<(), KernelError> {
    let dtype = out.dtype();
    if let Some(bad) = inputs.iter().find(|t| t.dtype() != dtype) {
        return Err(KernelError::internal(format!(
            "an input of dtype {} was given for an output of dtype {}",
            bad.dtype().type_name(),
            dtype.type_name()
        )));
    }
    match dtype {
        DataType::DtString => {
            let srcs = inputs
                .iter()
                .map(|t| t.as_strings())
                .collect::<Result<SmallVec<[_; 4]>, _>>()?;
            op.run(&srcs, out.as_mut_strings()?)
        }
        DataType::DtBool => {
            let srcs = inputs
                .iter()
                .map(|t| t.as_slice::<bool>())
                .collect::<Result<SmallVec<[_; 4]>, _>>()?;
            op.run(&srcs, out.as_mut_slice::<bool>()?)
        }
        _ => match element_size(dtype) {
            Some(1) => run_units::<1, Op>(op, inputs, out),
            Some(2) => run_units::<2, Op>(op, inputs, out),
            Some(4) => run_units::<4, Op>(op, inputs, out),
            Some(8) => run_units::<8, Op>(op, inputs, out),
            Some(16) => run_units::<16, Op>(op, inputs, out),
            _ => Err(KernelError::unimplemented(format!(
                "the array kernels do not support dtype {}",
                dtype.type_name()
            ))),
        },
    }
}

/// Runs `op` on the element bytes grouped in `N`-byte units.
fn run_units<const N: usize, Op: ElementOp>(
    op: &Op,
    inputs: &[&Tensor],
    out: &mut Tensor,
) -> Result<(), KernelError> {
    let srcs = inputs
        .iter()
        .map(|t| t.as_bytes().map(|b| b.as_chunks::<N>().0))
        .collect::<Result<SmallVec<[&[[u8; N]]; 4]>, _>>()?;
    let (dst, _) = out.as_mut_bytes()?.as_chunks_mut::<N>();
    op.run(&srcs, dst)
}
