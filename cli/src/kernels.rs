//! `opreg kernels ...` and the kernel section of `opreg ops show`.

use registry_core::KernelRegistry;
use registry_core::kernel::{KernelRegistration, summarize_registration};
use registry_core::registry::OpRegistry;

/// One line per kernel: op, its TF-style summary and the Rust item.
pub(crate) fn list(kernels: &KernelRegistry, op: Option<&str>, device: Option<&str>) -> String {
    let all = kernels.all();
    let selected: Vec<&&KernelRegistration> = all
        .iter()
        .filter(|r| op.is_none_or(|op| r.op == op))
        .filter(|r| device.is_none_or(|d| r.device.eq_ignore_ascii_case(d)))
        .collect();
    let width = selected.iter().map(|r| r.op.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in selected {
        out.push_str(&format!(
            "{:width$}  {}  ({})\n",
            r.op,
            summarize_registration(r),
            r.kernel_name
        ));
    }
    out
}

/// The "Kernels:" section that `opreg ops show NAME` appends.
pub(crate) fn section(kernels: &KernelRegistry, op: &str) -> String {
    let regs = kernels.kernels_for_op(op);
    if regs.is_empty() {
        return "\nKernels: none registered in this binary\n".to_owned();
    }
    let mut out = format!("\nKernels ({}):\n", regs.len());
    for r in regs {
        out.push_str(&format!("  {}\n", summarize_registration(r)));
    }
    out
}

/// Kernels whose op the op registry does not know, one description each.
pub(crate) fn orphans(kernels: &KernelRegistry, ops: &OpRegistry) -> Vec<String> {
    kernels
        .kernels_without_op(ops)
        .iter()
        .map(|r| {
            format!(
                "  - {} for op '{}' ({}), declared at {}",
                r.kernel_name,
                r.op,
                summarize_registration(r),
                r.location
            )
        })
        .collect()
}
