//! Running the `opreg` binary from the CLI's integration tests.

use std::process::{Command, Output};

/// Runs `opreg` with `args` and returns what it did.
pub fn opreg(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_opreg"))
        .args(args)
        .output()
        .expect("run opreg")
}

/// The standard output of a successful `opreg` run (fails the test otherwise).
pub fn stdout_of(args: &[&str]) -> String {
    let output = opreg(args);
    assert!(
        output.status.success(),
        "opreg {args:?} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// Links the kernel crates the `opreg` binary links, so that this test
/// process's global kernel registry holds what the binary's holds.
/// Returns the number of CPU kernel registrations.
pub fn link_kernels_like_the_binary() -> usize {
    kernels_cuda::link();
    kernels_cpu::link()
}
