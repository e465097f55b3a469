//! The executor's checks and run semantics: malformed files, unknown ops,
//! dangling and mistyped inputs, cycles, bad feeds and fetches, pruning,
//! control inputs, and freeing/forwarding of intermediates.

use opreg_runtime::{Graph, GraphError, RunError, Session, load_graph_def};
use registry_core::proto::attr_value::ListValue;
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef, TextFormat};
use registry_core::tensor::Tensor;

fn graph(text: &str) -> Result<Graph, GraphError> {
    Graph::new(GraphDef::from_pbtxt(text).expect("test pbtxt parses"))
}

const PLACEHOLDER_X: &str =
    r#"node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }"#;

fn abs(name: &str, input: &str) -> String {
    format!(
        r#"node {{ name: "{name}" op: "Abs" input: "{input}" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}"#
    )
}

fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("executor-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).expect("write temp file");
    path
}

#[test]
fn malformed_files_are_decode_errors() {
    let garbage = temp("garbage.pb", &[0xff, 0xff, 0xff, 0x07, 0x01]);
    let err = load_graph_def(&garbage).unwrap_err();
    assert!(matches!(err, GraphError::Decode { .. }), "{err}");
    assert!(err.to_string().contains("is not a GraphDef"), "{err}");

    let bad_text = temp("bad.pbtxt", b"node { name: \"x\" op: ");
    let err = load_graph_def(&bad_text).unwrap_err();
    assert!(err.to_string().contains("as text"), "{err}");

    let missing = load_graph_def("/nonexistent/graph.pb").unwrap_err();
    assert!(matches!(missing, GraphError::Io { .. }), "{missing}");
}

#[test]
fn text_and_binary_files_load_the_same_graph() {
    let text = format!("{PLACEHOLDER_X}\n{}", abs("y", "x"));
    let def = GraphDef::from_pbtxt(&text).unwrap();
    let pb = temp("g.pb", &prost::Message::encode_to_vec(&def));
    let pbtxt = temp("g.pbtxt", text.as_bytes());
    assert_eq!(
        load_graph_def(&pb).unwrap(),
        load_graph_def(&pbtxt).unwrap()
    );
}

#[test]
fn unknown_ops_are_named_with_suggestions() {
    let err = graph(r#"node { name: "n" op: "Abss" }"#).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("node 'n'") && msg.contains("Abss") && msg.contains("did you mean 'Abs'"),
        "{msg}"
    );
}

#[test]
fn invalid_node_defs_name_the_node() {
    let err = graph(r#"node { name: "y" op: "Abs" input: "x" }"#).unwrap_err();
    assert!(
        err.to_string().contains("'y'") && err.to_string().contains("'T'"),
        "{err}"
    );
}

#[test]
fn dangling_inputs_and_ports_are_errors() {
    let err = graph(&abs("y", "nowhere")).unwrap_err();
    assert!(
        matches!(err, GraphError::DanglingInput { ref missing, .. } if missing == "nowhere"),
        "{err}"
    );
    let err = graph(&format!("{PLACEHOLDER_X}\n{}", abs("y", "x:3"))).unwrap_err();
    assert!(
        matches!(
            err,
            GraphError::BadInputPort {
                port: 3,
                num_outputs: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = graph(&format!(
        "{PLACEHOLDER_X}\n{}",
        abs("y", "x\" input: \"^ghost")
    ))
    .unwrap_err();
    assert!(matches!(err, GraphError::DanglingInput { .. }), "{err}");
}

#[test]
fn mistyped_inputs_are_errors() {
    let err = graph(&format!(
        r#"node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_INT32 }} }} }}
           {}"#,
        abs("y", "x")
    ))
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("was passed int32 from x incompatible with expected float"),
        "{msg}"
    );
}

#[test]
fn duplicate_names_and_empty_graphs_are_errors() {
    let err = graph(&format!("{PLACEHOLDER_X}\n{PLACEHOLDER_X}")).unwrap_err();
    assert!(
        matches!(
            err,
            GraphError::DuplicateNode {
                first: 0,
                second: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(graph("").unwrap_err(), GraphError::Empty));
}

#[test]
fn cycles_are_reported_with_their_nodes() {
    let err = graph(&format!(
        "{}\n{}\n{}",
        abs("a", "c"),
        abs("b", "a"),
        abs("c", "b")
    ))
    .unwrap_err();
    let GraphError::Cycle { nodes } = &err else {
        panic!("expected a cycle, got {err}");
    };
    for name in ["a", "b", "c"] {
        assert!(nodes.iter().any(|n| n == name), "{err}");
    }
    // A control edge closes a cycle too.
    let err = graph(&format!(
        "{PLACEHOLDER_X}\n{}\n{}",
        abs("a", "x\" input: \"^b"),
        abs("b", "a")
    ))
    .unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
}

#[test]
fn runs_compute_and_prune() {
    kernels_cpu::link();
    let g = graph(&format!(
        r#"{PLACEHOLDER_X}
           {}
           node {{ name: "unfed" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
           {}"#,
        abs("y", "x"),
        abs("z", "unfed")
    ))
    .unwrap();
    let session = Session::new(g);
    let x = Tensor::from_vec([3], vec![-1.0f32, 2.0, -3.0]).unwrap();
    // `z` depends on an unfed placeholder but is not fetched: it does not run.
    let out = session.run(&[("x", x.clone())], &["y"]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0]);
    assert_eq!(session.placement("y").as_deref(), Some("CPU"));
    assert_eq!(
        x.as_slice::<f32>().unwrap(),
        &[-1.0, 2.0, -3.0],
        "a caller's feed is never overwritten"
    );
    // Fetching it runs the Placeholder kernel, which asks for a feed.
    let err = session.run(&[("x", x)], &["z"]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("node 'unfed'") && msg.contains("You must feed a value"),
        "{msg}"
    );
}

#[test]
fn bad_feeds_and_fetches_are_errors() {
    kernels_cpu::link();
    let session = Session::new(graph(&format!("{PLACEHOLDER_X}\n{}", abs("y", "x"))).unwrap());
    let x = Tensor::from_vec([1], vec![1.0f32]).unwrap();
    let wrong = Tensor::from_vec([1], vec![1i32]).unwrap();
    let err = session.run(&[("x", wrong)], &["y"]).unwrap_err();
    assert!(matches!(err, RunError::FeedType { .. }), "{err}");
    assert!(
        err.to_string().contains("int32") && err.to_string().contains("float"),
        "{err}"
    );
    let err = session.run(&[("nope", x.clone())], &["y"]).unwrap_err();
    assert!(
        err.to_string().contains("feed 'nope'") && err.to_string().contains("no node"),
        "{err}"
    );
    let err = session.run(&[("x", x.clone())], &["y:1"]).unwrap_err();
    assert!(err.to_string().contains("has 1 output"), "{err}");
    let err = session
        .run(&[("x", x.clone()), ("x:0", x.clone())], &["y"])
        .unwrap_err();
    assert!(matches!(err, RunError::DuplicateFeed(_)), "{err}");
    let prepared = session.prepare(&["x"], &["y"]).unwrap();
    let err = prepared.run([x.clone(), x]).unwrap_err();
    assert!(matches!(err, RunError::FeedCount { given: 2, .. }), "{err}");
}

#[test]
fn kernel_errors_name_node_op_and_device() {
    kernels_cpu::link();
    let session = Session::new(
        graph(&format!(
            r#"{PLACEHOLDER_X}
               node {{ name: "y" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
               node {{ name: "mm" op: "MatMul" input: "x" input: "y" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}"#
        ))
        .unwrap(),
    );
    let v = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let err = session
        .run(&[("x", v.clone()), ("y", v)], &["mm"])
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("node 'mm' (op 'MatMul', device 'CPU'):"),
        "{msg}"
    );
    assert!(msg.contains("is not a matrix"), "{msg}");
}

#[test]
fn requested_devices_fall_back_to_cpu() {
    kernels_cpu::link();
    let session = Session::new(
        graph(&format!(
            r#"{PLACEHOLDER_X}
               node {{ name: "y" op: "Abs" input: "x" device: "/job:localhost/replica:0/task:0/device:TPU:0"
                       attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}"#
        ))
        .unwrap(),
    );
    let x = Tensor::from_vec([1], vec![-4.0f32]).unwrap();
    assert_eq!(
        session.run(&[("x", x)], &["y"]).unwrap()[0]
            .as_slice::<f32>()
            .unwrap(),
        &[4.0]
    );
    assert_eq!(session.placement("y").as_deref(), Some("CPU"));
}

#[test]
fn a_chain_reuses_buffers_in_place() {
    kernels_cpu::link();
    let mut text = String::from(PLACEHOLDER_X);
    let mut previous = "x".to_owned();
    for i in 0..50 {
        let name = format!("n{i}");
        text.push_str(&abs(&name, &previous));
        previous = name;
    }
    let session = Session::new(graph(&text).unwrap());
    let prepared = session.prepare(&["x"], &[previous.as_str()]).unwrap();
    // Over 16 bytes: smaller buffers are held by value and move with their
    // tensor.
    let x = Tensor::from_vec([5], vec![-1.0f32, 2.0, -3.0, 4.0, -5.0]).unwrap();
    let address = x.as_bytes().unwrap().as_ptr();
    let out = prepared.run([x]).unwrap();
    assert_eq!(
        out[0].as_slice::<f32>().unwrap(),
        &[1.0, 2.0, 3.0, 4.0, 5.0]
    );
    // The unique feed was moved down the chain and computed in place.
    assert_eq!(out[0].as_bytes().unwrap().as_ptr(), address);
}

/// A prepared run's buffers are kept for its next run, but no tensor is:
/// once a run returns, the caller's feed is held by nobody else (a
/// kernel's untaken input is released after its step), and runs after a
/// failed one compute the same values.
#[test]
fn runs_keep_their_buffers_but_no_tensors() {
    kernels_cpu::link();
    let text = format!(
        r#"{PLACEHOLDER_X}
           node {{ name: "s" op: "Shape" input: "x" attr {{ key: "T" value {{ type: DT_FLOAT }} }} attr {{ key: "out_type" value {{ type: DT_INT32 }} }} }}
           {}"#,
        abs("y", "x"),
    );
    let session = Session::new(graph(&text).unwrap());
    let prepared = session.prepare(&["x"], &["s", "y"]).unwrap();
    let values: Vec<f32> = (0..1024).map(|i| i as f32 - 512.0).collect();
    let x = Tensor::from_vec([1024], values.clone()).unwrap();
    let abs: Vec<f32> = values.iter().map(|v| v.abs()).collect();
    for round in 0..3 {
        let out = prepared.run([x.clone()]).unwrap();
        assert_eq!(out[0].as_slice::<i32>().unwrap(), [1024], "round {round}");
        assert_eq!(out[1].as_slice::<f32>().unwrap(), abs, "round {round}");
        drop(out);
        assert!(x.is_unique(), "round {round}: the run still holds the feed");
        let err = prepared.run([x.clone(), x.clone()]).unwrap_err();
        assert!(matches!(err, RunError::FeedCount { .. }), "{err}");
        assert!(
            x.is_unique(),
            "round {round}: the failed run holds the feed"
        );
    }
}

#[test]
fn static_shape_errors_are_found_before_running() {
    let err = graph(
        r#"node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
                  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 3 } } float_val: 1 } } } }
           node { name: "mm" op: "MatMul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }"#,
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GraphError::Shape(_)), "{msg}");
    assert!(msg.contains("mm") && msg.contains("MatMul"), "{msg}");
}

/// Identity-family chains run no kernel: their outputs are their inputs
/// (the fetched tensor shares the fed buffer), and a fed identity output is
/// the fed value.
#[test]
fn forwarding_chains_cost_nothing() {
    kernels_cpu::link();
    let ident = |name: &str, op: &str, input: &str| {
        format!(
            r#"node {{ name: "{name}" op: "{op}" input: "{input}" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}"#
        )
    };
    let text = format!(
        r#"{PLACEHOLDER_X}
           {}
           {}
           node {{ name: "n" op: "IdentityN" input: "s" input: "x" attr {{ key: "T" value {{ list {{ type: DT_FLOAT type: DT_FLOAT }} }} }} }}
           {}
           {}
           {}"#,
        ident("i", "Identity", "x"),
        ident("s", "StopGradient", "i"),
        ident("p", "PreventGradient", "n:1"),
        ident("snap", "Snapshot", "p"),
        abs("y", "n"),
    );
    let session = Session::new(graph(&text).unwrap());
    // Large enough to live in a shared heap buffer (small ones are inline).
    let values: Vec<f32> = (0..1024).map(|i| i as f32 - 512.0).collect();
    let x = Tensor::from_vec([1024], values.clone()).unwrap();
    let run = session.prepare(&["x"], &["snap", "y", "n:1"]).unwrap();
    assert_eq!(run.executed_nodes(), ["y"]);
    let out = run.run([x.clone()]).unwrap();
    assert!(
        out[0].shares_buffer_with(&x),
        "Snapshot(PreventGradient(x)) is x"
    );
    assert!(out[2].shares_buffer_with(&x));
    let abs: Vec<f32> = values.iter().map(|v| v.abs()).collect();
    assert_eq!(out[1].as_slice::<f32>().unwrap(), abs);
    // A fed forwarding output is the fed value, not the alias.
    let fed = Tensor::from_vec([1024], vec![5.0f32; 1024]).unwrap();
    let out = session
        .run(&[("x", x.clone()), ("i", fed)], &["snap", "y"])
        .unwrap();
    assert!(out[0].shares_buffer_with(&x));
    assert_eq!(out[1].as_slice::<f32>().unwrap(), [5.0; 1024]);
}

/// A node of `op` with `T = DT_FLOAT`, its inputs and extra attrs.
fn float_node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    let mut node = NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| (*s).to_owned()).collect(),
        ..Default::default()
    };
    node.attr
        .insert("T".into(), AttrValue::from(DataType::DtFloat));
    for (key, value) in attrs {
        node.attr.insert((*key).to_owned(), value.clone());
    }
    node
}

/// A `Placeholder` of floats.
fn float_placeholder(name: &str) -> NodeDef {
    let mut node = NodeDef {
        name: name.into(),
        op: "Placeholder".into(),
        ..Default::default()
    };
    node.attr
        .insert("dtype".into(), AttrValue::from(DataType::DtFloat));
    node
}

/// A `Const` of `value`.
fn constant(name: &str, value: &Tensor) -> NodeDef {
    let mut node = NodeDef {
        name: name.into(),
        op: "Const".into(),
        ..Default::default()
    };
    node.attr
        .insert("dtype".into(), AttrValue::from(value.dtype()));
    node.attr
        .insert("value".into(), AttrValue::from(value.to_proto()));
    node
}

/// Values on a grid of eighths: products and sums of them are exact.
fn eighths(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + seed) % 17) as f32 / 8.0 - 1.0)
        .collect()
}

/// `a` (m×k) times `b` (k×n, or n×k when `transpose_b`), row-major.
fn product(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), transpose_b: bool) -> Vec<f32> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k)
                .map(|p| {
                    a[i * k + p]
                        * if transpose_b {
                            b[j * k + p]
                        } else {
                            b[p * n + j]
                        }
                })
                .sum();
        }
    }
    out
}

#[test]
fn constant_weights_prepared_once_give_the_same_products_and_feeds_still_win() {
    kernels_cpu::link();
    let (m, n, k) = (140, 130, 150);
    let weights = eighths(k * n, 5);
    let mut def = GraphDef::default();
    let x = float_placeholder("x");
    let w = constant("w", &Tensor::from_vec([k, n], weights.clone()).unwrap());
    // The same weights as a 1×1 convolution's filter (HWIO), applied to `x`
    // seen as a 10×14 image of `k` channels.
    let filter = constant(
        "filter",
        &Tensor::from_vec([1, 1, k, n], weights.clone()).unwrap(),
    );
    let image_dims = [1i32, 10, m as i32 / 10, k as i32];
    let image_shape = constant(
        "image_shape",
        &Tensor::from_vec([4], image_dims.to_vec()).unwrap(),
    );
    let mut images = float_node("images", "Reshape", &["x", "image_shape"], &[]);
    images
        .attr
        .insert("Tshape".into(), AttrValue::from(DataType::DtInt32));
    let strides = AttrValue::from(ListValue {
        i: vec![1, 1, 1, 1],
        ..Default::default()
    });
    let padding = AttrValue::from("VALID");
    def.node = vec![
        x,
        w,
        filter,
        image_shape,
        images,
        float_node("mm", "MatMul", &["x", "w"], &[]),
        float_node(
            "conv",
            "Conv2D",
            &["images", "filter"],
            &[("strides", strides), ("padding", padding)],
        ),
    ];
    let session = Session::new(Graph::new(def).unwrap());
    let a = eighths(m * k, 1);
    let feed_x = Tensor::from_vec([m, k], a.clone()).unwrap();
    let want = product(&a, &weights, (m, n, k), false);
    for _ in 0..2 {
        let out = session
            .run(&[("x", feed_x.clone())], &["mm", "conv"])
            .unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), want.as_slice(), "MatMul");
        assert_eq!(out[1].as_slice::<f32>().unwrap(), want.as_slice(), "Conv2D");
    }
    // Feeding the constant replaces it in that run: the kernels multiply
    // the fed weights, not what they prepared.
    let other = eighths(k * n, 11);
    let fed_w = Tensor::from_vec([k, n], other.clone()).unwrap();
    let fed_filter = fed_w.reshape([1, 1, k, n]).unwrap();
    let feeds = [("x", feed_x.clone()), ("w", fed_w), ("filter", fed_filter)];
    let out = session.run(&feeds, &["mm", "conv"]).unwrap();
    let want_other = product(&a, &other, (m, n, k), false);
    assert_eq!(
        out[0].as_slice::<f32>().unwrap(),
        want_other.as_slice(),
        "fed MatMul"
    );
    assert_eq!(
        out[1].as_slice::<f32>().unwrap(),
        want_other.as_slice(),
        "fed Conv2D"
    );
    // And the plan without the feed still has the constant's products.
    let out = session.run(&[("x", feed_x)], &["mm", "conv"]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), want.as_slice());
    assert_eq!(out[1].as_slice::<f32>().unwrap(), want.as_slice());
}

#[test]
fn a_transposed_constant_b_is_prepared_as_transposed() {
    kernels_cpu::link();
    let (m, n, k) = (64, 40, 72);
    let weights = eighths(n * k, 3);
    let x = float_placeholder("x");
    let w = constant("w", &Tensor::from_vec([n, k], weights.clone()).unwrap());
    let def = GraphDef {
        node: vec![
            x,
            w,
            float_node(
                "mm",
                "MatMul",
                &["x", "w"],
                &[("transpose_b", AttrValue::from(true))],
            ),
        ],
        ..Default::default()
    };
    let session = Session::new(Graph::new(def).unwrap());
    let a = eighths(m * k, 2);
    let out = session
        .run(
            &[("x", Tensor::from_vec([m, k], a.clone()).unwrap())],
            &["mm"],
        )
        .unwrap();
    assert_eq!(
        out[0].as_slice::<f32>().unwrap(),
        product(&a, &weights, (m, n, k), true).as_slice()
    );
}
