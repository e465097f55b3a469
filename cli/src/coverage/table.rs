//! The table of `opreg coverage --format table`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use opreg_proto::DataTypeExt;

use super::{CellState, Coverage, Row};

impl Coverage {
    /// The table: one line per row, notes on the gaps, a legend and a
    /// summary per device.
    pub fn to_table(&self) -> String {
        let against = self.against.is_some();
        let mut header = vec![
            "OP".to_owned(),
            "ATTR".to_owned(),
            "ALLOWED".to_owned(),
            "NO TENSORS".to_owned(),
        ];
        for d in &self.devices {
            header.push(d.clone());
            if against {
                header.push(format!("TF {d}"));
            }
        }
        header.push("NOTES".to_owned());
        let mut lines = vec![header];
        for row in &self.rows {
            let mut line = vec![row.op.clone()];
            match &row.attr {
                Some(attr) => {
                    line.push(attr.clone());
                    line.push(row.allowed.len().to_string());
                    line.push(row.no_tensor().len().to_string());
                }
                None => line.extend(["-", "-", "-"].map(str::to_owned)),
            }
            let mut notes = Vec::new();
            for (i, d) in row.devices.iter().enumerate() {
                let yes_no = |b: bool| if b { "yes" } else { "no" }.to_owned();
                if row.attr.is_some() {
                    line.push(d.covered.len().to_string());
                    if let Some(tf) = &d.tf {
                        line.push(tf.types.len().to_string());
                    }
                } else {
                    line.push(yes_no(d.kernels > 0));
                    if let Some(tf) = &d.tf {
                        line.push(yes_no(tf.kernels > 0));
                    }
                }
                let note = self.row_notes(row, i);
                if !note.is_empty() {
                    notes.push(if self.devices.len() > 1 {
                        format!("{}: {note}", self.devices[i])
                    } else {
                        note
                    });
                }
            }
            line.push(notes.join("; "));
            lines.push(line);
        }
        let mut out = String::new();
        let columns = lines[0].len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0))
            .collect();
        for line in &lines {
            let mut text = String::new();
            for (c, cell) in line.iter().enumerate() {
                // Names left-aligned, counts right-aligned, notes as they are.
                if c < 2 || c == columns - 1 {
                    let _ = write!(text, "{cell:<w$}  ", w = widths[c]);
                } else {
                    let _ = write!(text, "{cell:>w$}  ", w = widths[c]);
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        out.push('\n');
        let mut legend = vec![
            (
                "ALLOWED".to_owned(),
                "types the op allows for the attr (every type when unconstrained)",
            ),
            (
                "NO TENSORS".to_owned(),
                "of those, types opreg has no tensors of (never covered)",
            ),
        ];
        for d in &self.devices {
            legend.push((
                d.clone(),
                "allowed types with an opreg kernel (yes/no for an op without type attrs)",
            ));
            if against {
                legend.push((
                    format!("TF {d}"),
                    "allowed types with a TensorFlow kernel (DEFAULT-device kernels included)",
                ));
            }
        }
        let width = legend.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (key, text) in legend {
            let _ = writeln!(out, "{key:<width$}  {text}");
        }
        out.push('\n');
        out.push_str(&self.summary_text());
        out
    }

    /// The summary lines of the table (one or two per device).
    pub fn summary_text(&self) -> String {
        let mut out = String::new();
        let ops = self.summary(0).ops;
        let _ = writeln!(
            out,
            "{ops} ops, {} rows (one per type attr; one for an op without type attrs)",
            self.rows.len()
        );
        for (i, d) in self.devices.iter().enumerate() {
            let s = self.summary(i);
            let with_tensors = s.cells_allowed - s.cells_no_tensor;
            let _ = writeln!(
                out,
                "{d}: {}/{} ops have a kernel, {}/{} cover every allowed type opreg has \
                 tensors of",
                s.ops_with_kernel, s.ops, s.ops_complete, s.ops,
            );
            let _ = writeln!(
                out,
                "{d}: {}/{} allowed cells covered ({} of types without opreg tensors; \
                 {}/{with_tensors} of the others)",
                s.cells_covered, s.cells_allowed, s.cells_no_tensor, s.cells_covered,
            );
            if let (Some(tf), Some(cmp)) = (&s.tf, &self.against) {
                let k = &cmp.kernels[i];
                let _ = writeln!(
                    out,
                    "{d} vs TF ({}): {} TF kernels: {} matched by ours, {} unmatched,\n  \
                     {} of types without opreg tensors, {} for types the op does not allow",
                    cmp.source,
                    k.total,
                    k.matched,
                    k.unmatched.len(),
                    k.no_tensor,
                    k.disallowed.len(),
                );
                let _ = writeln!(
                    out,
                    "{d} vs TF cells: TF {}, both {}, TF only {}, TF only (no tensors) {}, \
                     ours only {}",
                    tf.cells, tf.both, tf.tf_only, tf.tf_only_no_tensor, tf.ours_only,
                );
                for u in &k.unmatched {
                    let _ = writeln!(out, "  unmatched TF kernel: {u}");
                }
            }
        }
        out
    }

    /// The gaps of one row on device `index`, in words ("" when none).
    fn row_notes(&self, row: &Row, index: usize) -> String {
        let mut by_state: BTreeMap<CellState, Vec<&'static str>> = BTreeMap::new();
        for (t, cell) in row.cells(index) {
            by_state
                .entry(cell)
                .or_default()
                .push(t.map_or("any kernel", DataTypeExt::type_name));
        }
        let list = |state: CellState, what: &str, name_all: bool| -> Option<String> {
            let names = by_state.get(&state)?;
            Some(if name_all || names.len() <= 4 {
                format!("{what}: {}", names.join(" "))
            } else {
                format!("{what}: {} types", names.len())
            })
        };
        [
            list(CellState::Missing, "missing", true),
            list(CellState::TfOnly, "TF only", true),
            list(CellState::TfOnlyNoTensor, "TF only (no tensors)", false),
            list(CellState::OursOnly, "ours only", true),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    }
}
