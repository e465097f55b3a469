//! The per-device counts of a [`Coverage`] over all its rows.

use std::collections::BTreeMap;

use super::{CellState, Coverage};

/// The counts of one device over all rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceSummary {
    /// Ops compared.
    pub ops: usize,
    /// Ops with at least one kernel for the device.
    pub ops_with_kernel: usize,
    /// Ops whose every row covers every allowed type opreg has tensors of.
    pub ops_complete: usize,
    /// Cells (allowed types of all rows; one for an op without type attrs).
    pub cells_allowed: usize,
    /// Cells of types opreg has no tensors of.
    pub cells_no_tensor: usize,
    /// Cells with one of our kernels.
    pub cells_covered: usize,
    /// TF's side, with `--against`.
    pub tf: Option<TfCellSummary>,
}

/// The cell counts against TF for one device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TfCellSummary {
    /// Cells with a TF kernel.
    pub cells: usize,
    /// Cells with both.
    pub both: usize,
    /// Cells with only TF's kernel, of types opreg has tensors of.
    pub tf_only: usize,
    /// Cells with only TF's kernel, of types opreg has no tensors of.
    pub tf_only_no_tensor: usize,
    /// Cells with only our kernel.
    pub ours_only: usize,
}

impl Coverage {
    /// The counts for device `index`.
    pub fn summary(&self, index: usize) -> DeviceSummary {
        let mut s = DeviceSummary::default();
        let mut tf = TfCellSummary::default();
        let mut ops: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
        for row in &self.rows {
            let (any, complete) = ops.entry(row.op.as_str()).or_insert((false, true));
            *any |= row.devices[index].kernels > 0;
            for (_, cell) in row.cells(index) {
                s.cells_allowed += 1;
                s.cells_covered += usize::from(cell.ours());
                s.cells_no_tensor += usize::from(matches!(
                    cell,
                    CellState::NoTensor | CellState::TfOnlyNoTensor
                ));
                *complete &= !matches!(
                    cell,
                    CellState::Missing | CellState::TfOnly | CellState::Neither
                );
                tf.cells += usize::from(cell.tf());
                match cell {
                    CellState::Both => tf.both += 1,
                    CellState::TfOnly => tf.tf_only += 1,
                    CellState::TfOnlyNoTensor => tf.tf_only_no_tensor += 1,
                    CellState::OursOnly => tf.ours_only += 1,
                    _ => {}
                }
            }
        }
        s.ops = ops.len();
        s.ops_with_kernel = ops.values().filter(|(any, _)| *any).count();
        s.ops_complete = ops.values().filter(|(_, c)| *c).count();
        s.tf = self.against.as_ref().map(|_| tf);
        s
    }
}
