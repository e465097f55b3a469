//! Sliding-window geometry shared by Conv2D and MaxPool on every device
//! (host side, pure): data formats, padding kinds, TF's
//! `CheckValidPadding` and `GetWindowedOutputSizeVerbose`, with TF's
//! messages.
//!
//! ```
//! use opreg_op_logic::window::{Padding, windowed_output};
//! // SAME, input 5, window 2, stride 2: 3 outputs, 1 element padded after.
//! let w = windowed_output(5, 2, 1, 2, Padding::Same, (0, 0)).unwrap();
//! assert_eq!((w.out, w.pad_before, w.pad_after), (3, 0, 1));
//! ```

use registry_core::kernel::KernelError;

/// A 4-D image layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    /// Batch, height, width, channels.
    Nhwc,
    /// Batch, channels, height, width.
    Nchw,
}

impl DataFormat {
    /// Parses `NHWC`/`NCHW` (TF's `FormatFromString`, for the formats these
    /// kernels accept).
    ///
    /// ```
    /// use opreg_op_logic::window::DataFormat;
    /// assert_eq!(DataFormat::parse("NCHW").unwrap(), DataFormat::Nchw);
    /// assert!(DataFormat::parse("CHWN").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self, KernelError> {
        match s {
            "NHWC" => Ok(Self::Nhwc),
            "NCHW" => Ok(Self::Nchw),
            _ => Err(KernelError::invalid_argument("Invalid data format")),
        }
    }

    /// The index of dimension `'N'`, `'H'`, `'W'` or `'C'` in a 4-D shape or
    /// attr list of this format (TF's `GetTensorDimIndex`).
    ///
    /// ```
    /// use opreg_op_logic::window::DataFormat;
    /// assert_eq!(DataFormat::Nhwc.index('C'), 3);
    /// assert_eq!(DataFormat::Nchw.index('C'), 1);
    /// ```
    pub fn index(self, dim: char) -> usize {
        match (self, dim) {
            (_, 'N') => 0,
            (Self::Nhwc, 'H') | (Self::Nchw, 'C') => 1,
            (Self::Nhwc, 'W') | (Self::Nchw, 'H') => 2,
            _ => 3, // NHWC 'C', NCHW 'W'
        }
    }

    /// The 4-D shape of this format from its batch, height, width and
    /// channel sizes.
    pub fn shape(self, n: usize, h: usize, w: usize, c: usize) -> [usize; 4] {
        match self {
            Self::Nhwc => [n, h, w, c],
            Self::Nchw => [n, c, h, w],
        }
    }

    /// TF's name of the format.
    pub fn name(self) -> &'static str {
        match self {
            Self::Nhwc => "NHWC",
            Self::Nchw => "NCHW",
        }
    }
}

/// TF's `Padding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// No padding: windows stay inside the input.
    Valid,
    /// Output size `ceil(input / stride)`, padding split with the extra
    /// element after.
    Same,
    /// The amounts in `explicit_paddings`.
    Explicit,
}

impl Padding {
    /// Parses the `padding` attr.
    pub fn parse(s: &str) -> Result<Self, KernelError> {
        match s {
            "VALID" => Ok(Self::Valid),
            "SAME" => Ok(Self::Same),
            "EXPLICIT" => Ok(Self::Explicit),
            _ => Err(KernelError::invalid_argument(format!(
                "Unknown padding type: {s}"
            ))),
        }
    }
}

/// TF's `CheckValidPadding` for 4-D formats.
pub fn check_valid_padding(
    padding: Padding,
    explicit: &[i64],
    format: DataFormat,
) -> Result<(), KernelError> {
    if padding == Padding::Explicit {
        registry_core::kernel_ensure!(
            explicit.len() == 8,
            "explicit_paddings attribute must contain 8 values, but got: {}",
            explicit.len()
        );
        registry_core::kernel_ensure!(
            explicit.iter().all(|&p| p >= 0),
            "All elements of explicit_paddings must be nonnegative"
        );
        let (n, c) = (format.index('N'), format.index('C'));
        registry_core::kernel_ensure!(
            explicit[2 * n] == 0
                && explicit[2 * n + 1] == 0
                && explicit[2 * c] == 0
                && explicit[2 * c + 1] == 0,
            "Nonzero explicit padding in the batch or depth dimensions is not supported"
        );
    } else {
        registry_core::kernel_ensure!(
            explicit.is_empty(),
            "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"
        );
    }
    Ok(())
}

/// The (before, after) amounts `explicit_paddings` (checked by
/// [`check_valid_padding`], or empty) gives dimension `dim` of `format`;
/// `(0, 0)` when it is empty.
pub fn explicit_padding(explicit: &[i64], format: DataFormat, dim: char) -> (i64, i64) {
    let i = 2 * format.index(dim);
    match explicit.get(i..i + 2) {
        Some(&[before, after]) => (before, after),
        _ => (0, 0),
    }
}

/// One spatial dimension of a window: its output size and the padding on
/// either side of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The output size.
    pub out: usize,
    /// Elements of padding before the input.
    pub pad_before: i64,
    /// Elements of padding after the input (for SAME, the extra one when
    /// the total is odd; never negative).
    pub pad_after: i64,
}

/// One spatial dimension of a windowed op, checked: the input size, the
/// window (filter) size with its stride and dilation, and the output size
/// with the padding either side. 2-D ops are 3-D ones whose first axis is
/// [`Axis::UNIT`], so one loop nest serves both.
///
/// ```
/// use opreg_op_logic::window::{Axis, Padding};
/// let a = Axis::new(5, 3, 1, 2, Padding::Same, (0, 0)).unwrap();
/// assert_eq!(a.out.out, 3);
/// assert_eq!(a.tap(0, 0), None); // the padding before the input
/// assert_eq!(a.tap(0, 1), Some(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// The input size.
    pub input: usize,
    /// The window (filter) size.
    pub window: usize,
    /// The stride.
    pub stride: i64,
    /// The dilation (1 for pooling).
    pub dilation: i64,
    /// The output size and the padding.
    pub out: Window,
}

impl Axis {
    /// An axis of size 1 with a window of 1 and no padding.
    pub const UNIT: Self = Self {
        input: 1,
        window: 1,
        stride: 1,
        dilation: 1,
        out: Window {
            out: 1,
            pad_before: 0,
            pad_after: 0,
        },
    };

    /// Checks one dimension and computes its output with
    /// [`windowed_output`] (TF's `GetWindowedOutputSizeVerbose(V2)`).
    pub fn new(
        input: usize,
        window: usize,
        dilation: i64,
        stride: i64,
        padding: Padding,
        explicit: (i64, i64),
    ) -> Result<Self, KernelError> {
        Ok(Self {
            input,
            window,
            stride,
            dilation,
            out: windowed_output(input, window, dilation, stride, padding, explicit)?,
        })
    }

    /// The input position tap `f` of output `o`'s window reads, or `None`
    /// in the padding (see [`tap`]).
    pub fn tap(&self, o: usize, f: usize) -> Option<usize> {
        tap(
            o,
            f,
            self.stride,
            self.dilation,
            self.out.pad_before,
            self.input,
        )
    }

    /// Each output position's [`WindowTaps`]: which taps of its window
    /// read the input, and where the first of them reads.
    ///
    /// ```
    /// use opreg_op_logic::window::{Axis, Padding};
    /// let a = Axis::new(5, 3, 1, 2, Padding::Same, (0, 0)).unwrap();
    /// let taps = a.taps();
    /// assert_eq!((taps[0].first, taps[0].end, taps[0].at), (1, 3, 0));
    /// assert_eq!(taps[0].input_at(0, a.dilation), None);
    /// assert_eq!(taps[0].input_at(2, a.dilation), Some(1));
    /// ```
    pub fn taps(&self) -> Vec<WindowTaps> {
        (0..self.out.out)
            .map(|o| {
                let mut valid = (0..self.window).filter_map(|f| self.tap(o, f).map(|p| (f, p)));
                match valid.next() {
                    Some((first, at)) => WindowTaps {
                        first,
                        end: valid.next_back().map_or(first, |(f, _)| f) + 1,
                        at,
                    },
                    None => WindowTaps {
                        first: 0,
                        end: 0,
                        at: 0,
                    },
                }
            })
            .collect()
    }

    /// The input positions `[start, end)` output `o`'s undilated window
    /// covers, clipped to the input (empty when it lies in the padding).
    pub fn window_range(&self, o: usize) -> (usize, usize) {
        let first = i64::try_from(o)
            .unwrap_or(i64::MAX)
            .saturating_mul(self.stride)
            .saturating_sub(self.out.pad_before);
        let last = first.saturating_add(i64::try_from(self.window).unwrap_or(i64::MAX));
        let clip = |v: i64| {
            usize::try_from(v.max(0))
                .unwrap_or(usize::MAX)
                .min(self.input)
        };
        (clip(first), clip(last))
    }
}

/// The taps of one output position's window that read the input (the
/// others fall in the padding): `first..end`, contiguous because the input
/// position grows with the tap, the first of them reading input position
/// `at` (see [`Axis::taps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowTaps {
    /// The first tap inside the input.
    pub first: usize,
    /// One past the last tap inside the input (`first` when none is).
    pub end: usize,
    /// The input position tap `first` reads.
    pub at: usize,
}

impl WindowTaps {
    /// The input position tap `f` reads, `None` in the padding.
    #[inline(always)]
    pub fn input_at(&self, f: usize, dilation: i64) -> Option<usize> {
        (self.first..self.end)
            .contains(&f)
            .then(|| self.at + (f - self.first) * usize::try_from(dilation).unwrap_or(1))
    }
}

/// The checks TF's `GetWindowedOutputSizeVerbose(V2)` starts with (also
/// made by the shape functions, on sizes that may be unknown): a positive
/// stride, a dilation of at least 1.
pub fn check_stride_and_dilation(stride: i64, dilation: i64) -> Result<(), KernelError> {
    registry_core::kernel_ensure!(stride > 0, "Stride must be > 0, but got {stride}");
    registry_core::kernel_ensure!(
        dilation >= 1,
        "Dilation rate must be >= 1, but got {dilation}"
    );
    Ok(())
}

/// TF's `GetWindowedOutputSizeVerbose(V2)`: the output size and padding of
/// one dimension. `explicit` holds (before, after) for EXPLICIT padding.
pub fn windowed_output(
    input: usize,
    filter: usize,
    dilation: i64,
    stride: i64,
    padding: Padding,
    explicit: (i64, i64),
) -> Result<Window, KernelError> {
    check_stride_and_dilation(stride, dilation)?;
    let overflow = || KernelError::invalid_argument("window size computation overflows");
    let input = i64::try_from(input).map_err(|_| overflow())?;
    let filter = i64::try_from(filter).map_err(|_| overflow())?;
    let effective = (filter - 1)
        .checked_mul(dilation)
        .and_then(|v| v.checked_add(1))
        .ok_or_else(overflow)?;
    let (out, pad_before, pad_after) = match padding {
        Padding::Valid => (
            input
                .checked_sub(effective)
                .and_then(|v| v.checked_add(stride))
                .ok_or_else(overflow)?
                / stride,
            0,
            0,
        ),
        Padding::Explicit => (
            input
                .checked_add(explicit.0)
                .and_then(|v| v.checked_add(explicit.1))
                .and_then(|v| v.checked_sub(effective))
                .and_then(|v| v.checked_add(stride))
                .ok_or_else(overflow)?
                / stride,
            explicit.0,
            explicit.1,
        ),
        Padding::Same => {
            let out = input.checked_add(stride - 1).ok_or_else(overflow)? / stride;
            let needed = (out - 1)
                .checked_mul(stride)
                .and_then(|v| v.checked_add(effective))
                .and_then(|v| v.checked_sub(input))
                .ok_or_else(overflow)?
                .max(0);
            (out, needed / 2, needed - needed / 2)
        }
    };
    registry_core::kernel_ensure!(
        out >= 0,
        "Computed output size would be negative: {out} [input_size: {input}, \
         effective_filter_size: {effective}, stride: {stride}]"
    );
    Ok(Window {
        out: usize::try_from(out).map_err(|_| overflow())?,
        pad_before,
        pad_after,
    })
}

/// The input positions a window covers along one dimension: for output
/// index `o`, positions `o * stride - pad_before + f * dilation` for
/// `f in 0..filter`, as `Some(index)` when inside `0..input`.
///
/// ```
/// use opreg_op_logic::window::tap;
/// // Output 1, tap 0 of a stride-2 window padded by 1: input position 1.
/// assert_eq!(tap(1, 0, 2, 1, 1, 5), Some(1));
/// // Output 0, tap 0 reads the padding.
/// assert_eq!(tap(0, 0, 2, 1, 1, 5), None);
/// ```
pub fn tap(
    o: usize,
    f: usize,
    stride: i64,
    dilation: i64,
    pad_before: i64,
    input: usize,
) -> Option<usize> {
    let o = i64::try_from(o).ok()?;
    let f = i64::try_from(f).ok()?;
    let pos = o
        .saturating_mul(stride)
        .saturating_add(f.saturating_mul(dilation))
        .saturating_sub(pad_before);
    usize::try_from(pos).ok().filter(|&p| p < input)
}

/// Fails with TF's message `what` when `value` does not fit in a C++ `int`.
pub fn check_int(value: usize, what: &str) -> Result<(), KernelError> {
    registry_core::kernel_ensure!(i32::try_from(value).is_ok(), "{what}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_index_their_dimensions() {
        for (i, d) in "NHWC".chars().enumerate() {
            assert_eq!(DataFormat::Nhwc.index(d), i);
        }
        for (i, d) in "NCHW".chars().enumerate() {
            assert_eq!(DataFormat::Nchw.index(d), i);
        }
        assert_eq!(DataFormat::Nchw.shape(1, 2, 3, 4), [1, 4, 2, 3]);
        assert_eq!(DataFormat::Nhwc.shape(1, 2, 3, 4), [1, 2, 3, 4]);
        assert_eq!(DataFormat::Nchw.name(), "NCHW");
        assert!(Padding::parse("FULL").is_err());
        let explicit = [0, 0, 1, 2, 3, 4, 0, 0];
        assert_eq!(explicit_padding(&explicit, DataFormat::Nhwc, 'W'), (3, 4));
        assert_eq!(explicit_padding(&[], DataFormat::Nhwc, 'W'), (0, 0));
    }

    #[test]
    fn valid_same_and_explicit_windows() {
        let w = windowed_output(5, 3, 1, 1, Padding::Valid, (0, 0)).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (3, 0, 0));
        // SAME, stride 1, window 3: one each side.
        let w = windowed_output(5, 3, 1, 1, Padding::Same, (0, 0)).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (5, 1, 1));
        // SAME, window 4: 3 in total, the extra one after.
        let w = windowed_output(5, 4, 1, 1, Padding::Same, (0, 0)).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (5, 1, 2));
        // SAME with a dilated window 3 (effective 5), stride 2.
        let w = windowed_output(6, 3, 2, 2, Padding::Same, (0, 0)).unwrap();
        assert_eq!(w.out, 3);
        assert_eq!(w.pad_before + w.pad_after, 3);
        let w = windowed_output(4, 2, 1, 1, Padding::Explicit, (2, 1)).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (6, 2, 1));
        // SAME never pads negatively.
        let w = windowed_output(5, 1, 1, 3, Padding::Same, (0, 0)).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (2, 0, 0));
    }

    #[test]
    fn window_errors_carry_tf_messages() {
        let e = windowed_output(2, 5, 1, 1, Padding::Valid, (0, 0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Computed output size would be negative: -2 [input_size: 2, \
             effective_filter_size: 5, stride: 1]"
        );
        let e = windowed_output(2, 1, 1, 0, Padding::Valid, (0, 0)).unwrap_err();
        assert_eq!(e.to_string(), "Stride must be > 0, but got 0");
        let e = check_valid_padding(Padding::Explicit, &[0; 4], DataFormat::Nhwc).unwrap_err();
        assert!(e.to_string().contains("must contain 8 values"), "{e}");
        let e = check_valid_padding(
            Padding::Explicit,
            &[0, 0, 1, 1, 1, 1, 1, 0],
            DataFormat::Nhwc,
        )
        .unwrap_err();
        assert!(e.to_string().contains("batch or depth"), "{e}");
        let e = check_valid_padding(Padding::Same, &[0; 8], DataFormat::Nhwc).unwrap_err();
        assert!(e.to_string().contains("must be empty"), "{e}");
        assert!(
            check_valid_padding(
                Padding::Explicit,
                &[0, 0, 1, 2, 3, 4, 0, 0],
                DataFormat::Nhwc
            )
            .is_ok()
        );
        assert!(check_int(1 << 31, "too large").is_err());
        assert!(check_int(7, "too large").is_ok());
    }
}
