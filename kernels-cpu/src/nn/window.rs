//! Sliding-window geometry shared by Conv2D and MaxPool: data formats,
//! padding kinds, TF's `CheckValidPadding` and `GetWindowedOutputSizeVerbose`.

use registry_core::kernel::KernelError;

/// A 4-D image layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataFormat {
    /// Batch, height, width, channels.
    Nhwc,
    /// Batch, channels, height, width.
    Nchw,
}

impl DataFormat {
    /// Parses `NHWC`/`NCHW` (TF's `FormatFromString`, for the formats these
    /// kernels accept).
    pub(crate) fn parse(s: &str) -> Result<Self, KernelError> {
        match s {
            "NHWC" => Ok(Self::Nhwc),
            "NCHW" => Ok(Self::Nchw),
            _ => Err(KernelError::invalid_argument("Invalid data format")),
        }
    }

    /// The index of dimension `'N'`, `'H'`, `'W'` or `'C'` in a 4-D shape or
    /// attr list of this format (TF's `GetTensorDimIndex`).
    pub(crate) fn index(self, dim: char) -> usize {
        match (self, dim) {
            (_, 'N') => 0,
            (Self::Nhwc, 'H') | (Self::Nchw, 'C') => 1,
            (Self::Nhwc, 'W') | (Self::Nchw, 'H') => 2,
            _ => 3, // NHWC 'C', NCHW 'W'
        }
    }

    /// TF's name of the format.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Nhwc => "NHWC",
            Self::Nchw => "NCHW",
        }
    }
}

/// TF's `Padding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Padding {
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
    pub(crate) fn parse(s: &str) -> Result<Self, KernelError> {
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
pub(crate) fn check_valid_padding(
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

/// One spatial dimension of a window: its output size and the padding
/// before it (padding after is implied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// The output size.
    pub(crate) out: usize,
    /// Elements of padding before the input.
    pub(crate) pad_before: i64,
}

/// TF's `GetWindowedOutputSizeVerbose(V2)`: the output size and padding of
/// one dimension. `explicit` holds (before, after) for EXPLICIT padding.
pub(crate) fn windowed_output(
    input: usize,
    filter: usize,
    dilation: i64,
    stride: i64,
    padding: Padding,
    explicit: (i64, i64),
) -> Result<Window, KernelError> {
    registry_core::kernel_ensure!(stride > 0, "Stride must be > 0, but got {stride}");
    registry_core::kernel_ensure!(
        dilation >= 1,
        "Dilation rate must be >= 1, but got {dilation}"
    );
    let overflow = || KernelError::invalid_argument("window size computation overflows");
    let input = i64::try_from(input).map_err(|_| overflow())?;
    let filter = i64::try_from(filter).map_err(|_| overflow())?;
    let effective = (filter - 1)
        .checked_mul(dilation)
        .and_then(|v| v.checked_add(1))
        .ok_or_else(overflow)?;
    let (out, pad_before) = match padding {
        Padding::Valid => (
            input
                .checked_sub(effective)
                .and_then(|v| v.checked_add(stride))
                .ok_or_else(overflow)?
                / stride,
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
        ),
        Padding::Same => {
            let out = input.checked_add(stride - 1).ok_or_else(overflow)? / stride;
            let needed = (out - 1)
                .checked_mul(stride)
                .and_then(|v| v.checked_add(effective))
                .and_then(|v| v.checked_sub(input))
                .ok_or_else(overflow)?
                .max(0);
            (out, needed / 2)
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
    })
}

/// The input positions a window covers along one dimension: for output
/// index `o`, positions `o * stride - pad_before + f * dilation` for
/// `f in 0..filter`, as `Some(index)` when inside `0..input`.
pub(crate) fn tap(
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

/// Fails with TF's message when `value` does not fit in a C++ `int`.
pub(crate) fn check_int(value: usize, what: &str) -> Result<(), KernelError> {
    registry_core::kernel_ensure!(i32::try_from(value).is_ok(), "{what}");
    Ok(())
}
