//! [`Mover`]: one compiled data-movement entry point for one element size,
//! and its launches into output 0 of the kernel's context. Every launch
//! writes every element of the output, which is allocated (uninitialised)
//! by the context in the GPU's memory.

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::gather::GatherGeometry;
use registry_core::kernel::{
    KernelError, KernelRegistration, KernelSource, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorShape, element_size};

use super::plan::{PadPlan, StridedPlan, TilePlan};
use super::source::move_source;
use opreg_cuda::{GpuContext, GpuDevice, GpuTensors, ShapeArg, gpu_error, gpu_ptr, grid_for};

/// The sources a registration of a data-movement kernel compiles: the move
/// source of its element type's size (`Tparams` for `GatherV2`, else `T`).
pub fn mover_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    let attr = if reg.op == "GatherV2" { "Tparams" } else { "T" };
    crate::sources_of_type(reg, attr, |dtype| {
        move_source(unit_of(dtype)?).ok_or_else(|| no_unit(dtype))
    })
}

fn no_unit(dtype: DataType) -> KernelError {
    KernelError::unimplemented(format!(
        "no GPU copy kernel for {} elements",
        dtype.type_name()
    ))
}

/// The element size of `dtype`, the unit the copies move.
fn unit_of(dtype: DataType) -> Result<usize, KernelError> {
    element_size(dtype).ok_or_else(|| {
        KernelError::unimplemented(format!(
            "GPU array kernels do not handle dtype {}",
            dtype.type_name()
        ))
    })
}

/// An entry point of the data-movement source for a dtype's element size,
/// compiled (once per device) when the kernel is built.
pub(crate) struct Mover {
    dtype: DataType,
    unit: usize,
    func: CudaFunction,
}

impl std::fmt::Debug for Mover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mover")
            .field("dtype", &self.dtype)
            .field("unit", &self.unit)
            .finish()
    }
}

/// `n` as the kernels' 64-bit index (tensor sizes always fit).
fn idx(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The device address of `x`, which must hold `len` units.
fn source(x: &Tensor, len: usize, what: &str) -> Result<u64, KernelError> {
    if x.num_elements() != len {
        return Err(KernelError::internal(format!(
            "{what}: an input of {} elements does not match the plan ({len})",
            x.num_elements()
        )));
    }
    gpu_ptr(x)
}

impl Mover {
    /// Entry point `entry` for elements of `dtype`, compiled for the
    /// kernel's GPU.
    pub(crate) fn new(
        ctx: &OpKernelConstruction<'_>,
        dtype: DataType,
        entry: &str,
    ) -> Result<Self, KernelError> {
        let unit = unit_of(dtype)?;
        let source = move_source(unit).ok_or_else(|| no_unit(dtype))?;
        let func = ctx.gpu()?.function(&source, entry)?;
        Ok(Self { dtype, unit, func })
    }

    /// Allocates output 0 with `shape` and, when it has elements, queues
    /// `fill(gpu, out)`, which must write all of them.
    fn output(
        &self,
        ctx: &mut OpKernelContext<'_>,
        shape: TensorShape,
        fill: impl FnOnce(&GpuDevice, u64) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        let len = shape.num_elements();
        ctx.allocate_output(0, shape)?;
        if len == 0 {
            return Ok(());
        }
        let out = ctx.gpu_output(0)?;
        fill(ctx.gpu()?, out)
    }

    /// An empty output 0 of `shape` (which must have no elements).
    pub(crate) fn empty(
        &self,
        ctx: &mut OpKernelContext<'_>,
        shape: TensorShape,
    ) -> Result<(), KernelError> {
        check_len(&shape, 0)?;
        self.output(ctx, shape, |_, _| Ok(()))
    }

    /// Output 0 of `shape`, filled by one launch of this mover's entry as
    /// `(const U* x, U* out, index_t n, index_t scalars..., shape_arg
    /// shapes...)`, one thread per output element (`n` of them); `what`
    /// names the entry in a launch error.
    ///
    /// # Safety
    /// The entry must take exactly these arguments and, for every output
    /// index below `n`, write that element and read only inside `x` (of
    /// `x_len` units).
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_launch(
        &self,
        ctx: &mut OpKernelContext<'_>,
        what: &str,
        x: &Tensor,
        x_len: usize,
        shape: TensorShape,
        scalars: &[i64],
        shapes: &[&ShapeArg],
    ) -> Result<(), KernelError> {
        let x = source(x, x_len, what)?;
        let len = shape.num_elements();
        self.output(ctx, shape, |gpu, out| {
            // SAFETY: the caller's contract: the entry takes these
            // arguments, writes each of the `len` elements of the output
            // and reads only inside `x`.
            unsafe { self.launch(gpu, what, x, out, len, scalars, shapes) }
        })
    }

    /// One launch of this mover's entry as `(x, y, n, scalars...,
    /// shapes...)` over `n` threads.
    ///
    /// # Safety
    /// The entry must take exactly these arguments, and read and write only
    /// inside `x` and `y` (device addresses on `gpu`) for them.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch(
        &self,
        gpu: &GpuDevice,
        what: &str,
        x: u64,
        y: u64,
        n: usize,
        scalars: &[i64],
        shapes: &[&ShapeArg],
    ) -> Result<(), KernelError> {
        let n_i = idx(n);
        let mut launch = gpu.stream().launch_builder(&self.func);
        launch.arg(&x).arg(&y).arg(&n_i);
        for s in scalars {
            launch.arg(s);
        }
        for &s in shapes {
            launch.arg(s);
        }
        // SAFETY: the caller's contract.
        unsafe { launch.launch(grid_for(n)) }.map_err(|e| gpu_error(what, e))?;
        Ok(())
    }

    /// Queues this mover's `strided_copy` or `strided_scatter` entry
    /// between device buffers, by `plan`: the copy writes the `plan.len`
    /// elements of `y` from the addresses of `x` the plan proved inside the
    /// length it was planned for; the scatter writes those addresses of
    /// `y` from the `plan.len` elements of `x`. Nothing is launched for an
    /// empty plan. `what` names the launch in errors.
    ///
    /// # Safety
    /// This mover's entry must be `strided_copy` or `strided_scatter`; `x`
    /// and `y` must be device addresses on `gpu` of buffers of this mover's
    /// dtype, written and read on its stream, not overlapping: for the
    /// copy, `x` holds the length `plan` was planned for and `y` `plan.len`
    /// elements; for the scatter, the converse.
    #[cfg_attr(
        not(all(feature = "linalg", feature = "reduce")),
        allow(dead_code, reason = "used by Einsum only")
    )]
    pub(crate) unsafe fn strided_between(
        &self,
        gpu: &GpuDevice,
        x: u64,
        y: u64,
        plan: &StridedPlan,
        what: &str,
    ) -> Result<(), KernelError> {
        if plan.len == 0 {
            return Ok(());
        }
        // SAFETY: both entries take `(const U*, U*, index_t, index_t,
        // shape_arg, shape_arg)` as `(x, y, n, base, dims, steps)`; the plan
        // proved every strided address inside the buffer the caller
        // sized for it, and the other side holds `plan.len` elements.
        unsafe {
            self.launch(
                gpu,
                what,
                x,
                y,
                plan.len,
                &[plan.base],
                &[&plan.dims, &plan.steps],
            )
        }
    }

    /// `strided_copy` of `x` by `plan` into output 0 of `shape`.
    pub(crate) fn strided(
        &self,
        ctx: &mut OpKernelContext<'_>,
        x: &Tensor,
        plan: &StridedPlan,
        shape: TensorShape,
    ) -> Result<(), KernelError> {
        check_len(&shape, plan.len)?;
        // SAFETY: `strided_copy(const U*, U*, index_t, index_t, shape_arg,
        // shape_arg)` takes `(x, out, n, base, dims, steps)`; the plan
        // proved every address read inside `x`.
        unsafe {
            self.copy_launch(
                ctx,
                "launching strided_copy",
                x,
                x.num_elements(),
                shape,
                &[plan.base],
                &[&plan.dims, &plan.steps],
            )
        }
    }

    /// `tile_copy` of `x` by `plan` into output 0 of `shape`.
    pub(crate) fn tile(
        &self,
        ctx: &mut OpKernelContext<'_>,
        x: &Tensor,
        plan: &TilePlan,
        shape: TensorShape,
    ) -> Result<(), KernelError> {
        // SAFETY: `tile_copy(const U*, U*, index_t, shape_arg, shape_arg)`
        // takes `(x, out, n, out_dims, in_dims)`; the input index of every
        // output element is below the product of `in_dims`, the input's
        // length.
        unsafe {
            self.copy_launch(
                ctx,
                "launching tile_copy",
                x,
                x.num_elements(),
                shape,
                &[],
                &[&plan.out_dims, &plan.in_dims],
            )
        }
    }

    /// `pad_copy` of `x` by `plan` into output 0 of `shape`.
    pub(crate) fn pad(
        &self,
        ctx: &mut OpKernelContext<'_>,
        x: &Tensor,
        plan: &PadPlan,
        shape: TensorShape,
    ) -> Result<(), KernelError> {
        // SAFETY: `pad_copy(const U*, U*, index_t, shape_arg, shape_arg,
        // shape_arg)` takes `(x, out, n, out_dims, in_dims, before)`; only
        // indices inside the input's box are read.
        unsafe {
            self.copy_launch(
                ctx,
                "launching pad_copy",
                x,
                x.num_elements(),
                shape,
                &[],
                &[&plan.out_dims, &plan.in_dims, &plan.before],
            )
        }
    }

    /// `concat_copy`: `inputs[i]` (`[rows, cols[i]]`) side by side into
    /// output 0, a `[rows, Σ cols]` tensor of `shape`.
    pub(crate) fn concat(
        &self,
        ctx: &mut OpKernelContext<'_>,
        inputs: &[(&Tensor, usize)],
        rows: usize,
        shape: TensorShape,
    ) -> Result<(), KernelError> {
        let out_cols: usize = inputs.iter().map(|&(_, c)| c).sum();
        let expected = rows.checked_mul(out_cols);
        if expected != Some(shape.num_elements()) {
            return Err(KernelError::internal(
                "concat: the inputs do not fill the output",
            ));
        }
        let parts: Vec<(u64, usize)> = inputs
            .iter()
            .map(|&(x, cols)| {
                let len = cols
                    .checked_mul(rows)
                    .ok_or_else(|| KernelError::internal("concat: input size overflows"))?;
                Ok((source(x, len, "concat")?, cols))
            })
            .collect::<Result<_, KernelError>>()?;
        self.output(ctx, shape, |gpu, out| {
            let out_cols = idx(out_cols);
            let mut offset = 0i64;
            for &(x, cols) in &parts {
                let n = rows * cols;
                if n > 0 {
                    let (n_i, cols_i) = (idx(n), idx(cols));
                    let mut launch = gpu.stream().launch_builder(&self.func);
                    launch
                        .arg(&x)
                        .arg(&out)
                        .arg(&n_i)
                        .arg(&cols_i)
                        .arg(&out_cols)
                        .arg(&offset);
                    // SAFETY: `concat_copy(const U*, U*, index_t, index_t,
                    // index_t, index_t)` matches; `x` holds `rows · cols`
                    // units (checked above) and each goes to a column of
                    // `offset..offset + cols` of a `[rows, out_cols]` output;
                    // the inputs' columns tile every output row.
                    unsafe { launch.launch(grid_for(n)) }
                        .map_err(|e| gpu_error("launching concat_copy", e))?;
                }
                offset += idx(cols);
            }
            Ok(())
        })
    }

    /// `gather_*`: the gather of `g` (params `[batch·outer, limit, inner]`,
    /// indices `[batch, per_batch]`) into output 0, a
    /// `[batch·outer, per_batch, inner]` tensor of `g.out_shape`.
    pub(crate) fn gather(
        &self,
        ctx: &mut OpKernelContext<'_>,
        params: &Tensor,
        indices: &Tensor,
        g: GatherGeometry,
    ) -> Result<(), KernelError> {
        let len = g.out_shape.num_elements();
        let batch_outer = g.batch.checked_mul(g.outer);
        let params_len = batch_outer
            .and_then(|n| n.checked_mul(g.limit))
            .and_then(|n| n.checked_mul(g.inner))
            .ok_or_else(|| KernelError::internal("gather: the plan overflows"))?;
        if batch_outer
            .and_then(|n| n.checked_mul(g.per_batch))
            .and_then(|n| n.checked_mul(g.inner))
            != Some(len)
        {
            return Err(KernelError::internal(
                "gather: the plan does not match the tensors",
            ));
        }
        let params = source(params, params_len, "gather")?;
        let indices = gpu_ptr(indices)?;
        self.output(ctx, g.out_shape, |gpu, out| {
            let (n, per_batch, outer, limit, inner) = (
                idx(len),
                idx(g.per_batch),
                idx(g.outer),
                idx(g.limit),
                idx(g.inner),
            );
            let mut launch = gpu.stream().launch_builder(&self.func);
            launch
                .arg(&params)
                .arg(&indices)
                .arg(&out)
                .arg(&n)
                .arg(&per_batch)
                .arg(&outer)
                .arg(&limit)
                .arg(&inner);
            // SAFETY: `gather_*(const U*, const I*, U*, index_t x5)`
            // matches; `params` holds `batch·outer·limit·inner` units
            // (checked above), indices outside `[0, limit)` are not read
            // through, and index `b·per_batch + m` is inside `indices`
            // (`batch·per_batch` of them, checked by the caller).
            unsafe { launch.launch(grid_for(len)) }
                .map_err(|e| gpu_error("launching gather", e))?;
            Ok(())
        })
    }

    /// `one_hot_*`: `y[p, d, s] = indices[p, s] == d ? *on : *off`, into
    /// output 0 of `shape`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn one_hot(
        &self,
        ctx: &mut OpKernelContext<'_>,
        indices: &Tensor,
        on: &Tensor,
        off: &Tensor,
        depth: usize,
        suffix: usize,
        shape: TensorShape,
    ) -> Result<(), KernelError> {
        let len = shape.num_elements();
        let (on, off) = (source(on, 1, "one_hot")?, source(off, 1, "one_hot")?);
        let indices = gpu_ptr(indices)?;
        self.output(ctx, shape, |gpu, out| {
            let (n, depth, suffix) = (idx(len), idx(depth), idx(suffix));
            let mut launch = gpu.stream().launch_builder(&self.func);
            launch
                .arg(&indices)
                .arg(&on)
                .arg(&off)
                .arg(&out)
                .arg(&n)
                .arg(&depth)
                .arg(&suffix);
            // SAFETY: `one_hot_*(const I*, const U*, const U*, U*, index_t,
            // index_t, index_t)` matches; `n = prefix·depth·suffix` and
            // `indices` holds `prefix·suffix` elements; `on`/`off` hold one
            // unit each (checked above).
            unsafe { launch.launch(grid_for(len)) }
                .map_err(|e| gpu_error("launching one_hot", e))?;
            Ok(())
        })
    }
}

fn check_len(shape: &TensorShape, len: usize) -> Result<(), KernelError> {
    if shape.num_elements() == len {
        Ok(())
    } else {
        Err(KernelError::internal(format!(
            "a copy of {len} elements into a tensor of shape {shape}"
        )))
    }
}
