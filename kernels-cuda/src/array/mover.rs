//! [`Mover`]: one compiled data-movement entry point for one element size,
//! and its launches. Every launch writes every element of the buffer it
//! allocates, so outputs are allocated uninitialised.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use opreg_op_logic::gather::GatherGeometry;
use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorShape, element_size};

use super::plan::{PadPlan, StridedPlan, TilePlan};
use super::source::move_source;
use opreg_cuda::{GpuDevice, ShapeArg, gpu_error, grid_for};

/// An entry point of the data-movement source for a dtype's element size,
/// compiled (once per process) when the kernel is built.
pub(crate) struct Mover {
    dev: Arc<GpuDevice>,
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

impl Mover {
    /// Entry point `entry` for elements of `dtype`.
    pub(crate) fn new(dtype: DataType, entry: &str) -> Result<Self, KernelError> {
        let unit = element_size(dtype).ok_or_else(|| {
            KernelError::unimplemented(format!(
                "GPU array kernels do not handle dtype {}",
                dtype.type_name()
            ))
        })?;
        let source = move_source(unit).ok_or_else(|| {
            KernelError::unimplemented(format!("no GPU copy kernel for {unit}-byte elements"))
        })?;
        let dev = GpuDevice::get()?;
        let func = dev.function(&source, entry)?;
        Ok(Self {
            dev,
            dtype,
            unit,
            func,
        })
    }

    /// An output buffer of `len` elements, and the launch that fills it:
    /// `fill(out)` must queue work that writes all `len` elements.
    fn output(
        &self,
        shape: TensorShape,
        fill: impl FnOnce(&mut CudaSlice<u8>) -> Result<(), KernelError>,
    ) -> Result<Tensor, KernelError> {
        let len = shape.num_elements();
        let bytes = len
            .checked_mul(self.unit)
            .ok_or_else(|| KernelError::resource_exhausted("the GPU output's size overflows"))?;
        if len == 0 {
            return self
                .dev
                .tensor(self.dtype, shape, self.dev.alloc_zeroed(0)?);
        }
        // SAFETY: `fill` queues a kernel that writes all `len` elements
        // (every caller's kernel writes each output index exactly once)
        // before anything else on the stream reads the buffer.
        let mut out = unsafe { self.dev.alloc_uninit(bytes)? };
        fill(&mut out)?;
        self.dev.tensor(self.dtype, shape, out)
    }

    /// An empty tensor of `shape` (which must have no elements).
    pub(crate) fn empty(&self, shape: TensorShape) -> Result<Tensor, KernelError> {
        check_len(&shape, 0)?;
        self.output(shape, |_| Ok(()))
    }

    /// A new tensor of `shape` filled by one launch of this mover's entry
    /// as `(const U* x, U* out, index_t n, index_t scalars..., shape_arg
    /// shapes...)`, one thread per output element (`n` of them); `what`
    /// names the entry in a launch error.
    ///
    /// # Safety
    /// The entry must take exactly these arguments and, for every output
    /// index below `n`, write that element and read only inside `x`.
    unsafe fn copy_launch(
        &self,
        what: &str,
        x: &CudaSlice<u8>,
        shape: TensorShape,
        scalars: &[i64],
        shapes: &[&ShapeArg],
    ) -> Result<Tensor, KernelError> {
        let len = shape.num_elements();
        self.output(shape, |out| {
            let n = idx(len);
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch.arg(x).arg(out).arg(&n);
            for s in scalars {
                launch.arg(s);
            }
            for &s in shapes {
                launch.arg(s);
            }
            // SAFETY: the caller's contract: the entry takes these
            // arguments, writes each of the `n` elements `out` holds and
            // reads only inside `x`.
            unsafe { launch.launch(grid_for(len)) }.map_err(|e| gpu_error(what, e))?;
            Ok(())
        })
    }

    /// `strided_copy` of `x` by `plan` into a new tensor of `shape`.
    pub(crate) fn strided(
        &self,
        x: &CudaSlice<u8>,
        plan: &StridedPlan,
        shape: TensorShape,
    ) -> Result<Tensor, KernelError> {
        check_len(&shape, plan.len)?;
        // SAFETY: `strided_copy(const U*, U*, index_t, index_t, shape_arg,
        // shape_arg)` takes `(x, out, n, base, dims, steps)`; the plan
        // proved every address read inside `x`.
        unsafe {
            self.copy_launch(
                "launching strided_copy",
                x,
                shape,
                &[plan.base],
                &[&plan.dims, &plan.steps],
            )
        }
    }

    /// `tile_copy` of `x` by `plan` into a new tensor of `shape`.
    pub(crate) fn tile(
        &self,
        x: &CudaSlice<u8>,
        plan: &TilePlan,
        shape: TensorShape,
    ) -> Result<Tensor, KernelError> {
        // SAFETY: `tile_copy(const U*, U*, index_t, shape_arg, shape_arg)`
        // takes `(x, out, n, out_dims, in_dims)`; the input index of every
        // output element is below the product of `in_dims`, the input's
        // length.
        unsafe {
            self.copy_launch(
                "launching tile_copy",
                x,
                shape,
                &[],
                &[&plan.out_dims, &plan.in_dims],
            )
        }
    }

    /// `pad_copy` of `x` by `plan` into a new tensor of `shape`.
    pub(crate) fn pad(
        &self,
        x: &CudaSlice<u8>,
        plan: &PadPlan,
        shape: TensorShape,
    ) -> Result<Tensor, KernelError> {
        // SAFETY: `pad_copy(const U*, U*, index_t, shape_arg, shape_arg,
        // shape_arg)` takes `(x, out, n, out_dims, in_dims, before)`; only
        // indices inside the input's box are read.
        unsafe {
            self.copy_launch(
                "launching pad_copy",
                x,
                shape,
                &[],
                &[&plan.out_dims, &plan.in_dims, &plan.before],
            )
        }
    }

    /// `concat_copy`: `inputs[i]` (`[rows, cols[i]]`) side by side into a
    /// new `[rows, Σ cols]` tensor of `shape`.
    pub(crate) fn concat(
        &self,
        inputs: &[(&CudaSlice<u8>, usize)],
        rows: usize,
        shape: TensorShape,
    ) -> Result<Tensor, KernelError> {
        let out_cols: usize = inputs.iter().map(|&(_, c)| c).sum();
        let expected = rows.checked_mul(out_cols);
        if expected != Some(shape.num_elements()) {
            return Err(KernelError::internal(
                "concat: the inputs do not fill the output",
            ));
        }
        if let Some((x, _)) = inputs.iter().find(|(x, c)| {
            Some(x.len()) != c.checked_mul(rows).and_then(|n| n.checked_mul(self.unit))
        }) {
            return Err(KernelError::internal(format!(
                "concat: an input of {} bytes does not match the plan",
                x.len()
            )));
        }
        self.output(shape, |out| {
            let out_cols = idx(out_cols);
            let mut offset = 0i64;
            for &(x, cols) in inputs {
                let n = rows * cols;
                if n > 0 {
                    let (n_i, cols_i) = (idx(n), idx(cols));
                    let mut launch = self.dev.stream().launch_builder(&self.func);
                    launch
                        .arg(x)
                        .arg(&mut *out)
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
    /// indices `[batch, per_batch]`) into a new
    /// `[batch·outer, per_batch, inner]` tensor of `g.out_shape`.
    pub(crate) fn gather(
        &self,
        params: &CudaSlice<u8>,
        indices: &CudaSlice<u8>,
        g: GatherGeometry,
    ) -> Result<Tensor, KernelError> {
        let len = g.out_shape.num_elements();
        let batch_outer = g.batch.checked_mul(g.outer);
        let params_len = batch_outer
            .and_then(|n| n.checked_mul(g.limit))
            .and_then(|n| n.checked_mul(g.inner));
        if params_len.and_then(|n| n.checked_mul(self.unit)) != Some(params.len())
            || batch_outer
                .and_then(|n| n.checked_mul(g.per_batch))
                .and_then(|n| n.checked_mul(g.inner))
                != Some(len)
        {
            return Err(KernelError::internal(
                "gather: the plan does not match the tensors",
            ));
        }
        self.output(g.out_shape, |out| {
            let (n, per_batch, outer, limit, inner) = (
                idx(len),
                idx(g.per_batch),
                idx(g.outer),
                idx(g.limit),
                idx(g.inner),
            );
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch
                .arg(params)
                .arg(indices)
                .arg(out)
                .arg(&n)
                .arg(&per_batch)
                .arg(&outer)
                .arg(&limit)
                .arg(&inner);
            // SAFETY: `gather_*(const U*, const I*, U*, index_t x5)`
            // matches; `params` holds `batch·outer·limit·inner` units
            // (checked above), indices outside `[0, limit)` are not read
            // through, and index `b·per_batch + m` is inside `indices`
            // (`batch·per_batch` of them).
            unsafe { launch.launch(grid_for(len)) }
                .map_err(|e| gpu_error("launching gather", e))?;
            Ok(())
        })
    }

    /// `one_hot_*`: `y[p, d, s] = indices[p, s] == d ? *on : *off`.
    pub(crate) fn one_hot(
        &self,
        indices: &CudaSlice<u8>,
        on: &CudaSlice<u8>,
        off: &CudaSlice<u8>,
        depth: usize,
        suffix: usize,
        shape: TensorShape,
    ) -> Result<Tensor, KernelError> {
        let len = shape.num_elements();
        if on.len() != self.unit || off.len() != self.unit {
            return Err(KernelError::internal(
                "one_hot: on/off values are not scalars",
            ));
        }
        self.output(shape, |out| {
            let (n, depth, suffix) = (idx(len), idx(depth), idx(suffix));
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch
                .arg(indices)
                .arg(on)
                .arg(off)
                .arg(out)
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
