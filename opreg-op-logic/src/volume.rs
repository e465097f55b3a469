//! 3-D windowed ops' host-side checks and geometry, shared by the CPU and
//! GPU kernels: TF's `Conv3DOp` and `Pooling3DOp` (constructor attr checks,
//! `Compute`'s shape checks, `Get3dOutputSize(V2)`) and the CPU launchers'
//! limits, with TF's messages.
//!
//! ```
//! use opreg_op_logic::volume::{Conv3DParams, VolumeFormat};
//!
//! let p = Conv3DParams::new(vec![1, 2, 2, 2, 1], vec![1; 5], "SAME", "NDHWC").unwrap();
//! let g = p.geometry(&[1, 4, 4, 4, 3], &[3, 3, 3, 3, 8]).unwrap();
//! assert_eq!(g.out_shape(VolumeFormat::Ndhwc), [1, 2, 2, 2, 8]);
//! ```

use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelError;

use super::window::{Axis, Padding};

/// A 5-D volume layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeFormat {
    /// Batch, planes, rows, columns, channels.
    Ndhwc,
    /// Batch, channels, planes, rows, columns.
    Ncdhw,
}

impl VolumeFormat {
    /// Parses `NDHWC`/`NCDHW` (TF's `FormatFromString`).
    ///
    /// ```
    /// use opreg_op_logic::volume::VolumeFormat;
    /// assert_eq!(VolumeFormat::parse("NCDHW").unwrap(), VolumeFormat::Ncdhw);
    /// assert!(VolumeFormat::parse("NHWC").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self, KernelError> {
        match s {
            "NDHWC" => Ok(Self::Ndhwc),
            "NCDHW" => Ok(Self::Ncdhw),
            _ => Err(KernelError::invalid_argument("Invalid data format")),
        }
    }

    /// The index of dimension `'N'`, `'0'` (planes), `'1'` (rows), `'2'`
    /// (columns) or `'C'` in a 5-D shape or attr list of this format (TF's
    /// `GetTensorDimIndex<3>`).
    ///
    /// ```
    /// use opreg_op_logic::volume::VolumeFormat;
    /// assert_eq!(VolumeFormat::Ndhwc.index('C'), 4);
    /// assert_eq!(VolumeFormat::Ncdhw.index('0'), 2);
    /// ```
    pub fn index(self, dim: char) -> usize {
        let spatial = match self {
            Self::Ndhwc => 1,
            Self::Ncdhw => 2,
        };
        match (self, dim) {
            (_, 'N') => 0,
            (Self::Ndhwc, 'C') => 4,
            (Self::Ncdhw, 'C') => 1,
            (_, '0') => spatial,
            (_, '1') => spatial + 1,
            _ => spatial + 2, // '2'
        }
    }

    /// The 5-D shape of this format from its batch, spatial and channel
    /// sizes.
    pub fn shape(self, batch: usize, spatial: [usize; 3], channels: usize) -> [usize; 5] {
        let [d, h, w] = spatial;
        match self {
            Self::Ndhwc => [batch, d, h, w, channels],
            Self::Ncdhw => [batch, channels, d, h, w],
        }
    }

    /// The three spatial entries of a 5-value attr (or shape) of this
    /// format, as planes, rows, columns.
    pub fn spatial<T: Copy>(self, values: &[T; 5]) -> [T; 3] {
        [
            values[self.index('0')],
            values[self.index('1')],
            values[self.index('2')],
        ]
    }

    /// TF's name of the format.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ndhwc => "NDHWC",
            Self::Ncdhw => "NCDHW",
        }
    }
}

/// The validated sizes of one 3-D windowed op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VolumeGeometry {
    /// Volumes in the batch.
    pub batch: usize,
    /// Input channels.
    pub in_depth: usize,
    /// Input channels per group (the filter's fourth dimension; the input
    /// depth for pooling).
    pub patch_depth: usize,
    /// Output channels.
    pub out_depth: usize,
    /// Planes, rows, columns.
    pub axes: [Axis; 3],
}

impl VolumeGeometry {
    /// The output shape in `format`.
    pub fn out_shape(&self, format: VolumeFormat) -> [usize; 5] {
        format.shape(self.batch, self.axes.map(|a| a.out.out), self.out_depth)
    }

    /// Whether each output pixel reads only its own input pixel: every
    /// axis has a window of 1, stride 1 and no padding (a 1×1(×1)
    /// convolution is then one matrix product over the pixels).
    ///
    /// ```
    /// use opreg_op_logic::volume::Conv3DParams;
    ///
    /// let p = Conv3DParams::new(vec![1; 5], vec![1; 5], "SAME", "NDHWC").unwrap();
    /// assert!(p.geometry(&[1, 4, 4, 4, 3], &[1, 1, 1, 3, 8]).unwrap().pointwise());
    /// assert!(!p.geometry(&[1, 4, 4, 4, 3], &[1, 1, 3, 3, 8]).unwrap().pointwise());
    /// ```
    pub fn pointwise(&self) -> bool {
        self.axes.iter().all(|a| {
            a.window == 1 && a.stride == 1 && a.out.pad_before == 0 && a.out.out == a.input
        })
    }
}

/// A `list(int)` attr that must hold 5 values, or TF's `message`.
fn five(values: Vec<i64>, message: &str) -> Result<[i64; 5], KernelError> {
    values
        .try_into()
        .map_err(|_| KernelError::invalid_argument(message))
}

/// `padding`, which 3-D ops allow only as SAME or VALID (the op's attr
/// checks it first; a kernel built by hand is checked here).
fn same_or_valid(padding: &str) -> Result<Padding, KernelError> {
    match Padding::parse(padding)? {
        Padding::Explicit => Err(KernelError::invalid_argument(
            "3-D windowed ops do not support EXPLICIT padding",
        )),
        p => Ok(p),
    }
}

/// `Conv3D`'s validated attrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conv3DParams {
    /// `strides`, one per dimension of `format`.
    pub strides: [i64; 5],
    /// `dilations`, one per dimension of `format`.
    pub dilations: [i64; 5],
    /// `padding` (SAME or VALID).
    pub padding: Padding,
    /// `data_format`.
    pub format: VolumeFormat,
}

impl Conv3DParams {
    /// Reads and checks the attrs of a `Conv3D` node (see [`Self::new`]).
    pub fn from_attrs(attrs: &NodeAttrs<'_>) -> Result<Self, KernelError> {
        Self::new(
            attrs.get("strides")?,
            attrs.get("dilations")?,
            &attrs.get::<String>("padding")?,
            &attrs.get::<String>("data_format")?,
        )
    }

    /// Checks the attrs as TF's `Conv3DOp` constructor does, in its order.
    pub fn new(
        strides: Vec<i64>,
        dilations: Vec<i64>,
        padding: &str,
        format: &str,
    ) -> Result<Self, KernelError> {
        let format = VolumeFormat::parse(format)?;
        let strides = five(
            strides,
            "Sliding window strides field must specify 5 dimensions",
        )?;
        let at = |v: &[i64; 5], d: char| v[format.index(d)];
        registry_core::kernel_ensure!(
            at(&strides, 'N') == 1 && at(&strides, 'C') == 1,
            "Current implementation does not yet support strides in the batch and depth \
             dimensions."
        );
        registry_core::kernel_ensure!(
            format.spatial(&strides).iter().all(|&s| s > 0),
            "Spatial strides should be larger than 0."
        );
        let dilations = five(dilations, "Dilation rates field must specify 5 dimensions")?;
        registry_core::kernel_ensure!(
            at(&dilations, 'N') == 1 && at(&dilations, 'C') == 1,
            "Current implementation does not yet support dilation rates in the batch and \
             depth dimensions."
        );
        registry_core::kernel_ensure!(
            format.spatial(&dilations).iter().all(|&d| d > 0),
            "Dilated rates should be larger than 0."
        );
        Ok(Self {
            strides,
            dilations,
            padding: same_or_valid(padding)?,
            format,
        })
    }

    /// Checks an input and a filter of these shapes as TF's
    /// `Conv3DOp::Compute` does and computes the output geometry
    /// (`Get3dOutputSizeV2`).
    pub fn geometry(
        &self,
        input: &[usize],
        filter: &[usize],
    ) -> Result<VolumeGeometry, KernelError> {
        let input: [usize; 5] = input
            .try_into()
            .map_err(|_| KernelError::invalid_argument("input must be 5-dimensional"))?;
        let filter: [usize; 5] = filter
            .try_into()
            .map_err(|_| KernelError::invalid_argument("filter must be 5-dimensional"))?;
        let in_depth = input[self.format.index('C')];
        let [
            filter_planes,
            filter_rows,
            filter_cols,
            patch_depth,
            out_depth,
        ] = filter;
        registry_core::kernel_ensure!(patch_depth != 0, "filter_depth must be non-zero");
        registry_core::kernel_ensure!(
            in_depth.is_multiple_of(patch_depth),
            "Input depth must be evenly divisible by filter depth: {in_depth} vs {patch_depth}"
        );
        registry_core::kernel_ensure!(
            filter.iter().all(|&d| d > 0),
            "filter must not have zero elements (i.e. all dimensions must be non-zero)"
        );
        let sizes = self.format.spatial(&input);
        let windows = [filter_planes, filter_rows, filter_cols];
        let dilations = self.format.spatial(&self.dilations);
        let strides = self.format.spatial(&self.strides);
        let mut axes = [Axis::UNIT; 3];
        for (i, axis) in axes.iter_mut().enumerate() {
            *axis = Axis::new(
                sizes[i],
                windows[i],
                dilations[i],
                strides[i],
                self.padding,
                (0, 0),
            )?;
        }
        Ok(VolumeGeometry {
            batch: input[0],
            in_depth,
            patch_depth,
            out_depth,
            axes,
        })
    }

    /// The limits of TF's CPU launcher (checked once the output is known
    /// to be non-empty): NDHWC, no dilation, no groups.
    pub fn check_cpu_launch(&self, g: &VolumeGeometry) -> Result<(), KernelError> {
        registry_core::kernel_ensure!(
            self.format == VolumeFormat::Ndhwc,
            "CPU implementation of Conv3D currently only supports the NHWC tensor format."
        );
        registry_core::kernel_ensure!(
            g.axes.iter().all(|a| a.dilation == 1),
            "CPU implementation of Conv3D currently only supports dilated rates of 1."
        );
        registry_core::kernel_ensure!(
            g.patch_depth == g.in_depth,
            "Number of channels in filter ({}) must match last dimension of input ({})",
            g.patch_depth,
            g.in_depth
        );
        Ok(())
    }
}

/// `MaxPool3D`'s and `AvgPool3D`'s validated attrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool3DParams {
    /// `ksize`, one per dimension of `format` (all positive).
    pub ksize: [i64; 5],
    /// `strides`, one per dimension of `format`.
    pub strides: [i64; 5],
    /// `padding` (SAME or VALID).
    pub padding: Padding,
    /// `data_format`.
    pub format: VolumeFormat,
}

impl Pool3DParams {
    /// Reads and checks the attrs of a 3-D pooling node whose
    /// `data_format` the caller parsed (TF's CPU kernels refuse NCDHW
    /// before anything else; see [`Self::new`]).
    pub fn from_attrs(attrs: &NodeAttrs<'_>, format: VolumeFormat) -> Result<Self, KernelError> {
        Self::new(
            format,
            attrs.get("ksize")?,
            attrs.get("strides")?,
            &attrs.get::<String>("padding")?,
        )
    }

    /// Checks the attrs as TF's `Pooling3DOp` constructor does, in its
    /// order.
    pub fn new(
        format: VolumeFormat,
        ksize: Vec<i64>,
        strides: Vec<i64>,
        padding: &str,
    ) -> Result<Self, KernelError> {
        let ksize = five(
            ksize,
            "Sliding window ksize field must specify 5 dimensions",
        )?;
        registry_core::kernel_ensure!(
            ksize.iter().all(|&k| k > 0),
            "Sliding window ksize field must have non-negative dimensions"
        );
        let strides = five(
            strides,
            "Sliding window stride field must specify 5 dimensions",
        )?;
        let padding = same_or_valid(padding)?;
        let at = |v: &[i64; 5], d: char| v[format.index(d)];
        if at(&ksize, 'N') != 1 || at(&strides, 'N') != 1 {
            return Err(KernelError::unimplemented(
                "Pooling is not yet supported on the batch dimension.",
            ));
        }
        if at(&ksize, 'C') != 1 || at(&strides, 'C') != 1 {
            return Err(KernelError::unimplemented(
                "Pooling is not yet supported on the depth dimension.",
            ));
        }
        Ok(Self {
            ksize,
            strides,
            padding,
            format,
        })
    }

    /// Checks an input of `dims` as TF's `Pooling3DOp::Compute` does and
    /// computes the windows (`Get3dOutputSize`, columns checked first, as
    /// TF's).
    pub fn geometry(&self, dims: &[usize]) -> Result<VolumeGeometry, KernelError> {
        let input: [usize; 5] = dims
            .try_into()
            .map_err(|_| KernelError::invalid_argument("tensor_in must be 5-dimensional"))?;
        let depth = input[self.format.index('C')];
        let sizes = self.format.spatial(&input);
        let windows = self.format.spatial(&self.ksize);
        let strides = self.format.spatial(&self.strides);
        let mut axes = [Axis::UNIT; 3];
        for i in (0..3).rev() {
            let window = usize::try_from(windows[i]).unwrap_or(usize::MAX);
            axes[i] = Axis::new(sizes[i], window, 1, strides[i], self.padding, (0, 0))?;
        }
        Ok(VolumeGeometry {
            batch: input[0],
            in_depth: depth,
            patch_depth: depth,
            out_depth: depth,
            axes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_index_their_dimensions() {
        for (i, d) in "N012C".chars().enumerate() {
            assert_eq!(VolumeFormat::Ndhwc.index(d), i);
        }
        for (i, d) in "NC012".chars().enumerate() {
            assert_eq!(VolumeFormat::Ncdhw.index(d), i);
        }
        assert_eq!(VolumeFormat::Ncdhw.shape(1, [2, 3, 4], 5), [1, 5, 2, 3, 4]);
        assert_eq!(VolumeFormat::Ncdhw.spatial(&[0, 1, 2, 3, 4]), [2, 3, 4]);
        assert_eq!(VolumeFormat::Ndhwc.spatial(&[0, 1, 2, 3, 4]), [1, 2, 3]);
    }

    #[test]
    fn conv3d_geometry_and_tf_errors() {
        let p = Conv3DParams::new(vec![1, 1, 2, 3, 1], vec![1; 5], "VALID", "NDHWC").unwrap();
        let g = p.geometry(&[2, 5, 4, 6, 2], &[3, 2, 2, 2, 3]).unwrap();
        assert_eq!(g.out_shape(VolumeFormat::Ndhwc), [2, 3, 2, 2, 3]);
        assert!(p.check_cpu_launch(&g).is_ok());
        let e = p.geometry(&[2, 5, 4, 6], &[3, 2, 2, 2, 3]).unwrap_err();
        assert_eq!(e.to_string(), "input must be 5-dimensional");
        let e = p.geometry(&[2, 5, 4, 6, 3], &[3, 2, 2, 2, 3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Input depth must be evenly divisible by filter depth: 3 vs 2"
        );
        let e = p.geometry(&[2, 5, 4, 6, 2], &[0, 2, 2, 2, 3]).unwrap_err();
        assert!(e.to_string().contains("zero elements"), "{e}");
        let e = p.geometry(&[2, 1, 4, 6, 2], &[3, 2, 2, 2, 3]).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
        // Grouped filters pass the op's checks, not the CPU launcher's.
        let g = p.geometry(&[2, 5, 4, 6, 4], &[3, 2, 2, 2, 3]).unwrap();
        let e = p.check_cpu_launch(&g).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Number of channels in filter (2) must match last dimension of input (4)"
        );
        let e = Conv3DParams::new(vec![2, 1, 1, 1, 1], vec![1; 5], "SAME", "NDHWC").unwrap_err();
        assert!(e.to_string().contains("strides in the batch"), "{e}");
        let e = Conv3DParams::new(vec![1; 5], vec![1, 1, 1, 1, 2], "SAME", "NDHWC").unwrap_err();
        assert!(e.to_string().contains("dilation rates in the batch"), "{e}");
        let e = Conv3DParams::new(vec![1, 0, 1, 1, 1], vec![1; 5], "SAME", "NDHWC").unwrap_err();
        assert_eq!(e.to_string(), "Spatial strides should be larger than 0.");
        let e = Conv3DParams::new(vec![1; 4], vec![1; 5], "SAME", "NDHWC").unwrap_err();
        assert!(e.to_string().contains("specify 5 dimensions"), "{e}");
        let p = Conv3DParams::new(vec![1; 5], vec![1, 1, 2, 1, 1], "SAME", "NDHWC").unwrap();
        let g = p.geometry(&[1, 3, 3, 3, 1], &[1, 2, 2, 1, 1]).unwrap();
        assert!(
            p.check_cpu_launch(&g)
                .unwrap_err()
                .to_string()
                .contains("dilated")
        );
        let p = Conv3DParams::new(vec![1; 5], vec![1; 5], "SAME", "NCDHW").unwrap();
        let g = p.geometry(&[1, 1, 3, 3, 3], &[1, 2, 2, 1, 1]).unwrap();
        assert_eq!(g.out_shape(VolumeFormat::Ncdhw), [1, 1, 3, 3, 3]);
        assert!(
            p.check_cpu_launch(&g)
                .unwrap_err()
                .to_string()
                .contains("NHWC")
        );
    }

    #[test]
    fn pool3d_geometry_and_tf_errors() {
        let ndhwc = VolumeFormat::Ndhwc;
        let p =
            Pool3DParams::new(ndhwc, vec![1, 2, 3, 1, 1], vec![1, 1, 2, 3, 1], "VALID").unwrap();
        let g = p.geometry(&[2, 5, 4, 6, 2]).unwrap();
        assert_eq!(g.out_shape(ndhwc), [2, 4, 1, 2, 2]);
        let p = Pool3DParams::new(ndhwc, vec![1, 3, 3, 3, 1], vec![1, 2, 2, 2, 1], "SAME").unwrap();
        let g = p.geometry(&[1, 5, 4, 4, 2]).unwrap();
        assert_eq!(g.out_shape(ndhwc), [1, 3, 2, 2, 2]);
        assert_eq!(g.axes[0].out.pad_before, 1);
        let e = p.geometry(&[1, 5, 4, 4]).unwrap_err();
        assert_eq!(e.to_string(), "tensor_in must be 5-dimensional");
        let e = Pool3DParams::new(ndhwc, vec![2, 1, 1, 1, 1], vec![1; 5], "VALID").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Pooling is not yet supported on the batch dimension."
        );
        let e = Pool3DParams::new(ndhwc, vec![1, 1, 1, 1, 2], vec![1; 5], "VALID").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Pooling is not yet supported on the depth dimension."
        );
        let e = Pool3DParams::new(ndhwc, vec![1, 0, 1, 1, 1], vec![1; 5], "VALID").unwrap_err();
        assert!(e.to_string().contains("non-negative"), "{e}");
        let e = Pool3DParams::new(ndhwc, vec![1; 5], vec![1; 5], "EXPLICIT").unwrap_err();
        assert!(e.to_string().contains("EXPLICIT"), "{e}");
    }
}
