//! The graph rewrites a session runs before planning (constant folding,
//! weight folding): each keeps the fetched values (exactly, or within
//! float rounding where weights are folded), leaves fed and fetched nodes
//! alone, and can be turned off.

use opreg_runtime::{Graph, GraphOptimizations, OptimizeReport, Session, SessionOptions};
use opreg_tests::graphs::{compare_model, shared_model};
use registry_core::kernel::KernelRegistry;
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef};
use registry_core::registry::OpRegistry;
use registry_core::tensor::Tensor;

pub(crate) fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| (*s).to_owned()).collect(),
        attr: attrs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        ..NodeDef::default()
    }
}

pub(crate) fn constant(name: &str, value: &Tensor) -> NodeDef {
    node(
        name,
        "Const",
        &[],
        &[
            ("dtype", value.dtype().into()),
            ("value", value.to_proto().into()),
        ],
    )
}

pub(crate) fn placeholder(name: &str, dtype: DataType) -> NodeDef {
    node(name, "Placeholder", &[], &[("dtype", dtype.into())])
}

/// A float `Conv2D` with unit strides and `VALID` padding.
fn valid_conv(name: &str, inputs: &[&str]) -> NodeDef {
    node(
        name,
        "Conv2D",
        inputs,
        &[
            ("T", DataType::DtFloat.into()),
            ("strides", AttrValue::from(vec![1i64, 1, 1, 1])),
            ("padding", AttrValue::from("VALID")),
        ],
    )
}

pub(crate) fn float_op(name: &str, op: &str, inputs: &[&str]) -> NodeDef {
    node(name, op, inputs, &[("T", DataType::DtFloat.into())])
}

pub(crate) fn graph(nodes: Vec<NodeDef>) -> Graph {
    kernels_cpu::link();
    Graph::new(GraphDef {
        node: nodes,
        ..GraphDef::default()
    })
    .unwrap()
}

fn optimize(graph: &Graph, feeds: &[&str], fetches: &[&str]) -> (Graph, OptimizeReport) {
    opreg_runtime::optimize_graph(
        graph,
        feeds,
        fetches,
        &[],
        &SessionOptions::default(),
        OpRegistry::global(),
        KernelRegistry::global(),
    )
    .unwrap()
}

/// Runs `graph` with and without the rewrites.
fn run_both(
    graph: &Graph,
    feeds: &[(&str, Tensor)],
    fetches: &[&str],
) -> (Vec<Tensor>, Vec<Tensor>) {
    let optimized = Session::new(graph.clone()).run(feeds, fetches).unwrap();
    let plain = Session::with_options(
        graph.clone(),
        SessionOptions {
            optimizations: GraphOptimizations::none(),
            ..SessionOptions::default()
        },
    )
    .run(feeds, fetches)
    .unwrap();
    (optimized, plain)
}

fn scalar(v: f32) -> Tensor {
    Tensor::from_vec([], vec![v]).unwrap()
}

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let x = (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503));
            (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

/// A float tensor's elements as bits (NaN and signed zeros told apart).
pub(crate) fn bits(t: &Tensor) -> Vec<u32> {
    t.as_slice::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

fn assert_close(a: &Tensor, b: &Tensor, tolerance: f32) {
    assert_eq!(a.dims(), b.dims());
    let (a, b) = (a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tolerance * y.abs().max(1.0),
            "element {i}: {x} against {y}"
        );
    }
}

#[test]
fn constant_subgraphs_become_consts_and_keep_their_values() {
    let g = graph(vec![
        placeholder("x", DataType::DtFloat),
        constant("two", &scalar(2.0)),
        float_op("four", "Mul", &["two", "two"]),
        float_op("root", "Sqrt", &["four"]),
        float_op("y", "Mul", &["x", "root"]),
    ]);
    let (optimized, report) = optimize(&g, &["x"], &["y"]);
    assert_eq!(optimized.node("root").unwrap().op(), "Const");
    // Only the tensor the Mul reads is materialized; the rest is pruned.
    assert!(optimized.node("four").is_none());
    assert_eq!(report.folded_constants, 1);
    assert_eq!((report.nodes_before, report.nodes_after), (5, 3));
    let x = Tensor::from_vec([3], vec![1.0f32, -2.0, 0.5]).unwrap();
    let (ours, plain) = run_both(&g, &[("x", x)], &["y"]);
    assert_eq!(ours, plain);
    assert_eq!(ours[0].as_slice::<f32>().unwrap(), [2.0, -4.0, 1.0]);
}

#[test]
fn a_fed_constant_is_not_folded() {
    let g = graph(vec![
        constant("c", &scalar(3.0)),
        float_op("square", "Mul", &["c", "c"]),
    ]);
    let (optimized, report) = optimize(&g, &["c"], &["square"]);
    assert_eq!(optimized.node("square").unwrap().op(), "Mul");
    assert_eq!(report.folded_constants, 0);
    let session = Session::new(g);
    let out = session.run(&[("c", scalar(5.0))], &["square"]).unwrap();
    assert_eq!(out[0], scalar(25.0));
    // Unfed, the same session folds it.
    let out = session.run(&[], &["square"]).unwrap();
    assert_eq!(out[0], scalar(9.0));
    // Folded to a constant, which the plan makes once: no kernel runs.
    let prepared = session.prepare(&[], &["square"]).unwrap();
    assert!(prepared.executed_nodes().is_empty());
    assert_eq!(session.placement("square").as_deref(), Some("CPU"));
}

#[test]
fn results_over_the_size_limit_stay_computations() {
    let dims = Tensor::from_vec([2], vec![1024i32, 1024]).unwrap();
    let g = graph(vec![
        constant("dims", &dims),
        constant("one", &scalar(1.0)),
        node(
            "ones",
            "Fill",
            &["dims", "one"],
            &[
                ("T", DataType::DtFloat.into()),
                ("index_type", DataType::DtInt32.into()),
            ],
        ),
        constant("axes", &Tensor::from_vec([2], vec![0i32, 1]).unwrap()),
        node(
            "total",
            "Sum",
            &["ones", "axes"],
            &[
                ("T", DataType::DtFloat.into()),
                ("Tidx", DataType::DtInt32.into()),
            ],
        ),
    ]);
    // 4 MiB of ones: over a 1 MiB limit, so neither it nor its sum folds.
    let small = GraphOptimizations {
        max_constant_bytes: 1 << 20,
        ..GraphOptimizations::default()
    };
    let small = SessionOptions {
        optimizations: small,
        ..SessionOptions::default()
    };
    let (_, report) = opreg_runtime::optimize_graph(
        &g,
        &[],
        &["total"],
        &[],
        &small,
        OpRegistry::global(),
        KernelRegistry::global(),
    )
    .unwrap();
    assert_eq!(report.folded_constants, 0);
    // Under the default 10 MiB it folds to the one scalar fetched.
    let (optimized, report) = optimize(&g, &[], &["total"]);
    assert_eq!(report.folded_constants, 1);
    assert_eq!(optimized.nodes().len(), 1);
    let session = Session::with_options(g, small);
    assert_eq!(session.run(&[], &["total"]).unwrap()[0], scalar(1048576.0));
}

#[test]
fn a_node_that_fails_on_its_constants_fails_the_run_as_written() {
    let int = |v: i32| Tensor::from_vec([], vec![v]).unwrap();
    let g = graph(vec![
        constant("seven", &int(7)),
        constant("zero", &int(0)),
        node(
            "quotient",
            "FloorDiv",
            &["seven", "zero"],
            &[("T", DataType::DtInt32.into())],
        ),
    ]);
    let optimized = Session::new(g.clone()).run(&[], &["quotient"]).unwrap_err();
    let plain = Session::with_options(
        g,
        SessionOptions {
            optimizations: GraphOptimizations::none(),
            ..SessionOptions::default()
        },
    )
    .run(&[], &["quotient"])
    .unwrap_err();
    assert_eq!(optimized.to_string(), plain.to_string());
    assert!(
        optimized.to_string().contains("Integer division by zero"),
        "{optimized}"
    );
}

/// `x -> Conv2D(W) -> Mul(scale) -> Add/Sub(offset)`: batch normalization
/// as a frozen model keeps it, here with the constants still to fold.
fn conv_batch_norm(op: &str, offset_op: &str) -> Graph {
    let (filter_dims, channels): (Vec<usize>, usize) = match op {
        "Conv2D" => (vec![3, 3, 2, 4], 4),
        "DepthwiseConv2dNative" => (vec![3, 3, 2, 2], 4),
        _ => unreachable!(),
    };
    let n: usize = filter_dims.iter().product();
    let filter = Tensor::from_vec(filter_dims, values(n, 1)).unwrap();
    let gamma = Tensor::from_vec([channels], values(channels, 2)).unwrap();
    let variance = Tensor::from_vec(
        [channels],
        values(channels, 3).iter().map(|v| v.abs() + 0.5).collect(),
    )
    .unwrap();
    let beta = Tensor::from_vec([1, 1, 1, channels], values(channels, 4)).unwrap();
    let conv_attrs = [
        ("T", DataType::DtFloat.into()),
        ("strides", AttrValue::from(vec![1i64, 1, 1, 1])),
        ("padding", "SAME".into()),
    ];
    graph(vec![
        placeholder("x", DataType::DtFloat),
        constant("w", &filter),
        node(
            "w/read",
            "Identity",
            &["w"],
            &[("T", DataType::DtFloat.into())],
        ),
        node("conv", op, &["x", "w/read"], &conv_attrs),
        constant("gamma", &gamma),
        constant("variance", &variance),
        constant("epsilon", &scalar(1e-3)),
        float_op("var_eps", "AddV2", &["variance", "epsilon"]),
        float_op("rsqrt", "Rsqrt", &["var_eps"]),
        float_op("scale", "Mul", &["gamma", "rsqrt"]),
        float_op("scaled", "Mul", &["scale", "conv"]),
        constant("beta", &beta),
        float_op("out", offset_op, &["scaled", "beta"]),
        float_op("relu", "Relu6", &["out"]),
    ])
}

fn conv_input() -> Tensor {
    Tensor::from_vec([2, 5, 5, 2], values(100, 7)).unwrap()
}

#[test]
fn batch_norm_scales_fold_into_convolution_weights() {
    for op in ["Conv2D", "DepthwiseConv2dNative"] {
        for offset in ["AddV2", "Sub"] {
            let g = conv_batch_norm(op, offset);
            let unfused = SessionOptions {
                optimizations: GraphOptimizations {
                    fusion: false,
                    ..GraphOptimizations::default()
                },
                ..SessionOptions::default()
            };
            let (optimized, report) = opreg_runtime::optimize_graph(
                &g,
                &["x"],
                &["relu"],
                &[],
                &unfused,
                OpRegistry::global(),
                KernelRegistry::global(),
            )
            .unwrap();
            assert_eq!(
                (report.folded_scales, report.bias_adds),
                (1, 1),
                "{op} {offset}: {report:?}"
            );
            // The Mul is now the convolution (on scaled weights) and the
            // offset a BiasAdd; the original convolution is gone.
            assert_eq!(optimized.node("scaled").unwrap().op(), op);
            assert_eq!(optimized.node("out").unwrap().op(), "BiasAdd");
            assert!(optimized.node("conv").is_none());
            // With fusion too, the three are one node named as the last.
            let (optimized, report) = optimize(&g, &["x"], &["relu"]);
            assert_eq!(report.fused, 1, "{op} {offset}: {report:?}");
            assert_eq!(optimized.node("relu").unwrap().op(), format!("_Fused{op}"));
            let session = Session::new(g.clone());
            let executed: Vec<String> = session
                .prepare(&["x"], &["relu"])
                .unwrap()
                .executed_nodes()
                .into_iter()
                .map(str::to_owned)
                .collect();
            // One kernel: the two constants (the scaled weights, the bias
            // as a vector) are made when the run is planned.
            assert_eq!(executed, ["relu"], "{op} {offset}");
            let (ours, plain) = run_both(&g, &[("x", conv_input())], &["relu"]);
            assert_close(&ours[0], &plain[0], 1e-5);
        }
    }
}

#[test]
fn a_fetched_convolution_keeps_its_value() {
    let g = conv_batch_norm("Conv2D", "AddV2");
    let (optimized, report) = optimize(&g, &["x"], &["relu", "conv"]);
    assert_eq!(report.folded_scales, 0, "{report:?}");
    assert_eq!(optimized.node("conv").unwrap().op(), "Conv2D");
    let (ours, plain) = run_both(&g, &[("x", conv_input())], &["relu", "conv"]);
    assert_eq!(ours[1], plain[1]);
    assert_close(&ours[0], &plain[0], 1e-5);
}

#[test]
fn matmul_scales_fold_into_either_weight_layout() {
    for transpose_b in [false, true] {
        let b_dims = if transpose_b { [3, 5] } else { [5, 3] };
        let g = graph(vec![
            placeholder("x", DataType::DtFloat),
            constant("b", &Tensor::from_vec(b_dims, values(15, 11)).unwrap()),
            node(
                "mm",
                "MatMul",
                &["x", "b"],
                &[
                    ("T", DataType::DtFloat.into()),
                    ("transpose_b", transpose_b.into()),
                ],
            ),
            constant(
                "s",
                &Tensor::from_vec([3], vec![2.0f32, -0.5, 3.0]).unwrap(),
            ),
            float_op("y", "Mul", &["mm", "s"]),
        ]);
        let (optimized, report) = optimize(&g, &["x"], &["y"]);
        assert_eq!(report.folded_scales, 1, "transpose_b {transpose_b}");
        assert_eq!(optimized.node("y").unwrap().op(), "MatMul");
        let x = Tensor::from_vec([4, 5], values(20, 12)).unwrap();
        let (ours, plain) = run_both(&g, &[("x", x)], &["y"]);
        assert_close(&ours[0], &plain[0], 1e-5);
    }
}

#[test]
fn a_scale_that_is_not_per_channel_is_left_alone() {
    // A scale per row of the output, not per channel: not foldable.
    let g = graph(vec![
        placeholder("x", DataType::DtFloat),
        constant("b", &Tensor::from_vec([5, 3], values(15, 11)).unwrap()),
        node(
            "mm",
            "MatMul",
            &["x", "b"],
            &[("T", DataType::DtFloat.into())],
        ),
        constant(
            "s",
            &Tensor::from_vec([4, 1], vec![2.0f32, -0.5, 3.0, 1.0]).unwrap(),
        ),
        float_op("y", "Mul", &["mm", "s"]),
    ]);
    let (optimized, report) = optimize(&g, &["x"], &["y"]);
    assert_eq!(report.folded_scales, 0);
    assert_eq!(optimized.node("y").unwrap().op(), "Mul");
}

#[test]
fn mobilenet_v2_loses_its_batch_norm_arithmetic_and_matches_tensorflow() {
    let m = shared_model("mobilenet_v2");
    let g = Graph::from_file(m.dir.join("graph.pb")).unwrap();
    let feeds: Vec<&str> = m.feed_pairs().iter().map(|(n, _)| *n).collect();
    let (optimized, report) = optimize(&g, &feeds, &m.fetch_names());
    // Each of the 52 convolutions carries a batch norm; the 4 zero Pads
    // (Keras' ZeroPadding2D) become the padding of the depthwise
    // convolution after them (SAME padding: each pads an even image by one
    // row and column after it for a stride of 2); each convolution then
    // fuses with its bias (and Relu6), and the classifier's MatMul with
    // its bias.
    assert_eq!(
        (
            report.folded_scales,
            report.bias_adds,
            report.folded_pads,
            report.fused
        ),
        (52, 52, 4, 53),
        "{report:?}"
    );
    let left: Vec<&str> = optimized
        .nodes()
        .iter()
        .map(|n| n.op())
        .filter(|op| matches!(*op, "Mul" | "Sub" | "Rsqrt" | "AddV2"))
        .collect();
    // The residual connections' additions stay.
    assert!(left.iter().all(|op| *op == "AddV2"), "{left:?}");
    let outputs = Session::new(g)
        .run(&m.feed_pairs(), &m.fetch_names())
        .unwrap();
    for (fetch, ours) in m.fetches.iter().zip(&outputs) {
        compare_model(&fetch.name, ours, &fetch.tensor).unwrap();
    }
}

/// `x -> op(W) -> BiasAdd(b) [-> activation]`, NHWC, random constants;
/// the nodes are `contraction`, `bias` and `act`.
fn fusable(op: &str, activation: Option<&str>) -> (Graph, Tensor) {
    let (w_dims, x) = match op {
        "Conv2D" => (
            vec![3, 3, 2, 4],
            Tensor::from_vec([1, 5, 5, 2], values(50, 31)).unwrap(),
        ),
        "DepthwiseConv2dNative" => (
            vec![3, 3, 2, 2],
            Tensor::from_vec([1, 5, 5, 2], values(50, 32)).unwrap(),
        ),
        _ => (
            vec![5, 3],
            Tensor::from_vec([4, 5], values(20, 33)).unwrap(),
        ),
    };
    // Inputs up to +-8 so that Relu6 and the saturating activations see
    // both sides.
    let x = Tensor::from_vec(
        x.dims().to_vec(),
        x.as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|v| v * 8.0)
            .collect(),
    )
    .unwrap();
    (contraction_graph(op, &w_dims, 1, activation, 34), x)
}

/// `x -> op(w) -> BiasAdd(b) [-> activation]` with constant `w` of
/// `w_dims` and `b` (one per output channel), their values from `seed` and
/// `seed + 1`; convolutions NHWC with `SAME` padding and `stride`; the
/// nodes are `contraction`, `bias` and `act` (LeakyRelu's alpha 0.3).
fn contraction_graph(
    op: &str,
    w_dims: &[usize],
    stride: i64,
    activation: Option<&str>,
    seed: u32,
) -> Graph {
    let channels = match op {
        "DepthwiseConv2dNative" => w_dims[2] * w_dims[3],
        _ => w_dims[w_dims.len() - 1],
    };
    let w: usize = w_dims.iter().product();
    let mut attrs = vec![("T", DataType::DtFloat.into())];
    if op != "MatMul" {
        attrs.push(("strides", AttrValue::from(vec![1i64, stride, stride, 1])));
        attrs.push(("padding", AttrValue::from("SAME")));
    }
    let mut nodes = vec![
        placeholder("x", DataType::DtFloat),
        constant(
            "w",
            &Tensor::from_vec(w_dims.to_vec(), values(w, seed)).unwrap(),
        ),
        node("contraction", op, &["x", "w"], &attrs),
        constant(
            "b",
            &Tensor::from_vec([channels], values(channels, seed + 1)).unwrap(),
        ),
        float_op("bias", "BiasAdd", &["contraction", "b"]),
    ];
    if let Some(act) = activation {
        let mut act_attrs = vec![("T", DataType::DtFloat.into())];
        if act == "LeakyRelu" {
            act_attrs.push(("alpha", AttrValue::from(0.3f32)));
        }
        nodes.push(node("act", act, &["bias"], &act_attrs));
    }
    graph(nodes)
}

fn fused_ops_of(g: &Graph, name: &str) -> Vec<String> {
    let node = g.node(name).unwrap();
    registry_core::attr::NodeAttrs::new(&node.def, &node.op_def)
        .get::<Vec<String>>("fused_ops")
        .unwrap()
}

#[test]
fn contractions_fuse_with_their_bias_and_activation_and_compute_the_same() {
    for (op, fused) in [
        ("Conv2D", "_FusedConv2D"),
        ("DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative"),
        ("MatMul", "_FusedMatMul"),
    ] {
        for activation in [
            None,
            Some("Relu"),
            Some("Relu6"),
            Some("Elu"),
            Some("LeakyRelu"),
            Some("Tanh"),
            Some("Sigmoid"),
        ] {
            let (g, x) = fusable(op, activation);
            let last = if activation.is_some() { "act" } else { "bias" };
            let (optimized, report) = optimize(&g, &["x"], &[last]);
            assert_eq!(report.fused, 1, "{op} {activation:?}");
            assert_eq!(
                optimized.node(last).unwrap().op(),
                fused,
                "{op} {activation:?}"
            );
            assert!(optimized.node("contraction").is_none());
            let mut expected = vec!["BiasAdd".to_owned()];
            expected.extend(activation.map(str::to_owned));
            assert_eq!(fused_ops_of(&optimized, last), expected);
            // The same arithmetic, element for element.
            let (ours, plain) = run_both(&g, &[("x", x)], &[last]);
            assert_eq!(ours[0], plain[0], "{op} {activation:?}");
        }
    }
}

/// `x -> op(W) -> BiasAdd(b) [-> activation]` on the shapes that take the
/// fused `float` kernels' fast paths: 1x1 and 3x3 convolutions through the
/// packed product (enough pixels, output channels with whole 16-column
/// tiles and an edge tile) and through the direct kernel (16 output
/// channels or fewer), depthwise convolutions with multiplier 1 through
/// the vector kernel (whole vectors, then leftover channels; edge pixels;
/// stride 2), and `MatMul` with a packed constant `b`. The input has values
/// up to +-8 (both of Relu6's edges), a NaN pixel and a zero one; `w` and
/// `b` are constants, as a frozen model's.
fn fast_path_fusable(
    op: &str,
    x_dims: &[usize],
    w_dims: &[usize],
    stride: i64,
    activation: Option<&str>,
) -> (Graph, Tensor) {
    let n: usize = x_dims.iter().product();
    let mut x: Vec<f32> = values(n, 41).iter().map(|v| v * 8.0).collect();
    // A NaN pixel (its sums are NaN, which the activations keep) and a
    // zero one.
    let depth = x_dims[x_dims.len() - 1];
    x[depth * 3..depth * 4].fill(f32::NAN);
    x[depth * 5..depth * 6].fill(0.0);
    (
        contraction_graph(op, w_dims, stride, activation, 42),
        Tensor::from_vec(x_dims.to_vec(), x).unwrap(),
    )
}

#[test]
fn fused_fast_paths_compute_what_the_unfused_ops_do() {
    let cases: [(&str, &[usize], &[usize], i64); 11] = [
        ("Conv2D", &[2, 6, 7, 24], &[1, 1, 24, 40], 1),
        ("Conv2D", &[1, 9, 8, 8], &[1, 1, 8, 48], 1),
        ("Conv2D", &[1, 6, 6, 5], &[3, 3, 5, 24], 1),
        ("Conv2D", &[2, 11, 10, 3], &[3, 3, 3, 16], 2),
        ("Conv2D", &[1, 7, 9, 16], &[1, 1, 16, 8], 1),
        ("Conv2D", &[1, 5, 6, 12], &[3, 3, 12, 11], 1),
        ("DepthwiseConv2dNative", &[2, 7, 9, 52], &[3, 3, 52, 1], 1),
        ("DepthwiseConv2dNative", &[1, 9, 9, 48], &[3, 3, 48, 1], 2),
        ("DepthwiseConv2dNative", &[1, 3, 3, 11], &[3, 3, 11, 1], 1),
        ("MatMul", &[40, 24], &[24, 40], 1),
        ("MatMul", &[17, 300], &[300, 19], 1),
    ];
    for (op, x_dims, w_dims, stride) in cases {
        for activation in [None, Some("Relu"), Some("Relu6")] {
            let what = format!("{op} {x_dims:?} * {w_dims:?} / {stride}, {activation:?}");
            let (g, x) = fast_path_fusable(op, x_dims, w_dims, stride, activation);
            let last = if activation.is_some() { "act" } else { "bias" };
            let (optimized, report) = optimize(&g, &["x"], &[last]);
            assert_eq!(report.fused, 1, "{what}");
            assert!(
                optimized.node(last).unwrap().op().starts_with("_Fused"),
                "{what}"
            );
            let (ours, plain) = run_both(&g, &[("x", x)], &[last]);
            assert_eq!(ours[0].dims(), plain[0].dims(), "{what}");
            let (ours, plain) = (bits(&ours[0]), bits(&plain[0]));
            let nan = ours.iter().filter(|b| f32::from_bits(**b).is_nan()).count();
            assert!(nan > 0, "{what}: the NaN pixel's sums are NaN");
            let differ = ours.iter().zip(&plain).position(|(a, b)| {
                a != b && !(f32::from_bits(*a).is_nan() && f32::from_bits(*b).is_nan())
            });
            assert_eq!(differ, None, "{what}: first differing element");
            if activation == Some("Relu6") {
                let (zeros, sixes) = ours.iter().fold((0, 0), |(z, s), b| {
                    let v = f32::from_bits(*b);
                    (z + usize::from(v == 0.0), s + usize::from(v == 6.0))
                });
                assert!(zeros > 0 && sixes > 0, "{what}: both of Relu6's edges");
            }
        }
    }
}

#[test]
fn a_fetched_or_shared_link_ends_the_chain() {
    // The BiasAdd is fetched: the contraction and the bias fuse, the
    // activation stays.
    let (g, x) = fusable("Conv2D", Some("Relu"));
    let (optimized, report) = optimize(&g, &["x"], &["bias", "act"]);
    assert_eq!(report.fused, 1);
    assert_eq!(optimized.node("bias").unwrap().op(), "_FusedConv2D");
    assert_eq!(optimized.node("act").unwrap().op(), "Relu");
    let (ours, plain) = run_both(&g, &[("x", x.clone())], &["bias", "act"]);
    assert_eq!(ours, plain);
    // The contraction is fetched: nothing fuses.
    let (optimized, report) = optimize(&g, &["x"], &["contraction", "act"]);
    assert_eq!(report.fused, 0);
    assert_eq!(optimized.node("act").unwrap().op(), "Relu");
    // Switched off, or with the GPU preferred (the fused ops have CPU
    // kernels only; the GPU kernels of Conv2D are linked): nothing fuses.
    assert!(kernels_cuda::link() > 0);
    for options in [
        SessionOptions {
            optimizations: GraphOptimizations {
                fusion: false,
                ..GraphOptimizations::default()
            },
            ..SessionOptions::default()
        },
        SessionOptions {
            devices: vec!["GPU".into(), "CPU".into()],
            ..SessionOptions::default()
        },
    ] {
        let (optimized, report) = opreg_runtime::optimize_graph(
            &g,
            &["x"],
            &["act"],
            &[],
            &options,
            OpRegistry::global(),
            KernelRegistry::global(),
        )
        .unwrap();
        assert_eq!(report.fused, 0, "{options:?}");
        assert_eq!(optimized.node("act").unwrap().op(), "Relu");
    }
}

/// No activation, the arithmetic ones and Elu (the one through `exp`).
const ARITHMETIC_AND_ELU: [Option<&str>; 5] = [
    None,
    Some("Relu"),
    Some("Relu6"),
    Some("LeakyRelu"),
    Some("Elu"),
];

#[test]
fn fused_epilogues_flush_denormal_biases_as_the_unfused_ops_do() {
    // A zero image: each convolution sum is 0, so the output is the
    // activation of the bias, whose denormals TF's kernels (and a session,
    // by default) flush to zero; 5.0 stays.
    let bias = [1e-40f32, -1e-40, 2e-39, 5.0];
    for activation in ARITHMETIC_AND_ELU {
        let mut attrs = vec![("T", DataType::DtFloat.into())];
        if activation == Some("LeakyRelu") {
            attrs.push(("alpha", AttrValue::from(0.5f32)));
        }
        let mut nodes = vec![
            placeholder("x", DataType::DtFloat),
            constant("w", &Tensor::from_vec([1, 1, 2, 4], values(8, 5)).unwrap()),
            constant("b", &Tensor::from_vec([4], bias.to_vec()).unwrap()),
            valid_conv("contraction", &["x", "w"]),
            float_op("bias", "BiasAdd", &["contraction", "b"]),
        ];
        if let Some(act) = activation {
            nodes.push(node("act", act, &["bias"], &attrs));
        }
        let g = graph(nodes);
        let last = if activation.is_some() { "act" } else { "bias" };
        let (_, report) = optimize(&g, &["x"], &[last]);
        assert_eq!(report.fused, 1, "{activation:?}");
        let x = Tensor::from_vec([1, 2, 2, 2], vec![0.0f32; 8]).unwrap();
        let (ours, plain) = run_both(&g, &[("x", x)], &[last]);
        assert_eq!(bits(&ours[0]), bits(&plain[0]), "{activation:?}");
        for pixel in ours[0].as_slice::<f32>().unwrap().chunks(4) {
            assert_eq!(pixel[..3], [0.0; 3], "{activation:?}: {pixel:?}");
            assert!(pixel[3] > 0.9, "{activation:?}: {pixel:?}");
        }
    }
}

/// A placeholder of `dims` (-1: unknown).
fn shaped_placeholder(name: &str, dims: &[i64]) -> NodeDef {
    node(
        name,
        "Placeholder",
        &[],
        &[
            ("dtype", DataType::DtFloat.into()),
            (
                "shape",
                AttrValue::from(registry_core::shape::Shape::from_dims(dims).to_proto()),
            ),
        ],
    )
}

/// `fusable(op, None)` with shaped inputs, then `sum = add(bias, r)` (the
/// operands in that order, or swapped) of a residual input `r` of
/// `r_dims`, then an optional activation `act`; with the feeds.
fn residual(
    op: &str,
    add: &str,
    swapped: bool,
    r_dims: &[i64],
    unknown_batch: bool,
    activation: Option<&str>,
) -> (Graph, Vec<(&'static str, Tensor)>) {
    let (g, x) = fusable(op, None);
    let mut nodes = g.to_graph_def().node;
    let batch = |d: &[usize]| -> Vec<i64> {
        d.iter()
            .enumerate()
            .map(|(i, &v)| {
                if i == 0 && unknown_batch {
                    -1
                } else {
                    v as i64
                }
            })
            .collect()
    };
    let x_dims = batch(x.dims());
    let at = nodes.iter().position(|n| n.name == "x").unwrap();
    nodes[at] = shaped_placeholder("x", &x_dims);
    let mut r_shape = r_dims.to_vec();
    if unknown_batch && r_shape.len() == x_dims.len() {
        r_shape[0] = -1;
    }
    nodes.push(shaped_placeholder("r", &r_shape));
    let inputs = if swapped {
        ["r", "bias"]
    } else {
        ["bias", "r"]
    };
    nodes.push(float_op("sum", add, &inputs));
    if let Some(act) = activation {
        let mut attrs = vec![("T", DataType::DtFloat.into())];
        if act == "LeakyRelu" {
            attrs.push(("alpha", AttrValue::from(0.2f32)));
        }
        nodes.push(node("act", act, &["sum"], &attrs));
    }
    let r_len: i64 = r_dims.iter().product();
    let r = Tensor::from_vec(
        r_dims.iter().map(|&d| d as usize).collect::<Vec<_>>(),
        values(r_len as usize, 39).iter().map(|v| v * 4.0).collect(),
    )
    .unwrap();
    (graph(nodes), vec![("x", x), ("r", r)])
}

#[test]
fn residual_adds_fuse_into_conv2d_and_matmul_and_compute_the_same() {
    for (op, fused, out_dims) in [
        ("Conv2D", "_FusedConv2D", vec![1i64, 5, 5, 4]),
        ("MatMul", "_FusedMatMul", vec![4, 3]),
    ] {
        for (add, swapped, unknown_batch) in [
            ("AddV2", false, false),
            ("AddV2", true, false),
            ("AddV2", false, true),
        ] {
            for activation in ARITHMETIC_AND_ELU {
                let case = format!(
                    "{op} {add} swapped {swapped} unknown batch {unknown_batch} {activation:?}"
                );
                let (g, feeds) = residual(op, add, swapped, &out_dims, unknown_batch, activation);
                let last = if activation.is_some() { "act" } else { "sum" };
                let (optimized, report) = optimize(&g, &["x", "r"], &[last]);
                assert_eq!(report.fused, 1, "{case}");
                let node = optimized.node(last).unwrap();
                assert_eq!(node.op(), fused, "{case}");
                for gone in ["contraction", "bias", "sum"] {
                    assert!(
                        gone == last || optimized.node(gone).is_none(),
                        "{case}: {gone}"
                    );
                }
                let mut expected = vec!["BiasAdd".to_owned(), "Add".to_owned()];
                expected.extend(activation.map(str::to_owned));
                assert_eq!(fused_ops_of(&optimized, last), expected, "{case}");
                assert_eq!(node.def.input[3], "r", "{case}");
                // The same arithmetic, element for element.
                let (ours, plain) = run_both(&g, &feeds, &[last]);
                assert_eq!(ours[0], plain[0], "{case}");
            }
        }
    }
}

#[test]
fn an_add_that_broadcasts_or_is_not_the_biases_only_reader_stays() {
    // A per-channel addend broadcasts: the bias fuses, the AddV2 stays.
    let (g, feeds) = residual("Conv2D", "AddV2", false, &[4], false, Some("Relu"));
    let (optimized, report) = optimize(&g, &["x", "r"], &["act"]);
    assert_eq!(report.fused, 1);
    assert_eq!(fused_ops_of(&optimized, "bias"), ["BiasAdd"]);
    assert_eq!(optimized.node("sum").unwrap().op(), "AddV2");
    let (ours, plain) = run_both(&g, &feeds, &["act"]);
    assert_eq!(ours, plain);
    // The depthwise convolution has no Add form (as in TensorFlow).
    let (g, x) = fusable("DepthwiseConv2dNative", None);
    let mut nodes = g.to_graph_def().node;
    let at = nodes.iter().position(|n| n.name == "x").unwrap();
    nodes[at] = shaped_placeholder("x", &[1, 5, 5, 2]);
    nodes.push(shaped_placeholder("r", &[1, 5, 5, 4]));
    nodes.push(float_op("sum", "AddV2", &["bias", "r"]));
    let g = graph(nodes);
    let (optimized, report) = optimize(&g, &["x", "r"], &["sum"]);
    assert_eq!(report.fused, 1);
    assert_eq!(fused_ops_of(&optimized, "bias"), ["BiasAdd"]);
    let r = Tensor::from_vec([1, 5, 5, 4], values(100, 40)).unwrap();
    let (ours, plain) = run_both(&g, &[("x", x), ("r", r)], &["sum"]);
    assert_eq!(ours, plain);
    // The BiasAdd is fetched too: the Add stays.
    let (g, feeds) = residual("Conv2D", "AddV2", false, &[1, 5, 5, 4], false, None);
    let (optimized, _) = optimize(&g, &["x", "r"], &["bias", "sum"]);
    assert_eq!(fused_ops_of(&optimized, "bias"), ["BiasAdd"]);
    assert_eq!(optimized.node("sum").unwrap().op(), "AddV2");
    let (ours, plain) = run_both(&g, &feeds, &["bias", "sum"]);
    assert_eq!(ours, plain);
}

/// A `_FusedConv2D` node "y" written by hand (1x1 `VALID`, float): `fused_ops`
/// and `num_args` arguments after the filter, each of type float.
fn hand_fused_conv(inputs: &[&str], fused_ops: &[&str], num_args: i64) -> NodeDef {
    let fused_ops = registry_core::proto::attr_value::ListValue {
        s: fused_ops.iter().map(|s| s.as_bytes().to_vec()).collect(),
        ..Default::default()
    };
    let targs = registry_core::proto::attr_value::ListValue {
        r#type: vec![DataType::DtFloat as i32; usize::try_from(num_args).unwrap_or(0)],
        ..Default::default()
    };
    node(
        "y",
        "_FusedConv2D",
        inputs,
        &[
            ("T", DataType::DtFloat.into()),
            ("TArgs", AttrValue::from(targs)),
            ("num_args", num_args.into()),
            ("strides", AttrValue::from(vec![1i64, 1, 1, 1])),
            ("padding", AttrValue::from("VALID")),
            ("fused_ops", AttrValue::from(fused_ops)),
        ],
    )
}

#[test]
fn fused_kernels_refuse_what_they_cannot_compute() {
    let conv = |fused_ops: &[&str], num_args: i64, bias_len: usize| {
        let g = graph(vec![
            placeholder("x", DataType::DtFloat),
            constant("w", &Tensor::from_vec([1, 1, 2, 3], values(6, 36)).unwrap()),
            constant(
                "b",
                &Tensor::from_vec([bias_len], values(bias_len, 37)).unwrap(),
            ),
            hand_fused_conv(&["x", "w", "b"], fused_ops, num_args),
        ]);
        let x = Tensor::from_vec([1, 2, 2, 2], values(8, 38)).unwrap();
        Session::new(g)
            .run(&[("x", x)], &["y"])
            .map_err(|e| e.to_string())
    };
    let ok = conv(&["BiasAdd", "Relu"], 1, 3).unwrap();
    assert!(ok[0].as_slice::<f32>().unwrap().iter().all(|v| *v >= 0.0));
    let err = conv(&["BiasAdd", "Swish"], 1, 3).unwrap_err();
    assert!(err.contains("Unsupported fusion: [BiasAdd,Swish]"), "{err}");
    let err = conv(&[], 1, 3).unwrap_err();
    assert!(err.contains("must have at least one fused op"), "{err}");
    let err = conv(&["BiasAdd"], 1, 2).unwrap_err();
    assert!(
        err.contains("Must provide as many biases as the output has channels: [2] vs. 3"),
        "{err}"
    );
}

#[test]
fn fused_adds_check_their_arguments_and_broadcast_as_add_does() {
    // `_FusedConv2D` `[BiasAdd, Add, Relu]` written by hand, the added
    // tensor of shape `r_dims`.
    let run = |num_args: i64, r_dims: Vec<usize>| {
        let mut inputs = vec!["x", "w", "b"];
        if num_args == 2 {
            inputs.push("r");
        }
        let g = graph(vec![
            placeholder("x", DataType::DtFloat),
            placeholder("r", DataType::DtFloat),
            constant("w", &Tensor::from_vec([1, 1, 2, 3], values(6, 41)).unwrap()),
            constant("b", &Tensor::from_vec([3], values(3, 42)).unwrap()),
            hand_fused_conv(&inputs, &["BiasAdd", "Add", "Relu"], num_args),
            // The same, unfused.
            valid_conv("conv", &["x", "w"]),
            float_op("biased", "BiasAdd", &["conv", "b"]),
            float_op("sum", "AddV2", &["biased", "r"]),
            float_op("relu", "Relu", &["sum"]),
        ]);
        let n: usize = r_dims.iter().product();
        let x = Tensor::from_vec([1, 2, 2, 2], values(8, 43)).unwrap();
        let r = Tensor::from_vec(r_dims, values(n, 44)).unwrap();
        let plain = SessionOptions {
            optimizations: GraphOptimizations::none(),
            ..SessionOptions::default()
        };
        let session = Session::with_options(g, plain);
        let fused = session
            .run(&[("x", x.clone()), ("r", r.clone())], &["y"])
            .map_err(|e| e.to_string())?;
        let unfused = session.run(&[("x", x), ("r", r)], &["relu"]).unwrap();
        assert_eq!(fused, unfused);
        Ok::<_, String>(fused)
    };
    // The output's shape, then shapes that broadcast to it.
    for r_dims in [vec![1, 2, 2, 3], vec![3], vec![1, 2, 1, 3], vec![]] {
        run(2, r_dims.clone()).unwrap_or_else(|e| panic!("{r_dims:?}: {e}"));
    }
    // Shapes that do not.
    let err = run(2, vec![2, 2, 2, 3]).unwrap_err();
    assert!(
        err.contains("would broadcast the output [1,2,2,3] to [2,2,2,3]"),
        "{err}"
    );
    let err = run(2, vec![4]).unwrap_err();
    assert!(
        err.contains("Incompatible shapes: [1,2,2,3] vs. [4]"),
        "{err}"
    );
    // The Add without its argument.
    let err = run(1, vec![1, 2, 2, 3]).unwrap_err();
    assert!(
        err.contains("must have two extra arguments: bias and the tensor added"),
        "{err}"
    );
}

/// `x` padded by `paddings` (a `Pad`, or a `PadV2` with `constant`), then
/// convolved by `op` with stride 2 and `VALID` padding into `conv`.
fn padded_convolution(op: &str, paddings: [i32; 8], constant_value: Option<f32>) -> Graph {
    let filter_dims = match op {
        "Conv2D" => vec![3, 3, 2, 4],
        _ => vec![3, 3, 2, 2],
    };
    let n: usize = filter_dims.iter().product();
    let pad_attrs = [
        ("T", DataType::DtFloat.into()),
        ("Tpaddings", DataType::DtInt32.into()),
    ];
    let mut nodes = vec![
        placeholder("x", DataType::DtFloat),
        constant(
            "paddings",
            &Tensor::from_vec([4, 2], paddings.to_vec()).unwrap(),
        ),
        constant("w", &Tensor::from_vec(filter_dims, values(n, 41)).unwrap()),
    ];
    match constant_value {
        None => nodes.push(node("pad", "Pad", &["x", "paddings"], &pad_attrs)),
        Some(v) => {
            nodes.push(constant("fill", &scalar(v)));
            nodes.push(node("pad", "PadV2", &["x", "paddings", "fill"], &pad_attrs));
        }
    }
    nodes.push(node(
        "conv",
        op,
        &["pad", "w"],
        &[
            ("T", DataType::DtFloat.into()),
            ("strides", AttrValue::from(vec![1i64, 2, 2, 1])),
            ("padding", "VALID".into()),
        ],
    ));
    graph(nodes)
}

#[test]
fn zero_pads_fold_into_the_convolution_after_them() {
    for op in ["Conv2D", "DepthwiseConv2dNative"] {
        for constant_value in [None, Some(0.0)] {
            let g = padded_convolution(op, [0, 0, 1, 2, 0, 1, 0, 0], constant_value);
            let (optimized, report) = optimize(&g, &["x"], &["conv"]);
            assert_eq!(report.folded_pads, 1, "{op}");
            assert!(optimized.node("pad").is_none(), "{op}");
            let conv = optimized.node("conv").unwrap();
            assert_eq!(conv.def.input[0], "x", "{op}");
            let attrs = registry_core::attr::NodeAttrs::new(&conv.def, &conv.op_def);
            assert_eq!(attrs.get::<&str>("padding").unwrap(), "EXPLICIT");
            assert_eq!(
                attrs.get::<Vec<i64>>("explicit_paddings").unwrap(),
                [0, 0, 1, 2, 0, 1, 0, 0]
            );
            let (ours, plain) = run_both(&g, &[("x", conv_input())], &["conv"]);
            // Rows 5 + 1 + 2 and columns 5 + 0 + 1, 3×3 windows, stride 2.
            assert_eq!(ours[0].dims(), [2, 3, 2, 4], "{op}");
            assert_close(&ours[0], &plain[0], 1e-6);
        }
    }
}

/// `x` (an image of `size`×`size`, 2 channels, batch unknown) padded by one
/// row and column after it (Keras' padding of a stride-2 convolution),
/// then a stride-2 3×3 depthwise convolution, its bias and a Relu6 (`act`).
fn keras_strided_depthwise(size: i64) -> Graph {
    let shape = registry_core::shape::Shape::from([-1, size, size, 2]).to_proto();
    let pad_attrs = [
        ("T", DataType::DtFloat.into()),
        ("Tpaddings", DataType::DtInt32.into()),
    ];
    graph(vec![
        node(
            "x",
            "Placeholder",
            &[],
            &[("dtype", DataType::DtFloat.into()), ("shape", shape.into())],
        ),
        constant(
            "paddings",
            &Tensor::from_vec([4, 2], vec![0, 0, 0, 1, 0, 1, 0, 0]).unwrap(),
        ),
        constant(
            "w",
            &Tensor::from_vec([3, 3, 2, 1], values(18, 43)).unwrap(),
        ),
        constant("b", &Tensor::from_vec([2], vec![0.5f32, -0.25]).unwrap()),
        node("pad", "Pad", &["x", "paddings"], &pad_attrs),
        node(
            "conv",
            "DepthwiseConv2dNative",
            &["pad", "w"],
            &[
                ("T", DataType::DtFloat.into()),
                ("strides", AttrValue::from(vec![1i64, 2, 2, 1])),
                ("padding", "VALID".into()),
            ],
        ),
        float_op("bias", "BiasAdd", &["conv", "b"]),
        float_op("act", "Relu6", &["bias"]),
    ])
}

#[test]
fn a_folded_pad_that_is_same_padding_becomes_same_and_fuses() {
    // 6 rows, stride 2, 3 taps: SAME pads 0 before and 1 after, as the Pad
    // does, so the depthwise convolution is SAME and fuses.
    let g = keras_strided_depthwise(6);
    let (optimized, report) = optimize(&g, &["x"], &["act"]);
    assert_eq!((report.folded_pads, report.fused), (1, 1), "{report:?}");
    let act = optimized.node("act").unwrap();
    assert_eq!(act.op(), "_FusedDepthwiseConv2dNative");
    let attrs = registry_core::attr::NodeAttrs::new(&act.def, &act.op_def);
    assert_eq!(attrs.get::<&str>("padding").unwrap(), "SAME");
    assert_eq!(act.def.input[0], "x");
    let x = Tensor::from_vec([2, 6, 6, 2], values(144, 44)).unwrap();
    let (ours, plain) = run_both(&g, &[("x", x)], &["act"]);
    assert_eq!(ours[0].dims(), [2, 3, 3, 2]);
    assert_close(&ours[0], &plain[0], 1e-6);

    // 5 rows: SAME would pad 1 before and 1 after, so the padding stays
    // explicit (and the depthwise convolution unfused).
    let g = keras_strided_depthwise(5);
    let (optimized, report) = optimize(&g, &["x"], &["act"]);
    assert_eq!((report.folded_pads, report.fused), (1, 0), "{report:?}");
    let conv = optimized.node("conv").unwrap();
    let attrs = registry_core::attr::NodeAttrs::new(&conv.def, &conv.op_def);
    assert_eq!(attrs.get::<&str>("padding").unwrap(), "EXPLICIT");
    let x = Tensor::from_vec([2, 5, 5, 2], values(100, 45)).unwrap();
    let (ours, plain) = run_both(&g, &[("x", x)], &["act"]);
    assert_close(&ours[0], &plain[0], 1e-6);
}

#[test]
fn pads_that_are_not_a_convolutions_zero_padding_stay() {
    for (paddings, constant_value, why) in [
        ([1, 0, 1, 1, 1, 1, 0, 0], None, "pads the batch"),
        ([0, 0, 1, 1, 1, 1, 0, 0], Some(1.0), "pads with ones"),
    ] {
        let g = padded_convolution("Conv2D", paddings, constant_value);
        let (optimized, report) = optimize(&g, &["x"], &["conv"]);
        assert_eq!(report.folded_pads, 0, "{why}");
        assert!(optimized.node("pad").is_some(), "{why}");
        let (ours, plain) = run_both(&g, &[("x", conv_input())], &["conv"]);
        assert_close(&ours[0], &plain[0], 1e-6);
    }
    // A fetched Pad keeps its value, and the convolution reads it.
    let g = padded_convolution("DepthwiseConv2dNative", [0, 0, 1, 1, 1, 1, 0, 0], None);
    let (optimized, report) = optimize(&g, &["x"], &["pad", "conv"]);
    assert_eq!(report.folded_pads, 0);
    assert_eq!(optimized.node("conv").unwrap().def.input[0], "pad");
}
