//! TensorFlow's reference graphs, op by op, with the graphs' own NodeDefs
//! and Const values: cnn_f32 (Conv2D SAME, BiasAdd, Relu, MaxPool VALID,
//! MatMul, Softmax), mlp_f32 (MatMul, BiasAdd, Relu, Softmax) and
//! batchnorm_misc (FusedBatchNormV3 inference).
//!
//! Tolerance `abs 1e-5 + rel 1e-5` for the float chains (k ≤ 64 sums in a
//! different order than Eigen); Relu and MaxPool are exact given their
//! inputs.

use registry_core::tensor::Tensor;

use super::support::*;

fn run1(g: &RefGraph, name: &str, inputs: Vec<Tensor>) -> Tensor {
    let out = run(&g.node(name), inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    out[0].clone()
}

fn check(g: &RefGraph, fetch: &str, actual: &Tensor, abs: f64, rel: f64) {
    let (shape, expected) = g.io_values(fetch);
    // io.json holds f32 values widened to f64; serde_json's parse may be
    // 1 f64-ulp off, which rounding back to f32 removes.
    let expected: Vec<f64> = expected.iter().map(|&v| f64::from(v as f32)).collect();
    assert_eq!(actual.dims(), shape.as_slice(), "{fetch}");
    assert_close(&values(actual), &expected, abs, rel);
}

#[test]
fn cnn_f32_layer_by_layer() {
    let g = ref_graph("cnn_f32");
    let conv = run1(
        &g,
        "conv/conv2d",
        vec![g.f32_tensor("x:0"), g.constant("conv/filter")],
    );
    check(&g, "conv/conv2d:0", &conv, 1e-5, 1e-5);
    let biased = run1(&g, "conv/bias_add", vec![conv, g.constant("conv/bias")]);
    // Relu from TF's own conv output, so the comparison is exact.
    let relu = run1(&g, "conv/relu", vec![biased]);
    check(&g, "conv/relu:0", &relu, 1e-5, 1e-5);
    let pool = run1(&g, "pool", vec![g.f32_tensor("conv/relu:0")]);
    check(&g, "pool:0", &pool, 0.0, 0.0);
    let probs = run1(&g, "probs", vec![g.f32_tensor("fc/matmul:0")]);
    check(&g, "probs:0", &probs, 1e-7, 1e-6);
}

#[cfg(feature = "linalg")]
#[test]
fn cnn_f32_classifier_matmul() {
    let g = ref_graph("cnn_f32");
    let logits = run1(
        &g,
        "fc/matmul",
        vec![
            g.f32_tensor("pool:0").reshape([2, 64]).unwrap(),
            g.constant("fc/w"),
        ],
    );
    check(&g, "fc/matmul:0", &logits, 1e-5, 1e-5);
}

#[cfg(feature = "linalg")]
#[test]
fn mlp_f32_end_to_end() {
    let g = ref_graph("mlp_f32");
    let w1 = g.constant("dense1/matmul/ReadVariableOp/resource");
    let b1 = g.constant("dense1/bias_add/ReadVariableOp/resource");
    let w2 = g.constant("dense2/matmul/ReadVariableOp/resource");
    let b2 = g.constant("logits/ReadVariableOp/resource");
    let h = run1(&g, "dense1/matmul", vec![g.f32_tensor("x:0"), w1]);
    let h = run1(&g, "dense1/bias_add", vec![h, b1]);
    let h = run1(&g, "dense1/relu", vec![h]);
    let h = run1(&g, "dense2/matmul", vec![h, w2]);
    let logits = run1(&g, "logits", vec![h, b2]);
    check(&g, "Identity_1:0", &logits, 1e-5, 1e-5);
    let probs = run1(&g, "probs", vec![logits]);
    check(&g, "Identity_2:0", &probs, 1e-6, 1e-5);
}

#[test]
fn batchnorm_misc_inference() {
    let g = ref_graph("batchnorm_misc");
    let node = g.node("bn/fbn");
    let consts: Vec<Tensor> = node.input[1..].iter().map(|n| g.constant(n)).collect();
    let mut inputs = vec![g.f32_tensor("x:0")];
    inputs.extend(consts);
    let out = run(&node, inputs).unwrap();
    check(&g, "bn/fbn:0", &out[0], 1e-6, 1e-6);
}
