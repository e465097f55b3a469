//! Runs split over their batch (`SessionOptions::batch_split`): a graph
//! whose every step computes each sample on its own runs in parts, one per
//! thread, and gives exactly the whole batch's values; any step that mixes
//! samples keeps the runs whole and is named.

use opreg_runtime::{BatchParts, BatchSplit, Graph, PreparedRun, Session, SessionOptions};
use opreg_tests::graphs::{compare_model, shared_model};
use registry_core::proto::{AttrValue, DataType, NodeDef};
use registry_core::tensor::Tensor;

use crate::optimize::{bits, constant, float_op, graph, node, placeholder};

fn session(graph: Graph, batch_split: BatchSplit) -> Session {
    Session::with_options(
        graph,
        SessionOptions {
            batch_split,
            ..SessionOptions::default()
        },
    )
}

/// rayon's global pool (the split's threads), at least 2 threads where
/// nothing has built it yet; its thread count.
fn pool_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(cores.max(2))
        .build_global();
    rayon::current_num_threads()
}

/// Whether the pool has the 2 threads a split needs; says the test is
/// skipped where it has one (built with one thread before this test ran,
/// on a machine of one core).
fn can_split() -> bool {
    let threads = pool_threads();
    if threads < 2 {
        eprintln!("skipped: rayon's global pool has {threads} thread, a split needs 2");
    }
    threads >= 2
}

/// The parts a batch of `batch` splits into on the pool.
fn expected_parts(batch: usize) -> Vec<usize> {
    let parts = pool_threads().min(batch);
    (0..parts)
        .map(|i| batch / parts + usize::from(i < batch % parts))
        .collect()
}

/// Runs `run` three times (the first decides, the others split when they
/// can) and returns the last outputs.
fn run_thrice(run: &PreparedRun<'_>, feeds: &[Tensor]) -> Vec<Tensor> {
    let mut last = Vec::new();
    for _ in 0..3 {
        last = run.run(feeds.iter().cloned()).expect("the run succeeds");
    }
    last
}

/// Each fetch's float bits ([`bits`] of each).
fn all_bits(tensors: &[Tensor]) -> Vec<Vec<u32>> {
    tensors.iter().map(bits).collect()
}

fn ints(name: &str, values: &[i32]) -> NodeDef {
    constant(
        name,
        &Tensor::from_vec([values.len()], values.to_vec()).unwrap(),
    )
}

fn floats(rows: usize, cols: usize, seed: usize) -> Tensor {
    let values = (0..rows * cols)
        .map(|i| ((i * 7 + seed) % 23) as f32 / 4.0 - 2.5)
        .collect();
    Tensor::from_vec([rows, cols], values).unwrap()
}

/// Runs `nodes` with `x` fed, fetching `fetches`, split and whole; checks
/// the parts the split runs took (`Ok(rows)`) or the reason they stayed
/// whole (`Err(words)`, each found in it), and that both give the same
/// bits.
fn check(nodes: Vec<NodeDef>, x: Tensor, fetches: &[&str], want: Result<Vec<usize>, &[&str]>) {
    if !can_split() {
        return;
    }
    let split = session(graph(nodes.clone()), BatchSplit::Always);
    let whole = session(graph(nodes), BatchSplit::Off);
    let split_run = split.prepare(&["x"], fetches).unwrap();
    let whole_run = whole.prepare(&["x"], fetches).unwrap();
    let feeds = [x.clone()];
    let got = run_thrice(&split_run, &feeds);
    let parts = split_run.batch_parts(&[x.dims()]);
    match want {
        Ok(rows) => assert_eq!(
            parts,
            Some(Ok(BatchParts {
                rows,
                splitting: true
            }))
        ),
        Err(words) => {
            let why = match parts {
                Some(Err(why)) => why,
                other => panic!("expected whole runs, got {other:?}"),
            };
            for word in words {
                assert!(why.contains(word), "{why:?} lacks {word:?}");
            }
        }
    }
    assert_eq!(whole_run.batch_parts(&[x.dims()]), None);
    assert_eq!(all_bits(&got), all_bits(&run_thrice(&whole_run, &feeds)));
}

/// A float `Reshape` of `input` to the int32 shape `shape`.
fn reshape(name: &str, input: &str, shape: &str) -> NodeDef {
    let attrs: [(&str, AttrValue); 2] = [
        ("T", DataType::DtFloat.into()),
        ("Tshape", DataType::DtInt32.into()),
    ];
    node(name, "Reshape", &[input, shape], &attrs)
}

/// A float reduction `op` of `input` over the int32 axes `axes`.
fn reduction(op: &str, name: &str, input: &str, axes: &str) -> NodeDef {
    let attrs: [(&str, AttrValue); 2] = [
        ("T", DataType::DtFloat.into()),
        ("Tidx", DataType::DtInt32.into()),
    ];
    node(name, op, &[input, axes], &attrs)
}

#[test]
fn samples_split_over_threads_give_the_whole_batchs_bits() {
    kernels_cpu::link();
    // x [4, 6] -> Reshape [4, 2, 3] (the batch size in a constant) ->
    // Sum over the last axis -> MatMul with a constant -> BiasAdd -> Relu.
    let nodes = || {
        vec![
            placeholder("x", DataType::DtFloat),
            ints("shape", &[4, 2, 3]),
            reshape("r", "x", "shape"),
            ints("axes", &[2]),
            reduction("Sum", "s", "r", "axes"),
            constant("w", &floats(2, 5, 3)),
            float_op("m", "MatMul", &["s", "w"]),
            constant(
                "b",
                &Tensor::from_vec([5], vec![0.5f32, -1.0, 0.0, 2.0, -0.25]).unwrap(),
            ),
            float_op("biased", "BiasAdd", &["m", "b"]),
            float_op("y", "Relu", &["biased"]),
        ]
    };
    check(nodes(), floats(4, 6, 1), &["y"], Ok(expected_parts(4)));
    // An odd batch splits unevenly; with no batch size written anywhere.
    let odd = vec![
        placeholder("x", DataType::DtFloat),
        float_op("sq", "Square", &["x"]),
        ints("axes", &[1]),
        reduction("Sum", "y", "sq", "axes"),
    ];
    check(odd, floats(5, 6, 2), &["y"], Ok(expected_parts(5)));
}

#[test]
fn layout_ops_that_leave_the_batch_alone_split() {
    kernels_cpu::link();
    let t = || ("T", AttrValue::from(DataType::DtFloat));
    let matrix = |name: &str, dims: [usize; 2], values: Vec<i32>| {
        constant(name, &Tensor::from_vec(dims, values).unwrap())
    };
    // [4, 6] -Pad-> [4, 8] -Softmax-> -ConcatV2 axis 1-> [4, 16]
    // -ExpandDims 2-> [4, 16, 1] -Transpose (0, 2, 1)-> [4, 1, 16]
    // -Squeeze 1-> [4, 16] -StridedSlice [:, 2:10]-> [4, 8] -Tile (1, 2)-> [4, 16]
    let nodes = vec![
        placeholder("x", DataType::DtFloat),
        matrix("paddings", [2, 2], vec![0, 0, 1, 1]),
        node("padded", "Pad", &["x", "paddings"], &[t()]),
        float_op("soft", "Softmax", &["padded"]),
        constant("axis", &Tensor::scalar(1i32)),
        node(
            "both",
            "ConcatV2",
            &["soft", "padded", "axis"],
            &[t(), ("N", AttrValue::from(2i64))],
        ),
        constant("two", &Tensor::scalar(2i32)),
        node("column", "ExpandDims", &["both", "two"], &[t()]),
        ints("perm", &[0, 2, 1]),
        node("row", "Transpose", &["column", "perm"], &[t()]),
        node(
            "flat",
            "Squeeze",
            &["row"],
            &[t(), ("squeeze_dims", AttrValue::from(vec![1i64]))],
        ),
        ints("begin", &[0, 2]),
        ints("end", &[4, 10]),
        ints("strides", &[1, 1]),
        node(
            "middle",
            "StridedSlice",
            &["flat", "begin", "end", "strides"],
            &[t(), ("Index", DataType::DtInt32.into())],
        ),
        ints("multiples", &[1, 2]),
        node("y", "Tile", &["middle", "multiples"], &[t()]),
    ];
    check(nodes, floats(4, 6, 5), &["y"], Ok(expected_parts(4)));
}

#[test]
fn rows_of_several_per_sample_split_with_their_sample() {
    kernels_cpu::link();
    // Keras's Dense on a sequence: [2, 3, 4] -> [6, 4] -> MatMul -> [2, 3, 5].
    let x = Tensor::from_vec([2, 3, 4], (0..24).map(|i| i as f32 / 8.0 - 1.0).collect()).unwrap();
    let nodes = vec![
        placeholder("x", DataType::DtFloat),
        ints("flat", &[6, 4]),
        reshape("rows", "x", "flat"),
        constant("w", &floats(4, 5, 7)),
        float_op("m", "MatMul", &["rows", "w"]),
        ints("back", &[2, 3, 5]),
        reshape("y", "m", "back"),
    ];
    check(nodes.clone(), x.clone(), &["y"], Ok(expected_parts(2)));
    // A fetch with 3 rows per sample joins as such.
    check(nodes, x, &["m"], Ok(expected_parts(2)));
}

#[test]
fn a_step_that_mixes_samples_keeps_runs_whole_and_is_named() {
    kernels_cpu::link();
    let x = || placeholder("x", DataType::DtFloat);
    // A mean over the batch.
    check(
        vec![
            x(),
            ints("axes", &[0]),
            reduction("Mean", "over_batch", "x", "axes"),
        ],
        floats(4, 6, 1),
        &["over_batch"],
        Err(&["over_batch", "Mean", "batch dimension"]),
    );
    // A constant with a row per sample.
    check(
        vec![
            x(),
            constant("per_row", &floats(4, 6, 9)),
            float_op("sum", "AddV2", &["x", "per_row"]),
        ],
        floats(4, 6, 1),
        &["sum"],
        Err(&["'sum'", "input 1 of shape [4, 6]"]),
    );
    // The fed tensor's shape read as a value.
    check(
        vec![
            x(),
            node("shape", "Shape", &["x"], &[("T", DataType::DtFloat.into())]),
            reshape("same", "x", "shape"),
        ],
        floats(4, 6, 1),
        &["same"],
        Err(&["'shape' (Shape)", "each sample on its own"]),
    );
    // A Reshape that spreads samples over rows of others.
    check(
        vec![x(), ints("pairs", &[3, 8]), reshape("mixed", "x", "pairs")],
        floats(4, 6, 1),
        &["mixed"],
        Err(&["'mixed'", "[3, 8]"]),
    );
    // A slice of the first rows only.
    check(
        vec![
            x(),
            ints("begin", &[0, 0]),
            ints("size", &[2, -1]),
            node(
                "half",
                "Slice",
                &["x", "begin", "size"],
                &[
                    ("T", DataType::DtFloat.into()),
                    ("Index", DataType::DtInt32.into()),
                ],
            ),
        ],
        floats(4, 6, 1),
        &["half"],
        Err(&["'half' (Slice)", "slices the batch dimension"]),
    );
    // A fetch that does not depend on the feeds.
    check(
        vec![
            x(),
            float_op("y", "Relu", &["x"]),
            constant("c", &floats(1, 3, 0)),
        ],
        floats(4, 6, 1),
        &["y", "c"],
        Err(&["fetch 1"]),
    );
}

/// The feed-forward models of `shared/models` split their batch of 2,
/// their split runs give the same bits each time and match TensorFlow
/// within the models' tolerance. (Not the whole batch's bits: with half
/// the rows some kernels block their work otherwise, a few ulps apart.)
#[test]
fn models_split_their_batch_and_match_tensorflow() {
    kernels_cpu::link();
    if !can_split() {
        return;
    }
    for name in ["mobilenet_v2", "unet_small", "transformer_encoder"] {
        let m = shared_model(name);
        let load = || Graph::from_file(m.dir.join("graph.pb")).unwrap();
        let (names, feeds): (Vec<&str>, Vec<Tensor>) = m.feed_pairs().into_iter().unzip();
        let fetches = m.fetch_names();
        let split = session(load(), BatchSplit::Always);
        let split_run = split.prepare(&names, &fetches).unwrap();
        let got = run_thrice(&split_run, &feeds);
        let dims: Vec<&[usize]> = feeds.iter().map(Tensor::dims).collect();
        assert_eq!(
            split_run.batch_parts(&dims),
            Some(Ok(BatchParts {
                rows: expected_parts(2),
                splitting: true
            })),
            "{name}"
        );
        let again = split_run.run(feeds.iter().cloned()).unwrap();
        assert_eq!(
            all_bits(&got),
            all_bits(&again),
            "{name}: split runs differ"
        );
        for (fetch, ours) in m.fetches.iter().zip(&got) {
            compare_model(&fetch.name, ours, &fetch.tensor)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
