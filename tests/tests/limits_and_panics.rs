//! Resource limits and kernel panics: a graph that asks for too much memory
//! fails with an error naming the node, and a panicking kernel (or kernel
//! constructor) fails its run while the session stays usable.

use std::sync::Mutex;

use opreg_runtime::{Graph, RunError, Session, SessionOptions};
use registry_core::kernel::{
    BuildKernel, CreateKernelError, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{GraphDef, TextFormat};
use registry_core::tensor::{Tensor, TensorError};
use registry_core::{kernel, limits, op};

/// Tests that change the process-wide allocation cap take this lock.
static CAP: Mutex<()> = Mutex::new(());

/// Panics when its input's first element is 13.
#[op(input = "x: int32", output = "y: int32")]
pub struct PanicOnThirteen;

#[kernel(op = PanicOnThirteen, device = CPU)]
fn panic_on_thirteen(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let x = ctx.input(0)?.clone();
    if x.as_slice::<i32>()?.first() == Some(&13) {
        panic!("thirteen is unlucky");
    }
    ctx.set_output(0, x)
}

/// A kernel whose constructor panics when `boom` is true.
#[op(input = "x: float", output = "y: float", attr = "boom: bool = false")]
pub struct PanicOnBuild;

#[kernel(op = PanicOnBuild, device = CPU)]
struct PanicOnBuildKernel;

impl BuildKernel for PanicOnBuildKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        if ctx.attr::<bool>("boom")? {
            panic!("constructor failed on purpose");
        }
        Ok(Self)
    }
}

impl OpKernel for PanicOnBuildKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.input(0)?.clone();
        ctx.set_output(0, x)
    }
}

fn graph(text: &str) -> Graph {
    kernels_cpu::link();
    Graph::new(GraphDef::from_pbtxt(text).expect("test pbtxt parses")).expect("graph is valid")
}

fn int_scalar(v: i32) -> Tensor {
    Tensor::scalar(v)
}

const TILE: &str = r#"
node { name: "multiples" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "value" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } } float_val: 1 } } } }
node { name: "tile" op: "Tile" input: "value" input: "multiples"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tmultiples" value { type: DT_INT32 } } }
"#;

#[test]
fn an_allocation_over_the_cap_is_an_error_naming_the_node() {
    let _lock = CAP.lock().unwrap_or_else(|e| e.into_inner());
    let previous = limits::set_max_allocation_bytes(1 << 20);
    let session = Session::new(graph(TILE));
    let dims = |d: Vec<i32>| Tensor::from_vec([d.len()], d).unwrap();
    let err = session
        .run(&[("multiples", dims(vec![1024, 1024]))], &["tile"])
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("node 'tile' (op 'Tile'"), "{text}");
    assert!(text.contains("1048576"), "names the limit: {text}");
    // Under the cap the same session still runs.
    let out = session
        .run(&[("multiples", dims(vec![256, 256]))], &["tile"])
        .unwrap();
    assert_eq!(out[0].dims(), &[256, 256]);
    // Dims whose product is huge are refused too.
    let err = session
        .run(&[("multiples", dims(vec![i32::MAX, i32::MAX]))], &["tile"])
        .unwrap_err();
    assert!(err.to_string().contains("node 'tile'"), "{err}");
    limits::set_max_allocation_bytes(previous);
}

#[test]
fn tensors_and_protos_over_the_cap_are_refused_before_allocating() {
    let _lock = CAP.lock().unwrap_or_else(|e| e.into_inner());
    let previous = limits::set_max_allocation_bytes(4096);
    let err = Tensor::zeros(registry_core::proto::DataType::DtDouble, [1024]).unwrap_err();
    assert!(
        matches!(
            err,
            TensorError::TooLarge {
                bytes: 8192,
                limit: 4096,
                ..
            }
        ),
        "{err}"
    );
    let proto = Tensor::zeros(registry_core::proto::DataType::DtDouble, [16])
        .unwrap()
        .to_proto();
    let mut huge = proto.clone();
    huge.tensor_shape.as_mut().unwrap().dim[0].size = 1 << 20;
    let err = Tensor::from_proto(&huge).unwrap_err();
    assert!(
        matches!(err, TensorError::TooLarge { limit: 4096, .. }),
        "{err}"
    );
    assert!(Tensor::from_proto(&proto).is_ok());
    // Small tensors (stored inline) never consult the cap.
    limits::set_max_allocation_bytes(1);
    assert!(Tensor::zeros(registry_core::proto::DataType::DtFloat, [4]).is_ok());
    limits::set_max_allocation_bytes(previous);
}

const CHAIN: &str = r#"
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "a" op: "Abs" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "b" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "c" op: "Square" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "same" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "sum" op: "AddN" input: "same" input: "b" input: "a" input: "c"
       attr { key: "N" value { i: 4 } } attr { key: "T" value { type: DT_FLOAT } } }
"#;

fn run_chain(limit: Option<u64>) -> Result<Vec<Tensor>, RunError> {
    let options = SessionOptions {
        max_memory_bytes: limit,
        ..SessionOptions::default()
    };
    let session = Session::with_options(graph(CHAIN), options);
    let x = Tensor::from_vec([1024], vec![-1.0f32; 1024]).unwrap(); // 4 KiB
    session.run(&[("x", x)], &["sum"])
}

#[test]
fn a_run_over_the_sessions_memory_limit_fails_at_the_node_that_went_over() {
    // x, a and b are alive at once (x is still needed by c): 12 KiB. c
    // reuses x's buffer once x is no longer needed, and `same` shares a's
    // buffer, so neither costs more: 12 KiB is enough.
    let out = run_chain(Some(12 * 1024)).expect("12 KiB is enough");
    assert_eq!(out[0].as_slice::<f32>().unwrap()[0], 4.0); // |-1| twice, -(-1), (-1)²
    let err = run_chain(Some(12 * 1024 - 1)).unwrap_err();
    let RunError::MemoryLimit {
        node, bytes, limit, ..
    } = &err
    else {
        panic!("expected MemoryLimit, got {err}");
    };
    assert_eq!(
        (node.as_str(), *bytes, *limit),
        ("b", 12 * 1024, 12 * 1024 - 1)
    );
    assert!(err.to_string().contains("node 'b' (op 'Neg')"), "{err}");
    // A feed alone over the limit is named as the feed.
    let err = run_chain(Some(100)).unwrap_err();
    assert!(err.to_string().contains("node 'x' (op 'feed')"), "{err}");
    assert!(run_chain(None).is_ok());
}

#[test]
fn a_panicking_kernel_fails_its_run_and_the_session_stays_usable() {
    let session = Session::new(graph(
        r#"
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "p" op: "PanicOnThirteen" input: "x" }
"#,
    ));
    let err = session.run(&[("x", int_scalar(13))], &["p"]).unwrap_err();
    let RunError::Compute { node, source, .. } = &err else {
        panic!("expected a compute error, got {err}");
    };
    assert_eq!(node, "p");
    assert_eq!(
        **source,
        KernelError::Panicked("thirteen is unlucky".into())
    );
    assert!(
        err.to_string()
            .contains("node 'p' (op 'PanicOnThirteen', device 'CPU'): the kernel panicked: thirteen is unlucky"),
        "{err}"
    );
    for v in [1, 13, 2] {
        let result = session.run(&[("x", int_scalar(v))], &["p"]);
        match v {
            13 => assert!(result.is_err()),
            _ => assert_eq!(result.unwrap()[0].as_slice::<i32>().unwrap(), &[v]),
        }
    }
}

#[test]
fn a_panicking_kernel_constructor_is_a_placement_error() {
    let text = |boom: bool| {
        format!(
            r#"
node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "p" op: "PanicOnBuild" input: "x" attr {{ key: "boom" value {{ b: {boom} }} }} }}
"#
        )
    };
    let x = || Tensor::scalar(1.5f32);
    let session = Session::new(graph(&text(true)));
    let err = session.run(&[("x", x())], &["p"]).unwrap_err();
    let RunError::Graph(graph_error) = &err else {
        panic!("expected a placement error, got {err}");
    };
    let opreg_runtime::GraphError::Placement { node, source, .. } = &**graph_error else {
        panic!("expected a placement error, got {err}");
    };
    assert_eq!(node, "p");
    assert!(
        matches!(&**source, CreateKernelError::Construction { source: KernelError::Panicked(m), .. } if m == "constructor failed on purpose"),
        "{err}"
    );
    // The session can still be asked again (same error), and a sound
    // graph of the same op runs.
    assert!(session.run(&[("x", x())], &["p"]).is_err());
    let ok = Session::new(graph(&text(false)));
    assert_eq!(ok.run(&[("x", x())], &["p"]).unwrap()[0], x());
}
