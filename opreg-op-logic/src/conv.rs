//! `Conv2D`'s host-side checks and output geometry, shared by the CPU and
//! GPU kernels: TF's `InitConv2DParameters` (attrs), `ComputeConv2DDimension`
//! (shapes) and the launchers' checks, with TF's messages.
//!
//! ```
//! use opreg_op_logic::conv::Conv2DParams;
//! use opreg_op_logic::window::DataFormat;
//!
//! let params = Conv2DParams::new(vec![1, 2, 2, 1], vec![1; 4], "SAME", vec![], "NHWC").unwrap();
//! let g = params.geometry(&[1, 5, 5, 3], &[3, 3, 3, 8]).unwrap();
//! assert_eq!(g.out_shape(DataFormat::Nhwc), [1, 3, 3, 8]);
//! assert_eq!(params.check_launch(&g, 3 * 3 * 3 * 8).unwrap(), 1);
//! ```

use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use super::index::int_values;

use super::volume::VolumeGeometry;
use super::window::{
    Axis, DataFormat, Padding, Window, check_int, check_valid_padding, explicit_padding,
    windowed_output,
};

/// `Conv2D`'s validated attrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conv2DParams {
    /// `strides`, one per dimension of `format`.
    pub strides: [i64; 4],
    /// `dilations`, one per dimension of `format`.
    pub dilations: [i64; 4],
    /// `padding`.
    pub padding: Padding,
    /// `explicit_paddings` ((before, after) per dimension of `format`;
    /// empty unless `padding` is EXPLICIT).
    pub explicit_paddings: Vec<i64>,
    /// `data_format`.
    pub format: DataFormat,
}

/// The validated sizes of one convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Images.
    pub batch: usize,
    /// Input height.
    pub in_rows: usize,
    /// Input width.
    pub in_cols: usize,
    /// Input channels.
    pub in_depth: usize,
    /// Filter height.
    pub filter_rows: usize,
    /// Filter width.
    pub filter_cols: usize,
    /// Input channels per group (the filter's third dimension).
    pub patch_depth: usize,
    /// Output channels.
    pub out_depth: usize,
    /// Vertical stride.
    pub stride_rows: i64,
    /// Horizontal stride.
    pub stride_cols: i64,
    /// Vertical dilation.
    pub dilation_rows: i64,
    /// Horizontal dilation.
    pub dilation_cols: i64,
    /// The output rows and the padding above and below the input.
    pub rows: Window,
    /// The output columns and the padding left and right of the input.
    pub cols: Window,
}

impl Conv2DParams {
    /// Reads and checks the attrs of a `Conv2D` node (see [`Self::new`]).
    pub fn from_attrs(attrs: &NodeAttrs<'_>) -> Result<Self, KernelError> {
        Self::new(
            attrs.get("strides")?,
            attrs.get("dilations")?,
            &attrs.get::<String>("padding")?,
            attrs.get("explicit_paddings")?,
            &attrs.get::<String>("data_format")?,
        )
    }

    /// Checks the attrs as TF's `InitConv2DParameters` does (the padding
    /// and format strings parsed first, then the lengths, then the values).
    pub fn new(
        strides: Vec<i64>,
        dilations: Vec<i64>,
        padding: &str,
        explicit_paddings: Vec<i64>,
        format: &str,
    ) -> Result<Self, KernelError> {
        let padding = Padding::parse(padding)?;
        let format = DataFormat::parse(format)?;
        let dilations: [i64; 4] = dilations.try_into().map_err(|_| {
            KernelError::invalid_argument(
                "Sliding window dilations field must specify 4 dimensions",
            )
        })?;
        let strides: [i64; 4] = strides.try_into().map_err(|_| {
            KernelError::invalid_argument("Sliding window strides field must specify 4 dimensions")
        })?;
        let at = |v: &[i64; 4], d: char| v[format.index(d)];
        if at(&strides, 'N') != 1 || at(&strides, 'C') != 1 {
            return Err(KernelError::unimplemented(
                "Current implementation does not yet support strides in the batch and depth \
                 dimensions.",
            ));
        }
        registry_core::kernel_ensure!(
            at(&strides, 'H') > 0 && at(&strides, 'W') > 0,
            "Row and column strides should be larger than 0."
        );
        if at(&dilations, 'N') != 1 || at(&dilations, 'C') != 1 {
            return Err(KernelError::unimplemented(
                "Current implementation does not yet support dilations in the batch and depth \
                 dimensions.",
            ));
        }
        registry_core::kernel_ensure!(
            at(&dilations, 'H') > 0 && at(&dilations, 'W') > 0,
            "Dilated rates should be larger than 0."
        );
        check_valid_padding(padding, &explicit_paddings, format)?;
        Ok(Self {
            strides,
            dilations,
            padding,
            explicit_paddings,
            format,
        })
    }

    /// Checks the input and (HWIO) filter shapes and computes the output
    /// geometry (TF's `ComputeConv2DDimension`).
    pub fn geometry(&self, input: &[usize], filter: &[usize]) -> Result<ConvGeometry, KernelError> {
        let shape = |d: &[usize]| {
            let dims: Vec<String> = d.iter().map(usize::to_string).collect();
            format!("[{}]", dims.join(","))
        };
        let (&[_, _, _, _], &[fh, fw, patch_depth, out_depth]) = (input, filter) else {
            return Err(KernelError::invalid_argument(if input.len() != 4 {
                format!("convolution input must be 4-dimensional: {}", shape(input))
            } else {
                format!(
                    "convolution filter must be 4-dimensional: {}",
                    shape(filter)
                )
            }));
        };
        for &d in &filter[..3] {
            check_int(d, "filter too large")?;
        }
        let f = self.format;
        let in_depth = input[f.index('C')];
        check_int(in_depth, "Input depth too large")?;
        check_int(patch_depth, "Patch depth too large")?;
        registry_core::kernel_ensure!(
            patch_depth > 0,
            "filter depth must be stricly positive, got {patch_depth}"
        );
        registry_core::kernel_ensure!(
            in_depth.is_multiple_of(patch_depth),
            "input depth must be evenly divisible by filter depth: {in_depth} vs {patch_depth}"
        );
        let (in_rows, in_cols, batch) = (input[f.index('H')], input[f.index('W')], input[0]);
        check_int(in_rows, "Input rows too large")?;
        check_int(in_cols, "Input cols too large")?;
        check_int(batch, "batch is too large")?;
        let explicit = |d: char| explicit_padding(&self.explicit_paddings, f, d);
        let (stride_rows, stride_cols) = (self.strides[f.index('H')], self.strides[f.index('W')]);
        let (dilation_rows, dilation_cols) =
            (self.dilations[f.index('H')], self.dilations[f.index('W')]);
        let rows = windowed_output(
            in_rows,
            fh,
            dilation_rows,
            stride_rows,
            self.padding,
            explicit('H'),
        )?;
        let cols = windowed_output(
            in_cols,
            fw,
            dilation_cols,
            stride_cols,
            self.padding,
            explicit('W'),
        )?;
        Ok(ConvGeometry {
            batch,
            in_rows,
            in_cols,
            in_depth,
            filter_rows: fh,
            filter_cols: fw,
            patch_depth,
            out_depth,
            stride_rows,
            stride_cols,
            dilation_rows,
            dilation_cols,
            rows,
            cols,
        })
    }

    /// The checks TF makes before launching, once the output is known to
    /// be non-empty (`filter_elements`: the filter's element count);
    /// returns the group count (input depth / filter depth).
    pub fn check_launch(
        &self,
        g: &ConvGeometry,
        filter_elements: usize,
    ) -> Result<usize, KernelError> {
        registry_core::kernel_ensure!(
            self.explicit_paddings
                .iter()
                .all(|&p| i32::try_from(p).is_ok()),
            "filter too large"
        );
        registry_core::kernel_ensure!(
            filter_elements > 0,
            "filter must not have zero elements (i.e. all dimensions must be non-zero)"
        );
        let groups = g.in_depth / g.patch_depth;
        registry_core::kernel_ensure!(
            g.out_depth.is_multiple_of(groups) && g.out_depth >= groups,
            "output depth must be evenly divisible by number of groups: {} vs {}",
            g.out_depth,
            groups
        );
        Ok(groups)
    }
}

impl Conv2DParams {
    /// `DepthwiseConv2dNative`'s checks of its input and `[rows, cols,
    /// depth, multiplier]` filter (TF's `DepthwiseConv2dNativeOp`, with its
    /// messages): 4-D operands, equal row and column strides, no dilation,
    /// the filter's depth the input's. Returns the geometry (Conv2D's, for
    /// a filter with the output's depth: `patch_depth` is the input depth,
    /// `out_depth` the input depth times the multiplier) and the
    /// multiplier.
    ///
    /// ```
    /// use opreg_op_logic::conv::Conv2DParams;
    /// use registry_core::tensor::TensorShape;
    ///
    /// let p = Conv2DParams::new(vec![1, 2, 2, 1], vec![1; 4], "SAME", vec![], "NHWC").unwrap();
    /// let input = TensorShape::new([1, 5, 5, 3]).unwrap();
    /// let filter = TensorShape::new([3, 3, 3, 2]).unwrap();
    /// let (g, multiplier) = p.depthwise_geometry(&input, &filter).unwrap();
    /// assert_eq!((g.rows.out, g.cols.out, g.out_depth, multiplier), (3, 3, 6, 2));
    /// ```
    pub fn depthwise_geometry(
        &self,
        input: &TensorShape,
        filter: &TensorShape,
    ) -> Result<(ConvGeometry, usize), KernelError> {
        registry_core::kernel_ensure!(input.rank() == 4, "input must be 4-dimensional{}", input);
        registry_core::kernel_ensure!(
            filter.rank() == 4,
            "filter must be 4-dimensional: {}",
            filter
        );
        let f = self.format;
        let (stride_rows, stride_cols) = (self.strides[f.index('H')], self.strides[f.index('W')]);
        registry_core::kernel_ensure!(
            stride_rows == stride_cols,
            "Current implementation only supports equal length strides in the row and column dimensions."
        );
        if self.dilations.iter().any(|&d| d != 1) {
            let d = self.dilations;
            return Err(KernelError::unimplemented(format!(
                "Current kernel implementation does not support dilations, received [{} {} {} {}]",
                d[0], d[1], d[2], d[3]
            )));
        }
        let in_depth = input.dims()[f.index('C')];
        let [fh, fw, filter_depth, multiplier] = [0, 1, 2, 3].map(|i| filter.dims()[i]);
        registry_core::kernel_ensure!(
            in_depth == filter_depth,
            "input and filter must have the same depth: {in_depth} vs {filter_depth}"
        );
        let out_depth = in_depth
            .checked_mul(multiplier)
            .ok_or_else(|| KernelError::invalid_argument("output depth too large"))?;
        // The windows are Conv2D's, for a filter with the output's depth.
        let g = self.geometry(input.dims(), &[fh, fw, in_depth, out_depth])?;
        Ok((g, multiplier))
    }

    /// `Conv2DBackpropInput`'s checks (TF's `ConvBackpropComputeDimensions`,
    /// with its messages): the convolution input's shape from
    /// `input_sizes` ([`backprop_input_shape`]), 4-D `filter` (HWIO) and
    /// `out_backprop`, the filter's depth the input's (no groups), and
    /// `out_backprop` of the forward convolution's output shape. Returns
    /// the input's shape and the forward convolution's geometry.
    ///
    /// ```
    /// use opreg_op_logic::conv::Conv2DParams;
    /// use registry_core::tensor::{Tensor, TensorShape};
    ///
    /// let p = Conv2DParams::new(vec![1, 2, 2, 1], vec![1; 4], "SAME", vec![], "NHWC").unwrap();
    /// let sizes = Tensor::from_vec([4], vec![1i32, 5, 5, 3]).unwrap();
    /// let filter = TensorShape::new([3, 3, 3, 8]).unwrap();
    /// let dy = TensorShape::new([1, 3, 3, 8]).unwrap();
    /// let (input, g) = p.backprop_input_geometry(&sizes, &filter, &dy).unwrap();
    /// assert_eq!((input, g.out_depth), ([1, 5, 5, 3], 8));
    /// let dy = TensorShape::new([1, 4, 3, 8]).unwrap();
    /// assert!(p.backprop_input_geometry(&sizes, &filter, &dy).is_err());
    /// ```
    pub fn backprop_input_geometry(
        &self,
        input_sizes: &Tensor,
        filter: &TensorShape,
        out_backprop: &TensorShape,
    ) -> Result<([usize; 4], ConvGeometry), KernelError> {
        registry_core::kernel_ensure!(
            filter.rank() == 4,
            "Conv2DBackpropInput: filter must be 4-dimensional, got {}",
            filter
        );
        registry_core::kernel_ensure!(
            out_backprop.rank() == 4,
            "Conv2DBackpropInput: out_backprop must be 4-dimensional, got {}",
            out_backprop
        );
        let input =
            backprop_input_shape(input_sizes, self.format, out_backprop.dims(), filter.dims())?;
        let g = self.geometry(&input, filter.dims())?;
        registry_core::kernel_ensure!(
            g.in_depth == g.patch_depth,
            "Conv2DBackpropInput: input depth {} must equal the filter's input depth {}",
            g.in_depth,
            g.patch_depth
        );
        let expected = g.out_shape(self.format);
        registry_core::kernel_ensure!(
            out_backprop.dims() == expected,
            "Conv2DBackpropInput: Size of out_backprop doesn't match computed: actual = {}, computed = {:?}",
            out_backprop,
            expected
        );
        Ok((input, g))
    }
}

/// The convolution input's shape from `Conv2DBackpropInput`'s
/// `input_sizes` (4 sizes, or the 2 spatial ones with the batch of
/// `out_backprop` and the filter's input depth), with TF's messages.
pub fn backprop_input_shape(
    sizes: &Tensor,
    format: DataFormat,
    out_backprop: &[usize],
    filter: &[usize],
) -> Result<[usize; 4], KernelError> {
    registry_core::kernel_ensure!(
        sizes.shape().rank() == 1,
        "input_sizes must be 1-dimensional, got: {}",
        sizes.shape()
    );
    let values = int_values(sizes)?;
    let dim = |v: i64| {
        usize::try_from(v).map_err(|_| {
            KernelError::invalid_argument(format!("Dimension -1 must be >= 0, got {v}"))
        })
    };
    match values.as_slice() {
        &[a, b, c, d] => Ok([dim(a)?, dim(b)?, dim(c)?, dim(d)?]),
        &[rows, cols] => {
            let batch = out_backprop.first().copied().unwrap_or(0);
            let depth = filter.get(2).copied().unwrap_or(0);
            Ok(format.shape(batch, dim(rows)?, dim(cols)?, depth))
        }
        other => Err(KernelError::invalid_argument(format!(
            "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: {}",
            other.len()
        ))),
    }
}

impl ConvGeometry {
    /// The output shape in `format`.
    pub fn out_shape(&self, format: DataFormat) -> [usize; 4] {
        format.shape(self.batch, self.rows.out, self.cols.out, self.out_depth)
    }

    /// This convolution as a 3-D one over (planes, rows, columns), the
    /// planes a unit axis: one loop nest serves both.
    pub fn volume(&self) -> VolumeGeometry {
        VolumeGeometry {
            batch: self.batch,
            in_depth: self.in_depth,
            patch_depth: self.patch_depth,
            out_depth: self.out_depth,
            axes: [
                Axis::UNIT,
                Axis {
                    input: self.in_rows,
                    window: self.filter_rows,
                    stride: self.stride_rows,
                    dilation: self.dilation_rows,
                    out: self.rows,
                },
                Axis {
                    input: self.in_cols,
                    window: self.filter_cols,
                    stride: self.stride_cols,
                    dilation: self.dilation_cols,
                    out: self.cols,
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(
        padding: &str,
        explicit: Vec<i64>,
        format: &str,
        strides: [i64; 4],
        dilations: [i64; 4],
    ) -> Conv2DParams {
        Conv2DParams::new(
            strides.to_vec(),
            dilations.to_vec(),
            padding,
            explicit,
            format,
        )
        .unwrap()
    }

    #[test]
    fn same_and_explicit_geometries() {
        // SAME, stride 2 over 7 rows: 4 outputs; window 2 needs 1 row of
        // padding, after.
        let p = params("SAME", vec![], "NHWC", [1, 2, 1, 1], [1; 4]);
        let g = p.geometry(&[3, 7, 4, 6], &[2, 3, 6, 5]).unwrap();
        assert_eq!((g.rows.out, g.rows.pad_before, g.rows.pad_after), (4, 0, 1));
        assert_eq!((g.cols.out, g.cols.pad_before, g.cols.pad_after), (4, 1, 1));
        assert_eq!((g.batch, g.in_depth, g.patch_depth), (3, 6, 6));
        assert_eq!(g.out_shape(DataFormat::Nhwc), [3, 4, 4, 5]);
        // EXPLICIT in NCHW: rows (5 + 1 + 2 - 2) / 3 + 1 = 3; dilated
        // columns (window 5): 6 - 5 + 1 = 2.
        let p = params(
            "EXPLICIT",
            vec![0, 0, 0, 0, 1, 2, 0, 0],
            "NCHW",
            [1, 1, 3, 1],
            [1, 1, 1, 2],
        );
        let g = p.geometry(&[1, 2, 5, 6], &[2, 3, 1, 4]).unwrap();
        assert_eq!((g.rows.out, g.rows.pad_before, g.rows.pad_after), (3, 1, 2));
        assert_eq!((g.cols.out, g.dilation_cols, g.stride_rows), (2, 2, 3));
        assert_eq!(g.out_shape(DataFormat::Nchw), [1, 4, 3, 2]);
    }

    #[test]
    fn groups_and_tf_errors() {
        let p = params("VALID", vec![], "NHWC", [1; 4], [1; 4]);
        let g = p.geometry(&[1, 3, 3, 6], &[1, 1, 2, 9]).unwrap();
        assert_eq!(p.check_launch(&g, 18).unwrap(), 3);
        let g = p.geometry(&[1, 3, 3, 6], &[1, 1, 2, 4]).unwrap();
        let e = p.check_launch(&g, 8).unwrap_err();
        assert_eq!(
            e.to_string(),
            "output depth must be evenly divisible by number of groups: 4 vs 3"
        );
        let e = p.geometry(&[1, 3, 3, 5], &[1, 1, 2, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "input depth must be evenly divisible by filter depth: 5 vs 2"
        );
        let e = p.geometry(&[3, 3, 5], &[1, 1, 5, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "convolution input must be 4-dimensional: [3,3,5]"
        );
        let e = p.geometry(&[1, 3, 3, 5], &[1, 5, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "convolution filter must be 4-dimensional: [1,5,4]"
        );
        let e =
            Conv2DParams::new(vec![2, 1, 1, 1], vec![1; 4], "VALID", vec![], "NHWC").unwrap_err();
        assert!(
            e.to_string().contains("strides in the batch and depth"),
            "{e}"
        );
        let e =
            Conv2DParams::new(vec![1; 4], vec![1, 1, 0, 1], "VALID", vec![], "NHWC").unwrap_err();
        assert_eq!(e.to_string(), "Dilated rates should be larger than 0.");
        let e = Conv2DParams::new(vec![1; 3], vec![1; 4], "VALID", vec![], "NHWC").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Sliding window strides field must specify 4 dimensions"
        );
        let e = Conv2DParams::new(vec![1; 4], vec![1; 4], "VALID", vec![], "HWCN").unwrap_err();
        assert_eq!(e.to_string(), "Invalid data format");
    }
}
