//! Every shared TensorFlow graph runs on CPU through `Session` and its
//! fetches match TensorFlow's (integers and bools exactly, floats within the
//! per-dtype tolerance of `opreg_tests::graphs::tolerance`). `Graph`'s shape
//! inference agrees with TF's fetched shapes.

use opreg_runtime::{Graph, Session};
use opreg_tests::graphs::{compare, shared_graphs};
use registry_core::shape::Shape;

#[test]
fn every_shared_graph_matches_tensorflow_on_cpu() {
    kernels_cpu::link();
    let graphs = shared_graphs();
    assert!(
        graphs.len() >= 7,
        "expected the 7 shared graphs, found {}",
        graphs.len()
    );
    let mut failures = Vec::new();
    for g in &graphs {
        let graph =
            Graph::from_file(g.dir.join("graph.pb")).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        let session = Session::new(graph);
        let feeds: Vec<(&str, _)> = g.feed_pairs();
        let fetches: Vec<&str> = g.fetch_names();
        let outputs = match session.run(&feeds, &fetches) {
            Ok(outputs) => outputs,
            Err(e) => {
                failures.push(format!("{}: {e}", g.name));
                continue;
            }
        };
        let mut worst: f64 = 0.0;
        for (fetch, ours) in g.fetches.iter().zip(&outputs) {
            match compare(&fetch.name, ours, &fetch.tensor) {
                Ok(w) => worst = worst.max(w),
                Err(e) => failures.push(format!("{}: {e}", g.name)),
            }
        }
        eprintln!(
            "{}: {} fetches, worst relative error {worst:e}",
            g.name,
            outputs.len()
        );
        // A second run with the same session reuses the plan and kernels.
        let again = session.run(&feeds, &fetches).expect("second run");
        assert_eq!(again, outputs, "{}: second run differs", g.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn graph_shape_inference_agrees_with_tensorflow() {
    for g in shared_graphs() {
        let graph = Graph::from_file(g.dir.join("graph.pb")).unwrap();
        let feeds: Vec<_> = g
            .feeds
            .iter()
            .map(|f| {
                (
                    graph.endpoint(&f.name, "feed").unwrap(),
                    Shape::from(f.tensor.shape()),
                )
            })
            .collect();
        let shapes = graph
            .infer_shapes(&feeds)
            .unwrap_or_else(|e| panic!("{}: {e}", g.name));
        for fetch in &g.fetches {
            let e = graph.endpoint(&fetch.name, "fetch").unwrap();
            assert_eq!(
                shapes[e.node][e.port],
                Shape::from(fetch.tensor.shape()),
                "{}: {}",
                g.name,
                fetch.name
            );
        }
    }
}
