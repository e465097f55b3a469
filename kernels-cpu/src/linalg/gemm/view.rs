//! Strided matrix views over slices, checked on construction so that every
//! element they name lies inside the slice.

use registry_core::kernel::KernelError;

use super::dense_buffer;
use crate::numeric::Element;

/// The number of slice elements a `rows × cols` view with these strides
/// spans (`None` on overflow; 0 for an empty view).
fn extent(rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> Option<usize> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    (rows - 1)
        .checked_mul(row_stride)?
        .checked_add((cols - 1).checked_mul(col_stride)?)?
        .checked_add(1)
}

fn check_view(
    len: usize,
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
) -> Result<(), KernelError> {
    let fits = extent(rows, cols, row_stride, col_stride).is_some_and(|e| e <= len)
        && isize::try_from(row_stride).is_ok()
        && isize::try_from(col_stride).is_ok();
    if fits {
        Ok(())
    } else {
        Err(KernelError::internal(format!(
            "matrix view [{rows},{cols}] with strides ({row_stride},{col_stride}) \
             does not fit in {len} elements"
        )))
    }
}

/// A read-only `rows × cols` matrix inside a slice: element (i, j) is
/// `data[i * row_stride + j * col_stride]`, always in bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MatRef<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, T: Copy> MatRef<'a, T> {
    /// A strided view; errors unless every element lies inside `data` and
    /// the strides fit in `isize`.
    pub(crate) fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self, KernelError> {
        check_view(data.len(), rows, cols, row_stride, col_stride)?;
        Ok(Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A dense row-major `rows × cols` matrix at the start of `data`.
    pub(crate) fn row_major(data: &'a [T], rows: usize, cols: usize) -> Result<Self, KernelError> {
        Self::new(data, rows, cols, cols, 1)
    }

    /// The transpose (no copy: the strides swap).
    pub(crate) fn t(self) -> Self {
        Self {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }

    /// The number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns.
    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    /// The distance between rows, in elements.
    pub(crate) fn row_stride(&self) -> usize {
        self.row_stride
    }

    /// The distance between columns, in elements.
    pub(crate) fn col_stride(&self) -> usize {
        self.col_stride
    }

    /// The underlying slice (every element of the view lies inside it).
    pub(crate) fn data(&self) -> &'a [T] {
        self.data
    }

    /// Copies the view into a dense row-major matrix, mapping each element.
    pub(crate) fn copy_dense<U: Element>(
        self,
        f: impl Fn(T) -> U,
    ) -> Result<DenseMat<U>, KernelError> {
        let mut data = dense_buffer::<U>(self.rows.checked_mul(self.cols))?;
        if self.cols > 0 {
            for (i, row) in data.chunks_exact_mut(self.cols).enumerate() {
                let base = i * self.row_stride;
                for (j, d) in row.iter_mut().enumerate() {
                    // In bounds: `new` checked the view's extent.
                    *d = f(self.data[base + j * self.col_stride]);
                }
            }
        }
        Ok(DenseMat {
            data,
            rows: self.rows,
            cols: self.cols,
        })
    }
}

/// A writable `rows × cols` matrix inside a slice whose elements are all
/// distinct slice positions.
#[derive(Debug)]
pub(crate) struct MatMut<'a, T> {
    data: &'a mut [T],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, T: Copy> MatMut<'a, T> {
    /// A strided view; errors unless every element lies inside `data`, no
    /// two elements share a position, and the strides fit in `isize`.
    pub(crate) fn new(
        data: &'a mut [T],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self, KernelError> {
        check_view(data.len(), rows, cols, row_stride, col_stride)?;
        let distinct = rows <= 1 && (cols <= 1 || col_stride >= 1)
            || cols <= 1 && row_stride >= 1
            || col_stride >= 1
                && cols
                    .checked_mul(col_stride)
                    .is_some_and(|w| row_stride >= w)
            || row_stride >= 1
                && rows
                    .checked_mul(row_stride)
                    .is_some_and(|h| col_stride >= h);
        if !distinct {
            return Err(KernelError::internal(format!(
                "writable matrix view [{rows},{cols}] with strides ({row_stride},{col_stride}) \
                 overlaps itself"
            )));
        }
        Ok(Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A dense row-major `rows × cols` matrix at the start of `data`.
    pub(crate) fn row_major(
        data: &'a mut [T],
        rows: usize,
        cols: usize,
    ) -> Result<Self, KernelError> {
        Self::new(data, rows, cols, cols, 1)
    }

    /// The number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns.
    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    /// The distance between rows, in elements.
    pub(crate) fn row_stride(&self) -> usize {
        self.row_stride
    }

    /// The distance between columns, in elements.
    pub(crate) fn col_stride(&self) -> usize {
        self.col_stride
    }

    /// The underlying slice.
    pub(crate) fn data_mut(&mut self) -> &mut [T] {
        self.data
    }

    /// Sets every element of the view to `value`.
    pub(crate) fn fill(&mut self, value: T) {
        for i in 0..self.rows {
            for j in 0..self.cols {
                self.data[i * self.row_stride + j * self.col_stride] = value;
            }
        }
    }

    /// Writes the dense row-major `rows × cols` matrix `src` into the view,
    /// mapping each element.
    pub(crate) fn assign_rows<U: Copy>(&mut self, src: &[U], f: impl Fn(U) -> T) {
        if self.cols == 0 {
            return;
        }
        for (i, row) in src.chunks_exact(self.cols).take(self.rows).enumerate() {
            let base = i * self.row_stride;
            for (j, &v) in row.iter().enumerate() {
                self.data[base + j * self.col_stride] = f(v);
            }
        }
    }
}

/// An owned dense row-major matrix (a converted or packed copy).
#[derive(Debug)]
pub(crate) struct DenseMat<T> {
    data: Vec<T>,
    rows: usize,
    cols: usize,
}

impl<T: Copy> DenseMat<T> {
    /// The elements, row-major.
    pub(crate) fn into_data(self) -> Vec<T> {
        self.data
    }

    /// A view of the whole matrix.
    pub(crate) fn view(&self) -> MatRef<'_, T> {
        MatRef {
            data: &self.data,
            rows: self.rows,
            cols: self.cols,
            row_stride: self.cols,
            col_stride: 1,
        }
    }
}
