//! TensorFlow's fused contractions, `_FusedConv2D`,
//! `_FusedDepthwiseConv2dNative` and `_FusedMatMul`, for `fused_ops`
//! `[BiasAdd]`, `[BiasAdd, A]`, `[BiasAdd, Add]` and `[BiasAdd, Add, A]`
//! with `A` one of `Relu`, `Relu6`, `Elu`, `LeakyRelu`, `Tanh` and
//! `Sigmoid` (what the session's `fusion` rewrite makes of a contraction,
//! its `BiasAdd`, a residual `Add` and its activation; the `Add` forms are
//! TensorFlow's oneDNN ones, whose second argument is the tensor added).
//! The contraction is its own op's kernel; the bias, the addition and the
//! activation then run in one pass over the output, in place, on each span
//! of output rows as soon as the contraction has written it, while it is
//! in cache: one output instead of up to four, and one pass over it. Each
//! element is exactly what `BiasAdd`, `AddV2` and the activation's own
//! kernel compute (denormals flushed as theirs are).

use std::borrow::Cow;
use std::marker::PhantomData;

use multiversion::multiversion;
use opreg_op_logic::conv::Conv2DParams;
use opreg_standard_ops::{FusedConv2D, FusedDepthwiseConv2dNative, FusedMatMul};
use rayon::prelude::*;
use registry_core::attr::NodeAttrs;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::AttrValue;
use registry_core::proto::attr_value::ListValue;
use registry_core::tensor::{Tensor, TensorShape};

use opreg_op_logic::broadcast::Broadcast;

use super::RowEpilogue;
use super::bias_add::BiasElement;
use super::conv2d::{conv2d, offer_filter};
use super::depthwise::{DepthwiseElement, depthwise_conv2d};
use super::direct_conv::ConvElement;
use super::gemm::{ConstantRhs, GemmElement, MatMulParams};
use crate::elementwise::binary_in_place_left;

use crate::math::scalar::{ReluOp, Transcendental};
use crate::math::special::{Relu6Op, SpecialFloat};
use crate::numeric::{Denormal, flushing_denormals};

/// Output elements below which the epilogue stays on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// The activation after the bias.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Activation {
    None,
    Relu,
    Relu6,
    Elu,
    LeakyRelu(f32),
    Tanh,
    Sigmoid,
}

impl Activation {
    /// Whether it is computed by arithmetic and comparisons alone (no
    /// library function), whose results the processor flushes.
    fn is_arithmetic(self) -> bool {
        matches!(
            self,
            Activation::None | Activation::Relu | Activation::Relu6 | Activation::LeakyRelu(_)
        )
    }

    /// The op whose arithmetic it is (for its denormal rule).
    fn op(self) -> &'static str {
        match self {
            Activation::None => "BiasAdd",
            Activation::Relu => "Relu",
            Activation::Relu6 => "Relu6",
            Activation::Elu => "Elu",
            Activation::LeakyRelu(_) => "LeakyRelu",
            Activation::Tanh => "Tanh",
            Activation::Sigmoid => "Sigmoid",
        }
    }
}

/// The element types the epilogue runs on.
pub(crate) trait FusedElement:
    BiasElement + ReluOp + Relu6Op + SpecialFloat + Transcendental + Denormal + Send + Sync
{
}

impl<T> FusedElement for T where
    T: BiasElement + ReluOp + Relu6Op + SpecialFloat + Transcendental + Denormal + Send + Sync
{
}

/// What runs after the contraction: its bias (input 2), optionally the
/// tensor added after it (input 3) and its activation, read from
/// `fused_ops`, `num_args` and `leakyrelu_alpha` when the kernel is built.
#[derive(Debug, Clone, Copy)]
struct Epilogue {
    /// `[BiasAdd, Add, ...]`: input 3 is added after the bias.
    add: bool,
    activation: Activation,
}

impl Epilogue {
    fn from_attrs(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let fused: Vec<String> = ctx.attr("fused_ops")?;
        let names: Vec<&str> = fused.iter().map(String::as_str).collect();
        let op = ctx.op();
        let unsupported = || {
            KernelError::unimplemented(format!(
                "Unsupported fusion: [{}] (the CPU kernel of {op} fuses BiasAdd, then optionally Add, then optionally one of Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid)",
                names.join(",")
            ))
        };
        let (add, activation) = match names.as_slice() {
            [] => {
                return Err(KernelError::invalid_argument(format!(
                    "Fused {op} must have at least one fused op."
                )));
            }
            ["BiasAdd", "Add", rest @ ..] => (true, rest),
            ["BiasAdd", rest @ ..] => (false, rest),
            _ => return Err(unsupported()),
        };
        let activation = match activation {
            [] => Activation::None,
            ["Relu"] => Activation::Relu,
            ["Relu6"] => Activation::Relu6,
            ["Elu"] => Activation::Elu,
            ["LeakyRelu"] => Activation::LeakyRelu(ctx.attr("leakyrelu_alpha")?),
            ["Tanh"] => Activation::Tanh,
            ["Sigmoid"] => Activation::Sigmoid,
            _ => return Err(unsupported()),
        };
        let num_args: i64 = ctx.attr("num_args")?;
        if add && num_args != 2 {
            return Err(KernelError::invalid_argument(format!(
                "Fused {op} with BiasAdd and Add must have two extra arguments: bias and the tensor added (num_args is {num_args})."
            )));
        }
        if !add && num_args != 1 {
            return Err(KernelError::invalid_argument(format!(
                "Fused {op} with BiasAdd must have one extra argument: bias (num_args is {num_args})."
            )));
        }
        if ctx.has_attr("num_host_args") && ctx.attr::<i64>("num_host_args")? != 0 {
            return Err(KernelError::unimplemented(format!(
                "{op} takes no host arguments on the CPU"
            )));
        }
        Ok(Self { add, activation })
    }

    /// The bias (input 2): one value per channel, the output's last
    /// dimension (`channels`, when known before the contraction runs).
    fn bias(
        &self,
        ctx: &OpKernelContext<'_>,
        channels: Option<usize>,
    ) -> Result<Tensor, KernelError> {
        let bias = ctx.input(2)?.clone();
        registry_core::kernel_ensure!(
            bias.shape().rank() == 1,
            "Biases must be 1D: {}",
            bias.shape()
        );
        if let Some(channels) = channels {
            registry_core::kernel_ensure!(
                bias.dims()[0] == channels,
                "Must provide as many biases as the output has channels: {} vs. {channels}",
                bias.shape()
            );
        }
        Ok(bias)
    }

    /// The tensor added after the bias (input 3), when there is one, with
    /// the output's shape `out_dims`: as given when it has that shape,
    /// else broadcast to it (as `AddV2` would); an error when the two do
    /// not broadcast, or only to a larger shape than the output's.
    fn addend<T: FusedElement>(
        &self,
        ctx: &OpKernelContext<'_>,
        out_dims: &[usize],
    ) -> Result<Option<Tensor>, KernelError> {
        if !self.add {
            return Ok(None);
        }
        let addend = ctx.input(3)?.clone();
        if addend.dims() == out_dims {
            return Ok(Some(addend));
        }
        let out_shape = TensorShape::new(out_dims)?;
        let b = Broadcast::binary(&out_shape, addend.shape())?;
        registry_core::kernel_ensure!(
            b.out_shape().dims() == out_dims,
            "The tensor added, of shape {}, would broadcast the output {} to {}; the fused Add keeps the output's shape",
            addend.shape(),
            out_shape,
            b.out_shape()
        );
        // Operand 0 is the output's shape itself: each element becomes the
        // addend's value there.
        let mut wide = vec![T::default(); b.out_len()];
        binary_in_place_left(&b, &mut wide, addend.as_slice::<T>()?, |_, &v| v)?;
        Ok(Some(Tensor::from_vec(out_shape, wide)?))
    }

    /// `out[i] = activation(out[i] + bias[i % channels] [+ addend[i]])`
    /// over a span of whole rows of `bias.len()` channels that starts at
    /// output element `at`, element for element as `BiasAdd`, `AddV2` and
    /// the activation's kernel compute it.
    fn rows<'a, T: FusedElement>(&self, bias: &'a [T], addend: Option<&'a [T]>) -> Rows<'a, T> {
        let bias = tiled(bias);
        // A `float` or `double` sum, then a comparison's selection or a
        // product, is flushed by the processor already.
        let flush = flushing_denormals()
            && !opreg_op_logic::unary::keeps_denormals(self.activation.op())
            && !(T::ARITHMETIC_FLUSHES && self.activation.is_arithmetic());
        macro_rules! with {
            ($f:expr) => {
                if flush {
                    Box::new(move |at: usize, out: &mut [T]| {
                        finish_span(out, &bias, addend, at, |z: T| {
                            let f = $f;
                            f(z.flushed()).flushed()
                        })
                    })
                } else {
                    Box::new(move |at: usize, out: &mut [T]| {
                        finish_span(out, &bias, addend, at, $f)
                    })
                }
            };
        }
        match self.activation {
            Activation::None => Box::new(move |at: usize, out: &mut [T]| {
                finish_span(out, &bias, addend, at, |z: T| z)
            }),
            Activation::Relu => with!(|z: T| z.tf_relu()),
            Activation::Relu6 => with!(|z: T| z.tf_relu6()),
            Activation::Elu => with!(|z: T| z.tf_elu()),
            Activation::LeakyRelu(alpha) => with!(move |z: T| z.tf_leaky_relu(alpha)),
            Activation::Tanh => with!(|z: T| z.tf_tanh()),
            Activation::Sigmoid => with!(|z: T| z.tf_sigmoid()),
        }
    }

    /// Runs `contraction` (into output 0, of the shape `out_dims` gives,
    /// asked only when there is a tensor to add) with the epilogue as what
    /// it runs on each span of rows it finishes, the bias checked first
    /// against the output's `channels` when known.
    fn during<T: FusedElement>(
        &self,
        ctx: &mut OpKernelContext<'_>,
        channels: Option<usize>,
        out_dims: impl FnOnce(&OpKernelContext<'_>) -> Result<[usize; 4], KernelError>,
        contraction: impl FnOnce(
            &mut OpKernelContext<'_>,
            RowEpilogue<'_, T>,
        ) -> Result<usize, KernelError>,
    ) -> Result<(), KernelError> {
        let bias = self.bias(ctx, channels)?;
        let addend = if self.add {
            self.addend::<T>(ctx, &out_dims(ctx)?)?
        } else {
            None
        };
        let addend = addend.as_ref().map(Tensor::as_slice::<T>).transpose()?;
        let rows = self.rows(bias.as_slice::<T>()?, addend);
        contraction(ctx, &*rows).map(drop)
    }

    /// Runs the epilogue over output 0, after the contraction, blocks of
    /// rows in parallel when large.
    fn apply<T: FusedElement>(
        &self,
        ctx: &mut OpKernelContext<'_>,
        channels: usize,
    ) -> Result<(), KernelError> {
        let bias = self.bias(ctx, Some(channels))?;
        let out_dims = ctx.output_mut(0)?.dims().to_vec();
        let addend = self.addend::<T>(ctx, &out_dims)?;
        let addend = addend.as_ref().map(Tensor::as_slice::<T>).transpose()?;
        let rows = self.rows(bias.as_slice::<T>()?, addend);
        let out = ctx.output_mut(0)?.as_mut_slice::<T>()?;
        let min_parallel = crate::split::min_parallel_work(PARALLEL_ELEMENTS);
        if channels == 0 || out.len() < min_parallel {
            rows(0, out);
        } else {
            // Blocks of whole rows, about a quarter of that many elements each.
            let block = channels * (min_parallel / 4).div_ceil(channels);
            out.par_chunks_mut(block)
                .enumerate()
                .for_each(|(i, span)| rows(i * block, span));
        }
        Ok(())
    }
}

/// The epilogue over a span of whole rows.
type Rows<'a, T> = Box<dyn Fn(usize, &mut [T]) + Sync + 'a>;

/// Biases shorter than this are repeated to at least this many elements
/// for [`add_then`]: its inner loop runs over one copy, and over 8
/// channels that was one AVX vector per loop, the loop's own instructions
/// most of its time.
const TILED_BIAS: usize = 64;

/// `bias` repeated (whole copies) to at least [`TILED_BIAS`] elements.
fn tiled<T: Copy>(bias: &[T]) -> Cow<'_, [T]> {
    if bias.is_empty() || bias.len() >= TILED_BIAS {
        Cow::Borrowed(bias)
    } else {
        Cow::Owned(bias.repeat(TILED_BIAS.div_ceil(bias.len())))
    }
}

/// [`add_then`], or [`add_twice_then`] with the span of `addend` that
/// matches `out` (which starts at output element `at`).
#[inline(always)]
fn finish_span<T: BiasElement, F: Fn(T) -> T>(
    out: &mut [T],
    bias: &[T],
    addend: Option<&[T]>,
    at: usize,
    f: F,
) {
    match addend {
        None => add_then(out, bias, f),
        Some(addend) => {
            // The addend has the output's shape (checked before the
            // contraction started), so the span is always there.
            let span = addend.get(at..at + out.len());
            debug_assert!(
                span.is_some(),
                "addend span {at}+{} of {}",
                out.len(),
                addend.len()
            );
            add_twice_then(out, bias, span.unwrap_or_default(), f);
        }
    }
}

/// `out[i] = f(out[i] + bias[i % bias.len()])`, `out` whole rows of the
/// channels and `bias` whole copies of their biases (so what is left after
/// the last whole copy starts at a row's start); compiled for each SIMD
/// level the machine may have and picked at run time (the same arithmetic
/// on each).
#[multiversion(targets = "simd")]
fn add_then<T: BiasElement, F: Fn(T) -> T>(out: &mut [T], bias: &[T], f: F) {
    if bias.is_empty() {
        return;
    }
    let mut copies = out.chunks_exact_mut(bias.len());
    for span in &mut copies {
        for (o, &b) in span.iter_mut().zip(bias) {
            *o = f(o.bias_add(b));
        }
    }
    for (o, &b) in copies.into_remainder().iter_mut().zip(bias) {
        *o = f(o.bias_add(b));
    }
}

/// `out[i] = f((out[i] + bias[i % bias.len()]) + addend[i])`, as
/// [`add_then`] (`addend` as long as `out`).
#[multiversion(targets = "simd")]
fn add_twice_then<T: BiasElement, F: Fn(T) -> T>(out: &mut [T], bias: &[T], addend: &[T], f: F) {
    if bias.is_empty() {
        return;
    }
    for (span, added) in out.chunks_mut(bias.len()).zip(addend.chunks(bias.len())) {
        for ((o, &b), &a) in span.iter_mut().zip(bias).zip(added) {
            *o = f(o.bias_add(b).bias_add(a));
        }
    }
}

/// `_FusedConv2D` on the CPU: `Conv2D`'s kernel, then the epilogue (NHWC,
/// HWIO filters).
#[kernel(op = FusedConv2D, device = CPU, T = [half, float, double])]
#[derive(Debug)]
pub struct FusedConv2DKernel<T> {
    params: Conv2DParams,
    filter: ConstantRhs,
    epilogue: Epilogue,
    _t: PhantomData<fn() -> T>,
}

impl<T: ConvElement + FusedElement> BuildKernel for FusedConv2DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let filter_format: String = ctx.attr("filter_format")?;
        if filter_format != "HWIO" {
            return Err(KernelError::unimplemented(format!(
                "_FusedConv2D on the CPU takes HWIO filters, got {filter_format}"
            )));
        }
        Ok(Self {
            params: Conv2DParams::from_attrs(ctx.attrs())?,
            filter: ConstantRhs::default(),
            epilogue: Epilogue::from_attrs(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: ConvElement + FusedElement> OpKernel for FusedConv2DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        // The epilogue runs on each block of output pixels as the
        // convolution finishes it, while it is in cache.
        let filter = ctx.input(1)?.dims().to_vec();
        let channels = match filter.as_slice() {
            [_, _, _, out_depth] => Some(*out_depth),
            _ => None,
        };
        self.epilogue.during(
            ctx,
            channels,
            |ctx| {
                let geometry = self.params.geometry(ctx.input(0)?.dims(), &filter)?;
                Ok(geometry.out_shape(self.params.format))
            },
            |ctx, rows| conv2d::<T>(&self.params, &self.filter, ctx, Some(rows)),
        )
    }

    fn prepare_constant_input(&self, index: usize, value: &Tensor) {
        offer_filter::<T>(&self.filter, index, value);
    }
}

/// `_FusedDepthwiseConv2dNative` on the CPU: `DepthwiseConv2dNative`'s
/// kernel, then the epilogue.
#[kernel(op = FusedDepthwiseConv2dNative, device = CPU, T = [half, bfloat16, float, double])]
#[derive(Debug)]
pub struct FusedDepthwiseConv2dNativeKernel<T> {
    params: Conv2DParams,
    epilogue: Epilogue,
    _t: PhantomData<fn() -> T>,
}

impl<T: DepthwiseElement + FusedElement> BuildKernel for FusedDepthwiseConv2dNativeKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        // The fused op has no `explicit_paddings` (nor `EXPLICIT` padding):
        // the parameters are read as `DepthwiseConv2dNative`'s without it.
        let mut node = ctx.node_def().clone();
        node.attr
            .entry("explicit_paddings".to_owned())
            .or_insert_with(|| AttrValue::from(ListValue::default()));
        Ok(Self {
            params: Conv2DParams::from_attrs(&NodeAttrs::new(&node, ctx.op_def()))?,
            epilogue: Epilogue::from_attrs(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: DepthwiseElement + FusedElement> OpKernel for FusedDepthwiseConv2dNativeKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        // The epilogue runs on each output row as the convolution writes
        // it, while it is in cache.
        let filter = ctx.input(1)?.dims().to_vec();
        let channels = match filter.as_slice() {
            [_, _, depth, multiplier] => Some(depth * multiplier),
            _ => None,
        };
        self.epilogue.during(
            ctx,
            channels,
            |ctx| {
                let (geometry, _) = self
                    .params
                    .depthwise_geometry(ctx.input(0)?.shape(), ctx.input(1)?.shape())?;
                Ok(geometry.out_shape(self.params.format))
            },
            |ctx, rows| depthwise_conv2d::<T>(&self.params, ctx, Some(rows)),
        )
    }
}

/// `_FusedMatMul` on the CPU: `MatMul`'s kernel, then the epilogue.
#[kernel(op = FusedMatMul, device = CPU, T = [bfloat16, half, float])]
#[derive(Debug)]
pub struct FusedMatMulKernel<T> {
    params: MatMulParams,
    epilogue: Epilogue,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement + FusedElement> BuildKernel for FusedMatMulKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: MatMulParams::from_attrs(ctx)?,
            epilogue: Epilogue::from_attrs(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement + FusedElement> OpKernel for FusedMatMulKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let channels = self.params.multiply::<T>(ctx)?;
        self.epilogue.apply::<T>(ctx, channels)
    }

    fn prepare_constant_input(&self, index: usize, value: &Tensor) {
        self.params.offer_constant::<T>(index, value);
    }
}
