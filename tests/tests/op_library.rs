//! Op libraries loaded at run time: `examples/zero_out` built as a cdylib
//! is loaded into this test process (which does not link it), its ops and
//! kernels join the global registries, and graphs using them run, through
//! the API and through `opreg --load`. Libraries from another build, with
//! a malformed header, or that are not libraries at all are refused with
//! clear errors and without running their code.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use opreg_runtime::library::{LibraryError, load_op_library, loaded_op_libraries};
use opreg_runtime::{Graph, Session};
use opreg_tests::op_library::{fake_libraries, opreg_binary, zero_out_library};
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef, attr_value::Value};
use registry_core::registry::OpOrigin;
use registry_core::tensor::Tensor;
use registry_core::{KernelRegistry, OpRegistry, create_op_kernel};

/// A per-process scratch directory, removed when the test ends (pass or fail).
struct ScratchDir(PathBuf);

impl std::ops::Deref for ScratchDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Linux keeps a loaded library mapped after its file is unlinked.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir(name: &str) -> ScratchDir {
    let dir = std::env::temp_dir().join(format!("opreg-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch dir");
    ScratchDir(dir)
}

fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, DataType)]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        attr: attrs
            .iter()
            .map(|(k, t)| {
                (
                    k.to_string(),
                    AttrValue {
                        value: Some(Value::Type(*t as i32)),
                    },
                )
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn loads_zero_out_and_runs_its_kernels() {
    kernels_cpu::link();
    let path = zero_out_library();
    assert!(
        OpRegistry::global().look_up("ZeroOut").is_err(),
        "this test binary must not link zero_out itself"
    );
    let kernels_before = KernelRegistry::global().len();

    let library = load_op_library(&path).expect("load libzero_out");
    assert_eq!(library.crate_name(), "zero_out");
    assert_eq!(library.ops(), ["WeightedSum", "ZeroOut"]);
    // ZeroOut (int32) and WeightedSum (float, double, int32).
    assert_eq!(library.kernel_count(), 4);
    assert_eq!(KernelRegistry::global().len(), kernels_before + 4);
    // The library's own copy of the standard ops was not registered again.
    assert!(OpRegistry::global().look_up("Abs").is_ok());

    let op = OpRegistry::global()
        .look_up("ZeroOut")
        .expect("ZeroOut registered");
    let OpOrigin::Library(origin) = op.origin() else {
        panic!("origin {:?}", op.origin());
    };
    let file_name = path.file_name().unwrap().to_str().unwrap();
    assert!(origin.library.ends_with(file_name), "{}", origin.library);
    assert_eq!(origin.location.module_path, "zero_out::ops");
    assert!(op.shape_fn().is_some(), "the shape function comes along");

    // The library's kernel, built and run by the host.
    let kernel = create_op_kernel("CPU", &node("z", "ZeroOut", &["x"], &[])).expect("kernel");
    let out = kernel
        .compute([Tensor::from_vec([3], vec![5i32, 3, 2]).unwrap()])
        .expect("compute");
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[5, 0, 0]);

    // A graph mixing the library's ops with standard ones.
    let graph = GraphDef {
        node: vec![
            node("x", "Placeholder", &[], &[("dtype", DataType::DtInt32)]),
            node("z", "ZeroOut", &["x"], &[]),
            node("n", "Neg", &["z"], &[("T", DataType::DtInt32)]),
        ],
        ..Default::default()
    };
    let session = Session::new(Graph::new(graph).expect("graph"));
    let out = session
        .run(
            &[(
                "x:0",
                Tensor::from_vec([2, 2], vec![7i32, 1, 2, 3]).unwrap(),
            )],
            &["n:0"],
        )
        .expect("run");
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[-7, 0, 0, 0]);
    assert_eq!(out[0].dims(), &[2, 2]);

    // Loading the same file again is the same load.
    let again = load_op_library(&path).expect("load again");
    assert!(Arc::ptr_eq(&library, &again));
    assert_eq!(KernelRegistry::global().len(), kernels_before + 4);
    assert_eq!(
        loaded_op_libraries()
            .iter()
            .filter(|l| Arc::ptr_eq(l, &library))
            .count(),
        1
    );
}

#[test]
fn refuses_libraries_from_other_builds_without_running_them() {
    let dir = scratch_dir("fake-libraries");
    let [mismatch, bad_magic, new_header] = fake_libraries(&dir);

    // The fixture's `contents` aborts the process if called: reaching the
    // assertions at all shows the loader stopped at the header.
    let err = load_op_library(&mismatch).unwrap_err();
    let LibraryError::Incompatible { library, host, .. } = &err else {
        panic!("{err}");
    };
    assert!(
        library.starts_with("registry-core 0.0.9; rustc 1.80.0"),
        "{library}"
    );
    assert_eq!(host, registry_core::library::FINGERPRINT);
    let message = err.to_string();
    assert!(
        message.contains("built against an incompatible framework build"),
        "{message}"
    );
    assert!(
        message.contains(host) && message.contains(library.as_str()),
        "{message}"
    );

    let err = load_op_library(&bad_magic).unwrap_err();
    assert!(matches!(err, LibraryError::BadHeader { .. }), "{err}");
    assert!(err.to_string().contains("magic"), "{err}");

    let err = load_op_library(&new_header).unwrap_err();
    assert!(matches!(err, LibraryError::BadHeader { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("header version 2, this build reads 1"),
        "{err}"
    );

    // A library without the symbol, and files that are not libraries.
    let renamed = dir.join("libsomething_else.so");
    std::fs::copy(&mismatch, &renamed).unwrap();
    let err = load_op_library(&renamed).unwrap_err();
    assert!(
        matches!(err, LibraryError::NotAnOpLibrary { ref symbol, .. } if symbol == "opreg_op_library__something_else"),
        "{err}"
    );
    let text = dir.join("libtext.so");
    std::fs::write(&text, "not an ELF file").unwrap();
    assert!(matches!(
        load_op_library(&text).unwrap_err(),
        LibraryError::Open { .. }
    ));
    assert!(matches!(
        load_op_library(dir.join("libmissing.so")).unwrap_err(),
        LibraryError::Open { .. }
    ));
    assert!(
        loaded_op_libraries()
            .iter()
            .all(|l| !l.path().starts_with(&dir))
    );
}

#[test]
fn opreg_load_runs_a_graph_with_library_ops() {
    let library = zero_out_library();
    let opreg = opreg_binary();
    let dir = scratch_dir("cli-load");
    let graph = dir.join("graph.pbtxt");
    std::fs::write(
        &graph,
        r#"node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "z" op: "ZeroOut" input: "x" }
node { name: "y" op: "Square" input: "z" attr { key: "T" value { type: DT_INT32 } } }
"#,
    )
    .unwrap();
    let feeds = dir.join("io.json");
    std::fs::write(
        &feeds,
        r#"{"feeds": [{"name": "x:0", "dtype": "DT_INT32", "shape": [3], "values": [-4, 5, 6]}],
 "fetches": [{"name": "y:0"}]}"#,
    )
    .unwrap();

    let run = |load: bool| {
        let mut command = Command::new(&opreg);
        if load {
            command.arg("--load").arg(&library);
        }
        command
            .arg("run")
            .arg(&graph)
            .arg("--feeds")
            .arg(&feeds)
            .args(["--format", "json"])
            .output()
            .expect("run opreg")
    };
    let out = run(true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(json["fetches"][0]["values"], serde_json::json!([16, 0, 0]));
    assert_eq!(json["fetches"][0]["shape"], serde_json::json!([3]));

    // Without the library the op is unknown: an error, not a crash.
    let out = run(false);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ZeroOut"), "{stderr}");

    // A file that is not an op library: a clear error, exit code 1.
    let out = Command::new(&opreg)
        .arg("--load")
        .arg(&feeds)
        .args(["ops", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: cannot load op library"),
        "{stderr}"
    );
}
