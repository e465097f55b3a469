//! Element-wise unary kernels on the GPU: `Abs`, `Neg`, `Exp`, `Log`,
//! `Floor`, `Rsqrt`, `Sqrt`, `Square`, `Sigmoid`, `Tanh`. The input is
//! updated in place when it can be forwarded to the output.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::{Abs, Exp, Floor, Log, Neg, Rsqrt, Sigmoid, Sqrt, Square, Tanh};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::TensorElement;

use super::io::{empty_output, flat_launch, forwarded_address, input_address, new_output};
use super::source::{UnaryFn, unary_source, vector_width};
use opreg_cuda::{GpuDevice, gpu_error};

/// A unary function on one dtype, compiled for the GPU.
pub struct UnaryKernel {
    dev: Arc<GpuDevice>,
    func: CudaFunction,
    op: UnaryFn,
    dtype: DataType,
}

impl std::fmt::Debug for UnaryKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnaryKernel")
            .field("op", &self.op)
            .field("dtype", &self.dtype)
            .finish()
    }
}

impl UnaryKernel {
    /// Compiles (or finds cached) `op` on `dtype`.
    pub fn new(op: UnaryFn, dtype: DataType) -> Result<Self, KernelError> {
        let source = unary_source(op, dtype)?;
        let dev = GpuDevice::get()?;
        let func = dev.function(&source, "unary")?;
        Ok(Self {
            dev,
            func,
            op,
            dtype,
        })
    }

    fn launch_error(&self, e: impl std::fmt::Display) -> KernelError {
        gpu_error(&format!("launching {}", self.op.op_name()), e)
    }

    /// `y = op(x)`, in place when input 0 can be forwarded.
    pub fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (n, shape) = {
            let x = ctx.input(0)?;
            input_address(&self.dev, x, 0, self.dtype)?;
            (x.num_elements(), x.shape().clone())
        };
        if n == 0 {
            let out = empty_output(&self.dev, ctx, self.dtype, shape)?;
            return ctx.set_output(0, out);
        }
        let len = n as i64;
        let cfg = flat_launch(n, vector_width(&[self.dtype]));
        if ctx.forward_input(0, 0)? {
            let y = forwarded_address(ctx, 0)?;
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch.arg(&y).arg(&y).arg(&len);
            // SAFETY: `unary(const T* x, T* y, index_t n)` takes these
            // arguments; the forwarded buffer holds n elements of T, and
            // each element is read before it is written, by one thread.
            unsafe { launch.launch(cfg) }.map_err(|e| self.launch_error(e))?;
            return Ok(());
        }
        let x = input_address(&self.dev, ctx.input(0)?, 0, self.dtype)?;
        // SAFETY: the kernel launched below writes all n elements.
        let (out, y) = unsafe { new_output(&self.dev, self.dtype, n)? };
        let mut launch = self.dev.stream().launch_builder(&self.func);
        launch.arg(&x).arg(&y).arg(&len);
        // SAFETY: `unary(const T* x, T* y, index_t n)` takes these
        // arguments; both buffers hold n elements of T.
        unsafe { launch.launch(cfg) }.map_err(|e| self.launch_error(e))?;
        let out = self.dev.tensor(self.dtype, shape, out)?;
        ctx.set_output(0, out)
    }
}

macro_rules! unary_kernels {
    ($($(#[$doc:meta])* $name:ident: $op:ident => $f:ident, [$($t:ident),*];)*) => {$(
        $(#[$doc])*
        #[kernel(op = $op, device = GPU, T = [$($t),*])]
        #[derive(Debug)]
        pub struct $name<T> {
            inner: UnaryKernel,
            _t: PhantomData<fn() -> T>,
        }

        impl<T: TensorElement> BuildKernel for $name<T> {
            fn build(_ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
                Ok(Self {
                    inner: UnaryKernel::new(UnaryFn::$f, T::DTYPE)?,
                    _t: PhantomData,
                })
            }
        }

        impl<T: TensorElement> OpKernel for $name<T> {
            fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
                self.inner.compute(ctx)
            }
        }
    )*};
}

unary_kernels! {
    /// `Abs` on the GPU: `|x|` (wrapping for integers: `abs(MIN) = MIN`).
    AbsGpu: Abs => Abs, [half, bfloat16, float, double, int32, int64];
    /// `Neg` on the GPU: `-x` (wrapping for integers).
    NegGpu: Neg => Neg, [half, bfloat16, float, double, int32, int64];
    /// `Exp` on the GPU.
    ExpGpu: Exp => Exp, [half, bfloat16, float, double];
    /// `Log` on the GPU.
    LogGpu: Log => Log, [half, bfloat16, float, double];
    /// `Floor` on the GPU.
    FloorGpu: Floor => Floor, [half, bfloat16, float, double];
    /// `Rsqrt` on the GPU.
    RsqrtGpu: Rsqrt => Rsqrt, [half, bfloat16, float, double];
    /// `Sqrt` on the GPU.
    SqrtGpu: Sqrt => Sqrt, [half, bfloat16, float, double];
    /// `Square` on the GPU (wrapping for integers).
    SquareGpu: Square => Square, [half, bfloat16, float, double, int32, int64];
    /// `Sigmoid` on the GPU: `e / (1 + e)` with `e = exp(x)`, 1 where `e`
    /// overflows.
    SigmoidGpu: Sigmoid => Sigmoid, [half, bfloat16, float, double];
    /// `Tanh` on the GPU.
    TanhGpu: Tanh => Tanh, [half, bfloat16, float, double];
}
