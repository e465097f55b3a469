//! The plan of a strided gather (behind `Transpose`, `Slice`,
//! `StridedSlice` and `Tile`), shared by the CPU and GPU copies: output
//! element `o` (row-major over `dims`) is input element
//! `base + Σ idx[d] · steps[d]`, steps in elements, of any sign.
//!
//! [`StridedLayout::new`] proves that every address is inside the input
//! (so the copy loops cannot go out of bounds), drops dimensions of size 1
//! and merges dimensions that are contiguous in the input.
//!
//! ```
//! use opreg_op_logic::strided::StridedLayout;
//!
//! // A transpose of [2, 3, 4] by [0, 2, 1] reads with steps [12, 1, 4];
//! // the identity collapses to one contiguous run.
//! let t = StridedLayout::new(24, 0, &[2, 4, 3], &[12, 1, 4]).unwrap();
//! assert_eq!((&t.dims[..], &t.steps[..]), (&[2, 4, 3][..], &[12, 1, 4][..]));
//! let id = StridedLayout::new(24, 0, &[2, 3, 4], &[12, 4, 1]).unwrap();
//! assert_eq!((&id.dims[..], &id.steps[..]), (&[24][..], &[1][..]));
//! ```

use registry_core::kernel::KernelError;
use smallvec::SmallVec;

use super::index::{Dims, Ints};

/// A validated, simplified strided gather (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedLayout {
    /// The first input element read (0 for an empty gather).
    pub base: i64,
    /// Output dimensions after simplification: none of size 0 or 1 (all
    /// dropped for an empty gather, or one of size 1).
    pub dims: Dims,
    /// Input step of each dimension of `dims`, in elements.
    pub steps: Ints,
    /// The number of output elements.
    pub len: usize,
}

impl StridedLayout {
    /// A gather reading a tensor of `input_len` elements: output dimension
    /// `d` has size `dims[d]` and input step `steps[d]`; the first element
    /// read is `base`. Internal error when an address would be outside the
    /// input, or when `dims` and `steps` differ in length.
    pub fn new(
        input_len: usize,
        base: i64,
        dims: &[usize],
        steps: &[i64],
    ) -> Result<Self, KernelError> {
        if dims.len() != steps.len() {
            return Err(KernelError::internal(
                "strided copy: one step per dimension",
            ));
        }
        let len = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| KernelError::internal("strided copy: output size overflows"))?;
        let mut layout = Self {
            base: 0,
            dims: SmallVec::new(),
            steps: SmallVec::new(),
            len,
        };
        if len == 0 {
            return Ok(layout);
        }
        // Bounds, in i128 so that nothing overflows.
        let mut lo = i128::from(base);
        let mut hi = lo;
        for (&d, &s) in dims.iter().zip(steps) {
            let span = (d as i128 - 1) * i128::from(s);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        if lo < 0 || hi >= input_len as i128 {
            return Err(KernelError::internal(format!(
                "strided copy reads elements {lo}..={hi} of a tensor of {input_len}"
            )));
        }
        // In range of the input, so every partial sum fits i64.
        layout.base = base;
        for (&d, &s) in dims.iter().zip(steps) {
            if d == 1 {
                continue;
            }
            if let (Some(last_d), Some(last_s)) = (layout.dims.last_mut(), layout.steps.last_mut())
            {
                // The previous (outer) dimension continues this one.
                if i64::try_from(d).ok().and_then(|d| s.checked_mul(d)) == Some(*last_s) {
                    *last_d *= d;
                    *last_s = s;
                    continue;
                }
            }
            layout.dims.push(d);
            layout.steps.push(s);
        }
        Ok(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_dims_merge_and_size_one_dims_drop() {
        let p = StridedLayout::new(24, 0, &[2, 4, 3], &[12, 1, 4]).unwrap();
        assert_eq!(
            (&p.dims[..], &p.steps[..], p.len),
            (&[2, 4, 3][..], &[12, 1, 4][..], 24)
        );
        let p = StridedLayout::new(24, 0, &[2, 3, 4], &[12, 4, 1]).unwrap();
        assert_eq!((&p.dims[..], &p.steps[..]), (&[24][..], &[1][..]));
        // Evenly strided dimensions merge too.
        let p = StridedLayout::new(48, 0, &[2, 3, 4], &[24, 8, 2]).unwrap();
        assert_eq!((&p.dims[..], &p.steps[..]), (&[24][..], &[2][..]));
        // A scalar: every dimension of size 1 is dropped.
        let p = StridedLayout::new(5, 3, &[1, 1], &[7, 9]).unwrap();
        assert_eq!((p.dims.len(), p.base, p.len), (0, 3, 1));
        // Step 0 repeats (Tile): kept apart from its neighbours.
        let p = StridedLayout::new(3, 0, &[2, 3], &[0, 1]).unwrap();
        assert_eq!((&p.dims[..], &p.steps[..]), (&[2, 3][..], &[0, 1][..]));
    }

    #[test]
    fn every_address_is_checked() {
        // Negative steps (a reversed slice) within bounds.
        let p = StridedLayout::new(10, 9, &[5], &[-2]).unwrap();
        assert_eq!((p.base, &p.steps[..]), (9, &[-2][..]));
        assert_eq!(
            StridedLayout::new(10, 9, &[6], &[-2])
                .unwrap_err()
                .to_string(),
            "strided copy reads elements -1..=9 of a tensor of 10"
        );
        assert!(StridedLayout::new(10, 0, &[11], &[1]).is_err());
        assert!(StridedLayout::new(10, -1, &[1], &[1]).is_err());
        assert!(StridedLayout::new(10, 0, &[2], &[1, 1]).is_err());
        assert!(StridedLayout::new(10, 0, &[usize::MAX, 2], &[0, 0]).is_err());
        // Empty outputs read nothing, whatever the base.
        let p = StridedLayout::new(0, 7, &[0, 3], &[3, 1]).unwrap();
        assert_eq!((p.len, p.base, p.dims.len()), (0, 0, 0));
    }
}
