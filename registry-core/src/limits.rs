//! Memory limits: a process-wide cap on any single tensor allocation, so a
//! hostile shape (`Fill` with dims `[1 << 20, 1 << 20]`, a `TensorProto`
//! claiming a huge shape) is refused with an error instead of exhausting
//! memory or aborting. The per-run cap on a graph's total memory is
//! `opreg_runtime::SessionOptions::max_memory_bytes`.
//!
//! The allocation cap starts as the `OPREG_MAX_ALLOCATION_BYTES`
//! environment variable when it is set to a number, else the machine's
//! physical memory (Linux), else unlimited; [`set_max_allocation_bytes`]
//! changes it.
//!
//! ```
//! use registry_core::limits;
//! use registry_core::proto::DataType;
//! use registry_core::tensor::{Tensor, TensorError};
//!
//! let previous = limits::set_max_allocation_bytes(1 << 20);
//! let err = Tensor::zeros(DataType::DtFloat, [1024, 1024]).unwrap_err();
//! assert!(matches!(err, TensorError::TooLarge { limit: 1048576, .. }), "{err}");
//! assert!(Tensor::zeros(DataType::DtFloat, [512, 512]).is_ok());
//! limits::set_max_allocation_bytes(previous);
//! ```

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that sets the initial allocation cap (bytes).
pub const MAX_ALLOCATION_ENV: &str = "OPREG_MAX_ALLOCATION_BYTES";

/// 0 means "not set yet": the default applies.
static MAX_ALLOCATION: AtomicU64 = AtomicU64::new(0);

/// The largest single tensor allocation allowed, in bytes.
#[inline]
pub fn max_allocation_bytes() -> u64 {
    match MAX_ALLOCATION.load(Ordering::Relaxed) {
        0 => default_max_allocation(),
        set => set,
    }
}

/// Sets the largest single tensor allocation allowed (bytes; 0 restores
/// the default) and returns the previous cap. It applies to every thread
/// at once, to allocations made after the call.
pub fn set_max_allocation_bytes(bytes: u64) -> u64 {
    let previous = max_allocation_bytes();
    MAX_ALLOCATION.store(bytes, Ordering::Relaxed);
    previous
}

/// Checks an allocation of `bytes` against the cap (never above
/// `isize::MAX`, the most any allocation can be), returning the cap when
/// it is exceeded.
#[inline]
pub fn check_allocation(bytes: u64) -> Result<(), u64> {
    let limit = max_allocation_bytes().min(isize::MAX as u64);
    if bytes > limit { Err(limit) } else { Ok(()) }
}

fn default_max_allocation() -> u64 {
    static DEFAULT: OnceLock<u64> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var(MAX_ALLOCATION_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&v| v > 0)
            .or_else(physical_memory)
            .unwrap_or(u64::MAX)
    })
}

/// Total physical memory, from `/proc/meminfo` (Linux only).
fn physical_memory() -> Option<u64> {
    if cfg!(miri) {
        return None;
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_positive_and_reads_physical_memory_on_linux() {
        let default = default_max_allocation();
        assert!(default > 0);
        if cfg!(target_os = "linux") && std::env::var(MAX_ALLOCATION_ENV).is_err() {
            assert_eq!(Some(default), physical_memory());
            // More than 64 MiB and less than 64 TiB of RAM.
            assert!(default > 1 << 26 && default < 1 << 46, "{default}");
        }
    }

    #[test]
    fn check_compares_against_the_cap() {
        let limit = max_allocation_bytes().min(isize::MAX as u64);
        assert_eq!(check_allocation(limit), Ok(()));
        if limit < u64::MAX {
            assert_eq!(check_allocation(limit + 1), Err(limit));
        }
    }
}
