//! TF's Doc text format: the first non-blank line is the summary, the lines
//! up to the first `name:` line the description, then one `name: text` block
//! (continuation lines dedented) per input, output or attr.

use opreg_proto::OpDef;

use crate::error::SpecErrorKind as K;
use crate::scanner::{Cursor, Failure, is_letter, is_letter_digit_underscore};
use crate::suggest::nearest;

/// If `line` starts with `name:` (TF's ConsumeDocNameColon), the name and
/// the byte offset where the text after `name: ` starts.
fn doc_name_colon(line: &str) -> Option<(&str, usize)> {
    let mut c = Cursor::new(line);
    let name = c.name_colon(is_letter, is_letter_digit_underscore)?;
    Some((name, c.pos()))
}

/// Applies Doc text to `op_def` (summary, description, arg/attr descriptions).
pub(crate) fn apply_doc(text: &str, op_def: &mut OpDef) -> Result<(), Failure> {
    // Lines with their byte offsets in `text`, trailing whitespace removed.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut offset = 0;
    for raw in text.split('\n') {
        lines.push((
            offset,
            raw.trim_end_matches(|c: char| c.is_ascii_whitespace()),
        ));
        offset += raw.len() + 1;
    }
    let mut l = 0;
    while l < lines.len() && lines[l].1.is_empty() {
        l += 1;
    }
    if l < lines.len() {
        op_def.summary = lines[l].1.to_owned();
        l += 1;
    }
    while l < lines.len() && lines[l].1.is_empty() {
        l += 1;
    }
    let start = l;
    while l < lines.len() && doc_name_colon(lines[l].1).is_none() {
        l += 1;
    }
    let mut end = l;
    while start < end && lines[end - 1].1.is_empty() {
        end -= 1;
    }
    let description: Vec<&str> = lines[start..end].iter().map(|(_, s)| *s).collect();
    if !description.is_empty() {
        op_def.description = description.join("\n");
    }

    while l < lines.len() {
        let (line_offset, first) = lines[l];
        let (name, text_start) = doc_name_colon(first).expect("loop stops only at name: lines");
        let mut block: Vec<&str> = vec![&first[text_start..]];
        l += 1;
        while l < lines.len() && doc_name_colon(lines[l].1).is_none() {
            block.push(lines[l].1);
            l += 1;
        }
        while block.last().is_some_and(|s| s.is_empty()) {
            block.pop();
        }
        let min_indent = block
            .iter()
            .skip(1)
            .filter(|s| !s.is_empty())
            .map(|s| s.len() - s.trim_start_matches(' ').len())
            .min();
        if let Some(indent) = min_indent {
            for line in block.iter_mut().skip(1) {
                if !line.is_empty() {
                    *line = &line[indent..];
                }
            }
        }
        let complete = block.join("\n");
        let target = op_def
            .input_arg
            .iter_mut()
            .find(|a| a.name == name)
            .map(|a| &mut a.description)
            .or_else(|| {
                op_def
                    .output_arg
                    .iter_mut()
                    .find(|a| a.name == name)
                    .map(|a| &mut a.description)
            })
            .or_else(|| {
                op_def
                    .attr
                    .iter_mut()
                    .find(|a| a.name == name)
                    .map(|a| &mut a.description)
            });
        match target {
            Some(description) => *description = complete,
            None => {
                let names = op_def
                    .input_arg
                    .iter()
                    .chain(&op_def.output_arg)
                    .map(|a| a.name.as_str())
                    .chain(op_def.attr.iter().map(|a| a.name.as_str()));
                let span = line_offset..line_offset + name.len();
                return Err(Failure::at(K::DocName(name.to_owned()), span)
                    .suggest(nearest(name, names).map(str::to_owned)));
            }
        }
    }
    Ok(())
}
