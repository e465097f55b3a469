//! The SVG grid of `opreg coverage --format svg`: one panel per device; in a
//! panel, one line per (op, type attr) and one column per type, each cell a
//! square coloured by its [`CellState`], with a tooltip. Types an attr does
//! not allow have no square. Ops without a type attr have their single cell
//! in a first column, "no type attr". A legend (with the number of cells in
//! each state) and the summary close the image.
//!
//! Every cell is a `<rect class="cell STATE">`; the legend's squares are
//! `<rect class="legend STATE">`, the row stripes `<rect class="stripe">`.
//! The text is hand-written SVG (no dependency) and plain XML: every element
//! is closed and text is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use opreg_proto::DataTypeExt;

use crate::coverage::{CellState, Coverage};

/// A cell's side, and the distance between cells.
const CELL: usize = 14;
const PITCH: usize = 16;
const MARGIN: usize = 12;
const FONT: usize = 11;
/// The average width of one character at [`FONT`] (no font metrics here).
const CHAR_W: usize = 7;
const LINE: usize = 16;

/// The fill colour of a state.
pub fn color(state: CellState) -> &'static str {
    match state {
        CellState::Covered | CellState::Both => "#2e7d32",
        CellState::OursOnly => "#1e88e5",
        CellState::Missing | CellState::TfOnly => "#d32f2f",
        CellState::TfOnlyNoTensor => "#fb8c00",
        CellState::Neither => "#cfcfcf",
        CellState::NoTensor => "#f1f1f1",
    }
}

/// Escapes text for XML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The SVG document of `coverage`.
pub fn render(coverage: &Coverage) -> String {
    let untyped = coverage.rows.iter().any(|r| r.attr.is_none());
    // Column 0 is "no type attr" when some op has none.
    let mut columns: Vec<String> = Vec::new();
    if untyped {
        columns.push("(no type attr)".to_owned());
    }
    columns.extend(coverage.dtypes.iter().map(|t| t.type_name().to_owned()));
    let column_of = |t: Option<opreg_proto::DataType>| -> usize {
        match t {
            None => 0,
            Some(t) => {
                usize::from(untyped) + coverage.dtypes.iter().position(|&d| d == t).unwrap_or(0)
            }
        }
    };

    let label_w = coverage
        .rows
        .iter()
        .map(|r| r.label().len())
        .max()
        .unwrap_or(0)
        * CHAR_W
        + 2 * CHAR_W;
    let header_h = columns.iter().map(String::len).max().unwrap_or(0) * (CHAR_W - 1) + 8;
    let grid_w = label_w + columns.len() * PITCH;
    let panel_h = LINE + header_h + coverage.rows.len() * PITCH + LINE;

    let title = match &coverage.against {
        Some(cmp) => format!(
            "opreg kernel coverage: {} vs TensorFlow ({})",
            coverage.devices.join(", "),
            cmp.source
        ),
        None => format!("opreg kernel coverage: {}", coverage.devices.join(", ")),
    };
    let states: Vec<CellState> = if coverage.against.is_some() {
        vec![
            CellState::Both,
            CellState::OursOnly,
            CellState::TfOnly,
            CellState::TfOnlyNoTensor,
            CellState::Neither,
            CellState::NoTensor,
        ]
    } else {
        vec![CellState::Covered, CellState::Missing, CellState::NoTensor]
    };
    let mut counts: BTreeMap<CellState, usize> = BTreeMap::new();
    for i in 0..coverage.devices.len() {
        for row in &coverage.rows {
            for (_, s) in row.cells(i) {
                *counts.entry(s).or_default() += 1;
            }
        }
    }
    let summary = summary_lines(coverage);
    let text_w = summary
        .iter()
        .chain(std::iter::once(&title))
        .map(|l| l.len() * CHAR_W)
        .max()
        .unwrap_or(0);
    let legend_w: usize = states
        .iter()
        .map(|s| legend_text(*s, &counts).len() * (CHAR_W - 1) + CELL + 24)
        .max()
        .unwrap_or(0);
    let width = 2 * MARGIN + grid_w.max(text_w).max(legend_w);
    let legend_h = states.len() * LINE + LINE;
    let height =
        2 * MARGIN + 2 * LINE + coverage.devices.len() * panel_h + legend_h + summary.len() * LINE;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans, Verdana, sans-serif\" \
         font-size=\"{FONT}\">"
    );
    let _ = writeln!(
        out,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" \
         fill=\"#ffffff\"/>"
    );
    let mut y = MARGIN + LINE;
    let _ = writeln!(
        out,
        "<text x=\"{MARGIN}\" y=\"{y}\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        esc(&title)
    );
    y += LINE;

    for (i, device) in coverage.devices.iter().enumerate() {
        y += LINE;
        let _ = writeln!(
            out,
            "<g class=\"panel\" id=\"device-{}\">",
            esc(&device.to_lowercase())
        );
        let _ = writeln!(
            out,
            "<text x=\"{MARGIN}\" y=\"{y}\" font-size=\"13\" font-weight=\"bold\">{}</text>",
            esc(device)
        );
        // Column labels, vertical, bottom-aligned on the grid.
        let base = y + header_h;
        for (c, name) in columns.iter().enumerate() {
            let x = MARGIN + label_w + c * PITCH + CELL / 2 + 4;
            let _ = writeln!(
                out,
                "<text transform=\"translate({x},{}) rotate(-90)\">{}</text>",
                base - 4,
                esc(name)
            );
        }
        let mut row_y = base;
        let mut shade = false;
        let mut previous_op: Option<&str> = None;
        for row in &coverage.rows {
            if previous_op != Some(row.op.as_str()) {
                shade = !shade;
                previous_op = Some(row.op.as_str());
            }
            if shade {
                let _ = writeln!(
                    out,
                    "<rect class=\"stripe\" x=\"{MARGIN}\" y=\"{row_y}\" width=\"{grid_w}\" \
                     height=\"{PITCH}\" fill=\"#f6f8fa\"/>"
                );
            }
            let text_y = row_y + PITCH - 4;
            let attr = row
                .attr
                .as_deref()
                .map(|a| format!(" <tspan fill=\"#6a737d\">{}</tspan>", esc(a)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{text_y}\">{}{attr}</text>",
                MARGIN + 4,
                esc(&row.op)
            );
            for (t, state) in row.cells(i) {
                let x = MARGIN + label_w + column_of(t) * PITCH;
                let what = t.map_or_else(
                    || "any kernel".to_owned(),
                    |t| format!("{}={}", row.attr.as_deref().unwrap_or(""), t.type_name()),
                );
                let _ = writeln!(
                    out,
                    "<rect class=\"cell {}\" x=\"{x}\" y=\"{}\" width=\"{CELL}\" \
                     height=\"{CELL}\" fill=\"{}\" stroke=\"#bbbbbb\" stroke-width=\"0.5\">\
                     <title>{} {what} on {}: {}</title></rect>",
                    state.name(),
                    row_y + 1,
                    color(state),
                    esc(&row.op),
                    esc(device),
                    esc(state.label())
                );
            }
            row_y += PITCH;
        }
        let _ = writeln!(out, "</g>");
        y += panel_h - LINE;
    }

    // Legend.
    y += LINE;
    for state in &states {
        let _ = writeln!(
            out,
            "<rect class=\"legend {}\" x=\"{MARGIN}\" y=\"{}\" width=\"{CELL}\" \
             height=\"{CELL}\" fill=\"{}\" stroke=\"#bbbbbb\" stroke-width=\"0.5\"/>",
            state.name(),
            y - CELL + 3,
            color(*state)
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{y}\">{}</text>",
            MARGIN + CELL + 8,
            esc(&legend_text(*state, &counts))
        );
        y += LINE;
    }
    y += LINE / 2;
    for line in &summary {
        let _ = writeln!(
            out,
            "<text x=\"{MARGIN}\" y=\"{y}\" fill=\"#444444\">{}</text>",
            esc(line)
        );
        y += LINE;
    }
    out.push_str("</svg>\n");
    out
}

fn legend_text(state: CellState, counts: &BTreeMap<CellState, usize>) -> String {
    format!(
        "{} ({} cells)",
        state.label(),
        counts.get(&state).copied().unwrap_or(0)
    )
}

/// Short summary lines (the table's are too long for an image).
fn summary_lines(coverage: &Coverage) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, device) in coverage.devices.iter().enumerate() {
        let s = coverage.summary(i);
        lines.push(format!(
            "{device}: {}/{} ops have a kernel; {} cover every allowed type opreg has tensors of",
            s.ops_with_kernel, s.ops, s.ops_complete,
        ));
        lines.push(format!(
            "{device}: {} of {} allowed cells covered ({} are of types without opreg tensors)",
            s.cells_covered, s.cells_allowed, s.cells_no_tensor
        ));
        if let Some(cmp) = &coverage.against {
            let k = &cmp.kernels[i];
            lines.push(format!(
                "TF's {} {device} kernels of these ops: {} matched by opreg, {} unmatched,",
                k.total,
                k.matched,
                k.unmatched.len()
            ));
            lines.push(format!(
                "{} of types without opreg tensors, {} for types the op does not allow",
                k.no_tensor,
                k.disallowed.len()
            ));
        }
    }
    lines
}
