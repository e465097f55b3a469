//! Every CUDA source the element-wise GPU kernels can build compiles with
//! NVRTC (no GPU needed): one per registered (op, dtype) and, for `Cast`,
//! per (SrcT, DstT) and `Truncate` variant. Each is compiled to PTX for
//! Hopper (`compute_90`, what the device loads) and assembled for `sm_90`
//! (which runs `ptxas` inside NVRTC, so inline PTX is checked too). The
//! test skips, saying so, when the NVRTC library is not found
//! (`scripts/install-nvrtc.sh` installs it).
#![cfg(all(feature = "cuda", feature = "math"))]

use std::collections::{BTreeMap, BTreeSet};

use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use kernels_cuda::math::{OPS, sources_for};
use opreg_cuda::{KernelSource, check_compiles};
use registry_core::KernelRegistry;
use registry_core::kernel::DEVICE_GPU;
use registry_core::proto::{DataType, DataTypeExt};

/// The GPU registrations of the math ops: (op, type attrs) for each.
fn registrations() -> Vec<(&'static str, Vec<(&'static str, DataType)>)> {
    kernels_cuda::link();
    KernelRegistry::global()
        .all()
        .into_iter()
        .filter(|r| r.device == DEVICE_GPU && OPS.contains(&r.op))
        .map(|r| {
            let types = r
                .constraints
                .iter()
                .map(|c| {
                    assert_eq!(
                        c.types.len(),
                        1,
                        "{} {}: one type per registration",
                        r.op,
                        c.attr
                    );
                    (c.attr, c.types[0])
                })
                .collect();
            (r.op, types)
        })
        .collect()
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
    compile_ptx_with_opts(source.program(), options)
        .map(|_| ())
        .map_err(|e| match e {
            cudarc::nvrtc::CompileError::CompileError { log, .. } => {
                log.to_string_lossy().into_owned()
            }
            other => format!("{other:?}"),
        })
}

#[test]
fn every_registered_math_source_compiles() {
    let regs = registrations();
    // Every op has GPU kernels, at least for the float types.
    let mut by_op: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (op, types) in &regs {
        let names: Vec<String> = types
            .iter()
            .map(|(a, t)| format!("{a}={}", t.type_name()))
            .collect();
        by_op.entry(op).or_default().insert(names.join(","));
    }
    for op in OPS {
        let types = by_op
            .get(op)
            .unwrap_or_else(|| panic!("{op} has no GPU kernel"));
        if !matches!(*op, "LogicalAnd" | "Cast") {
            for t in ["half", "float", "double"] {
                assert!(
                    types.contains(&format!("T={t}")),
                    "{op} has no GPU kernel for {t}: {types:?}"
                );
            }
        }
    }

    let mut sources: BTreeMap<String, KernelSource> = BTreeMap::new();
    for (op, types) in &regs {
        let built = sources_for(op, types).unwrap_or_else(|e| panic!("{op} {types:?}: {e}"));
        for s in built {
            sources.insert(s.key().to_owned(), s);
        }
    }
    let registrations = regs.len();
    eprintln!(
        "{registrations} GPU math registrations, {} distinct sources",
        sources.len()
    );
    assert!(sources.len() >= 250, "only {} sources", sources.len());

    let mut failures = Vec::new();
    for (key, source) in &sources {
        match check_compiles(source) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh");
                return;
            }
            Err(log) => {
                failures.push(format!("{key} (compute_90):\n{log}"));
                continue;
            }
        }
        if let Err(log) = assembles(source) {
            failures.push(format!("{key} (sm_90):\n{log}"));
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

#[test]
fn vector_loads_are_128_bit() {
    // The flat paths of f32 kernels move 16 bytes per load and store.
    let source = sources_for("AddV2", &[("T", DataType::DtFloat)])
        .unwrap()
        .remove(0);
    let options = CompileOptions {
        arch: Some("compute_90"),
        options: vec!["--std=c++17".to_owned()],
        ..Default::default()
    };
    match check_compiles(&source) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh");
            return;
        }
        Err(log) => panic!("{log}"),
    }
    let ptx = compile_ptx_with_opts(source.program(), options)
        .unwrap()
        .to_src();
    assert!(ptx.contains("ld.global.v4"), "no 128-bit loads in:\n{ptx}");
    assert!(ptx.contains("st.global.v4"), "no 128-bit stores in:\n{ptx}");
}
