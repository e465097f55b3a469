//! Shape functions of windowed ops: `Conv2D` and `MaxPool` (TF's
//! `Conv2DShapeImpl`, `MaxPoolShapeImpl`, `GetWindowedOutputSizeFromDimsV2`).

use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// TF's `TensorFormat` for 2-D images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Nhwc,
    Nchw,
    /// `[N, C / v, H, W, v]`, `v` = 4 or 32 (int8 vectors).
    NchwVectC,
}

impl Format {
    fn parse(c: &InferenceContext<'_>, allowed: &[Format]) -> Result<Format, ShapeError> {
        let text = c.attr_or("data_format", "NHWC")?;
        let format = match text {
            "NHWC" => Format::Nhwc,
            "NCHW" => Format::Nchw,
            "NCHW_VECT_C" => Format::NchwVectC,
            other => {
                return Err(c.invalid_attr("data_format", format!("unknown data format '{other}'")));
            }
        };
        if allowed.contains(&format) {
            Ok(format)
        } else {
            Err(c.invalid_attr(
                "data_format",
                format!("{} does not support data format '{text}'", c.op_name()),
            ))
        }
    }

    fn rank(self) -> usize {
        match self {
            Format::NchwVectC => 5,
            _ => 4,
        }
    }

    /// Index of N, H, W, C in a 4-element attr (`strides`, `ksize`, ...)
    /// or in the shape (the outer C for `NCHW_VECT_C`).
    fn index(self, dim: char) -> usize {
        match (self, dim) {
            (_, 'N') => 0,
            (Format::Nhwc, 'H') => 1,
            (Format::Nhwc, 'W') => 2,
            (Format::Nhwc, _) => 3,
            (_, 'C') => 1,
            (_, 'H') => 2,
            _ => 3,
        }
    }
}

/// The attr `name`, which must hold 4 values.
fn four(c: &InferenceContext<'_>, name: &str) -> Result<[i64; 4], ShapeError> {
    let values = c.attr::<&[i64]>(name)?;
    <[i64; 4]>::try_from(values).map_err(|_| {
        c.invalid_attr(
            name,
            format!(
                "{} requires the {name} attribute to contain 4 values, but got: {}",
                c.op_name(),
                values.len()
            ),
        )
    })
}

/// The `padding` attr and, for `EXPLICIT`, the (before, after) pads of
/// each dimension (TF's `CheckValidPadding`).
fn padding(c: &InferenceContext<'_>, format: Format) -> Result<Padding, ShapeError> {
    let explicit = c.attr_or::<&[i64]>("explicit_paddings", &[])?;
    match c.attr::<&str>("padding")? {
        "VALID" | "SAME" if !explicit.is_empty() => Err(c.invalid_attr(
            "explicit_paddings",
            "explicit_paddings attribute must be empty if the padding type is not EXPLICIT.",
        )),
        "VALID" => Ok(Padding::Valid),
        "SAME" => Ok(Padding::Same),
        "EXPLICIT" => {
            let pads = <[i64; 8]>::try_from(explicit).map_err(|_| {
                c.invalid_attr(
                    "explicit_paddings",
                    format!(
                        "explicit_paddings attribute must contain 8 values, but got: {}",
                        explicit.len()
                    ),
                )
            })?;
            if pads.iter().any(|&p| p < 0) {
                return Err(c.invalid_attr(
                    "explicit_paddings",
                    "All elements of explicit_paddings must be nonnegative",
                ));
            }
            let pair = |dim| {
                let i = 2 * format.index(dim);
                (pads[i], pads[i + 1])
            };
            if pair('N') != (0, 0) || pair('C') != (0, 0) {
                return Err(c.invalid_attr(
                    "explicit_paddings",
                    "Nonzero explicit padding in the batch or depth dimensions is not supported",
                ));
            }
            Ok(Padding::Explicit {
                rows: pair('H'),
                cols: pair('W'),
            })
        }
        other => Err(c.invalid_attr("padding", format!("unknown padding '{other}'"))),
    }
}

#[derive(Debug, Clone, Copy)]
enum Padding {
    Valid,
    Same,
    Explicit { rows: (i64, i64), cols: (i64, i64) },
}

/// The output size of a window of `filter` elements (dilated by
/// `dilation`) moved by `stride` over `input` (TF's
/// `GetWindowedOutputSizeFromDimsV2`).
fn windowed_output_size(
    input: Dim,
    filter: Dim,
    dilation: i64,
    stride: i64,
    padding: Padding,
    pads: (i64, i64),
) -> Result<Dim, ShapeError> {
    if stride <= 0 {
        return Err(ShapeError::invalid_argument(format!(
            "Stride must be > 0, but got {stride}"
        )));
    }
    if dilation < 1 {
        return Err(ShapeError::invalid_argument(format!(
            "Dilation rate must be >= 1, but got {dilation}"
        )));
    }
    match padding {
        Padding::Same => input.add(stride - 1)?.divide(stride, false),
        Padding::Valid | Padding::Explicit { .. } => {
            let (before, after) = match padding {
                Padding::Explicit { .. } => pads,
                _ => (0, 0),
            };
            let padded =
                input.add(before.checked_add(after).ok_or(ShapeError::DimOverflow {
                    a: before,
                    op: '+',
                    b: after,
                })?)?;
            let window = if dilation > 1 {
                filter.subtract(1)?.multiply(dilation)?.add(1)?
            } else {
                filter
            };
            padded.subtract(window)?.add(stride)?.divide(stride, false)
        }
    }
}

/// Splits an image shape into (batch, [rows, cols], depth); the depth of
/// `NCHW_VECT_C` is outer × inner.
fn image_dims(shape: &Shape, format: Format) -> Result<(Dim, [Dim; 2], Dim), ShapeError> {
    let at = |d: char| shape.dim(i64::try_from(format.index(d)).unwrap_or(0));
    let mut depth = at('C')?;
    if format == Format::NchwVectC {
        depth = depth.multiply(shape.dim(4)?)?;
    }
    Ok((at('N')?, [at('H')?, at('W')?], depth))
}

/// Builds an image shape from (batch, [rows, cols], depth).
fn image_shape(
    format: Format,
    batch: Dim,
    spatial: [Dim; 2],
    depth: Dim,
    vect: Dim,
) -> Result<Shape, ShapeError> {
    Ok(match format {
        Format::Nhwc => Shape::new([batch, spatial[0], spatial[1], depth]),
        Format::Nchw => Shape::new([batch, depth, spatial[0], spatial[1]]),
        Format::NchwVectC => Shape::new([
            batch,
            depth.divide(vect, true)?,
            spatial[0],
            spatial[1],
            vect,
        ]),
    })
}

/// `NCHW_VECT_C` needs a known inner depth of 4 or 32 (TF's
/// `CheckFormatConstraintsOnShape`); returns it (1 for other formats).
fn vect_size(c: &InferenceContext<'_>, format: Format, shape: &Shape) -> Result<Dim, ShapeError> {
    if format != Format::NchwVectC {
        return Ok(Dim::new(1));
    }
    let inner = shape.dim(4)?;
    match inner.value() {
        Some(4 | 32) | None => Ok(inner),
        Some(v) => Err(c.input_error(
            0,
            ShapeError::invalid_argument(format!("VECT_C dimension must be 4 or 32, but is {v}")),
        )),
    }
}

/// `Conv2D` (TF's `Conv2DShapeWithExplicitPadding`): `input` is an image
/// in `data_format` (NHWC or NCHW), `filter` is `[rows, cols, in_depth,
/// out_depth]`; `strides` and `dilations` hold 4 values in `data_format`'s
/// order; `padding` is SAME, VALID or EXPLICIT (with `explicit_paddings`).
/// The input depth must be a multiple of the filter's (grouped
/// convolution), and the output depth a multiple of the number of groups.
pub fn conv2d(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let format = Format::parse(c, &[Format::Nhwc, Format::Nchw])?;
    let input = c.input_with_rank(0, format.rank())?;
    let filter = c.input_with_rank(1, format.rank())?;
    let dilations = four(c, "dilations")?;
    let strides = four(c, "strides")?;
    let (batch, [rows, cols], depth) = image_dims(&input, format)?;
    let filter_rows = filter.dim(0)?;
    let filter_cols = filter.dim(1)?;
    let filter_depth = filter.dim(2)?;
    let out_depth = filter.dim(3)?;

    if let (Some(in_depth), Some(f_depth)) = (depth.value(), filter_depth.value()) {
        if f_depth == 0 {
            return Err(c.input_error(
                1,
                ShapeError::invalid_argument("Depth of filter must not be 0"),
            ));
        }
        if in_depth % f_depth != 0 {
            return Err(c.input_error(
                1,
                ShapeError::invalid_argument(format!(
                    "Depth of input ({in_depth}) is not a multiple of input depth of filter ({f_depth})"
                )),
            ));
        }
        let groups = in_depth / f_depth;
        if let Some(out) = out_depth.value()
            && groups > 0
            && out % groups != 0
        {
            return Err(c.input_error(
                1,
                ShapeError::invalid_argument(format!(
                    "Depth of output ({out}) is not a multiple of the number of groups ({groups})"
                )),
            ));
        }
    }

    let padding = padding(c, format)?;
    let (pad_rows, pad_cols) = match padding {
        Padding::Explicit { rows, cols } => (rows, cols),
        _ => ((0, 0), (0, 0)),
    };
    let h = format.index('H');
    let w = format.index('W');
    let out_rows = windowed_output_size(
        rows,
        filter_rows,
        dilations[h],
        strides[h],
        padding,
        pad_rows,
    )?;
    let out_cols = windowed_output_size(
        cols,
        filter_cols,
        dilations[w],
        strides[w],
        padding,
        pad_cols,
    )?;
    let out = image_shape(format, batch, [out_rows, out_cols], out_depth, Dim::new(1))?;
    c.set_output(0, out)
}

/// `MaxPool` (TF's `MaxPoolShapeWithExplicitPadding`): `input` is an image
/// in `data_format` (NHWC, NCHW or NCHW_VECT_C); `ksize` and `strides` hold
/// 4 values in `data_format`'s order; the window also slides over the
/// depth when its depth size or stride is not 1.
pub fn max_pool(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let format = Format::parse(c, &[Format::Nhwc, Format::Nchw, Format::NchwVectC])?;
    let input = c.input_with_rank(0, format.rank())?;
    let vect = vect_size(c, format, &input)?;
    let strides = four(c, "strides")?;
    let ksize = four(c, "ksize")?;
    let (batch, [rows, cols], depth) = image_dims(&input, format)?;
    let padding = padding(c, format)?;
    let (pad_rows, pad_cols) = match padding {
        Padding::Explicit { rows, cols } => (rows, cols),
        _ => ((0, 0), (0, 0)),
    };
    let (h, w, d) = (format.index('H'), format.index('W'), format.index('C'));
    let out_rows =
        windowed_output_size(rows, Dim::new(ksize[h]), 1, strides[h], padding, pad_rows)?;
    let out_cols =
        windowed_output_size(cols, Dim::new(ksize[w]), 1, strides[w], padding, pad_cols)?;
    let out_depth =
        windowed_output_size(depth, Dim::new(ksize[d]), 1, strides[d], padding, (0, 0))?;
    let out = image_shape(format, batch, [out_rows, out_cols], out_depth, vect)?;
    c.set_output(0, out)
}
