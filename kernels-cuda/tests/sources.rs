//! Every CUDA source the GPU kernels compile, reached through the kernel
//! registry (each registration's `sources`, `#[kernel(sources = ...)]`), is
//! there and compiles with NVRTC: to PTX for Hopper (`compute_90`, what the
//! device loads) and assembled for `sm_90` (which runs `ptxas` inside
//! NVRTC, so inline PTX is checked too). NVRTC needs no GPU; without it the
//! compile tests print `skipped:` and pass, unless `OPREG_REQUIRE_NVRTC=1`
//! (what `.ci/run` sets), where they fail. `scripts/install-nvrtc.sh`
//! installs it.
#![cfg(feature = "cuda")]

use std::collections::{BTreeMap, BTreeSet};

use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use opreg_cuda::{check_compiles, program};
use registry_core::KernelRegistry;
use registry_core::device::DEVICE_GPU;
use registry_core::kernel::{KernelRegistration, KernelSource, constraint_types};
use registry_core::proto::DataType;

/// Every GPU registration.
fn gpu_registrations() -> Vec<&'static KernelRegistration> {
    kernels_cuda::link();
    KernelRegistry::global()
        .all()
        .into_iter()
        .filter(|r| r.device == DEVICE_GPU)
        .collect()
}

/// Ops whose GPU kernels compile no device code: they share or reshape
/// their input, upload a constant once, copy it with the driver
/// (`Snapshot`), or call cuBLAS or cuDNN alone.
const WITHOUT_SOURCES: [&str; 14] = [
    "AvgPool",
    "BatchMatMulV2",
    "BatchMatMulV3",
    "Const",
    "ExpandDims",
    "Identity",
    "IdentityN",
    "MatMul",
    "NoOp",
    "PreventGradient",
    "Reshape",
    "Snapshot",
    "Squeeze",
    "StopGradient",
];

/// Every distinct source of every GPU registration, by key.
fn all_sources() -> BTreeMap<String, KernelSource> {
    let mut sources = BTreeMap::new();
    for r in gpu_registrations() {
        for s in r
            .kernel_sources()
            .unwrap_or_else(|e| panic!("{} ({}): {e}", r.kernel_name, r.location))
        {
            sources.insert(s.key().to_owned(), s);
        }
    }
    sources
}

/// Assembles `source` for `sm_90` (NVRTC runs ptxas for a real
/// architecture), so inline PTX is validated as the driver would.
fn assembles(source: &KernelSource) -> Result<(), String> {
    let options = CompileOptions {
        arch: Some("sm_90"),
        name: Some(format!("{}.cu", source.key().replace('/', "_"))),
        options: vec!["--std=c++17".to_owned()],
        ..Default::default()
    };
    compile_ptx_with_opts(program(source), options)
        .map(|_| ())
        .map_err(|e| match e {
            cudarc::nvrtc::CompileError::CompileError { log, .. } => {
                log.to_string_lossy().into_owned()
            }
            other => format!("{other:?}"),
        })
}

#[test]
fn every_gpu_kernel_attaches_its_sources() {
    let regs = gpu_registrations();
    assert!(regs.len() > 300, "only {} GPU registrations", regs.len());
    let mut without = BTreeSet::new();
    for r in &regs {
        let sources = r
            .kernel_sources()
            .unwrap_or_else(|e| panic!("{} ({}): {e}", r.kernel_name, r.location));
        let identity_cast =
            r.op == "Cast" && constraint_types(r, "SrcT") == constraint_types(r, "DstT");
        if sources.is_empty() && !identity_cast {
            without.insert(r.op);
        }
        for s in &sources {
            assert!(s.entries().count() > 0, "{}: no entry points", s.key());
        }
    }
    assert_eq!(
        without,
        BTreeSet::from(WITHOUT_SOURCES),
        "GPU kernels without sources"
    );
    // One source per (family, op, dtype), shared where the code is the
    // same (the copy kernels are per element size).
    let sources = all_sources();
    eprintln!(
        "{} GPU registrations, {} distinct sources",
        regs.len(),
        sources.len()
    );
    assert!(sources.len() >= 300, "only {} sources", sources.len());
    for key in [
        "unary/Relu/half",
        "unary/LogicalNot/bool",
        "binary/LogicalOr/bool",
        "binary/NotEqual/bool",
        "binary/Less/uint64",
        "binary/GreaterEqual/bfloat16",
        "binary/LessEqual/int8",
        "binary/AddV2/float",
        "nn/Conv2D/float",
        "reduce/Sum/int64",
        "array/move/u32",
        "select/bool",
        "clip/uint16",
        "clip/bfloat16",
        "cumsum/half",
        "cumsum/int64",
        "reduce/Sum/bfloat16",
        "array/move/u16",
    ] {
        assert!(sources.contains_key(key), "no source {key}");
    }
}

#[test]
fn every_registered_source_compiles() {
    let sources: Vec<(String, KernelSource)> = all_sources().into_iter().collect();
    // NVRTC compiles each program on the calling thread, and programs are
    // independent: the sources are shared out over the cores (two compiles
    // of each of ~470 sources took over 100 s on one thread of an H200
    // machine).
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(sources.len().max(1));
    let chunk = sources.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<String>, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = sources
            .chunks(chunk)
            .map(|part| scope.spawn(move || compile_all(part)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a compile thread panicked"))
            .collect()
    });
    let mut failures = Vec::new();
    for result in results {
        match result {
            Ok(part) => failures.extend(part),
            Err(missing) if missing.is_empty() => {
                eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh");
                return;
            }
            // NVRTC is missing but required: one failure says it all.
            Err(log) => panic!("{log}"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} sources failed:\n{}",
        failures.len(),
        sources.len(),
        failures.join("\n")
    );
    eprintln!("compiled and assembled {} sources", sources.len());
}

/// Compiles (for `compute_90`) and assembles (for `sm_90`) each source of
/// `part`: the failures, one message each; or `Err` when NVRTC is missing
/// (an empty message when it may be, the required-NVRTC error otherwise).
fn compile_all(part: &[(String, KernelSource)]) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    for (key, source) in part {
        match check_compiles(source) {
            Ok(true) => {}
            Ok(false) => return Err(String::new()),
            Err(log) if log.contains(opreg_cuda::REQUIRE_NVRTC_ENV) => return Err(log),
            Err(log) => {
                failures.push(format!("{key} (compute_90):\n{log}"));
                continue;
            }
        }
        if let Err(log) = assembles(source) {
            failures.push(format!("{key} (sm_90):\n{log}"));
        }
    }
    Ok(failures)
}

#[test]
fn registrations_cover_tf_gpu_types() {
    let registered: BTreeSet<(&str, i32)> = gpu_registrations()
        .iter()
        .flat_map(|r| {
            constraint_types(r, "T")
                .unwrap_or(&[])
                .iter()
                .map(|&t| (r.op, t as i32))
                .collect::<Vec<_>>()
        })
        .collect();
    let expect = |op: &'static str, types: &[DataType]| {
        for &t in types {
            assert!(
                registered.contains(&(op, t as i32)),
                "{op} {t:?} is not registered for the GPU"
            );
        }
    };
    use DataType::*;
    expect("Conv2D", &[DtHalf, DtFloat, DtDouble]);
    expect("DepthwiseConv2dNative", &[DtHalf, DtFloat, DtDouble]);
    expect("Conv2DBackpropInput", &[DtHalf, DtFloat, DtDouble]);
    expect("AvgPool", &[DtHalf, DtFloat, DtDouble]);
    expect("BatchMatMulV2", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    for op in ["Less", "LessEqual", "GreaterEqual", "Greater"] {
        expect(
            op,
            &[
                DtHalf, DtBfloat16, DtFloat, DtDouble, DtInt8, DtInt16, DtInt32, DtInt64, DtUint8,
                DtUint16, DtUint32, DtUint64,
            ],
        );
    }
    for op in ["Equal", "NotEqual"] {
        expect(
            op,
            &[
                DtHalf, DtBfloat16, DtFloat, DtDouble, DtInt8, DtInt16, DtInt32, DtInt64, DtUint8,
                DtBool,
            ],
        );
    }
    for op in [
        "Relu6",
        "Elu",
        "Selu",
        "Softplus",
        "Softsign",
        "Erf",
        "Erfc",
        "Log1p",
        "Expm1",
        "Sin",
        "Cos",
        "Ceil",
        "Round",
        "Sign",
        "Reciprocal",
    ] {
        expect(op, &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    }
    expect(
        "ClipByValue",
        &[
            DtHalf, DtBfloat16, DtFloat, DtDouble, DtInt8, DtInt16, DtInt32, DtInt64, DtUint8,
            DtUint16,
        ],
    );
    expect(
        "Cumsum",
        &[DtHalf, DtBfloat16, DtFloat, DtDouble, DtInt32, DtInt64],
    );
    expect("Einsum", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    // Snapshot has Identity's types (TF's `TF_CALL_POD_TYPES`, 15 of them).
    let types_of = |op: &str| -> BTreeSet<i32> {
        registered
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|&(_, t)| t)
            .collect()
    };
    assert_eq!(types_of("Snapshot").len(), 15);
    assert_eq!(types_of("Snapshot"), types_of("Identity"));
    expect("Round", &[DtInt32, DtInt64]);
    expect("Sign", &[DtInt32, DtInt64]);
    expect("MaxPool", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    expect("Softmax", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    expect("Relu", &[DtHalf, DtBfloat16, DtFloat, DtDouble]);
    expect("BiasAdd", &[DtHalf, DtBfloat16, DtFloat, DtDouble, DtInt32]);
    expect("FusedBatchNormV3", &[DtHalf, DtBfloat16, DtFloat]);
    for op in [
        "Abs", "AddV2", "Exp", "Sigmoid", "Select", "AddN", "Sum", "ArgMax",
    ] {
        expect(op, &[DtHalf, DtFloat, DtDouble]);
    }
}

#[test]
fn vector_loads_are_128_bit() {
    // The flat paths of f32 kernels move 16 bytes per load and store.
    let source = all_sources()
        .remove("binary/AddV2/float")
        .expect("AddV2's float source");
    match check_compiles(&source) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh");
            return;
        }
        Err(log) => panic!("{log}"),
    }
    let options = CompileOptions {
        arch: Some("compute_90"),
        options: vec!["--std=c++17".to_owned()],
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(program(&source), options)
        .unwrap()
        .to_src();
    assert!(ptx.contains("ld.global.v4"), "no 128-bit loads in:\n{ptx}");
    assert!(ptx.contains("st.global.v4"), "no 128-bit stores in:\n{ptx}");
}
