//! `opreg coverage`: for every registered op, which devices have kernels for
//! which values of its type attrs, against what the op allows, and (with
//! `--against`) against TensorFlow's kernel registry.
//!
//! # The model
//!
//! A [`Coverage`] has one [`Row`] per (op, type attr): every attr of type
//! `type` or `list(type)`, in the OpDef's order. An op without a type attr
//! (`NoOp`) has one row whose single cell says whether the device has any
//! kernel of the op.
//!
//! The cells of a row are the types the attr *allows* (its `allowed_values`;
//! an unconstrained attr allows every non-reference type). Types the op does
//! not allow have no cell, whoever registers a kernel for them. A type is
//! *covered* on a device when some kernel of the op for that device accepts
//! it for that attr: its constraint on the attr lists the type, or it does not
//! constrain the attr. Labels and priorities are not looked at.
//!
//! An op with several type attrs (`Cast`: `SrcT`, `DstT`) gets one row per
//! attr, each the projection of the kernels on that attr: a value is covered
//! if some kernel has it for that attr, whatever the other attrs. The rows do
//! not say which combinations exist (`opreg kernels list --op Cast` does).
//!
//! Types opreg has no tensors of (`resource`, `variant`, the 8-bit floats,
//! the 4- and 2-bit integers; see [`registry_core::tensor::is_supported`])
//! are never covered, even by a kernel that does not constrain the attr: no
//! node can feed it such a tensor. They are counted apart.
//!
//! With a TensorFlow `KernelList` (`tf_2_21_kernels.pb`), only the ops
//! registered here are compared, with the same projection for TF's kernels
//! (a kernel TF registers for `DEVICE_DEFAULT` counts for every device: TF's
//! lookup falls back to it, as for `NoOp`);
//! each cell is then [`CellState::Both`], [`CellState::TfOnly`],
//! [`CellState::TfOnlyNoTensor`], [`CellState::OursOnly`],
//! [`CellState::Neither`] or [`CellState::NoTensor`]. TF's kernels are also
//! matched one by one as `tests/tests/tf_kernel_coverage.rs` does
//! ([`TfKernelStats`]).
//!
//! # JSON
//!
//! [`Coverage::to_json`] writes (keys of maps sorted):
//!
//! ```text
//! {
//!   "devices": ["CPU"],                      // the columns' devices, in order
//!   "dtypes": ["DT_HALF", ...],              // every type some row allows, in display order
//!   "against": null | {"source": "tf_2_21_kernels.pb", "kernels": {"CPU": {
//!       "total": 770, "matched": 742, "no_tensor": 25,
//!       "disallowed": ["MatMul: T in [int16]", ...], "unmatched": [...]}}},
//!   "rows": [{
//!       "op": "Abs", "attr": "T" | null,
//!       "allowed": ["DT_HALF", ...],          // [] when attr is null
//!       "no_tensor": [...],                  // allowed types opreg has no tensors of
//!       "devices": {"CPU": {
//!           "kernels": 8,                    // our kernels of the op for the device
//!           "tf_kernels": 8,                 // only with --against
//!           "cells": {"DT_FLOAT": "covered", ...}}}  // key "any" when attr is null
//!   }],
//!   "summary": {"CPU": {"ops": 54, "ops_with_kernel": 54, "ops_complete": 54,
//!       "cells_allowed": 900, "cells_no_tensor": 200, "cells_covered": 650,
//!       "tf": {"cells": 700, "both": 650, "tf_only": 0, "tf_only_no_tensor": 50, "ours_only": 0}}}
//! }
//! ```
//!
//! A cell's state is one of the [`CellState::name`]s: `covered`, `missing`,
//! `no_tensor` without `--against`; `both`, `tf_only`, `tf_only_no_tensor`,
//! `ours_only`, `neither`, `no_tensor` with it.

mod cell;
mod devices;
mod error;
mod json;
mod model;
mod summary;
pub mod svg;
mod table;
mod tf;
mod types;

use std::path::Path;

use registry_core::kernel::KernelRegistry;
use registry_core::registry::OpRegistry;

pub use cell::CellState;
pub use devices::resolve_devices;
pub use error::CoverageError;
pub use model::{Coverage, DeviceCoverage, Row, TfSide};
pub use summary::{DeviceSummary, TfCellSummary};
pub use tf::{TF_DEVICE_DEFAULT, TfComparison, TfKernelStats, parse_kernel_list, read_kernel_list};
pub use types::DTYPE_ORDER;

/// How `opreg coverage` prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageFormat {
    /// One line per (op, type attr), notes on the gaps, and a summary.
    Table,
    /// The structure documented in [`crate::coverage`].
    Json,
    /// A grid of ops by types, one panel per device (see [`crate::coverage_svg`]).
    Svg,
}

impl Coverage {
    /// The output of `opreg coverage --format FORMAT`.
    pub fn render(&self, format: CoverageFormat) -> Result<String, CoverageError> {
        Ok(match format {
            CoverageFormat::Table => self.to_table(),
            CoverageFormat::Json => {
                let mut text = serde_json::to_string_pretty(&self.to_json())?;
                text.push('\n');
                text
            }
            CoverageFormat::Svg => svg::render(self),
        })
    }
}

/// `opreg coverage`: resolves the devices, reads `against` and renders.
pub fn command(
    ops: &OpRegistry,
    kernels: &KernelRegistry,
    devices: &[String],
    against: Option<&Path>,
    format: CoverageFormat,
) -> Result<String, CoverageError> {
    let tf = against.map(read_kernel_list).transpose()?;
    let requested: Vec<String> = devices
        .iter()
        .flat_map(|d| d.split(','))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .collect();
    let devices = resolve_devices(&requested, kernels, tf.as_ref())?;
    // The file's name, not its path: the output does not depend on the
    // working directory.
    let source = against
        .map(|p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .unwrap_or_default();
    let coverage = Coverage::compute(
        ops,
        kernels,
        &devices,
        tf.as_ref().map(|l| (l, source.as_str())),
    );
    coverage.render(format)
}
