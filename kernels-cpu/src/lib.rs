//! CPU kernels of opreg's standard ops, registered with
//! [`#[kernel]`](macro@registry_core::kernel) for every type TensorFlow 2.21's CPU
//! kernels support.
//!
//! Cargo features select kernel groups (all on by default): `math`, `linalg`,
//! `nn`, `array`, `reduce`, `lists`. A binary built with one group contains only those
//! kernels.
//!
//! Kernels are found through the global
//! [`KernelRegistry`](registry_core::KernelRegistry); name this crate once in
//! the binary (e.g. `kernels_cpu::link()`) so the linker keeps it.

pub mod cast_rules;
pub mod elementwise;
pub mod numeric;
mod split;

#[cfg(feature = "array")]
pub mod array;
#[cfg(feature = "linalg")]
pub mod linalg;
#[cfg(feature = "lists")]
pub mod list;
// The unary table's kernels are in `math`, each in its own group (`Relu`
// is in `nn`).
#[cfg(any(feature = "math", feature = "nn"))]
pub mod math;
#[cfg(feature = "nn")]
pub mod nn;
#[cfg(feature = "reduce")]
pub mod reduce;

/// Makes sure this crate (and so its kernel registrations) is linked into
/// the binary. Returns the number of CPU kernel registrations the global
/// registry holds.
///
/// ```
/// assert!(kernels_cpu::link() > 0);
/// ```
pub fn link() -> usize {
    registry_core::KernelRegistry::global()
        .all()
        .iter()
        .filter(|r| r.device == registry_core::device::DEVICE_CPU)
        .count()
}
