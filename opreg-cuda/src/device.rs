//! [`GpuDevice`]: the process's CUDA device 0 — its context, its one stream
//! (all GPU work is queued there, in order, and only reading a result back
//! waits for it), its compiled-kernel cache and its cuBLAS and cuDNN
//! handles.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::cublas::CudaBlas;
use cudarc::cudnn::Cudnn;
use std::any::Any;
use std::collections::HashMap;

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError};
use registry_core::device::{DEVICE_GPU, Device, DeviceBuffer, DeviceError};
use registry_core::kernel::{KernelError, KernelSource};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{IntoShape, Tensor, TensorShape, element_size};

use super::compile;
use super::memory::GpuMemory;
use super::probe;

/// The CUDA device the GPU kernels run on (device 0), opened once per
/// process by [`GpuDevice::get`].
pub struct GpuDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    compute_capability: (i32, i32),
    /// Compiled kernels by (source key, entry point).
    functions: Mutex<HashMap<(String, String), CudaFunction>>,
    blas: OnceLock<Result<CudaBlas, String>>,
    cudnn: OnceLock<Result<CudnnHandle, String>>,
}

/// A cuDNN handle, used under a lock: cuDNN allows a handle on any thread
/// but not on two at once.
struct CudnnHandle(Mutex<Arc<Cudnn>>);

// SAFETY: cuDNN handles may be used from any host thread as long as no two
// threads use one at the same time; the handle is only reached through the
// `Mutex` (see `GpuDevice::with_cudnn`), which serialises every use, and it
// is destroyed once, when the device (a process-wide static) is dropped.
unsafe impl Send for CudnnHandle {}
// SAFETY: see `Send`: shared access only locks the mutex.
unsafe impl Sync for CudnnHandle {}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDevice")
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .finish()
    }
}

static GPU: OnceLock<Result<Arc<GpuDevice>, DeviceError>> = OnceLock::new();

fn open_gpu() -> Result<Arc<dyn Device>, DeviceError> {
    GpuDevice::get().map(|d| d as Arc<dyn Device>)
}

registry_core::register_device!(DEVICE_GPU, open_gpu);

fn not_found(reason: impl Into<String>) -> DeviceError {
    DeviceError::NotFound {
        device_type: DEVICE_GPU.to_owned(),
        reason: reason.into(),
    }
}

/// A driver error as a [`DeviceError`] for `operation`.
pub(crate) fn driver_error(operation: &str, e: impl std::fmt::Display) -> DeviceError {
    DeviceError::Driver {
        device: "GPU:0".to_owned(),
        operation: operation.to_owned(),
        message: e.to_string(),
    }
}

impl GpuDevice {
    /// The GPU (device 0), opened on first call: errors with
    /// `"no GPU device: ..."` when the driver library is missing, the
    /// driver finds no GPU, or the context cannot be created. Never panics.
    pub fn get() -> Result<Arc<GpuDevice>, DeviceError> {
        GPU.get_or_init(|| {
            if !probe::driver_present() {
                return Err(not_found(
                    "the CUDA driver library (libcuda.so.1) was not found; \
                     install the NVIDIA driver or add its folder to LD_LIBRARY_PATH",
                ));
            }
            // cudarc panics on a driver without the symbols it expects.
            catch_unwind(Self::open)
                .unwrap_or_else(|payload| {
                    Err(not_found(format!(
                        "the CUDA driver failed while opening the device: {}",
                        KernelError::from_panic(&*payload)
                    )))
                })
                .map(Arc::new)
        })
        .clone()
    }

    fn open() -> Result<GpuDevice, DeviceError> {
        let count = CudaContext::device_count()
            .map_err(|e| not_found(format!("the CUDA driver could not count devices: {e}")))?;
        if count < 1 {
            return Err(not_found("the CUDA driver reports no GPU"));
        }
        let ctx = CudaContext::new(0)
            .map_err(|e| not_found(format!("cannot create a CUDA context on GPU 0: {e}")))?;
        // SAFETY: all GPU work goes to the one stream below, in order, so
        // cudarc's per-allocation events (which order uses across streams)
        // are not needed; disabling them happens before any allocation.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(|e| not_found(format!("cannot create a CUDA stream: {e}")))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".to_owned());
        let compute_capability = ctx.compute_capability().unwrap_or((0, 0));
        keep_pool_memory(&ctx);
        Ok(GpuDevice {
            ctx,
            stream,
            name,
            compute_capability,
            functions: Mutex::new(HashMap::new()),
            blas: OnceLock::new(),
            cudnn: OnceLock::new(),
        })
    }

    /// The device's stream, where every kernel and copy is queued.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The device's name (`"NVIDIA H100 80GB HBM3"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compute capability (`(9, 0)` for Hopper).
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The entry point `entry` of `source`, compiled with NVRTC for this
    /// device the first time it is asked for (every entry of the source is
    /// loaded then) and cached for the life of the process.
    pub fn function(
        &self,
        source: &KernelSource,
        entry: &str,
    ) -> Result<CudaFunction, KernelError> {
        let key = (source.key().to_owned(), entry.to_owned());
        let mut functions = self
            .functions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = functions.get(&key) {
            return Ok(f.clone());
        }
        if !probe::nvrtc_present() {
            return Err(DeviceError::NotFound {
                device_type: DEVICE_GPU.to_owned(),
                reason: "the NVRTC library (libnvrtc.so) was not found; GPU kernels are compiled with it".to_owned(),
            }
            .into());
        }
        let ptx = compile::compile_ptx(source, self.compute_capability).map_err(|e| {
            KernelError::internal(format!("compiling GPU kernel '{}': {e}", source.key()))
        })?;
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| driver_error(&format!("loading GPU kernel '{}'", source.key()), e))?;
        for name in source.entries() {
            let f = module
                .load_function(name)
                .map_err(|e| driver_error(&format!("loading GPU function '{name}'"), e))?;
            functions.insert((source.key().to_owned(), (*name).to_owned()), f);
        }
        functions.get(&key).cloned().ok_or_else(|| {
            KernelError::internal(format!(
                "GPU kernel '{}' has no entry point '{entry}'",
                source.key()
            ))
        })
    }

    /// Runs `f` with the device's cuBLAS handle (created on first use).
    pub fn with_blas<R>(
        &self,
        f: impl FnOnce(&CudaBlas) -> Result<R, KernelError>,
    ) -> Result<R, KernelError> {
        let blas = self.blas.get_or_init(|| {
            if !probe::cublas_present() {
                return Err("the cuBLAS library (libcublas.so) was not found".to_owned());
            }
            catch_unwind(AssertUnwindSafe(|| CudaBlas::new(Arc::clone(&self.stream))))
                .map_err(|p| KernelError::from_panic(&*p).to_string())?
                .map_err(|e| format!("cannot create a cuBLAS handle: {e}"))
        });
        match blas {
            Ok(blas) => f(blas),
            Err(reason) => Err(not_found(reason.clone()).into()),
        }
    }

    /// Runs `f` with the device's cuDNN handle (created on first use),
    /// holding its lock.
    pub fn with_cudnn<R>(
        &self,
        f: impl FnOnce(&Arc<Cudnn>) -> Result<R, KernelError>,
    ) -> Result<R, KernelError> {
        let cudnn = self.cudnn.get_or_init(|| {
            if !probe::cudnn_present() {
                return Err("the cuDNN library (libcudnn.so.9) was not found".to_owned());
            }
            catch_unwind(AssertUnwindSafe(|| Cudnn::new(Arc::clone(&self.stream))))
                .map_err(|p| KernelError::from_panic(&*p).to_string())?
                .map(|h| CudnnHandle(Mutex::new(h)))
                .map_err(|e| format!("cannot create a cuDNN handle: {e}"))
        });
        match cudnn {
            Ok(handle) => f(&handle.0.lock().unwrap_or_else(PoisonError::into_inner)),
            Err(reason) => Err(not_found(reason.clone()).into()),
        }
    }

    /// A tensor of `dtype` and `shape` in this GPU's memory, all zeros
    /// (for kernels whose output is zeros: a product over an empty
    /// dimension, a `false` comparison of incompatible shapes).
    pub fn zeros(&self, dtype: DataType, shape: impl IntoShape) -> Result<Tensor, KernelError> {
        let shape = shape.into_shape()?;
        let bytes = tensor_bytes(dtype, &shape)?;
        let slice = self
            .stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|e| out_of_memory(bytes, e))?;
        self.tensor(dtype, shape, slice)
    }

    /// Sets every byte of `tensor` (in this GPU's memory, and not shared) to
    /// zero, queued on the stream.
    pub fn fill_zero(&self, tensor: &mut Tensor) -> Result<(), KernelError> {
        let what = format!(
            "{} tensor of shape {}",
            tensor.dtype().type_name(),
            tensor.shape()
        );
        let memory = tensor
            .device_buffer_mut()
            .and_then(|b| b.downcast_mut::<GpuMemory>())
            .ok_or_else(|| {
                KernelError::internal(format!("zeroing a {what} that is not unique GPU memory"))
            })?;
        let bytes = memory.bytes_mut();
        self.stream
            .memset_zeros(bytes)
            .map_err(|e| super::gpu_error(&format!("zeroing a {what}"), e))
    }

    /// `bytes` bytes of device memory from the stream-ordered pool, not
    /// initialised (one byte for `bytes == 0`: the driver refuses empty
    /// allocations). Only [`Device::allocate`] uses it: the bytes become a
    /// tensor whose contents are unspecified until a kernel writes them, and
    /// reading them back is safe ([`Tensor::to_host`] copies bytes and reads
    /// `bool`s as 0 or not).
    fn alloc_uninit(&self, bytes: usize) -> Result<CudaSlice<u8>, KernelError> {
        // SAFETY: the contents are undefined until written; they are only
        // ever read as bytes (by kernels, or copied to the host), never as
        // Rust values of a type with invalid bit patterns.
        unsafe { self.stream.alloc::<u8>(bytes.max(1)) }.map_err(|e| out_of_memory(bytes, e))
    }

    /// A tensor of `dtype` and `shape` over `bytes` (which must hold
    /// exactly its elements, or be the one-byte allocation of an empty
    /// tensor).
    fn tensor(
        &self,
        dtype: DataType,
        shape: TensorShape,
        bytes: CudaSlice<u8>,
    ) -> Result<Tensor, KernelError> {
        let held = bytes.len();
        // Empty tensors have a one-byte allocation; others use all of it
        // (`from_device` checks that against the shape).
        let len = if shape.num_elements() == 0 { 0 } else { held };
        let memory = GpuMemory::new(bytes, len, Arc::clone(&self.stream)).ok_or_else(|| {
            KernelError::internal(format!("a GPU buffer of {held} bytes for {len} bytes"))
        })?;
        Ok(Tensor::from_device(
            dtype,
            shape,
            DeviceBuffer::new(memory),
        )?)
    }

    /// A copy of host bytes on the device.
    fn upload_bytes(&self, bytes: &[u8]) -> Result<CudaSlice<u8>, DeviceError> {
        if bytes.is_empty() {
            // The driver refuses empty allocations: one unused byte.
            return self
                .stream
                .alloc_zeros::<u8>(1)
                .map_err(|e| driver_error("allocate", e));
        }
        self.stream
            .clone_htod(bytes)
            .map_err(|e| driver_error("copy to the GPU", e))
    }
}

/// The bytes of a GPU tensor of `dtype` and `shape`, checked against the
/// process's allocation cap.
fn tensor_bytes(dtype: DataType, shape: &TensorShape) -> Result<usize, KernelError> {
    let size = element_size(dtype).ok_or_else(|| {
        KernelError::unimplemented(format!(
            "{} tensors cannot be in GPU memory",
            dtype.type_name()
        ))
    })?;
    let bytes = shape.num_elements().checked_mul(size).ok_or_else(|| {
        KernelError::resource_exhausted(format!(
            "a {} tensor of shape {shape} overflows the address space",
            dtype.type_name()
        ))
    })?;
    registry_core::limits::check_allocation(bytes as u64).map_err(|limit| {
        KernelError::resource_exhausted(format!(
            "a {} tensor of shape {shape} needs {bytes} bytes of GPU memory, over the \
             allocation limit of {limit}",
            dtype.type_name()
        ))
    })?;
    Ok(bytes)
}

fn out_of_memory(bytes: usize, e: DriverError) -> KernelError {
    KernelError::resource_exhausted(format!("allocating {bytes} bytes on the GPU: {e}"))
}

/// Lets the driver's stream-ordered memory pool keep freed memory for reuse
/// instead of returning it at each synchronisation, so steady-state runs
/// allocate nothing from the driver (a caching allocator, as TF's BFC).
fn keep_pool_memory(ctx: &CudaContext) {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer and `cu_device()` a device of
    // this live context; on failure nothing is written and nothing else
    // changes (the pool then keeps its default threshold).
    let status = unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) };
    if status != sys::CUresult::CUDA_SUCCESS || pool.is_null() {
        return;
    }
    let mut threshold: u64 = u64::MAX;
    // SAFETY: the release threshold attribute takes a pointer to a `u64`,
    // which lives across the call; `pool` came from the driver above.
    let _ = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    };
}

impl Device for GpuDevice {
    fn device_type(&self) -> &'static str {
        DEVICE_GPU
    }

    fn description(&self) -> String {
        format!(
            "GPU:0 ({}, compute capability {}.{})",
            self.name, self.compute_capability.0, self.compute_capability.1
        )
    }

    fn upload(&self, tensor: &Tensor) -> Result<Tensor, DeviceError> {
        let transfer = |reason: String| DeviceError::Transfer {
            device: "GPU:0".to_owned(),
            reason,
        };
        if !tensor.is_on_host() {
            return Err(transfer(format!(
                "the tensor is in {} memory, not on the host",
                tensor.device_type()
            )));
        }
        if element_size(tensor.dtype()).is_none() {
            return Err(transfer(format!(
                "{:?} tensors stay in host memory",
                tensor.dtype()
            )));
        }
        let host = tensor.as_bytes().map_err(|e| transfer(e.to_string()))?;
        let bytes = self.upload_bytes(host)?;
        self.tensor(tensor.dtype(), tensor.shape().clone(), bytes)
            .map_err(|e| transfer(e.to_string()))
    }

    fn allocate(&self, dtype: DataType, shape: TensorShape) -> Result<Tensor, DeviceError> {
        let transfer = |e: KernelError| DeviceError::Transfer {
            device: "GPU:0".to_owned(),
            reason: e.to_string(),
        };
        let bytes = tensor_bytes(dtype, &shape).map_err(transfer)?;
        let slice = self.alloc_uninit(bytes).map_err(transfer)?;
        self.tensor(dtype, shape, slice).map_err(transfer)
    }

    fn synchronize(&self) -> Result<(), DeviceError> {
        self.stream
            .synchronize()
            .map_err(|e| driver_error("synchronize", e))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
