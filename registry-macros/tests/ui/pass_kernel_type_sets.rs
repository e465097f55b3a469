// TensorFlow's type-set names in a constraint: `realnumbertype` stands for
// its twelve types (TF's order), and mixes with single types.
use opreg_standard_ops::{AddV2, Relu};
use registry_core::kernel::{KernelError, KernelRegistry, OpKernelContext, constraint_types};
use registry_core::kernel;
use registry_core::proto::DataType;

#[kernel(op = AddV2, device = "SetDevice", T = [realnumbertype, complex64])]
fn add(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

#[kernel(op = Relu, device = "SetDevice", T = realnumbertype)]
fn relu<T: registry_core::tensor::TensorElement>(
    _ctx: &mut OpKernelContext<'_>,
) -> Result<(), KernelError> {
    Ok(())
}

fn types(op: &str) -> Vec<DataType> {
    KernelRegistry::global()
        .kernels_for_op(op)
        .into_iter()
        .filter(|r| r.device == "SetDevice")
        .flat_map(|r| constraint_types(r, "T").unwrap_or(&[]).to_vec())
        .collect()
}

fn main() {
    let add = types("AddV2");
    assert_eq!(add.len(), 13);
    assert!(add.contains(&DataType::DtComplex64) && add.contains(&DataType::DtUint64));
    let relu = types("Relu");
    assert_eq!(relu.len(), 12);
    for t in registry_core::spec::REAL_NUMBER_TYPES {
        assert!(relu.contains(t), "{t:?}");
    }
}
