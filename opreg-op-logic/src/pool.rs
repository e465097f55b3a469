//! `MaxPool`'s host-side checks and window geometry, shared by the CPU and
//! GPU kernels: TF's `MaxPoolingOp` attr checks and its `PoolParameters`
//! for a 4-D input, with TF's messages.
//!
//! ```
//! use opreg_op_logic::pool::{Pool2DParams, PoolWindows};
//! use opreg_op_logic::window::DataFormat;
//!
//! let p = Pool2DParams::new(DataFormat::Nhwc, vec![1, 2, 2, 1], vec![1, 2, 2, 1], "SAME", vec![])
//!     .unwrap();
//! let PoolWindows::Spatial(g) = p.windows(&[2, 5, 4, 3]).unwrap() else { unreachable!() };
//! assert_eq!(g.out_shape(DataFormat::Nhwc), [2, 3, 2, 3]);
//! ```

use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelError;

use super::volume::VolumeGeometry;
use super::window::{
    Axis, DataFormat, Padding, Window, check_valid_padding, explicit_padding, windowed_output,
};

/// `MaxPool`'s validated attrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool2DParams {
    /// `ksize`, one per dimension of `format` (all positive).
    pub ksize: [i64; 4],
    /// `strides`, one per dimension of `format`.
    pub strides: [i64; 4],
    /// `padding`.
    pub padding: Padding,
    /// `explicit_paddings` ((before, after) per dimension of `format`;
    /// empty unless `padding` is EXPLICIT).
    pub explicit_paddings: Vec<i64>,
    /// `data_format`.
    pub format: DataFormat,
}

/// The validated sizes of one spatial pooling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolGeometry {
    /// Images.
    pub batch: usize,
    /// Input height.
    pub in_rows: usize,
    /// Input width.
    pub in_cols: usize,
    /// Channels.
    pub depth: usize,
    /// Window height.
    pub window_rows: usize,
    /// Window width.
    pub window_cols: usize,
    /// Vertical stride.
    pub stride_rows: i64,
    /// Horizontal stride.
    pub stride_cols: i64,
    /// The output rows and the padding above and below the input.
    pub rows: Window,
    /// The output columns and the padding left and right of the input.
    pub cols: Window,
}

impl PoolGeometry {
    /// The output shape in `format`.
    pub fn out_shape(&self, format: DataFormat) -> [usize; 4] {
        format.shape(self.batch, self.rows.out, self.cols.out, self.depth)
    }

    /// This pooling as a 3-D one over (planes, rows, columns), the planes
    /// a unit axis: one loop nest serves both.
    pub fn volume(&self) -> VolumeGeometry {
        let axis = |input, window, stride, out| Axis {
            input,
            window,
            stride,
            dilation: 1,
            out,
        };
        VolumeGeometry {
            batch: self.batch,
            in_depth: self.depth,
            patch_depth: self.depth,
            out_depth: self.depth,
            axes: [
                Axis::UNIT,
                axis(self.in_rows, self.window_rows, self.stride_rows, self.rows),
                axis(self.in_cols, self.window_cols, self.stride_cols, self.cols),
            ],
        }
    }
}

/// What a pooling's windows cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolWindows {
    /// Windows over height and width.
    Spatial(PoolGeometry),
    /// Windows across channels, of this many (more than 1), the window 1
    /// elsewhere.
    Depthwise(usize),
}

impl Pool2DParams {
    /// Reads and checks the attrs of a `MaxPool` node whose `data_format`
    /// the caller parsed (see [`Self::new`]); `explicit_paddings` is read
    /// only for EXPLICIT padding.
    pub fn from_attrs(attrs: &NodeAttrs<'_>, format: DataFormat) -> Result<Self, KernelError> {
        let ksize = attrs.get("ksize")?;
        let strides = attrs.get("strides")?;
        let padding: String = attrs.get("padding")?;
        let explicit_paddings = if padding == "EXPLICIT" {
            attrs.get("explicit_paddings")?
        } else {
            Vec::new()
        };
        Self::new(format, ksize, strides, &padding, explicit_paddings)
    }

    /// Checks the attrs as TF's `MaxPoolingOp` constructors do, once the
    /// data format is parsed (`explicit_paddings` is only looked at for
    /// EXPLICIT padding).
    pub fn new(
        format: DataFormat,
        ksize: Vec<i64>,
        strides: Vec<i64>,
        padding: &str,
        explicit_paddings: Vec<i64>,
    ) -> Result<Self, KernelError> {
        let ksize: [i64; 4] = ksize.try_into().map_err(|_| {
            KernelError::invalid_argument("Sliding window ksize field must specify 4 dimensions")
        })?;
        for (i, &k) in ksize.iter().enumerate() {
            registry_core::kernel_ensure!(
                k > 0,
                "Sliding window ksize for dimension {i} was zero."
            );
        }
        let strides: [i64; 4] = strides.try_into().map_err(|_| {
            KernelError::invalid_argument("Sliding window stride field must specify 4 dimensions")
        })?;
        let padding = Padding::parse(padding)?;
        let explicit_paddings = if padding == Padding::Explicit {
            check_valid_padding(padding, &explicit_paddings, format)?;
            explicit_paddings
        } else {
            Vec::new()
        };
        if ksize[0] != 1 || strides[0] != 1 {
            return Err(KernelError::unimplemented(
                "Pooling is not yet supported on the batch dimension.",
            ));
        }
        Ok(Self {
            ksize,
            strides,
            padding,
            explicit_paddings,
            format,
        })
    }

    /// Checks an input of `dims` and computes what its windows cover (TF's
    /// `PoolParameters`): spatial windows with the output geometry, or
    /// depthwise windows (which only the CPU runs).
    pub fn windows(&self, dims: &[usize]) -> Result<PoolWindows, KernelError> {
        let &[batch, _, _, _] = dims else {
            return Err(KernelError::invalid_argument(format!(
                "tensor_in_shape must have 2 spatial dimensions. {} 0",
                dims.len()
            )));
        };
        let f = self.format;
        let window = |d: char| usize::try_from(self.ksize[f.index(d)]).unwrap_or(usize::MAX);
        let (window_rows, window_cols, depth_window) = (window('H'), window('W'), window('C'));
        if depth_window != 1 && (window_rows != 1 || window_cols != 1) {
            return Err(KernelError::unimplemented(
                "MaxPooling supports exactly one of pooling across depth or pooling across \
                 width/height.",
            ));
        }
        if depth_window > 1 {
            return Ok(PoolWindows::Depthwise(depth_window));
        }
        let explicit = |d: char| explicit_padding(&self.explicit_paddings, f, d);
        let (in_rows, in_cols, depth) =
            (dims[f.index('H')], dims[f.index('W')], dims[f.index('C')]);
        let (stride_rows, stride_cols) = (self.strides[f.index('H')], self.strides[f.index('W')]);
        let rows = windowed_output(
            in_rows,
            window_rows,
            1,
            stride_rows,
            self.padding,
            explicit('H'),
        )?;
        let cols = windowed_output(
            in_cols,
            window_cols,
            1,
            stride_cols,
            self.padding,
            explicit('W'),
        )?;
        Ok(PoolWindows::Spatial(PoolGeometry {
            batch,
            in_rows,
            in_cols,
            depth,
            window_rows,
            window_cols,
            stride_rows,
            stride_cols,
            rows,
            cols,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(
        format: DataFormat,
        ksize: [i64; 4],
        strides: [i64; 4],
        padding: &str,
    ) -> Pool2DParams {
        Pool2DParams::new(
            format,
            ksize.to_vec(),
            strides.to_vec(),
            padding,
            Vec::new(),
        )
        .unwrap()
    }

    fn spatial(p: &Pool2DParams, dims: &[usize]) -> PoolGeometry {
        match p.windows(dims).unwrap() {
            PoolWindows::Spatial(g) => g,
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn nhwc_and_nchw_geometry() {
        let p = params(DataFormat::Nhwc, [1, 2, 2, 1], [1, 2, 2, 1], "SAME");
        let g = spatial(&p, &[2, 5, 4, 3]);
        assert_eq!(g.out_shape(DataFormat::Nhwc), [2, 3, 2, 3]);
        assert_eq!((g.rows.pad_before, g.cols.pad_before), (0, 0));
        let p = params(DataFormat::Nchw, [1, 1, 3, 3], [1, 1, 1, 1], "SAME");
        let g = spatial(&p, &[2, 3, 5, 4]);
        assert_eq!(g.out_shape(DataFormat::Nchw), [2, 3, 5, 4]);
        assert_eq!((g.depth, g.in_rows, g.in_cols), (3, 5, 4));
        assert_eq!((g.rows.pad_before, g.cols.pad_before), (1, 1));
        let p = Pool2DParams::new(
            DataFormat::Nhwc,
            vec![1, 2, 2, 1],
            vec![1, 1, 1, 1],
            "EXPLICIT",
            vec![0, 0, 1, 2, 0, 1, 0, 0],
        )
        .unwrap();
        let g = spatial(&p, &[1, 3, 3, 1]);
        assert_eq!(g.out_shape(DataFormat::Nhwc), [1, 5, 3, 1]);
        assert_eq!((g.rows.pad_before, g.cols.pad_before), (1, 0));
        let p = params(DataFormat::Nhwc, [1, 1, 1, 2], [1, 1, 1, 2], "VALID");
        assert_eq!(p.windows(&[1, 2, 2, 4]).unwrap(), PoolWindows::Depthwise(2));
    }

    #[test]
    fn tf_errors() {
        let nhwc = DataFormat::Nhwc;
        let new = |ksize: Vec<i64>| Pool2DParams::new(nhwc, ksize, vec![1; 4], "VALID", vec![]);
        let e = new(vec![1, 2, 2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Sliding window ksize field must specify 4 dimensions"
        );
        let e = new(vec![1, 0, 2, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Sliding window ksize for dimension 1 was zero."
        );
        let e = new(vec![2, 1, 1, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Pooling is not yet supported on the batch dimension."
        );
        let p = params(nhwc, [1, 2, 1, 2], [1, 1, 1, 2], "VALID");
        let e = p.windows(&[1, 2, 2, 4]).unwrap_err();
        assert!(e.to_string().contains("exactly one of pooling"), "{e}");
        let e = p.windows(&[1, 2, 2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor_in_shape must have 2 spatial dimensions. 3 0"
        );
        let p = params(nhwc, [1, 3, 3, 1], [1, 1, 1, 1], "VALID");
        let e = p.windows(&[1, 1, 1, 1]).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
    }
}
