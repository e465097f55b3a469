// label, priority (negative too) and host_memory, as identifiers or strings.
use registry_core::kernel::{KernelError, KernelRegistry, OpKernelContext};
use registry_core::kernel;
use opreg_standard_ops::{ArgMax, ConcatV2};

#[kernel(
    op = ArgMax,
    device = CPU,
    T = [float],
    output_type = [int64],
    host_memory = ["dimension"],
    label = "experimental",
    priority = 3
)]
fn arg_max(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

#[kernel(op = ConcatV2, device = GPU, T = [int32], host_memory = [values, axis, output], priority = -1)]
fn concat_on_host(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

fn main() {
    let kernels = KernelRegistry::global();
    let arg_max = kernels.kernels_for_op("ArgMax");
    assert_eq!(arg_max.len(), 1);
    let def = arg_max[0].kernel_def();
    assert_eq!(def.label, "experimental");
    assert_eq!(def.priority, 3);
    assert_eq!(def.host_memory_arg, ["dimension"]);
    let concat = kernels.kernels_for_op("ConcatV2");
    assert_eq!(concat[0].device, "GPU");
    assert_eq!(concat[0].priority, -1);
    assert_eq!(concat[0].host_memory, ["values", "axis", "output"]);
}
