//! An op library whose registrations clash with the host's is refused as a
//! whole: every duplicate op and kernel is reported, and none of the
//! library's ops or kernels is registered. (A test binary of its own: it
//! registers clashing ops and kernels in the global registries first.)

use opreg_runtime::library::{LibraryError, load_op_library};
use opreg_tests::op_library::zero_out_library;
use registry_core::kernel::{
    FnKernel, KernelError, KernelRegistration, OpKernel, OpKernelConstruction,
};
use registry_core::library::LibraryProblem;
use registry_core::op::SourceLocation;
use registry_core::spec::OpSpec;
use registry_core::{KernelRegistry, OpRegistry};

fn host_kernel(_: &OpKernelConstruction<'_>) -> Result<Box<dyn OpKernel>, KernelError> {
    Ok(Box::new(FnKernel(|_| Ok(()))))
}

/// A kernel that no lookup could tell from the library's ZeroOut kernel.
fn host_zero_out_kernel() -> KernelRegistration {
    KernelRegistration {
        op: "ZeroOut",
        device: "CPU",
        constraints: &[],
        host_memory: &[],
        label: "",
        priority: 0,
        factory: host_kernel,
        kernel_name: "host_zero_out",
        sources: None,
        location: SourceLocation {
            file: file!(),
            line: line!(),
            module_path: module_path!(),
        },
    }
}

fn problems(err: LibraryError) -> Vec<LibraryProblem> {
    match err {
        LibraryError::Conflicts { problems, .. } => problems,
        other => panic!("expected conflicts, got: {other}"),
    }
}

#[test]
fn clashing_libraries_are_refused_whole() {
    let path = zero_out_library();
    let ops = OpRegistry::global();
    let kernels = KernelRegistry::global();

    // The host has a kernel identical to the library's ZeroOut kernel.
    kernels.register(host_zero_out_kernel());
    let before = kernels.len();
    let err = load_op_library(&path).unwrap_err();
    let message = err.to_string();
    let found = problems(err);
    assert_eq!(found.len(), 1, "{message}");
    assert!(
        matches!(&found[0], LibraryProblem::DuplicateKernel { op, existing, .. }
            if op == "ZeroOut" && existing.starts_with("host_zero_out")),
        "{message}"
    );
    assert!(
        message.contains("duplicates the registered kernel host_zero_out"),
        "{message}"
    );
    // Nothing of the library was registered.
    assert!(ops.look_up("ZeroOut").is_err());
    assert!(ops.look_up("WeightedSum").is_err());
    assert_eq!(kernels.len(), before);

    // The host also has an op of the library's: both problems are listed.
    ops.register(
        OpSpec::new("WeightedSum")
            .input("x: float")
            .output("y: float"),
        None,
    )
    .unwrap();
    let err = load_op_library(&path).unwrap_err();
    let message = err.to_string();
    let found = problems(err);
    assert_eq!(found.len(), 2, "{message}");
    assert!(
        found.iter().any(
            |p| matches!(p, LibraryProblem::DuplicateOp { name, .. } if name == "WeightedSum")
        ),
        "{message}"
    );
    assert!(
        message.contains("op 'WeightedSum' is already registered (registered at run time at"),
        "{message}"
    );
    assert!(message.contains("in op library"), "{message}");
    assert!(ops.look_up("ZeroOut").is_err());
    assert_eq!(kernels.len(), before);
}
