// A non-generic kernel with a type list registers the same code for each
// type, including types with no Rust element type (string, quantized).
use registry_core::kernel::{KernelError, KernelRegistry, OpKernelContext};
use registry_core::proto::DataType;
use registry_core::kernel;
use opreg_standard_ops::Identity;

/// Identity by sharing the input.
#[kernel(op = Identity, device = CPU, T = [string, qint8, quint8, bool, float])]
fn identity(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let x = ctx.take_input(0)?;
    ctx.set_output(0, x)
}

fn main() {
    let regs = KernelRegistry::global().kernels_for_op("Identity");
    assert_eq!(regs.len(), 5);
    let mut types: Vec<DataType> = regs.iter().map(|r| r.constraints[0].types[0]).collect();
    types.sort_by_key(|t| *t as i32);
    assert_eq!(
        types,
        [DataType::DtFloat, DataType::DtString, DataType::DtBool, DataType::DtQint8, DataType::DtQuint8]
    );
    assert!(regs.iter().all(|r| r.kernel_name.ends_with("::identity")));
}
