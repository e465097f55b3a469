//! `ArgMax` on the GPU: the index of the largest value along one axis (a
//! host scalar), as int32 or int64. Ties give the first index; NaN never
//! wins; see the source's doc for the exact rule (Eigen's, as the CPU
//! kernel). `dimension` is checked as the CPU kernel does ([`ArgAxis`]).

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::axes::ArgAxis;
use opreg_standard_ops::ArgMax;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext, constraint_types,
};
use registry_core::proto::{DataType, DataTypeExt};

use super::launch::{Pass, blocks_config, idx, strategy};
use super::source::{arg_max_source, entry};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};

/// The source of `ArgMax` of `dtype` into `out_type` indices, or why there
/// is none.
fn source_of(dtype: DataType, out_type: DataType) -> Result<KernelSource, KernelError> {
    arg_max_source(dtype, out_type).ok_or_else(|| {
        KernelError::unimplemented(format!(
            "ArgMax on GPU does not support dtype {} with output_type {}",
            dtype.type_name(),
            out_type.type_name()
        ))
    })
}

/// The sources a registration of [`ArgMaxGpu`] compiles: its `T` into its
/// `output_type`.
pub fn arg_max_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    let out_types = constraint_types(reg, "output_type").unwrap_or(&[]);
    let mut sources = Vec::new();
    for &dtype in constraint_types(reg, "T").unwrap_or(&[]) {
        for &out_type in out_types {
            sources.push(source_of(dtype, out_type)?);
        }
    }
    Ok(sources)
}

/// `ArgMax` for TF's GPU types, indices as int32 or int64; `dimension` on
/// the host.
#[kernel(
    op = ArgMax,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64, bool],
    output_type = [int32, int64],
    host_memory = ["dimension"],
    sources = arg_max_sources
)]
pub struct ArgMaxGpu {
    dtype: DataType,
    serial: CudaFunction,
    rows: CudaFunction,
    cols: CudaFunction,
}

impl std::fmt::Debug for ArgMaxGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgMaxGpu")
            .field("dtype", &self.dtype)
            .finish_non_exhaustive()
    }
}

impl BuildKernel for ArgMaxGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        let source = source_of(dtype, ctx.attr("output_type")?)?;
        let gpu = ctx.gpu()?;
        Ok(Self {
            dtype,
            serial: gpu.function(&source, entry::SERIAL)?,
            rows: gpu.function(&source, entry::ROWS)?,
            cols: gpu.function(&source, entry::COLS)?,
        })
    }
}

impl OpKernel for ArgMaxGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.gpu_input(0, self.dtype)?;
        let ArgAxis {
            outer,
            n,
            inner,
            out_shape: shape,
        } = ArgAxis::new(ctx.input(0)?.shape(), ctx.input(1)?)?;
        let n_out = shape.num_elements();
        // The launch below writes every one of the `n_out` indices.
        ctx.allocate_output(0, shape)?;
        if n_out == 0 {
            return Ok(());
        }
        let y = ctx.gpu_output(0)?;
        let (o, r, i) = (idx(outer), idx(n), idx(inner));
        let stream = ctx.gpu()?.stream();
        match strategy(outer, n, inner).pass {
            Pass::Serial => {
                let mut l = stream.launch_builder(&self.serial);
                l.arg(&x).arg(&y).arg(&o).arg(&r).arg(&i);
                // SAFETY: `serial(const T*, I*, index_t x3)` matches; `x`
                // holds outer·n·inner elements, `y` outer·inner indices.
                unsafe { l.launch(grid_for(n_out)) }
                    .map_err(|e| gpu_error("launching ArgMax serial", e))?;
            }
            Pass::Rows => {
                let mut l = stream.launch_builder(&self.rows);
                l.arg(&x).arg(&y).arg(&o).arg(&r);
                // SAFETY: `rows(const T*, I*, index_t, index_t)` matches;
                // inner is 1, blocks are 256 threads.
                unsafe { l.launch(blocks_config(outer)) }
                    .map_err(|e| gpu_error("launching ArgMax rows", e))?;
            }
            Pass::Cols => {
                let mut l = stream.launch_builder(&self.cols);
                l.arg(&x).arg(&y).arg(&o).arg(&r).arg(&i);
                // SAFETY: `cols(const T*, I*, index_t x3)` matches; blocks
                // are 256 threads (32 columns by 8 lanes).
                unsafe { l.launch(blocks_config(outer * inner.div_ceil(32))) }
                    .map_err(|e| gpu_error("launching ArgMax cols", e))?;
            }
        }
        Ok(())
    }
}
