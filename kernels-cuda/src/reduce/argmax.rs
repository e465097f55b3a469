//! `ArgMax` on the GPU: the index of the largest value along one axis (a
//! host scalar), as int32 or int64. Ties give the first index; NaN never
//! wins; see the source's doc for the exact rule (Eigen's, as the CPU
//! kernel). `dimension` is checked as the CPU kernel does ([`ArgAxis`]).

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::axes::ArgAxis;
use opreg_standard_ops::ArgMax;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{TensorElement, element_size};

use super::launch::{Pass, blocks_config, idx, strategy};
use super::source::{arg_max_source, entry};
use opreg_cuda::{GpuDevice, gpu_bytes, gpu_error, grid_for};

/// `ArgMax` for TF's GPU types, indices as int32 or int64; `dimension` on
/// the host.
#[kernel(
    op = ArgMax,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64, bool],
    output_type = [int32, int64],
    host_memory = ["dimension"]
)]
pub struct ArgMaxGpu<T> {
    dev: Arc<GpuDevice>,
    out_type: DataType,
    serial: CudaFunction,
    rows: CudaFunction,
    cols: CudaFunction,
    _t: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ArgMaxGpu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgMaxGpu")
            .field("out_type", &self.out_type)
            .finish_non_exhaustive()
    }
}

impl<T: TensorElement> BuildKernel for ArgMaxGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let out_type: DataType = ctx.attr("output_type")?;
        let source = arg_max_source(T::DTYPE, out_type).ok_or_else(|| {
            KernelError::unimplemented(format!(
                "ArgMax on GPU does not support dtype {} with output_type {}",
                T::DTYPE.type_name(),
                out_type.type_name()
            ))
        })?;
        let dev = GpuDevice::get()?;
        Ok(Self {
            serial: dev.function(&source, entry::SERIAL)?,
            rows: dev.function(&source, entry::ROWS)?,
            cols: dev.function(&source, entry::COLS)?,
            dev,
            out_type,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for ArgMaxGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let ArgAxis {
            outer,
            n,
            inner,
            out_shape: shape,
        } = ArgAxis::new(input.shape(), ctx.input(1)?)?;
        let out_type = self.out_type;
        let out_size = element_size(out_type)
            .ok_or_else(|| KernelError::internal("ArgMax: output element size"))?;
        let n_out = shape.num_elements();
        if n_out == 0 {
            let empty = self.dev.alloc_zeroed(0)?;
            return ctx.set_output(0, self.dev.tensor(out_type, shape, empty)?);
        }
        let x = gpu_bytes(&input, 0)?;
        if x.len() != outer * n * inner * std::mem::size_of::<T>() {
            return Err(KernelError::internal("ArgMax: input buffer size"));
        }
        // SAFETY: the launch below writes every one of the `n_out` indices.
        let mut y = unsafe { self.dev.alloc_uninit(n_out * out_size)? };
        let (o, r, i) = (idx(outer), idx(n), idx(inner));
        match strategy(outer, n, inner).pass {
            Pass::Serial => {
                let mut l = self.dev.stream().launch_builder(&self.serial);
                l.arg(x).arg(&mut y).arg(&o).arg(&r).arg(&i);
                // SAFETY: `serial(const T*, I*, index_t x3)` matches; `x`
                // holds outer·n·inner elements, `y` outer·inner indices.
                unsafe { l.launch(grid_for(n_out)) }
                    .map_err(|e| gpu_error("launching ArgMax serial", e))?;
            }
            Pass::Rows => {
                let mut l = self.dev.stream().launch_builder(&self.rows);
                l.arg(x).arg(&mut y).arg(&o).arg(&r);
                // SAFETY: `rows(const T*, I*, index_t, index_t)` matches;
                // inner is 1, blocks are 256 threads.
                unsafe { l.launch(blocks_config(outer)) }
                    .map_err(|e| gpu_error("launching ArgMax rows", e))?;
            }
            Pass::Cols => {
                let mut l = self.dev.stream().launch_builder(&self.cols);
                l.arg(x).arg(&mut y).arg(&o).arg(&r).arg(&i);
                // SAFETY: `cols(const T*, I*, index_t x3)` matches; blocks
                // are 256 threads (32 columns by 8 lanes).
                unsafe { l.launch(blocks_config(outer * inner.div_ceil(32))) }
                    .map_err(|e| gpu_error("launching ArgMax cols", e))?;
            }
        }
        ctx.set_output(0, self.dev.tensor(out_type, shape, y)?)
    }
}
