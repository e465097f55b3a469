// Constraints on attrs that are not `type` attrs: AddN's `N` (int) and
// MatMul's `transpose_a` (bool).
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::{AddN, MatMul};

#[kernel(op = AddN, device = CPU, T = [float], N = [int32])]
fn add_n(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

#[kernel(op = MatMul, device = CPU, T = [float], transpose_a = [bool])]
fn mat_mul(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {}
