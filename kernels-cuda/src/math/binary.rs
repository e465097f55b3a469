//! Element-wise binary kernels on the GPU, with TF's broadcasting:
//! arithmetic (`AddV2`, `Sub`, `Mul`, `RealDiv`, `FloorDiv`, `FloorMod`,
//! `Maximum`, `Minimum`, `Pow`, `SquaredDifference`), comparisons with a
//! `bool` output (`Equal`, `Greater`) and `LogicalAnd`.
//!
//! The output shape and the merged broadcast problem are planned on the
//! host ([`BroadcastPlan`]); the kernel runs a flat loop when both inputs
//! have the output's element count, a flat loop with one value repeated
//! when an input is a single element, and an indexed loop otherwise. An
//! input with the output's shape and dtype is updated in place when it can
//! be forwarded. Integer division by zero and negative integer powers give
//! the defined values documented in [`source`](super::source) (the CPU
//! kernels reject them; a GPU kernel cannot without reading the divisor
//! back).

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::{
    AddV2, Equal, FloorDiv, FloorMod, Greater, LogicalAnd, Maximum, Minimum, Mul, Pow, RealDiv,
    SquaredDifference, Sub,
};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{TensorElement, TensorShape};

use super::broadcast::{BroadcastError, BroadcastPlan, GpuBroadcast};
use super::io::{empty_output, flat_launch, forwarded_address, input_address, new_output};
use super::source::{BinaryFn, binary_entry, binary_source, vector_width};
use opreg_cuda::{GpuDevice, ShapeArg, gpu_error, grid_for};

/// Which loop a call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Path {
    /// Both inputs map one-to-one onto the output.
    Same,
    /// `x` is one element.
    ScalarX,
    /// `y` is one element.
    ScalarY,
    /// General broadcasting: the merged dims and each input's strides.
    Broadcast(Box<(ShapeArg, [ShapeArg; 2])>),
}

/// A binary function on one dtype, compiled for the GPU.
pub struct BinaryKernel {
    dev: Arc<GpuDevice>,
    op: BinaryFn,
    dtype: DataType,
    out_dtype: DataType,
    same: CudaFunction,
    scalar_x: CudaFunction,
    scalar_y: CudaFunction,
    bcast32: CudaFunction,
    bcast64: CudaFunction,
    /// `Equal`'s `incompatible_shape_error = false`: incompatible shapes
    /// give a scalar `false` instead of an error.
    incompatible_is_false: bool,
}

impl std::fmt::Debug for BinaryKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinaryKernel")
            .field("op", &self.op)
            .field("dtype", &self.dtype)
            .field("incompatible_is_false", &self.incompatible_is_false)
            .finish()
    }
}

impl BinaryKernel {
    /// Compiles (or finds cached) `op` on `dtype`.
    pub fn new(op: BinaryFn, dtype: DataType) -> Result<Self, KernelError> {
        let source = binary_source(op, dtype)?;
        let dev = GpuDevice::get()?;
        let function = |entry: &str| dev.function(&source, entry);
        Ok(Self {
            op,
            dtype,
            out_dtype: if op.bool_output() {
                DataType::DtBool
            } else {
                dtype
            },
            same: function(binary_entry::SAME)?,
            scalar_x: function(binary_entry::SCALAR_X)?,
            scalar_y: function(binary_entry::SCALAR_Y)?,
            bcast32: function(binary_entry::BCAST32)?,
            bcast64: function(binary_entry::BCAST64)?,
            incompatible_is_false: false,
            dev,
        })
    }

    /// Makes incompatible shapes give a scalar `false` (`Equal` with
    /// `incompatible_shape_error = false`, as TF's `BinaryOpShared`).
    pub fn with_incompatible_is_false(mut self, yes: bool) -> Self {
        self.incompatible_is_false = yes;
        self
    }

    fn launch_error(&self, e: impl std::fmt::Display) -> KernelError {
        gpu_error(&format!("launching {}", self.op.op_name()), e)
    }

    /// `z = op(x, y)` with broadcasting.
    pub fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (plan, path) = {
            let (x, y) = (ctx.input(0)?, ctx.input(1)?);
            input_address(&self.dev, x, 0, self.dtype)?;
            input_address(&self.dev, y, 1, self.dtype)?;
            let plan = match BroadcastPlan::new([x.dims(), y.dims()]) {
                Ok(plan) => plan,
                Err(BroadcastError::Incompatible) if self.incompatible_is_false => {
                    let out = self.dev.alloc_zeroed(1)?;
                    let out = self
                        .dev
                        .tensor(DataType::DtBool, TensorShape::scalar(), out)?;
                    return ctx.set_output(0, out);
                }
                // TF's message ("Incompatible shapes: ...") or the overflow.
                Err(_) => BroadcastPlan::binary(x.shape(), y.shape())?,
            };
            let path = if plan.all_identity() {
                Path::Same
            } else if plan.is_scalar(0) {
                Path::ScalarX
            } else if plan.is_scalar(1) {
                Path::ScalarY
            } else {
                let what = format!("{} and {}", x.shape(), y.shape());
                Path::Broadcast(Box::new(plan.shape_args(&what)?))
            };
            (plan, path)
        };
        let n = plan.out_len();
        let shape = plan.out_shape().clone();
        if n == 0 {
            let out = empty_output(&self.dev, ctx, self.out_dtype, shape)?;
            return ctx.set_output(0, out);
        }

        // Forward an input with the output's shape and dtype, else allocate.
        let mut new = None;
        let (x, y, z) = if plan.is_identity(0) && ctx.forward_input_with_shape(0, 0, &shape)? {
            let y = input_address(&self.dev, ctx.input(1)?, 1, self.dtype)?;
            let z = forwarded_address(ctx, 0)?;
            (z, y, z)
        } else if plan.is_identity(1) && ctx.forward_input_with_shape(1, 0, &shape)? {
            let x = input_address(&self.dev, ctx.input(0)?, 0, self.dtype)?;
            let z = forwarded_address(ctx, 0)?;
            (x, z, z)
        } else {
            let x = input_address(&self.dev, ctx.input(0)?, 0, self.dtype)?;
            let y = input_address(&self.dev, ctx.input(1)?, 1, self.dtype)?;
            // SAFETY: one of the kernels launched below writes all n elements.
            let (out, z) = unsafe { new_output(&self.dev, self.out_dtype, n)? };
            new = Some(out);
            (x, y, z)
        };

        let len = n as i64;
        let stream = self.dev.stream();
        match &path {
            Path::Same | Path::ScalarX | Path::ScalarY => {
                let func = match path {
                    Path::Same => &self.same,
                    Path::ScalarX => &self.scalar_x,
                    _ => &self.scalar_y,
                };
                let cfg = flat_launch(n, vector_width(&[self.dtype, self.out_dtype]));
                let mut launch = stream.launch_builder(func);
                launch.arg(&x).arg(&y).arg(&z).arg(&len);
                // SAFETY: the flat entries take `(const T* x, const T* y, O* z,
                // index_t n)`; x and y hold n elements of T (or one, for the
                // scalar operand), z holds n of O; z may be x or y (then of
                // the output's shape), whose elements are each read before
                // being written, by the same thread.
                unsafe { launch.launch(cfg) }.map_err(|e| self.launch_error(e))?;
            }
            Path::Broadcast(args) => {
                let (dims, [sx, sy]) = **args;
                let func = if n <= i32::MAX as usize {
                    &self.bcast32
                } else {
                    &self.bcast64
                };
                let mut launch = stream.launch_builder(func);
                launch
                    .arg(&x)
                    .arg(&y)
                    .arg(&z)
                    .arg(&len)
                    .arg(&dims)
                    .arg(&sx)
                    .arg(&sy);
                // SAFETY: the broadcast entries take `(const T* x, const T* y,
                // O* z, index_t n, shape_arg dims, shape_arg sx, shape_arg
                // sy)`; the strides address only elements of x and y (the
                // plan's in_len of each) over dims whose product is n; z
                // holds n elements and may be an input of the output's shape,
                // whose element i only output element i reads.
                unsafe { launch.launch(grid_for(n)) }.map_err(|e| self.launch_error(e))?;
            }
        }
        if let Some(out) = new {
            let out = self.dev.tensor(self.out_dtype, shape, out)?;
            ctx.set_output(0, out)?;
        }
        Ok(())
    }
}

macro_rules! binary_kernels {
    ($($(#[$doc:meta])* $name:ident: $op:ident => $f:ident, [$($t:ident),*];)*) => {$(
        $(#[$doc])*
        #[kernel(op = $op, device = GPU, T = [$($t),*])]
        #[derive(Debug)]
        pub struct $name<T> {
            inner: BinaryKernel,
            _t: PhantomData<fn() -> T>,
        }

        impl<T: TensorElement> BuildKernel for $name<T> {
            fn build(_ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
                Ok(Self {
                    inner: BinaryKernel::new(BinaryFn::$f, T::DTYPE)?,
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

binary_kernels! {
    /// `AddV2` on the GPU: `x + y` (wrapping for integers).
    AddV2Gpu: AddV2 => AddV2, [half, bfloat16, float, double, int32, int64];
    /// `Sub` on the GPU: `x - y` (wrapping for integers).
    SubGpu: Sub => Sub, [half, bfloat16, float, double, int32, int64];
    /// `Mul` on the GPU: `x * y` (wrapping for integers).
    MulGpu: Mul => Mul, [half, bfloat16, float, double, int32, int64];
    /// `RealDiv` on the GPU: `x / y` (IEEE).
    RealDivGpu: RealDiv => RealDiv, [half, bfloat16, float, double];
    /// `FloorDiv` on the GPU: `floor(x / y)`; an integer zero divisor gives
    /// -1.
    FloorDivGpu: FloorDiv => FloorDiv, [half, bfloat16, float, double, int32, int64];
    /// `FloorMod` on the GPU: the remainder with the sign of `y`; an integer
    /// zero divisor gives `x`.
    FloorModGpu: FloorMod => FloorMod, [half, bfloat16, float, double, int32, int64];
    /// `Maximum` on the GPU (NaN propagates).
    MaximumGpu: Maximum => Maximum, [half, bfloat16, float, double, int32, int64];
    /// `Minimum` on the GPU (NaN propagates).
    MinimumGpu: Minimum => Minimum, [half, bfloat16, float, double, int32, int64];
    /// `Pow` on the GPU; an integer negative exponent gives `trunc(1 / x^-y)`.
    PowGpu: Pow => Pow, [half, bfloat16, float, double, int32, int64];
    /// `SquaredDifference` on the GPU: `(x - y)^2`.
    SquaredDifferenceGpu: SquaredDifference => SquaredDifference,
        [half, bfloat16, float, double, int32, int64];
    /// `Greater` on the GPU: `x > y` (false when either is NaN).
    GreaterGpu: Greater => Greater,
        [half, bfloat16, float, double, int8, int16, int32, int64, uint8];
}

/// `Equal` on the GPU: `x == y` (IEEE, so `NaN != NaN`), with its
/// `incompatible_shape_error` attr.
#[kernel(
    op = Equal,
    device = GPU,
    T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool]
)]
#[derive(Debug)]
pub struct EqualGpu<T> {
    inner: BinaryKernel,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for EqualGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let incompatible_shape_error: bool = ctx.attr("incompatible_shape_error")?;
        Ok(Self {
            inner: BinaryKernel::new(BinaryFn::Equal, T::DTYPE)?
                .with_incompatible_is_false(!incompatible_shape_error),
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for EqualGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.inner.compute(ctx)
    }
}

/// `LogicalAnd` on the GPU: `x && y`.
#[kernel(op = LogicalAnd, device = GPU)]
#[derive(Debug)]
pub struct LogicalAndGpu {
    inner: BinaryKernel,
}

impl BuildKernel for LogicalAndGpu {
    fn build(_ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            inner: BinaryKernel::new(BinaryFn::LogicalAnd, DataType::DtBool)?,
        })
    }
}

impl OpKernel for LogicalAndGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.inner.compute(ctx)
    }
}
