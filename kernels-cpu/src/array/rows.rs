//! The row gather behind `Pad`, `PadV2`, `MirrorPad`, `SpaceToBatchND`,
//! `BatchToSpaceND` and `GatherNd`: the output is a grid of rows, and each
//! row is filled from one place of the input (or is padding).
//!
//! The output is viewed as `[n_0, ..., n_{k-1}, row_len]`. Each of the `k`
//! grid dimensions has a table of input offsets, one per index, `None`
//! where that index is padding; the row at `(i_0, ..., i_{k-1})` reads the
//! input from `tables[0][i_0] + ... + tables[k-1][i_{k-1}]`, or is padding
//! when any entry is `None`. What a row does with its input (a copy, a
//! copy into the middle of the row, a mirrored copy) is the caller's
//! closure; [`RowGather::new`] proves that every read of `read_len`
//! elements from an offset stays inside the input, so the closures cannot
//! index out of bounds.
//!
//! The offsets of consecutive rows are found by walking the last table, so
//! the work per row is one addition; large outputs are filled in parallel,
//! chunked by rows.

use registry_core::kernel::KernelError;
use smallvec::SmallVec;

use super::parallel::for_each_row_chunk;

/// One table of input offsets per grid dimension.
pub(crate) type Tables = SmallVec<[Vec<Option<usize>>; 8]>;

/// A validated row gather (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct RowGather {
    tables: Tables,
    row_len: usize,
}

impl RowGather {
    /// A gather of rows of `row_len` output elements over the grid of
    /// `tables`, each row reading at most `read_len` input elements from
    /// its offset. Internal error when a read could leave an input of
    /// `input_len` elements.
    pub(crate) fn new(
        tables: Tables,
        row_len: usize,
        read_len: usize,
        input_len: usize,
    ) -> Result<Self, KernelError> {
        // The largest offset of a row that reads (none when some dimension
        // is all padding: no row reads).
        let largest = tables.iter().try_fold(0usize, |sum, table| {
            let max = table.iter().flatten().max()?;
            Some(sum.saturating_add(*max))
        });
        if let Some(largest) = largest
            && tables.iter().all(|t| !t.is_empty())
            && largest.saturating_add(read_len) > input_len
        {
            return Err(KernelError::internal(format!(
                "row gather: a read of {read_len} elements at {largest} leaves an input of \
                 {input_len}"
            )));
        }
        Ok(Self { tables, row_len })
    }

    /// The number of output elements.
    pub(crate) fn len(&self) -> usize {
        self.tables
            .iter()
            .map(Vec::len)
            .fold(self.row_len, usize::saturating_mul)
    }

    /// The offset of the row whose indices in every grid dimension but the
    /// last are those of `outer` (row-major over those dimensions).
    fn outer_offset(&self, mut outer: usize) -> Option<usize> {
        let mut offset = 0usize;
        for table in self.tables[..self.tables.len() - 1].iter().rev() {
            let n = table.len().max(1);
            offset += table.get(outer % n).copied().flatten()?;
            outer /= n;
        }
        Some(offset)
    }

    /// Calls `fill(offset, row)` on every row of `out` (`offset` `None`
    /// for padding). Internal error when `out` is not the gather's size.
    pub(crate) fn run<T, F>(&self, out: &mut [T], fill: F) -> Result<(), KernelError>
    where
        T: Send,
        F: Fn(Option<usize>, &mut [T]) + Sync + Send,
    {
        if out.len() != self.len() {
            return Err(KernelError::internal(format!(
                "row gather of {} elements into {}",
                self.len(),
                out.len()
            )));
        }
        let Some(last) = self.tables.last() else {
            // No grid: the output is one row.
            fill(Some(0), out);
            return Ok(());
        };
        let n_last = last.len();
        for_each_row_chunk(out, self.row_len, |row0, chunk| {
            let mut rows = chunk.chunks_exact_mut(self.row_len);
            let mut r = row0;
            loop {
                let base = self.outer_offset(r / n_last);
                for entry in &last[r % n_last..] {
                    let Some(row) = rows.next() else {
                        return;
                    };
                    fill(base.zip(*entry).map(|(a, b)| a + b), row);
                    r += 1;
                }
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_from_the_sum_of_their_offsets() {
        let tables: Tables = [vec![Some(0), None, Some(10)], vec![Some(1), Some(2)]]
            .into_iter()
            .collect();
        let g = RowGather::new(tables, 2, 2, 14).unwrap();
        assert_eq!(g.len(), 12);
        let mut out = vec![0usize; 12];
        g.run(&mut out, |at, row| {
            let v = at.map_or(99, |a| a);
            row.fill(v);
        })
        .unwrap();
        assert_eq!(out, [1, 1, 2, 2, 99, 99, 99, 99, 11, 11, 12, 12]);
        // A read past the input is refused up front.
        let tables: Tables = [vec![Some(0), Some(10)], vec![Some(2)]]
            .into_iter()
            .collect();
        assert!(RowGather::new(tables, 2, 3, 14).is_err());
        // All padding: nothing is read.
        let tables: Tables = [vec![None, None], vec![Some(2)]].into_iter().collect();
        assert!(RowGather::new(tables, 2, 3, 0).is_ok());
        // A wrong output size is an internal error.
        let g = RowGather::new(Tables::new(), 3, 3, 3).unwrap();
        assert!(g.run(&mut [0u8; 4], |_, _| {}).is_err());
    }
}
