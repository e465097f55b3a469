//! TensorFlow's fused contractions, `_FusedConv2D`,
//! `_FusedDepthwiseConv2dNative` and `_FusedMatMul`, for `fused_ops`
//! `[BiasAdd]` and `[BiasAdd, A]` with `A` one of `Relu`, `Relu6`, `Elu`,
//! `LeakyRelu`, `Tanh` and `Sigmoid` (what the session's `fusion` rewrite
//! makes of a contraction, its `BiasAdd` and its activation). The
//! contraction is its own op's kernel; the bias and the activation then
//! run in one pass over the output, in place: one output instead of three,
//! and one pass over it instead of two. Each element is exactly what
//! `BiasAdd` and the activation's own kernel compute (denormals flushed as
//! theirs are).

use std::marker::PhantomData;

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

use super::bias_add::BiasElement;
use super::conv2d::conv2d;
use super::depthwise::depthwise_conv2d;
use super::gemm::{GemmElement, matmul};
use super::softmax::WideFloat;
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

/// What runs after the contraction: its bias (input 2) and activation,
/// read from `fused_ops`, `num_args` and `leakyrelu_alpha` when the kernel
/// is built.
#[derive(Debug, Clone, Copy)]
struct Epilogue {
    activation: Activation,
}

impl Epilogue {
    fn from_attrs(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let fused: Vec<String> = ctx.attr("fused_ops")?;
        let names: Vec<&str> = fused.iter().map(String::as_str).collect();
        let op = ctx.op();
        let activation = match names.as_slice() {
            [] => {
                return Err(KernelError::invalid_argument(format!(
                    "Fused {op} must have at least one fused op."
                )));
            }
            ["BiasAdd"] => Activation::None,
            ["BiasAdd", "Relu"] => Activation::Relu,
            ["BiasAdd", "Relu6"] => Activation::Relu6,
            ["BiasAdd", "Elu"] => Activation::Elu,
            ["BiasAdd", "LeakyRelu"] => Activation::LeakyRelu(ctx.attr("leakyrelu_alpha")?),
            ["BiasAdd", "Tanh"] => Activation::Tanh,
            ["BiasAdd", "Sigmoid"] => Activation::Sigmoid,
            _ => {
                return Err(KernelError::unimplemented(format!(
                    "Unsupported fusion: [{}] (the CPU kernel of {op} fuses BiasAdd, then optionally one of Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid)",
                    names.join(",")
                )));
            }
        };
        let num_args: i64 = ctx.attr("num_args")?;
        if num_args != 1 {
            return Err(KernelError::invalid_argument(format!(
                "Fused {op} with BiasAdd must have one extra argument: bias (num_args is {num_args})."
            )));
        }
        if ctx.has_attr("num_host_args") && ctx.attr::<i64>("num_host_args")? != 0 {
            return Err(KernelError::unimplemented(format!(
                "{op} takes no host arguments on the CPU"
            )));
        }
        Ok(Self { activation })
    }

    /// Adds the bias (input 2, one value per channel, the output's last
    /// dimension) to output 0 and applies the activation, in place.
    fn apply<T: FusedElement>(
        &self,
        ctx: &mut OpKernelContext<'_>,
        channels: usize,
    ) -> Result<(), KernelError> {
        let bias = ctx.input(2)?.clone();
        registry_core::kernel_ensure!(
            bias.shape().rank() == 1,
            "Biases must be 1D: {}",
            bias.shape()
        );
        registry_core::kernel_ensure!(
            bias.dims()[0] == channels,
            "Must provide as many biases as the output has channels: {} vs. {channels}",
            bias.shape()
        );
        let bias = bias.as_slice::<T>()?;
        let out = ctx.output_mut(0)?.as_mut_slice::<T>()?;
        let flush =
            flushing_denormals() && !opreg_op_logic::unary::keeps_denormals(self.activation.op());
        macro_rules! run {
            ($f:expr) => {
                if flush {
                    epilogue(out, bias, |z: T| {
                        let f = $f;
                        f(z.flushed()).flushed()
                    })
                } else {
                    epilogue(out, bias, $f)
                }
            };
        }
        match self.activation {
            Activation::None => epilogue(out, bias, |z: T| z),
            Activation::Relu => run!(|z: T| z.tf_relu()),
            Activation::Relu6 => run!(|z: T| z.tf_relu6()),
            Activation::Elu => run!(|z: T| z.tf_elu()),
            Activation::LeakyRelu(alpha) => run!(|z: T| z.tf_leaky_relu(alpha)),
            Activation::Tanh => run!(|z: T| z.tf_tanh()),
            Activation::Sigmoid => run!(|z: T| z.tf_sigmoid()),
        }
        Ok(())
    }
}

/// `out[i] = f(out[i] + bias[i % channels])`, rows in parallel when large.
fn epilogue<T: BiasElement + Send + Sync, F: Fn(T) -> T + Sync>(out: &mut [T], bias: &[T], f: F) {
    let channels = bias.len();
    if channels == 0 || out.is_empty() {
        return;
    }
    let rows = |block: &mut [T]| {
        for row in block.chunks_exact_mut(channels) {
            for (o, &b) in row.iter_mut().zip(bias) {
                *o = f(o.bias_add(b));
            }
        }
    };
    if out.len() < PARALLEL_ELEMENTS {
        rows(out);
    } else {
        // Blocks of whole rows, about PARALLEL_ELEMENTS / 4 elements each.
        let block = channels * (PARALLEL_ELEMENTS / 4).div_ceil(channels);
        out.par_chunks_mut(block).for_each(rows);
    }
}

/// `_FusedConv2D` on the CPU: `Conv2D`'s kernel, then the epilogue (NHWC,
/// HWIO filters).
#[kernel(op = FusedConv2D, device = CPU, T = [half, float, double])]
#[derive(Debug)]
pub struct FusedConv2DKernel<T> {
    params: Conv2DParams,
    epilogue: Epilogue,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement + FusedElement> BuildKernel for FusedConv2DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let filter_format: String = ctx.attr("filter_format")?;
        if filter_format != "HWIO" {
            return Err(KernelError::unimplemented(format!(
                "_FusedConv2D on the CPU takes HWIO filters, got {filter_format}"
            )));
        }
        Ok(Self {
            params: Conv2DParams::from_attrs(ctx.attrs())?,
            epilogue: Epilogue::from_attrs(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement + FusedElement> OpKernel for FusedConv2DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let channels = conv2d::<T>(&self.params, ctx)?;
        self.epilogue.apply::<T>(ctx, channels)
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

impl<T: WideFloat + FusedElement> BuildKernel for FusedDepthwiseConv2dNativeKernel<T> {
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

impl<T: WideFloat + FusedElement> OpKernel for FusedDepthwiseConv2dNativeKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let channels = depthwise_conv2d::<T>(&self.params, ctx)?;
        self.epilogue.apply::<T>(ctx, channels)
    }
}

/// `_FusedMatMul` on the CPU: `MatMul`'s kernel, then the epilogue.
#[kernel(op = FusedMatMul, device = CPU, T = [bfloat16, half, float])]
#[derive(Debug)]
pub struct FusedMatMulKernel<T> {
    transpose_a: bool,
    transpose_b: bool,
    epilogue: Epilogue,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement + FusedElement> BuildKernel for FusedMatMulKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            transpose_a: ctx.attr("transpose_a")?,
            transpose_b: ctx.attr("transpose_b")?,
            epilogue: Epilogue::from_attrs(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement + FusedElement> OpKernel for FusedMatMulKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let channels = matmul::<T>(ctx, self.transpose_a, self.transpose_b)?;
        self.epilogue.apply::<T>(ctx, channels)
    }
}
