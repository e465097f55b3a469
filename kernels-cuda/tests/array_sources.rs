//! Every CUDA C source the array and reduction kernels register compiles
//! with NVRTC (which needs no GPU), and its PTX has every entry point the
//! kernels load. Skips, saying so, when NVRTC is not found
//! (`scripts/install-nvrtc.sh` installs it).
#![cfg(feature = "cuda")]

use std::collections::HashSet;

use opreg_cuda::{KernelSource, check_compiles, compile_ptx};

/// Compiles every source; returns how many compiled, or `None` when NVRTC
/// is absent.
fn compile_all(family: &str, sources: &[KernelSource]) -> Option<usize> {
    assert!(!sources.is_empty(), "{family}: no sources");
    let keys: HashSet<&str> = sources.iter().map(KernelSource::key).collect();
    assert_eq!(keys.len(), sources.len(), "{family}: duplicate source keys");
    let mut failures = Vec::new();
    let mut compiled = 0;
    for source in sources {
        match check_compiles(source) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh");
                return None;
            }
            Err(log) => {
                failures.push(format!("{}:\n{log}", source.key()));
                continue;
            }
        }
        let ptx = compile_ptx(source, (9, 0))
            .expect("compiled once already")
            .to_src();
        for entry in source.entries() {
            assert!(
                ptx.contains(&format!(".entry {entry}(")),
                "{}: no entry point '{entry}' in the PTX",
                source.key()
            );
        }
        compiled += 1;
    }
    assert!(
        failures.is_empty(),
        "{} sources failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{family}: {compiled} sources compiled with NVRTC");
    Some(compiled)
}

#[test]
fn every_array_source_compiles() {
    let sources = kernels_cuda::array::all_sources();
    assert_eq!(sources.len(), kernels_cuda::array::UNIT_SIZES.len());
    if let Some(n) = compile_all("array", &sources) {
        assert_eq!(n, 5);
    }
}

#[test]
fn every_reduction_source_compiles() {
    use kernels_cuda::reduce::{ARG_MAX_DTYPES, ARG_MAX_INDEX_DTYPES, REDUCE_DTYPES};
    let sources = kernels_cuda::reduce::all_sources();
    let expected = 3 * REDUCE_DTYPES.len() + ARG_MAX_DTYPES.len() * ARG_MAX_INDEX_DTYPES.len();
    assert_eq!(sources.len(), expected);
    if let Some(n) = compile_all("reduce", &sources) {
        assert_eq!(n, expected);
    }
}

#[test]
fn every_registered_gpu_kernel_has_its_source() {
    use registry_core::KernelRegistry;
    use registry_core::kernel::DEVICE_GPU;
    use registry_core::proto::DataType;
    kernels_cuda::link();
    let reduce_keys: HashSet<String> = kernels_cuda::reduce::all_sources()
        .iter()
        .map(|s| s.key().to_owned())
        .collect();
    let mut checked = 0;
    for r in KernelRegistry::global().all() {
        if r.device != DEVICE_GPU || !["Sum", "Mean", "Max", "ArgMax"].contains(&r.op) {
            continue;
        }
        let ty = |name: &str| -> DataType {
            let c = r
                .constraints
                .iter()
                .find(|c| c.attr == name)
                .unwrap_or_else(|| panic!("{}: no constraint on {name}", r.op));
            assert_eq!(c.types.len(), 1, "{}: one type per registration", r.op);
            c.types[0]
        };
        use registry_core::proto::DataTypeExt;
        let key = if r.op == "ArgMax" {
            format!(
                "reduce/ArgMax/{}/{}",
                ty("T").type_name(),
                ty("output_type").type_name()
            )
        } else {
            format!("reduce/{}/{}", r.op, ty("T").type_name())
        };
        assert!(
            reduce_keys.contains(&key),
            "no source {key} for a registered kernel"
        );
        checked += 1;
    }
    // Sum, Mean, Max: 6 types x 2 Tidx; ArgMax: 7 types x 2 output types.
    assert_eq!(checked, 3 * 6 * 2 + 7 * 2);
}
