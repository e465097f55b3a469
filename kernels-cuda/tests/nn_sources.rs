//! Every NVRTC source the GPU nn kernels compile, for every (op, dtype)
//! registered for the GPU, compiles with NVRTC (no GPU needed; skipped,
//! saying so, when libnvrtc is not found: `scripts/install-nvrtc.sh`).
#![cfg(all(feature = "cuda", feature = "nn"))]

use std::collections::BTreeSet;

use kernels_cuda::nn::sources::kernel_sources;
use opreg_cuda::check_compiles;
use registry_core::KernelRegistry;
use registry_core::kernel::DEVICE_GPU;
use registry_core::proto::DataType;

const NN_OPS: [&str; 6] = [
    "Conv2D",
    "MaxPool",
    "Softmax",
    "Relu",
    "BiasAdd",
    "FusedBatchNormV3",
];

/// The (op, T) pairs registered for the GPU for the nn ops.
fn registered() -> BTreeSet<(&'static str, i32)> {
    kernels_cuda::link();
    KernelRegistry::global()
        .all()
        .iter()
        .filter(|r| r.device == DEVICE_GPU && NN_OPS.contains(&r.op))
        .flat_map(|r| {
            r.constraints
                .iter()
                .filter(|c| c.attr == "T")
                .flat_map(|c| c.types.iter().map(|&t| (r.op, t as i32)))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn registrations_cover_tf_gpu_types() {
    let regs = registered();
    let expect = |op: &'static str, types: &[DataType]| {
        for &t in types {
            assert!(
                regs.contains(&(op, t as i32)),
                "{op} {t:?} is not registered for the GPU"
            );
        }
    };
    use DataType::*;
    expect("Conv2D", &[DtHalf, DtFloat, DtDouble]);
    expect("MaxPool", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    expect("Softmax", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    expect("Relu", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    expect("BiasAdd", &[DtHalf, DtBfloat16, DtFloat, DtDouble, DtInt32]);
    expect("FusedBatchNormV3", &[DtHalf, DtBfloat16, DtFloat]);
    assert_eq!(regs.len(), 3 + 4 + 4 + 4 + 5 + 3, "{regs:?}");
}

#[test]
fn every_registered_source_compiles() {
    let mut compiled = 0;
    let mut failures = Vec::new();
    for (op, t) in registered() {
        let dtype = DataType::try_from(t).expect("a known dtype");
        let sources = kernel_sources(op, dtype)
            .unwrap_or_else(|e| panic!("{op} {dtype:?} is registered but has no source: {e}"));
        for source in sources {
            match check_compiles(&source) {
                Ok(true) => compiled += 1,
                Ok(false) => {
                    eprintln!(
                        "skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh"
                    );
                    return;
                }
                Err(log) => failures.push(format!("{} ({op} {dtype:?}):\n{log}", source.key())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} sources failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{compiled} nn sources compiled");
    assert_eq!(compiled, 23);
}

#[test]
fn sources_for_types_not_registered_compile_too() {
    // The generators accept more element types than are registered (for
    // future registrations); a few of them compile as well.
    use DataType::*;
    for (op, t) in [
        ("Relu", DtInt64),
        ("BiasAdd", DtInt64),
        ("BiasAdd", DtUint8),
        ("MaxPool", DtInt32),
    ] {
        for source in kernel_sources(op, t).unwrap() {
            match check_compiles(&source) {
                Ok(true) => {}
                Ok(false) => {
                    eprintln!(
                        "skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh"
                    );
                    return;
                }
                Err(log) => panic!("{}:\n{log}", source.key()),
            }
        }
    }
}
