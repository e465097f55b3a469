//! Shape functions of windowed ops: `Conv2D`, `MaxPool`, their relatives
//! and the 3-D ones (TF's `Conv2DShapeImpl`, `MaxPoolShapeImpl`,
//! `Conv3DShape`, `Pool3DShape`, `GetWindowedOutputSizeFromDimsV2`).

use opreg_op_logic::volume::VolumeFormat;
use opreg_op_logic::window::{
    DataFormat, Padding, check_stride_and_dilation, check_valid_padding, explicit_padding,
};
use registry_core::kernel::KernelError;
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// An image layout as the shape functions see it: one of the kernels'
/// [`DataFormat`]s, or `NCHW_VECT_C` (`[N, C / v, H, W, v]`, `v` = 4 or
/// 32: NCHW's indices with the inner depth in a fifth dimension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ImageFormat {
    /// The order of N, H, W and (outer) C.
    pub(super) layout: DataFormat,
    /// Whether the depth is split, its inner part in a fifth dimension.
    pub(super) vect_c: bool,
}

impl ImageFormat {
    /// The `data_format` attr (`NHWC` when absent); `NCHW_VECT_C` only
    /// where `vect_c_allowed`.
    pub(super) fn parse(
        c: &InferenceContext<'_>,
        vect_c_allowed: bool,
    ) -> Result<Self, ShapeError> {
        let text = c.attr_or("data_format", "NHWC")?;
        if text == "NCHW_VECT_C" {
            return if vect_c_allowed {
                Ok(Self {
                    layout: DataFormat::Nchw,
                    vect_c: true,
                })
            } else {
                Err(c.invalid_attr(
                    "data_format",
                    format!("{} does not support data format '{text}'", c.op_name()),
                ))
            };
        }
        let layout = DataFormat::parse(text).map_err(|_| {
            c.invalid_attr("data_format", format!("Invalid data format string: {text}"))
        })?;
        Ok(Self {
            layout,
            vect_c: false,
        })
    }

    /// The rank of an image in this format (5 for `NCHW_VECT_C`).
    pub(super) fn rank(self) -> usize {
        if self.vect_c { 5 } else { 4 }
    }

    /// Index of N, H, W, C in a 4-element attr (`strides`, `ksize`, ...)
    /// or in the shape (the outer C for `NCHW_VECT_C`).
    pub(super) fn index(self, dim: char) -> usize {
        self.layout.index(dim)
    }
}

/// The attr `name`, which must hold `N` values; `requirement` starts TF's
/// message when it does not ("Conv2D requires the dilation attribute").
fn fixed<const N: usize>(
    c: &InferenceContext<'_>,
    name: &str,
    requirement: &str,
) -> Result<[i64; N], ShapeError> {
    let values = c.attr::<&[i64]>(name)?;
    <[i64; N]>::try_from(values).map_err(|_| {
        c.invalid_attr(
            name,
            format!(
                "{requirement} to contain {N} values, but got: {}",
                values.len()
            ),
        )
    })
}

/// The `padding` attr and the (before, after) pads of the rows and columns
/// (zero unless `EXPLICIT`), checked by op-logic's `check_valid_padding`
/// (TF's `CheckValidPadding`), the kernels' check.
fn padding(c: &InferenceContext<'_>, format: ImageFormat) -> Result<Pads, ShapeError> {
    let explicit = c.attr_or::<&[i64]>("explicit_paddings", &[])?;
    let as_attr_error = |attr: &str, e: KernelError| c.invalid_attr(attr, e.to_string());
    let padding =
        Padding::parse(c.attr::<&str>("padding")?).map_err(|e| as_attr_error("padding", e))?;
    check_valid_padding(padding, explicit, format.layout)
        .map_err(|e| as_attr_error("explicit_paddings", e))?;
    Ok(Pads {
        padding,
        rows: explicit_padding(explicit, format.layout, 'H'),
        cols: explicit_padding(explicit, format.layout, 'W'),
    })
}

/// A checked `padding` and its explicit amounts.
#[derive(Debug, Clone, Copy)]
struct Pads {
    padding: Padding,
    rows: (i64, i64),
    cols: (i64, i64),
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
    explicit: (i64, i64),
) -> Result<Dim, ShapeError> {
    check_stride_and_dilation(stride, dilation)
        .map_err(|e| ShapeError::invalid_argument(e.to_string()))?;
    match padding {
        Padding::Same => input.add(stride - 1)?.divide(stride, false),
        Padding::Valid | Padding::Explicit => {
            let (before, after) = match padding {
                Padding::Explicit => explicit,
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
fn image_dims(shape: &Shape, format: ImageFormat) -> Result<(Dim, [Dim; 2], Dim), ShapeError> {
    let at = |d: char| shape.dim(i64::try_from(format.index(d)).unwrap_or(0));
    let mut depth = at('C')?;
    if format.vect_c {
        depth = depth.multiply(shape.dim(4)?)?;
    }
    Ok((at('N')?, [at('H')?, at('W')?], depth))
}

/// Builds an image shape from (batch, [rows, cols], depth).
fn image_shape(
    format: ImageFormat,
    batch: Dim,
    spatial: [Dim; 2],
    depth: Dim,
    vect: Dim,
) -> Result<Shape, ShapeError> {
    Ok(match (format.layout, format.vect_c) {
        (DataFormat::Nhwc, _) => Shape::new([batch, spatial[0], spatial[1], depth]),
        (DataFormat::Nchw, false) => Shape::new([batch, depth, spatial[0], spatial[1]]),
        (DataFormat::Nchw, true) => Shape::new([
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
fn vect_size(
    c: &InferenceContext<'_>,
    format: ImageFormat,
    shape: &Shape,
) -> Result<Dim, ShapeError> {
    if !format.vect_c {
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

/// A grouped convolution's depths, where known: the input depth a
/// multiple of the filter's, the output depth a multiple of the groups.
fn check_groups(
    c: &InferenceContext<'_>,
    depth: Dim,
    filter_depth: Dim,
    out_depth: Dim,
) -> Result<(), ShapeError> {
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
    Ok(())
}

/// `Conv2D` (TF's `Conv2DShapeWithExplicitPadding`): `input` is an image
/// in `data_format` (NHWC or NCHW), `filter` is `[rows, cols, in_depth,
/// out_depth]`; `strides` and `dilations` hold 4 values in `data_format`'s
/// order; `padding` is SAME, VALID or EXPLICIT (with `explicit_paddings`).
/// The input depth must be a multiple of the filter's (grouped
/// convolution), and the output depth a multiple of the number of groups.
pub fn conv2d(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let format = ImageFormat::parse(c, false)?;
    let input = c.input_with_rank(0, format.rank())?;
    let filter = c.input_with_rank(1, format.rank())?;
    let dilations = fixed::<4>(c, "dilations", "Conv2D requires the dilation attribute")?;
    let strides = fixed::<4>(
        c,
        "strides",
        &format!(
            "Conv2D on data format {} requires the stride attribute",
            format.layout.name()
        ),
    )?;
    let (batch, [rows, cols], depth) = image_dims(&input, format)?;
    let filter_rows = filter.dim(0)?;
    let filter_cols = filter.dim(1)?;
    let filter_depth = filter.dim(2)?;
    let out_depth = filter.dim(3)?;

    check_groups(c, depth, filter_depth, out_depth)?;

    let pads = padding(c, format)?;
    let h = format.index('H');
    let w = format.index('W');
    let out_rows = windowed_output_size(
        rows,
        filter_rows,
        dilations[h],
        strides[h],
        pads.padding,
        pads.rows,
    )?;
    let out_cols = windowed_output_size(
        cols,
        filter_cols,
        dilations[w],
        strides[w],
        pads.padding,
        pads.cols,
    )?;
    let out = image_shape(format, batch, [out_rows, out_cols], out_depth, Dim::new(1))?;
    c.set_output(0, out)
}

/// `MaxPool` (TF's `MaxPoolShapeWithExplicitPadding`): `input` is an image
/// in `data_format` (NHWC, NCHW or NCHW_VECT_C); `ksize` and `strides` hold
/// 4 values in `data_format`'s order; the window also slides over the
/// depth when its depth size or stride is not 1.
pub fn max_pool(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let format = ImageFormat::parse(c, true)?;
    let input = c.input_with_rank(0, format.rank())?;
    let vect = vect_size(c, format, &input)?;
    let strides = fixed::<4>(c, "strides", "MaxPool requires the stride attribute")?;
    let ksize = fixed::<4>(c, "ksize", "MaxPool requires the ksize attribute")?;
    let (batch, [rows, cols], depth) = image_dims(&input, format)?;
    let pads = padding(c, format)?;
    let (h, w, d) = (format.index('H'), format.index('W'), format.index('C'));
    let window = |input, d: usize, explicit| {
        windowed_output_size(
            input,
            Dim::new(ksize[d]),
            1,
            strides[d],
            pads.padding,
            explicit,
        )
    };
    let out_rows = window(rows, h, pads.rows)?;
    let out_cols = window(cols, w, pads.cols)?;
    let out_depth = window(depth, d, (0, 0))?;
    let out = image_shape(format, batch, [out_rows, out_cols], out_depth, vect)?;
    c.set_output(0, out)
}

/// `DepthwiseConv2dNative` (TF's `DepthwiseConv2DNativeShapeWithExplicitPadding`):
/// `input` is an image in `data_format` (NHWC or NCHW), `filter` is
/// `[rows, cols, in_depth, multiplier]` whose `in_depth` merges with the
/// input's depth; the output depth is `in_depth * multiplier`.
pub fn depthwise_conv2d_native(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input_with_rank(0, 4)?;
    let filter = c.input_with_rank(1, 4)?;
    let strides = fixed::<4>(
        c,
        "strides",
        "DepthwiseConv2D requires the stride attribute",
    )?;
    let dilations = match c.attr_value("dilations") {
        Some(_) => fixed::<4>(
            c,
            "dilations",
            "DepthwiseConv2D requires the dilations attribute",
        )?,
        None => [1; 4],
    };
    // An unknown format string falls back to NHWC, as in TF.
    let layout = DataFormat::parse(c.attr_or("data_format", "NHWC")?).unwrap_or(DataFormat::Nhwc);
    let format = ImageFormat {
        layout,
        vect_c: false,
    };
    let (batch, [rows, cols], depth) = image_dims(&input, format)?;
    let in_depth = depth.merge(filter.dim(2)?).map_err(|e| c.error(e))?;
    let out_depth = in_depth.multiply(filter.dim(3)?)?;
    let pads = padding(c, format)?;
    let (h, w) = (format.index('H'), format.index('W'));
    let out_rows = windowed_output_size(
        rows,
        filter.dim(0)?,
        dilations[h],
        strides[h],
        pads.padding,
        pads.rows,
    )?;
    let out_cols = windowed_output_size(
        cols,
        filter.dim(1)?,
        dilations[w],
        strides[w],
        pads.padding,
        pads.cols,
    )?;
    let out = image_shape(format, batch, [out_rows, out_cols], out_depth, Dim::new(1))?;
    c.set_output(0, out)
}

/// `Conv2DBackpropInput` (TF's `Conv2DBackpropInputShape`): the output is
/// the convolution input's shape given by `input_sizes` (4 values, or the
/// 2 spatial ones with the batch of `out_backprop` and the depth of
/// `filter`); `out_backprop`'s depth merges with the filter's output
/// depth and its batch with `input_sizes`' batch.
pub fn conv2d_backprop_input(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let text = c.attr_or("data_format", "NHWC")?;
    let layout = DataFormat::parse(text).map_err(|_| {
        c.invalid_attr("data_format", format!("Invalid data format string: {text}"))
    })?;
    let format = ImageFormat {
        layout,
        vect_c: false,
    };
    let out_backprop = c.input_with_rank(2, 4)?;
    let filter = c.input_with_rank(1, 4)?;
    let (batch, _, out_depth) = image_dims(&out_backprop, format)?;
    out_depth.merge(filter.dim(3)?).map_err(|e| c.error(e))?;
    let mut sizes = c.make_shape_from_shape_tensor(0)?;
    if !sizes.is_rank_known() {
        sizes = sizes.with_rank(4)?;
    }
    let (spatial, depth) = match sizes.rank() {
        Some(4) => {
            let (sized_batch, spatial, depth) = image_dims(&sizes, format)?;
            sized_batch.merge(batch).map_err(|e| c.error(e))?;
            (spatial, depth)
        }
        Some(2) => ([sizes.dim(0)?, sizes.dim(1)?], filter.dim(2)?),
        rank => {
            return Err(c.error(ShapeError::invalid_argument(format!(
                "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: {}",
                rank.map_or(-1, |r| r as i64)
            ))));
        }
    };
    let out = image_shape(format, batch, spatial, depth, Dim::new(1))?;
    c.set_output(0, out)
}

/// `AvgPool` (TF's `AvgPoolShape`): `value` is an image in `data_format`;
/// `ksize` and `strides` hold 4 values; the rows and columns are windowed
/// (SAME or VALID), the batch and depth kept.
pub fn avg_pool(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let format = ImageFormat::parse(c, false)?;
    let input = c.input_with_rank(0, format.rank())?;
    let strides = fixed::<4>(c, "strides", "AvgPool requires the stride attribute")?;
    let ksize = fixed::<4>(c, "ksize", "AvgPool requires the ksize attribute")?;
    let (batch, [rows, cols], depth) = image_dims(&input, format)?;
    let pads = padding(c, format)?;
    let (h, w) = (format.index('H'), format.index('W'));
    let window = |input, d: usize| {
        windowed_output_size(
            input,
            Dim::new(ksize[d]),
            1,
            strides[d],
            pads.padding,
            (0, 0),
        )
    };
    let out_rows = window(rows, h)?;
    let out_cols = window(cols, w)?;
    let out = image_shape(format, batch, [out_rows, out_cols], depth, Dim::new(1))?;
    c.set_output(0, out)
}

/// The 3-D padding attr: SAME or VALID (the op's allowed values; a node
/// built without the op's checks gets the kernels' message).
fn volume_padding(c: &InferenceContext<'_>) -> Result<Padding, ShapeError> {
    match Padding::parse(c.attr::<&str>("padding")?) {
        Ok(p @ (Padding::Same | Padding::Valid)) => Ok(p),
        Ok(Padding::Explicit) => Err(c.invalid_attr(
            "padding",
            "3-D windowed ops do not support EXPLICIT padding".to_string(),
        )),
        Err(e) => Err(c.invalid_attr("padding", e.to_string())),
    }
}

/// A 5-D shape in `data_format` as NDHWC (TF's shape functions convert
/// NCDHW first); whether it was NCDHW.
fn as_ndhwc(c: &InferenceContext<'_>, shape: Shape) -> Result<(Shape, bool), ShapeError> {
    if c.attr_or("data_format", "NDHWC")? != "NCDHW" {
        return Ok((shape, false));
    }
    let format = VolumeFormat::Ncdhw;
    let dim = |d: char| shape.dim(i64::try_from(format.index(d)).unwrap_or(0));
    let ndhwc = Shape::new([dim('N')?, dim('0')?, dim('1')?, dim('2')?, dim('C')?]);
    Ok((ndhwc, true))
}

/// An NDHWC shape, or NCDHW when `ncdhw`.
fn volume_shape(ncdhw: bool, batch: Dim, spatial: [Dim; 3], depth: Dim) -> Shape {
    let [d, h, w] = spatial;
    if ncdhw {
        Shape::new([batch, depth, d, h, w])
    } else {
        Shape::new([batch, d, h, w, depth])
    }
}

/// `Conv3D` (TF's `Conv3DShape`): `input` is a volume in `data_format`
/// (NDHWC or NCDHW), `filter` is `[planes, rows, cols, in_depth,
/// out_depth]`; grouped as `Conv2D`. As TF's, the rows take the dilation of
/// the columns' position and the columns that of the rows'.
pub fn conv3d(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input_with_rank(0, 5)?;
    let filter = c.input_with_rank(1, 5)?;
    let dilations = fixed::<5>(c, "dilations", "Conv3D requires the dilation attribute")?;
    let strides = fixed::<5>(c, "strides", "Conv3D requires the stride attribute")?;
    let (input, ncdhw) = as_ndhwc(c, input)?;
    let s = if ncdhw { 2 } else { 1 };
    let stride = [strides[s], strides[s + 1], strides[s + 2]];
    // TF's `Conv3DShape` swaps the rows' and columns' dilations.
    let dilation = [dilations[s], dilations[s + 2], dilations[s + 1]];
    let depth = input.dim(4)?;
    let out_depth = filter.dim(4)?;
    check_groups(c, depth, filter.dim(3)?, out_depth)?;
    let padding = volume_padding(c)?;
    let mut spatial = [Dim::unknown(); 3];
    for (i, out) in spatial.iter_mut().enumerate() {
        let at = i64::try_from(i).unwrap_or(0);
        *out = windowed_output_size(
            input.dim(at + 1)?,
            filter.dim(at)?,
            dilation[i],
            stride[i],
            padding,
            (0, 0),
        )?;
    }
    c.set_output(0, volume_shape(ncdhw, input.dim(0)?, spatial, out_depth))
}

/// `MaxPool3D` and `AvgPool3D` (TF's `Pool3DShape`): `input` is a volume
/// in `data_format`; `ksize` and `strides` hold 5 values; the planes, rows
/// and columns are windowed (SAME or VALID), the batch and depth kept.
pub fn pool3d(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input_with_rank(0, 5)?;
    let strides = fixed::<5>(c, "strides", "Pool3D ops require the stride attribute")?;
    let ksize = fixed::<5>(c, "ksize", "Pool3D requires the ksize attribute")?;
    let (input, ncdhw) = as_ndhwc(c, input)?;
    let s = if ncdhw { 2 } else { 1 };
    let padding = volume_padding(c)?;
    let mut spatial = [Dim::unknown(); 3];
    for (i, out) in spatial.iter_mut().enumerate() {
        let at = i64::try_from(i).unwrap_or(0);
        *out = windowed_output_size(
            input.dim(at + 1)?,
            Dim::new(ksize[s + i]),
            1,
            strides[s + i],
            padding,
            (0, 0),
        )?;
    }
    c.set_output(
        0,
        volume_shape(ncdhw, input.dim(0)?, spatial, input.dim(4)?),
    )
}
