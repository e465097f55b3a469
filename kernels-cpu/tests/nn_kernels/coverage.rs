//! Every op of the group has a CPU kernel for every type TensorFlow 2.21's
//! CPU kernels have (`shared/graphs/tf_cpu_kernels.md`, copied here so the
//! test needs no data files).

use registry_core::proto::{DataType, NodeDef};

use super::support::*;

use DataType::*;

fn creates(node: &NodeDef) {
    try_kernel(node).unwrap_or_else(|e| panic!("{} {:?}: {e}", node.op, node.attr.get("T")));
}

#[test]
fn conv2d_types() {
    for t in [DtBfloat16, DtDouble, DtFloat, DtHalf, DtInt32] {
        creates(&node(
            "Conv2D",
            &[t, t],
            &[("strides", [1, 1, 1, 1].into()), ("padding", "SAME".into())],
        ));
    }
}

#[test]
fn max_pool_types() {
    let pool = |t| {
        node(
            "MaxPool",
            &[t],
            &[
                ("ksize", [1, 2, 2, 1].into()),
                ("strides", [1, 2, 2, 1].into()),
                ("padding", "VALID".into()),
            ],
        )
    };
    for t in [
        DtBfloat16, DtDouble, DtFloat, DtHalf, DtInt16, DtInt32, DtInt64, DtInt8, DtUint16, DtUint8,
    ] {
        creates(&pool(t));
    }
    // TF also registers uint32/uint64 CPU kernels, but MaxPool's OpDef (in
    // TF too) does not allow those types: no node can use them.
    for t in [DtUint32, DtUint64] {
        let err = try_kernel(&with_t(pool(DtFloat), t))
            .unwrap_err()
            .to_string();
        assert!(err.contains("uint"), "{err}");
    }
}

#[test]
fn bias_add_relu_softmax_batch_norm_types() {
    let all_real = [
        DtBfloat16, DtDouble, DtFloat, DtHalf, DtInt16, DtInt32, DtInt64, DtInt8, DtUint16,
        DtUint32, DtUint64, DtUint8,
    ];
    for t in all_real.into_iter().chain([DtComplex64, DtComplex128]) {
        creates(&node("BiasAdd", &[t, t], &[]));
    }
    for t in all_real {
        creates(&node("Relu", &[t], &[]));
    }
    for t in [DtBfloat16, DtDouble, DtFloat, DtHalf] {
        creates(&node("Softmax", &[t], &[]));
    }
    for t in [DtBfloat16, DtFloat, DtHalf] {
        creates(&node(
            "FusedBatchNormV3",
            &[t, DtFloat, DtFloat, DtFloat, DtFloat],
            &[],
        ));
    }
}
