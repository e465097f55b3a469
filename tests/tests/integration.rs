//! The integration tests that share one process, in one binary: each module
//! was its own test target, and each target linked the whole kernel library
//! (about 100 MB apiece). `cargo test -p opreg-tests --test integration
//! executor::` runs one module.
//!
//! Tests that change process-wide state have their own binaries (see
//! `Cargo.toml`): `device_executor` registers kernels for a fake device,
//! `limits_and_panics` changes the allocation cap and registers panicking
//! kernels, `op_library`, `op_library_conflicts` and `tensorflow_host` load op
//! libraries into the process, and `gpu_graphs` is carried to a GPU machine
//! by `scripts/gpu-verify.sh`.

#[path = "batch_split.rs"]
mod batch_split;

#[path = "concurrency.rs"]
mod concurrency;

#[path = "conformance.rs"]
mod conformance;

#[path = "control_flow.rs"]
mod control_flow;

#[path = "editor_diagnostics.rs"]
mod editor_diagnostics;

#[path = "executor.rs"]
mod executor;

#[path = "fuzz_smoke.rs"]
mod fuzz_smoke;

#[path = "graphs_e2e.rs"]
mod graphs_e2e;

#[path = "json_diagnostics.rs"]
mod json_diagnostics;

#[path = "models_e2e.rs"]
mod models_e2e;

#[path = "optimize.rs"]
mod optimize;

#[path = "render_roundtrip_conformance.rs"]
mod render_roundtrip_conformance;

#[path = "shape_inference_props.rs"]
mod shape_inference_props;

#[path = "tf_kernel_coverage.rs"]
mod tf_kernel_coverage;

#[path = "tf_numerics.rs"]
mod tf_numerics;

#[path = "tf_ops.rs"]
mod tf_ops;

#[path = "tf_versions.rs"]
mod tf_versions;
