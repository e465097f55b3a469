//! Element-wise binary kernels on the GPU, with TF's broadcasting:
//! arithmetic (`AddV2`, `Sub`, `Mul`, `RealDiv`, `FloorDiv`, `FloorMod`,
//! `Maximum`, `Minimum`, `Pow`, `SquaredDifference`), comparisons with a
//! `bool` output (`Equal`, `NotEqual`, `Greater`, `GreaterEqual`, `Less`,
//! `LessEqual`) and `LogicalAnd`, `LogicalOr`.
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

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::{
    AddV2, Equal, FloorDiv, FloorMod, Greater, GreaterEqual, Less, LessEqual, LogicalAnd,
    LogicalOr, Maximum, Minimum, Mul, NotEqual, Pow, RealDiv, SquaredDifference, Sub,
};
use registry_core::device::Device;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorShape};

use super::broadcast::{BroadcastError, BroadcastPlan, GpuBroadcast, by_index_width};
use super::io::flat_launch;
use super::source::{BinaryFn, binary_entry, binary_source, vector_width};
use crate::sources_of_type;
use opreg_cuda::{GpuContext, GpuTensors, ShapeArg, gpu_error, grid_for};

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

/// The binary function of op `op` (`None` for ops that are not binary).
fn binary_fn(op: &str) -> Option<BinaryFn> {
    BinaryFn::ALL.into_iter().find(|f| f.op_name() == op)
}

/// The sources a registration of a binary kernel compiles: its op on its
/// type (`bool` for `LogicalAnd` and `LogicalOr`).
pub fn binary_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    let f = binary_fn(reg.op)
        .ok_or_else(|| KernelError::internal(format!("{} is not a binary op", reg.op)))?;
    if f.logical() {
        return Ok(vec![binary_source(f, DataType::DtBool)?]);
    }
    sources_of_type(reg, "T", |dtype| binary_source(f, dtype))
}

/// Every binary op of the standard set on the GPU (the op's function on the
/// node's `T`), with TF's broadcasting. Integer division by zero and
/// negative integer powers give the defined values of
/// [`source`](super::source); `Equal` and `NotEqual` have their
/// `incompatible_shape_error` (incompatible shapes give a scalar `false`,
/// `true` for `NotEqual`, when it is false).
///
/// The types are TF 2.21's GPU kernels' (its `int32` comparisons keep
/// their operands in host memory; here they run on the GPU like the
/// other types).
#[kernel(op = AddV2, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = Sub, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = Mul, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = RealDiv, device = GPU, T = [half, bfloat16, float, double], sources = binary_sources)]
#[kernel(op = FloorDiv, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = FloorMod, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = Maximum, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = Minimum, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = Pow, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = SquaredDifference, device = GPU, T = [half, bfloat16, float, double, int32, int64], sources = binary_sources)]
#[kernel(op = Greater, device = GPU, T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64], sources = binary_sources)]
#[kernel(op = GreaterEqual, device = GPU, T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64], sources = binary_sources)]
#[kernel(op = Less, device = GPU, T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64], sources = binary_sources)]
#[kernel(op = LessEqual, device = GPU, T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64], sources = binary_sources)]
#[kernel(op = Equal, device = GPU, T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool], sources = binary_sources)]
#[kernel(op = NotEqual, device = GPU, T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool], sources = binary_sources)]
#[kernel(op = LogicalAnd, device = GPU, sources = binary_sources)]
#[kernel(op = LogicalOr, device = GPU, sources = binary_sources)]
pub struct BinaryGpu {
    op: BinaryFn,
    dtype: DataType,
    out_dtype: DataType,
    same: CudaFunction,
    scalar_x: CudaFunction,
    scalar_y: CudaFunction,
    bcast32: CudaFunction,
    bcast64: CudaFunction,
    /// `Equal`'s and `NotEqual`'s `incompatible_shape_error = false`:
    /// incompatible shapes give a scalar (`false` for `Equal`, `true` for
    /// `NotEqual`) instead of an error.
    incompatible_scalar: Option<bool>,
}

impl std::fmt::Debug for BinaryGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinaryGpu")
            .field("op", &self.op)
            .field("dtype", &self.dtype)
            .field("incompatible_scalar", &self.incompatible_scalar)
            .finish()
    }
}

impl BuildKernel for BinaryGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let op = binary_fn(ctx.op())
            .ok_or_else(|| KernelError::internal(format!("{} is not a binary op", ctx.op())))?;
        let dtype = if op.logical() {
            DataType::DtBool
        } else {
            ctx.attr("T")?
        };
        let incompatible_scalar = match op {
            BinaryFn::Equal | BinaryFn::NotEqual
                if !ctx.attr::<bool>("incompatible_shape_error")? =>
            {
                Some(op == BinaryFn::NotEqual)
            }
            _ => None,
        };
        let source = binary_source(op, dtype)?;
        let gpu = ctx.gpu()?;
        let function = |entry: &str| gpu.function(&source, entry);
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
            incompatible_scalar,
        })
    }
}

impl BinaryGpu {
    fn launch_error(&self, e: impl std::fmt::Display) -> KernelError {
        gpu_error(&format!("launching {}", self.op.op_name()), e)
    }
}

impl OpKernel for BinaryGpu {
    /// `z = op(x, y)` with broadcasting; an input with the output's shape
    /// and dtype is updated in place when it can be forwarded.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        ctx.gpu_input(0, self.dtype)?;
        ctx.gpu_input(1, self.dtype)?;
        let (plan, path) = {
            let (x, y) = (ctx.input(0)?, ctx.input(1)?);
            let plan = match BroadcastPlan::new([x.dims(), y.dims()]) {
                Ok(plan) => plan,
                Err(BroadcastError::Incompatible) if self.incompatible_scalar.is_some() => {
                    let gpu = ctx.gpu()?;
                    let out = if self.incompatible_scalar == Some(true) {
                        gpu.upload(&Tensor::scalar(true))?
                    } else {
                        gpu.zeros(DataType::DtBool, TensorShape::scalar())?
                    };
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
        let candidates: Vec<usize> = (0..2).filter(|&i| plan.is_identity(i)).collect();
        let forwarded =
            ctx.forward_input_or_allocate_output(&candidates, 0, plan.out_shape().clone())?;
        if n == 0 {
            return Ok(());
        }
        let z = ctx.gpu_output(0)?;
        let x = ctx.gpu_operand(0, self.dtype, forwarded, z)?;
        let y = ctx.gpu_operand(1, self.dtype, forwarded, z)?;
        let len = n as i64;
        let stream = ctx.gpu()?.stream();
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
                let func = by_index_width(n, &self.bcast32, &self.bcast64);
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
        Ok(())
    }
}
