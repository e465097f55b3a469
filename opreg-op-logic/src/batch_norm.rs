//! `FusedBatchNormV3`'s attrs, its shape checks (TF's
//! `FusedBatchNormOpBase::ComputeWithReservedSpace`, with its messages),
//! `x` seen as `[outer, channels, inner]`, and the Bessel correction of the
//! running variance, shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::batch_norm::{BatchNormAttrs, BnShapes, Layout};
//! use registry_core::tensor::TensorShape;
//!
//! let attrs = BatchNormAttrs {
//!     epsilon: 1e-3,
//!     exponential_avg_factor: 1.0,
//!     layout: Layout::ChannelsFirst,
//!     is_training: true,
//! };
//! let (x, c, empty) = (
//!     TensorShape::new([2, 3, 4, 5]).unwrap(),
//!     TensorShape::new([3]).unwrap(),
//!     TensorShape::new([0]).unwrap(),
//! );
//! let shapes = BnShapes { x: &x, scale: &c, offset: &c, mean: &empty, variance: &empty };
//! let b = attrs.check_shapes(&shapes).unwrap();
//! assert_eq!((b.outer, b.channels, b.inner), (2, 3, 20));
//! ```

use registry_core::attr::NodeAttrs;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::TensorShape;

/// Where the channel dimension is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// NHWC / NDHWC: channels last.
    ChannelsLast,
    /// NCHW / NCDHW: channels second.
    ChannelsFirst,
}

impl Layout {
    /// The layout of a `data_format` attr; InvalidArgument (TF's message)
    /// for any other string.
    pub fn parse(data_format: &str) -> Result<Self, KernelError> {
        match data_format {
            "NHWC" | "NDHWC" => Ok(Self::ChannelsLast),
            "NCHW" | "NCDHW" => Ok(Self::ChannelsFirst),
            _ => Err(KernelError::invalid_argument("Invalid data format")),
        }
    }
}

/// `x` seen as `[outer, channels, inner]` (channels last: `inner = 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocks {
    /// Product of the dimensions before the channel one.
    pub outer: usize,
    /// The number of channels.
    pub channels: usize,
    /// Product of the dimensions after the channel one.
    pub inner: usize,
}

/// The shapes of `x`, `scale`, `offset`, `mean` and `variance`.
#[derive(Debug, Clone, Copy)]
pub struct BnShapes<'a> {
    /// `x`'s shape.
    pub x: &'a TensorShape,
    /// `scale`'s shape.
    pub scale: &'a TensorShape,
    /// `offset`'s shape.
    pub offset: &'a TensorShape,
    /// `mean`'s shape (the running mean).
    pub mean: &'a TensorShape,
    /// `variance`'s shape (the running variance).
    pub variance: &'a TensorShape,
}

/// A `FusedBatchNormV3` node's attrs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchNormAttrs {
    /// Added to the variance before its square root.
    pub epsilon: f32,
    /// The running moments' blend factor (1: the batch's moments alone).
    pub exponential_avg_factor: f32,
    /// Where `x`'s channels are (`data_format`).
    pub layout: Layout,
    /// Training (batch moments) or inference (the given moments).
    pub is_training: bool,
}

impl BatchNormAttrs {
    /// Reads `data_format` (checked first), `epsilon`,
    /// `exponential_avg_factor` and `is_training`.
    pub fn from_attrs(attrs: &NodeAttrs<'_>) -> Result<Self, KernelError> {
        let layout = Layout::parse(&attrs.get::<String>("data_format")?)?;
        Ok(Self {
            epsilon: attrs.get("epsilon")?,
            exponential_avg_factor: attrs.get("exponential_avg_factor")?,
            layout,
            is_training: attrs.get("is_training")?,
        })
    }

    /// [`check_shapes`](Self::check_shapes) of a call's inputs (`x`,
    /// `scale`, `offset`, `mean`, `variance`).
    pub fn check_inputs(&self, ctx: &OpKernelContext<'_>) -> Result<Blocks, KernelError> {
        self.check_shapes(&BnShapes {
            x: ctx.input(0)?.shape(),
            scale: ctx.input(1)?.shape(),
            offset: ctx.input(2)?.shape(),
            mean: ctx.input(3)?.shape(),
            variance: ctx.input(4)?.shape(),
        })
    }

    /// Checks the inputs' shapes as TF does (`mean` and `variance` are
    /// checked only when they are read: in inference, or when blended in
    /// training) and returns `x`'s blocks.
    pub fn check_shapes(&self, s: &BnShapes<'_>) -> Result<Blocks, KernelError> {
        let x_dims = s.x.dims();
        registry_core::kernel_ensure!(
            x_dims.len() == 4 || x_dims.len() == 5,
            "input must be 4 or 5-dimensional{}",
            s.x
        );
        for (t, name) in [
            (s.scale, "scale"),
            (s.offset, "offset"),
            (s.mean, "estimated_mean"),
            (s.variance, "estimated_variance"),
        ] {
            registry_core::kernel_ensure!(t.rank() == 1, "{name} must be 1-dimensional{t}");
        }
        let blocks = match self.layout {
            Layout::ChannelsLast => Blocks {
                outer: x_dims[..x_dims.len() - 1].iter().product(),
                channels: x_dims[x_dims.len() - 1],
                inner: 1,
            },
            Layout::ChannelsFirst => Blocks {
                outer: x_dims[0],
                channels: x_dims[1],
                inner: x_dims[2..].iter().product(),
            },
        };
        let c = blocks.channels;
        for (t, name) in [(s.scale, "scale"), (s.offset, "offset")] {
            registry_core::kernel_ensure!(
                t.num_elements() == c,
                "{name} must have the same number of elements as the channels of x, got {} and {c}",
                t.num_elements()
            );
        }
        if !self.is_training || self.exponential_avg_factor != 1.0 {
            let prefix = if self.is_training {
                "When exponential_avg_factor != 1"
            } else {
                "When is_training=false"
            };
            for (t, name) in [(s.mean, "mean"), (s.variance, "variance")] {
                registry_core::kernel_ensure!(
                    t.num_elements() == c,
                    "{prefix}, {name} must have the same number of elements as the channels of \
                     x, got {} and {c}",
                    t.num_elements()
                );
            }
        }
        Ok(blocks)
    }
}

/// TF's Bessel correction of the batch variance over `rest` values per
/// channel: `rest / max(rest - 1, 1)`, in `f32`.
pub fn bessel_adjust(rest: usize) -> f32 {
    rest as f32 / rest.saturating_sub(1).max(1) as f32
}

#[cfg(test)]
mod tests {
    use opreg_standard_ops as _;
    use registry_core::OpRegistry;
    use registry_core::proto::{AttrValue, NodeDef, attr_value::Value};

    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn check(
        x: &[usize],
        c: usize,
        mv: usize,
        layout: Layout,
        is_training: bool,
        exponential_avg_factor: f32,
    ) -> Result<Blocks, KernelError> {
        let (x, sc, m) = (shape(x), shape(&[c]), shape(&[mv]));
        let attrs = BatchNormAttrs {
            epsilon: 1e-3,
            exponential_avg_factor,
            layout,
            is_training,
        };
        attrs.check_shapes(&BnShapes {
            x: &x,
            scale: &sc,
            offset: &sc,
            mean: &m,
            variance: &m,
        })
    }

    #[test]
    fn blocks_of_each_layout() {
        let b = check(&[2, 3, 4, 5], 5, 0, Layout::ChannelsLast, true, 1.0).unwrap();
        assert_eq!(
            b,
            Blocks {
                outer: 24,
                channels: 5,
                inner: 1
            }
        );
        let b = check(&[2, 3, 4, 5], 3, 3, Layout::ChannelsFirst, false, 1.0).unwrap();
        assert_eq!(
            b,
            Blocks {
                outer: 2,
                channels: 3,
                inner: 20
            }
        );
        let b = check(&[2, 3, 4, 5, 6], 3, 3, Layout::ChannelsFirst, true, 0.5).unwrap();
        assert_eq!(
            b,
            Blocks {
                outer: 2,
                channels: 3,
                inner: 120
            }
        );
    }

    #[test]
    fn shape_errors_have_tf_messages() {
        let err = |x: &[usize], c, mv, training, f| {
            check(x, c, mv, Layout::ChannelsLast, training, f)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&[2, 3, 4], 4, 4, true, 1.0),
            "input must be 4 or 5-dimensional[2,3,4]"
        );
        assert_eq!(
            err(&[1, 1, 1, 4], 3, 4, true, 1.0),
            "scale must have the same number of elements as the channels of x, got 3 and 4"
        );
        assert_eq!(
            err(&[1, 1, 1, 4], 4, 0, false, 1.0),
            "When is_training=false, mean must have the same number of elements as the \
             channels of x, got 0 and 4"
        );
        assert_eq!(
            err(&[1, 1, 1, 4], 4, 0, true, 0.5),
            "When exponential_avg_factor != 1, mean must have the same number of elements as \
             the channels of x, got 0 and 4"
        );
        assert!(check(&[1, 1, 1, 4], 4, 0, Layout::ChannelsLast, true, 1.0).is_ok());
        let (x, v, s) = (shape(&[1, 1, 1, 4]), shape(&[4]), shape(&[2, 2]));
        let attrs = BatchNormAttrs {
            epsilon: 1e-3,
            exponential_avg_factor: 1.0,
            layout: Layout::ChannelsLast,
            is_training: true,
        };
        let shapes = BnShapes {
            x: &x,
            scale: &v,
            offset: &v,
            mean: &s,
            variance: &v,
        };
        assert_eq!(
            attrs.check_shapes(&shapes).unwrap_err().to_string(),
            "estimated_mean must be 1-dimensional[2,2]"
        );
    }

    #[test]
    fn inputs_of_a_call() {
        use registry_core::kernel::{KernelCall, NodeInfo};
        use registry_core::proto::DataType::DtFloat;
        use registry_core::tensor::Tensor;

        let info = NodeInfo::new("bn", "FusedBatchNormV3", "CPU", vec![DtFloat; 5], vec![]);
        let x = Tensor::from_vec([1, 2, 1, 3], vec![0.0f32; 6]).unwrap();
        let v = |n: usize| Tensor::from_vec([n], vec![0.0f32; n]).unwrap();
        let attrs = BatchNormAttrs {
            epsilon: 1e-3,
            exponential_avg_factor: 1.0,
            layout: Layout::ChannelsLast,
            is_training: false,
        };
        let mut call = KernelCall::new(&info, [x.clone(), v(3), v(3), v(3), v(3)]);
        assert_eq!(
            attrs.check_inputs(&call.context(&info)).unwrap(),
            Blocks {
                outer: 2,
                channels: 3,
                inner: 1
            }
        );
        let mut call = KernelCall::new(&info, [x, v(3), v(3), v(3), v(2)]);
        assert_eq!(
            attrs
                .check_inputs(&call.context(&info))
                .unwrap_err()
                .to_string(),
            "When is_training=false, variance must have the same number of elements as the \
             channels of x, got 2 and 3"
        );
    }

    #[test]
    fn data_formats() {
        assert_eq!(Layout::parse("NDHWC").unwrap(), Layout::ChannelsLast);
        assert_eq!(Layout::parse("NCHW").unwrap(), Layout::ChannelsFirst);
        assert_eq!(
            Layout::parse("HWCN").unwrap_err().to_string(),
            "Invalid data format"
        );
    }

    #[test]
    fn attrs_are_read_with_the_op_defaults() {
        let op_def = OpRegistry::global()
            .look_up_op_def("FusedBatchNormV3")
            .unwrap();
        let mut node = NodeDef {
            name: "bn".into(),
            op: "FusedBatchNormV3".into(),
            ..Default::default()
        };
        node.attr.insert(
            "data_format".into(),
            AttrValue {
                value: Some(Value::S(b"NCHW".to_vec())),
            },
        );
        let attrs_of_node = NodeAttrs::new(&node, op_def);
        let attrs = BatchNormAttrs::from_attrs(&attrs_of_node).unwrap();
        assert_eq!(attrs.layout, Layout::ChannelsFirst);
        assert!(attrs.is_training);
        assert_eq!(attrs.exponential_avg_factor, 1.0);
        assert_eq!(attrs.epsilon, 1e-4);
        node.attr.insert(
            "data_format".into(),
            AttrValue {
                value: Some(Value::S(b"NC".to_vec())),
            },
        );
        let attrs_of_node = NodeAttrs::new(&node, op_def);
        assert_eq!(
            BatchNormAttrs::from_attrs(&attrs_of_node)
                .unwrap_err()
                .to_string(),
            "Invalid data format"
        );
    }

    #[test]
    fn bessel_correction() {
        assert_eq!(bessel_adjust(4), 4.0 / 3.0);
        assert_eq!(bessel_adjust(1), 1.0);
        assert_eq!(bessel_adjust(0), 0.0);
    }
}
