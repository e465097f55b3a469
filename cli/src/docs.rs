//! `opreg docs -o DIR`: a Markdown reference of every registered op, with
//! the kernels registered for it per device and type.

use std::fmt::Write;
use std::path::Path;

use registry_core::KernelRegistry;
use registry_core::kernel::summarize_registration;
use registry_core::registry::OpRegistry;

use crate::{CliError, show};

/// Writes `DIR/README.md` (an index table) and `DIR/ops/<Op>.md` per op;
/// returns the number of ops written.
pub(crate) fn write(
    dir: &Path,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Result<usize, CliError> {
    let ops_dir = dir.join("ops");
    std::fs::create_dir_all(&ops_dir).map_err(|source| CliError::WriteFile {
        path: ops_dir.clone(),
        source,
    })?;
    let list = ops.export_op_list(false);
    let mut index = String::from(
        "# Op reference\n\nEvery op registered in this `opreg` binary, with the devices that have kernels for it.\n\n| op | summary | kernels |\n|---|---|---|\n",
    );
    for op in &list.op {
        let regs = kernels.kernels_for_op(&op.name);
        let mut devices: Vec<&str> = regs.iter().map(|r| r.device).collect();
        devices.sort_unstable();
        devices.dedup();
        let _ = writeln!(
            index,
            "| [{0}](ops/{0}.md) | {1} | {2} |",
            op.name,
            op.summary.replace('|', "\\|"),
            if devices.is_empty() {
                "none".to_owned()
            } else {
                format!("{} ({})", devices.join(", "), regs.len())
            }
        );
        let data = ops.look_up(&op.name)?;
        let mut page = format!(
            "# {}\n\n```text\n{}```\n\n## Kernels\n\n",
            op.name,
            show::render(data)
        );
        if regs.is_empty() {
            page.push_str("No kernel is registered for this op in this binary.\n");
        }
        for r in &regs {
            let _ = writeln!(
                page,
                "- `{}` — `{}`",
                summarize_registration(r),
                r.kernel_name
            );
        }
        let path = ops_dir.join(format!("{}.md", op.name.replace(['/', '>'], "_")));
        std::fs::write(&path, page).map_err(|source| CliError::WriteFile { path, source })?;
    }
    let path = dir.join("README.md");
    std::fs::write(&path, index).map_err(|source| CliError::WriteFile { path, source })?;
    Ok(list.op.len())
}
