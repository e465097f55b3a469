//! Prints how many CPU kernels (registrations) and ops with a CPU kernel
//! this binary holds: build it with different feature groups to see that a
//! binary contains only the groups it asks for, and to measure its size.
//!
//! ```text
//! cargo build --release -p kernels-cpu --example kernel_count --no-default-features --features math
//! ./target/release/examples/kernel_count
//! ```

use std::collections::BTreeSet;

fn main() {
    let registrations = kernels_cpu::link();
    let ops: BTreeSet<&str> = registry_core::KernelRegistry::global()
        .all()
        .iter()
        .map(|r| r.op)
        .collect();
    println!(
        "{registrations} CPU kernel registrations for {} ops: {}",
        ops.len(),
        ops.into_iter().collect::<Vec<_>>().join(" ")
    );
}
