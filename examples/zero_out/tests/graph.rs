//! ZeroOut and WeightedSum in a GraphDef built in code, together with
//! standard ops (Placeholder, Const, Abs, AddV2, MatMul), run through the
//! executor: values, inferred shapes, a `.pb` round trip, and errors found
//! by the graph check (shape functions) and at run time (kernels).
#![cfg(feature = "cpu")]

mod common;

use common::*;
use opreg_runtime::{Graph, GraphError, RunError, Session};
use registry_core::proto::prost::Message;
use registry_core::proto::{
    AttrValue, DataType, GraphDef, NodeDef, TensorShapeProto, attr_value::Value,
    tensor_shape_proto::Dim,
};
use registry_core::shape::Shape;
use registry_core::tensor::{Tensor, TensorElement};

fn placeholder(name: &str, dtype: DataType, dims: &[i64]) -> NodeDef {
    let shape = TensorShapeProto {
        dim: dims
            .iter()
            .map(|&size| Dim {
                size,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let shape = AttrValue {
        value: Some(Value::Shape(shape)),
    };
    node(
        name,
        "Placeholder",
        &[],
        &[("dtype", ty(dtype)), ("shape", shape)],
    )
}

fn constant<T: TensorElement>(name: &str, dims: &[usize], values: Vec<T>) -> NodeDef {
    let value = t(dims, values);
    node(
        name,
        "Const",
        &[],
        &[("dtype", ty(T::DTYPE)), ("value", tensor_attr(&value))],
    )
}

fn weighted_sum(name: &str, inputs: &[&str], dtype: DataType, normalize: bool) -> NodeDef {
    let n = inputs.len() as i64 - 1;
    node(
        name,
        "WeightedSum",
        inputs,
        &[
            ("N", int(n)),
            ("T", ty(dtype)),
            ("normalize", boolean(normalize)),
        ],
    )
}

/// `ws = 2 * (|ZeroOut(x)| + c) - c` in int32, and
/// `mean = (MatMul(f, m) + f + 2 f) / 4` in float.
fn mixed_graph() -> GraphDef {
    let int32 = || ("T", ty(DataType::DtInt32));
    GraphDef {
        node: vec![
            placeholder("x", DataType::DtInt32, &[-1, 3]),
            node("z", "ZeroOut", &["x"], &[]),
            node("a", "Abs", &["z"], &[int32()]),
            constant("c", &[2, 3], vec![1i32, 2, 3, 4, 5, 6]),
            node("s", "AddV2", &["a", "c"], &[int32()]),
            constant("w", &[2], vec![2i32, -1]),
            weighted_sum("ws", &["s", "c", "w"], DataType::DtInt32, false),
            placeholder("f", DataType::DtFloat, &[2, 2]),
            constant("m", &[2, 2], vec![1.0f32, 0.0, 1.0, 1.0]),
            node("mm", "MatMul", &["f", "m"], &[("T", ty(DataType::DtFloat))]),
            constant("wf", &[3], vec![1.0f32, 1.0, 2.0]),
            weighted_sum("mean", &["mm", "f", "f", "wf"], DataType::DtFloat, true),
        ],
        ..Default::default()
    }
}

fn feeds() -> [(&'static str, Tensor); 2] {
    [
        ("x", t(&[2, 3], vec![-5i32, 2, 3, 4, 5, 6])),
        ("f", t(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0])),
    ]
}

fn check_outputs(session: &Session) {
    link_kernels();
    let out = session
        .run(&feeds(), &["z:0", "ws:0", "mean:0"])
        .expect("the graph runs");
    assert_eq!(out[0].dims(), &[2, 3]);
    assert_eq!(vals::<i32>(&out[0]), vec![-5, 0, 0, 0, 0, 0]);
    assert_eq!(out[1].dims(), &[2, 3]);
    assert_eq!(vals::<i32>(&out[1]), vec![11, 2, 3, 4, 5, 6]);
    assert_eq!(out[2].dims(), &[2, 2]);
    assert_eq!(vals::<f32>(&out[2]), vec![1.5, 2.0, 4.0, 4.0]);
}

#[test]
fn mixed_graph_runs_with_the_standard_ops() {
    let session = Session::new(Graph::new(mixed_graph()).expect("the graph checks"));
    check_outputs(&session);
    for node in ["z", "ws", "mean"] {
        assert_eq!(session.placement(node).as_deref(), Some("CPU"), "{node}");
    }
}

#[test]
fn nodes_asking_for_a_gpu_run_on_cpu() {
    // There are no GPU kernels of the crate's ops: the session falls back.
    let mut def = mixed_graph();
    for node in &mut def.node {
        if node.op == "ZeroOut" || node.op == "WeightedSum" {
            node.device = "/device:GPU:0".into();
        }
    }
    let session = Session::new(Graph::new(def).unwrap());
    check_outputs(&session);
    assert_eq!(session.placement("z").as_deref(), Some("CPU"));
}

#[test]
fn shapes_are_inferred_through_the_custom_ops() {
    let graph = Graph::new(mixed_graph()).unwrap();
    let shape_of = |shapes: &[Vec<Shape>], name: &str| {
        shapes[graph.index_of(name).expect("node exists")][0].to_string()
    };
    let shapes = graph.infer_shapes(&[]).unwrap();
    assert_eq!(shape_of(&shapes, "z"), "[?,3]");
    assert_eq!(shape_of(&shapes, "a"), "[?,3]");
    assert_eq!(shape_of(&shapes, "ws"), "[2,3]");
    assert_eq!(shape_of(&shapes, "mean"), "[2,2]");
    // With x's shape fed, ZeroOut's output is fully known.
    let x = graph.endpoint("x", "feed").unwrap();
    let shapes = graph.infer_shapes(&[(x, Shape::from([2, 3]))]).unwrap();
    assert_eq!(shape_of(&shapes, "z"), "[2,3]");
}

#[test]
fn a_binary_graph_file_loads_and_runs() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("zero-out-graph-{}.pb", std::process::id()));
    std::fs::write(&path, mixed_graph().encode_to_vec()).unwrap();
    let graph = Graph::from_file(&path).expect("the .pb loads and checks");
    std::fs::remove_file(&path).unwrap();
    check_outputs(&Session::new(graph));
}

#[test]
fn shape_functions_reject_bad_graphs() {
    // values of different shapes.
    let mut def = mixed_graph();
    def.node.push(constant("v3", &[3], vec![1i32, 2, 3]));
    def.node.push(weighted_sum(
        "bad",
        &["c", "v3", "w"],
        DataType::DtInt32,
        false,
    ));
    let err = Graph::new(def).unwrap_err();
    assert!(matches!(err, GraphError::Shape(_)), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("Shapes must be equal rank, but are 2 and 1 for input 1 ('values[1]')")
            && msg.contains("{{node bad}} = WeightedSum")
            && msg.ends_with("with input shapes: [2,3], [3], [2]."),
        "{msg}"
    );
    // weights of the wrong length.
    let mut def = mixed_graph();
    def.node.push(weighted_sum(
        "bad",
        &["c", "c", "c", "w"],
        DataType::DtInt32,
        false,
    ));
    let err = Graph::new(def).unwrap_err();
    assert!(matches!(err, GraphError::Shape(_)), "{err}");
    assert!(
        err.to_string().contains(
            "Dimensions must be equal, but are 2 and 3 for input 3 ('weights') of \
             '{{node bad}} = WeightedSum[N=3, T=DT_INT32, normalize=false](c, c, c, w)'"
        ),
        "{err}"
    );
}

#[test]
fn kernel_errors_name_the_node() {
    // Weights fed at run time, summing to zero with normalize set.
    let def = GraphDef {
        node: vec![
            placeholder("v", DataType::DtDouble, &[2]),
            placeholder("w", DataType::DtDouble, &[2]),
            weighted_sum("mean", &["v", "v", "w"], DataType::DtDouble, true),
        ],
        ..Default::default()
    };
    let session = Session::new(Graph::new(def).unwrap());
    let v = t(&[2], vec![1.0f64, 2.0]);
    let ok = session
        .run(
            &[("v", v.clone()), ("w", t(&[2], vec![1.0f64, 3.0]))],
            &["mean"],
        )
        .unwrap();
    assert_eq!(vals::<f64>(&ok[0]), vec![1.0, 2.0]);
    let err = session
        .run(&[("v", v), ("w", t(&[2], vec![1.0f64, -1.0]))], &["mean"])
        .unwrap_err();
    assert!(matches!(err, RunError::Compute { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "node 'mean' (op 'WeightedSum', device 'CPU'): WeightedSum node 'mean': normalize is \
         set, but the weights sum to zero"
    );
}
