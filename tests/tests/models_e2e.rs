//! The Keras models of `shared/models` (frozen by TF 2.21)
//! run on the CPU through `Session` and match TensorFlow's fetches within
//! the models' tolerance (`1e-4 * max(1, max|want|)`, ints exactly).

use opreg_runtime::{Graph, Session};
use opreg_tests::graphs::{compare_model, shared_model};

fn run_model(name: &str) {
    kernels_cpu::link();
    let m = shared_model(name);
    let graph = Graph::from_file(m.dir.join("graph.pb")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let session = Session::new(graph);
    let feeds: Vec<(&str, _)> = m.feed_pairs();
    let fetches: Vec<&str> = m.fetch_names();
    let outputs = session
        .run(&feeds, &fetches)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut worst: f64 = 0.0;
    for (fetch, ours) in m.fetches.iter().zip(&outputs) {
        worst = worst.max(compare_model(&fetch.name, ours, &fetch.tensor).unwrap());
    }
    eprintln!(
        "{name}: {} fetches, worst error / scale {worst:e}",
        outputs.len()
    );
}

#[test]
fn mobilenet_v2_matches_tensorflow() {
    run_model("mobilenet_v2");
}

#[test]
fn unet_small_matches_tensorflow() {
    run_model("unet_small");
}

#[test]
fn transformer_encoder_matches_tensorflow() {
    run_model("transformer_encoder");
}

/// A data-dependent `tf.while_loop` with a nested `tf.cond`, kept as
/// `While` and `StatelessIf` with bodies in the graph's function library.
#[test]
fn control_flow_mix_fn_matches_tensorflow() {
    run_model("control_flow_mix_fn");
}
