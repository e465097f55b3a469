//! The executor with a device other than the CPU, on any machine: a fake
//! device ("FAKE", host bytes behind the `DeviceMemory` trait) with kernels
//! registered for it. Checks placement and CPU fallback, that tensors are
//! moved to where each kernel reads them (host-memory args stay on the
//! host), that fetches come back in host memory, and the errors for devices
//! that are missing or not linked.

use std::any::Any;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use opreg_runtime::{Graph, RunError, Session, SessionOptions};
use opreg_standard_ops::{Neg, Reshape};
use registry_core::device::{Device, DeviceBuffer, DeviceError, DeviceMemory, open_device};
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::{DataType, GraphDef, TextFormat};
use registry_core::tensor::{Tensor, TensorError};

/// Host -> FAKE copies (a session runs on its kernel threads, not the
/// test's, so the counts are global; the tests take turns, see [`link`]).
static UPLOADS: AtomicUsize = AtomicUsize::new(0);
/// FAKE -> host copies.
static DOWNLOADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// FAKE allocations made on this thread (kernels' outputs).
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// FAKE memory: the bytes, held on the host.
#[derive(Debug)]
struct FakeMemory(Vec<u8>);

impl DeviceMemory for FakeMemory {
    fn device_type(&self) -> &'static str {
        "FAKE"
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), DeviceError> {
        DOWNLOADS.fetch_add(1, Ordering::SeqCst);
        dst.copy_from_slice(&self.0);
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[derive(Debug)]
struct FakeDevice;

impl Device for FakeDevice {
    fn device_type(&self) -> &'static str {
        "FAKE"
    }
    fn description(&self) -> String {
        "FAKE:0".into()
    }
    fn allocate(
        &self,
        dtype: DataType,
        shape: registry_core::tensor::TensorShape,
    ) -> Result<Tensor, DeviceError> {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
        let size = registry_core::tensor::element_size(dtype).unwrap_or(0);
        let bytes = vec![0xa5; shape.num_elements() * size];
        Tensor::from_device(dtype, shape, DeviceBuffer::new(FakeMemory(bytes))).map_err(|e| {
            DeviceError::Transfer {
                device: "FAKE:0".into(),
                reason: e.to_string(),
            }
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn upload(&self, tensor: &Tensor) -> Result<Tensor, DeviceError> {
        UPLOADS.fetch_add(1, Ordering::SeqCst);
        let bytes = tensor.as_bytes().map_err(|e| DeviceError::Transfer {
            device: "FAKE:0".into(),
            reason: e.to_string(),
        })?;
        Tensor::from_device(
            tensor.dtype(),
            tensor.shape().clone(),
            DeviceBuffer::new(FakeMemory(bytes.to_vec())),
        )
        .map_err(|e| DeviceError::Transfer {
            device: "FAKE:0".into(),
            reason: e.to_string(),
        })
    }
    fn synchronize(&self) -> Result<(), DeviceError> {
        Ok(())
    }
}

fn open_fake() -> Result<Arc<dyn Device>, DeviceError> {
    Ok(Arc::new(FakeDevice))
}

fn open_broken() -> Result<Arc<dyn Device>, DeviceError> {
    Err(DeviceError::NotFound {
        device_type: "BROKEN".into(),
        reason: "the test driver is not installed".into(),
    })
}

registry_core::register_device!("FAKE", open_fake);
registry_core::register_device!("BROKEN", open_broken);

/// The f32 values of a FAKE tensor (errors when it is on the host).
fn fake_values(tensor: &Tensor) -> Result<Vec<f32>, KernelError> {
    let memory = tensor
        .device_buffer()
        .and_then(|b| b.downcast_ref::<FakeMemory>())
        .ok_or_else(|| KernelError::internal("input is not in FAKE memory"))?;
    Ok(memory
        .0
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn fake_tensor(shape: registry_core::tensor::TensorShape, values: &[f32]) -> Tensor {
    let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::from_device(
        DataType::DtFloat,
        shape,
        DeviceBuffer::new(FakeMemory(bytes)),
    )
    .unwrap()
}

/// Writes `values` into a FAKE tensor that is not shared.
fn write_fake(tensor: &mut Tensor, values: &[f32]) -> Result<(), KernelError> {
    let memory = tensor
        .device_buffer_mut()
        .and_then(|b| b.downcast_mut::<FakeMemory>())
        .ok_or_else(|| KernelError::internal("output is not unique FAKE memory"))?;
    memory.0 = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(())
}

/// `Neg` on FAKE: runs on the FAKE device its context gives it, reads FAKE
/// memory only, and writes an output its context allocates there (or the
/// input, forwarded, in place).
#[kernel(op = Neg, device = "FAKE", T = [float])]
fn fake_neg(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    ctx.device()
        .downcast::<FakeDevice>()
        .ok_or_else(|| KernelError::internal("not given the FAKE device"))?;
    let values: Vec<f32> = fake_values(ctx.input(0)?)?.iter().map(|v| -v).collect();
    let shape = ctx.input(0)?.shape().clone();
    ctx.forward_input_or_allocate_output(&[0], 0, shape)?;
    write_fake(ctx.output_mut(0)?, &values)
}

/// `Reshape` on FAKE, with `shape` in host memory (as TF's GPU kernel).
#[kernel(op = Reshape, device = "FAKE", T = [float], Tshape = [int32], host_memory = ["shape"])]
fn fake_reshape(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let sizes: Vec<usize> = ctx
        .input(1)?
        .as_slice::<i32>()?
        .iter()
        .map(|&d| d as usize)
        .collect();
    let x = ctx.take_input(0)?;
    fake_values(&x)?; // must be in FAKE memory
    ctx.set_output(0, x.reshape(sizes)?)
}

/// Links the kernels; the returned guard makes the tests of this file take
/// turns, so the global copy counts are one test's.
fn link() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    kernels_cpu::link();
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn graph(text: &str) -> Graph {
    Graph::new(GraphDef::from_pbtxt(text).expect("test pbtxt parses")).expect("valid graph")
}

const FLOAT: &str = r#"attr { key: "T" value { type: DT_FLOAT } }"#;

/// x -> Neg (FAKE) -> Reshape (FAKE, shape from a host Const) -> Abs (no
/// FAKE kernel: CPU) -> Neg (FAKE) -> fetched.
fn mixed_graph() -> Graph {
    graph(&format!(
        r#"
        node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
        node {{ name: "neg1" op: "Neg" input: "x" {FLOAT} }}
        node {{ name: "shape" op: "Const"
               attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
               attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{ dim {{ size: 2 }} }} int_val: 2 int_val: 2 }} }} }} }}
        node {{ name: "reshape" op: "Reshape" input: "neg1" input: "shape" {FLOAT}
               attr {{ key: "Tshape" value {{ type: DT_INT32 }} }} }}
        node {{ name: "abs" op: "Abs" input: "reshape" {FLOAT} }}
        node {{ name: "neg2" op: "Neg" input: "abs" {FLOAT} }}
        "#
    ))
}

fn fake_first() -> SessionOptions {
    SessionOptions {
        devices: vec!["FAKE".into(), "CPU".into()],
        ..Default::default()
    }
}

#[test]
fn nodes_run_on_the_device_and_fall_back_to_cpu() {
    let _serial = link();
    let session = Session::with_options(mixed_graph(), fake_first());
    let x = Tensor::from_vec([4], vec![1.0f32, -2.0, 3.0, -4.0]).unwrap();
    UPLOADS.store(0, Ordering::SeqCst);
    DOWNLOADS.store(0, Ordering::SeqCst);
    let out = session.run(&[("x", x)], &["neg2", "reshape"]).unwrap();

    assert_eq!(session.placement("neg1").as_deref(), Some("FAKE"));
    assert_eq!(session.placement("reshape").as_deref(), Some("FAKE"));
    assert_eq!(session.placement("abs").as_deref(), Some("CPU"));
    assert_eq!(session.placement("neg2").as_deref(), Some("FAKE"));
    // The Const has no FAKE kernel and feeds a host-memory arg: CPU.
    assert_eq!(session.placement("shape").as_deref(), Some("CPU"));

    // Fetches come back in host memory.
    assert!(out.iter().all(Tensor::is_on_host));
    assert_eq!(out[0].dims(), &[2, 2]);
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[-1.0, -2.0, -3.0, -4.0]);
    assert_eq!(out[1].as_slice::<f32>().unwrap(), &[-1.0, 2.0, -3.0, 4.0]);

    // Uploads: x for neg1, abs's output for neg2. Downloads: reshape's
    // output for abs (CPU), and the two fetches. The shape Const never
    // moves (host memory arg).
    assert_eq!(UPLOADS.load(Ordering::SeqCst), 2);
    assert_eq!(DOWNLOADS.load(Ordering::SeqCst), 3);
}

#[test]
fn kernels_allocate_on_their_device_and_forward_in_place() {
    let _serial = link();
    let node = registry_core::node_def::NodeDefBuilder::new("neg", "Neg")
        .input(("x", DataType::DtFloat))
        .finalize()
        .unwrap();
    let neg = registry_core::create_op_kernel("FAKE", &node).unwrap();
    assert_eq!(neg.device().device_type(), "FAKE");
    let shape = registry_core::tensor::TensorShape::new([2usize]).unwrap();

    // A shared input: the output is allocated in FAKE memory.
    let x = fake_tensor(shape.clone(), &[1.0, -2.0]);
    ALLOCATIONS.with(|a| a.set(0));
    let out = neg.compute([x.clone()]).unwrap().remove(0);
    assert_eq!(ALLOCATIONS.with(Cell::get), 1);
    assert_eq!(out.device_type(), "FAKE");
    assert!(!out.shares_buffer_with(&x));
    assert_eq!(fake_values(&out).unwrap(), [-1.0, 2.0]);

    // A unique input is forwarded: no allocation, computed in place.
    let out = neg.compute([out]).unwrap().remove(0);
    assert_eq!(ALLOCATIONS.with(Cell::get), 1);
    assert_eq!(fake_values(&out).unwrap(), [1.0, -2.0]);

    // A host input is not forwarded to a FAKE output (wrong memory); the
    // kernel refuses to read it.
    let host = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let err = neg.compute([host]).unwrap_err();
    assert!(err.to_string().contains("not in FAKE memory"), "{err}");
}

#[test]
fn cpu_only_sessions_never_touch_the_device() {
    let _serial = link();
    let session = Session::new(mixed_graph());
    UPLOADS.store(0, Ordering::SeqCst);
    let x = Tensor::from_vec([4], vec![1.0f32, -2.0, 3.0, -4.0]).unwrap();
    let out = session.run(&[("x", x)], &["neg2"]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[-1.0, -2.0, -3.0, -4.0]);
    assert_eq!(session.placement("neg1").as_deref(), Some("CPU"));
    assert_eq!(UPLOADS.load(Ordering::SeqCst), 0);
}

#[test]
fn a_requested_device_is_used_per_node_and_skipped_when_missing() {
    let _serial = link();
    // neg1 asks for FAKE, neg2 for BROKEN (which cannot be opened): soft
    // placement runs neg2 on the CPU.
    let text = format!(
        r#"
        node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
        node {{ name: "neg1" op: "Neg" input: "x" device: "/job:localhost/replica:0/task:0/device:FAKE:0" {FLOAT} }}
        node {{ name: "neg2" op: "Neg" input: "neg1" device: "/device:BROKEN:0" {FLOAT} }}
        "#
    );
    let session = Session::new(graph(&text));
    let x = Tensor::from_vec([2], vec![1.5f32, -2.5]).unwrap();
    let out = session.run(&[("x", x)], &["neg2"]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.5, -2.5]);
    assert_eq!(session.placement("neg1").as_deref(), Some("FAKE"));
    assert_eq!(session.placement("neg2").as_deref(), Some("CPU"));
}

#[test]
fn a_session_device_that_cannot_be_opened_fails_runs_clearly() {
    let _serial = link();
    let options = SessionOptions {
        devices: vec!["BROKEN".into(), "CPU".into()],
        ..Default::default()
    };
    let session = Session::with_options(mixed_graph(), options);
    let x = Tensor::from_vec([4], vec![1.0f32; 4]).unwrap();
    let err = session.run(&[("x", x)], &["neg2"]).unwrap_err();
    assert!(
        matches!(err, RunError::Device(DeviceError::NotFound { .. })),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no BROKEN device: the test driver is not installed"
    );

    let options = SessionOptions {
        devices: vec!["TPU".into()],
        ..Default::default()
    };
    let session = Session::with_options(mixed_graph(), options);
    let err = session.run(&[], &["shape"]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("no TPU device: no backend for TPU is linked"),
        "{msg}"
    );
    assert!(msg.contains("BROKEN") && msg.contains("FAKE"), "{msg}");
}

#[test]
fn open_device_is_case_insensitive_and_names_linked_backends() {
    assert_eq!(open_device("fake").unwrap().device_type(), "FAKE");
    let types = registry_core::device::linked_device_types();
    assert!(types.contains(&"FAKE".to_string()) && types.contains(&"BROKEN".to_string()));
    assert!(matches!(
        open_device("nope"),
        Err(DeviceError::NotLinked { .. })
    ));
}

#[test]
fn device_tensors_refuse_host_access_and_copy_back() {
    let shape = registry_core::tensor::TensorShape::new([3usize]).unwrap();
    let t = fake_tensor(shape.clone(), &[1.0, 2.0, 3.0]);
    assert!(!t.is_on_host());
    assert_eq!(t.device_type(), "FAKE");
    assert_eq!(t.allocated_bytes(), 12);
    let err = t.as_slice::<f32>().unwrap_err();
    assert_eq!(
        err,
        TensorError::NotOnHost {
            device_type: "FAKE"
        }
    );
    assert!(err.to_string().contains("Tensor::to_host"), "{err}");
    assert!(t.as_bytes().is_err());

    let host = t.to_host().unwrap();
    assert!(host.is_on_host());
    assert_eq!(host.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0]);
    // Protos read the values back from the device.
    assert_eq!(Tensor::from_proto(&t.to_proto()).unwrap(), host);
    assert_eq!(Tensor::from_proto(&t.to_proto_field()).unwrap(), host);

    // Device tensors compare by identity: a reshape shares the memory.
    let same = t.reshape([1, 3]).unwrap();
    assert!(same.shares_buffer_with(&t));
    assert_eq!(same.reshape([3]).unwrap(), t);
    assert_ne!(fake_tensor(shape, &[1.0, 2.0, 3.0]), t);
    assert_ne!(host, t);
}

#[test]
fn from_device_checks_the_buffer_size() {
    let err = Tensor::from_device(
        DataType::DtFloat,
        [2, 2],
        DeviceBuffer::new(FakeMemory(vec![0; 12])),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("needs 16 bytes") && msg.contains("has 12"),
        "{msg}"
    );
    let err = Tensor::from_device(
        DataType::DtString,
        [1],
        DeviceBuffer::new(FakeMemory(vec![])),
    )
    .unwrap_err();
    assert!(matches!(
        err,
        TensorError::UnsupportedDtype(DataType::DtString)
    ));
}

#[test]
fn device_buffers_are_shared_and_downcast_mutably_only_when_unique() {
    let mut buffer = DeviceBuffer::new(FakeMemory(vec![1, 2]));
    assert!(buffer.is_unique());
    buffer.downcast_mut::<FakeMemory>().unwrap().0[0] = 9;
    let other = buffer.clone();
    assert!(!buffer.is_unique() && buffer.ptr_eq(&other));
    assert!(buffer.downcast_mut::<FakeMemory>().is_none());
    drop(other);
    assert_eq!(buffer.downcast_ref::<FakeMemory>().unwrap().0, vec![9, 2]);
}

#[test]
fn tensors_stay_unwind_safe() {
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    unwind_safe::<Tensor>();
    unwind_safe::<DeviceBuffer>();
}
