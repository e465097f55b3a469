"""Times opreg kernels inside TensorFlow against TensorFlow's own kernels.

    scripts/tf-host-bench.sh            # builds the library, then runs this

Loads opreg-tensorflow/bench-ops (OpregAbs, OpregMatMul: opreg's standard
CPU kernels under their own op names) with tf.load_op_library and times,
side by side in one run, each op against TensorFlow's Abs and MatMul:

- per-call cost in eager mode (one element; generated wrappers on both
  sides: gen_math_ops.abs against lib.opreg_abs);
- per-node cost in a TF 1 graph Session (a chain of 1,000 ops; Grappler's
  arithmetic optimizer off, so that TensorFlow keeps its chain of Abs);
- throughput on large inputs: Abs of 16M floats (a fresh output per call)
  and MatMul 1024x1024, in eager mode and in a Session.

Prints the median time of each (of several repeats) and the ratio
opreg / TensorFlow.
"""

import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2  # noqa: E402
from tensorflow.python.ops import gen_math_ops  # noqa: E402


def per_call(fn, calls, repeats=7):
    """Median seconds per call of fn() over `repeats` blocks of `calls`."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def session_config():
    config = config_pb2.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=1)
    rewrite = config.graph_options.rewrite_options
    rewrite.arithmetic_optimization = rewriter_config_pb2.RewriterConfig.OFF
    return config


def session_time(build, feeds_of, calls, repeats=7):
    """Median seconds per Session.run of the graph `build` makes."""
    with tf.Graph().as_default():
        fetch, placeholders = build()
        with tf.compat.v1.Session(config=session_config()) as session:
            feeds = feeds_of(placeholders)
            return per_call(lambda: session.run(fetch.op, feeds), calls, repeats)


def main():
    library = sys.argv[1]
    lib = tf.load_op_library(library)
    tf.config.threading.set_intra_op_parallelism_threads(2)
    rows = []

    def row(name, ours, theirs, unit, scale):
        rows.append((name, ours * scale, theirs * scale, unit, ours / theirs))

    one = tf.constant([-1.5], tf.float32)
    row(
        "Abs, 1 element, eager (per call)",
        per_call(lambda: lib.opreg_abs(one), 20000),
        per_call(lambda: gen_math_ops._abs(one), 20000),
        "us",
        1e6,
    )

    chain = 1000

    def abs_chain(op):
        def build():
            x = tf.compat.v1.placeholder(tf.float32, [1])
            y = x
            for _ in range(chain):
                y = op(y)
            return y, x

        return build

    feed_one = lambda x: {x: np.array([-1.5], np.float32)}  # noqa: E731
    row(
        "Abs chain of 1,000 in a Session (per node)",
        session_time(abs_chain(lambda y: lib.opreg_abs(y)), feed_one, 20) / chain,
        session_time(abs_chain(lambda y: gen_math_ops._abs(y)), feed_one, 20) / chain,
        "us",
        1e6,
    )

    big = tf.constant(np.random.default_rng(0).standard_normal(16 << 20, dtype=np.float32))
    row(
        "Abs, 16M floats, eager",
        per_call(lambda: lib.opreg_abs(big), 20),
        per_call(lambda: gen_math_ops._abs(big), 20),
        "ms",
        1e3,
    )

    def big_abs(op):
        def build():
            x = tf.compat.v1.placeholder(tf.float32, [16 << 20])
            return op(x * 1.0), x

        return build

    feed_big = lambda x: {x: big.numpy()}  # noqa: E731
    row(
        "x*1 then Abs, 16M floats, Session (Abs may compute in place)",
        session_time(big_abs(lambda y: lib.opreg_abs(y)), feed_big, 10),
        session_time(big_abs(lambda y: gen_math_ops._abs(y)), feed_big, 10),
        "ms",
        1e3,
    )

    rng = np.random.default_rng(1)
    a = tf.constant(rng.standard_normal((1024, 1024), dtype=np.float32))
    b = tf.constant(rng.standard_normal((1024, 1024), dtype=np.float32))
    row(
        "MatMul 1024x1024, eager",
        per_call(lambda: lib.opreg_mat_mul(a, b), 20),
        per_call(lambda: gen_math_ops.mat_mul(a, b), 20),
        "ms",
        1e3,
    )
    small_a = tf.constant(rng.standard_normal((4, 4), dtype=np.float32))
    row(
        "MatMul 4x4, eager (per call)",
        per_call(lambda: lib.opreg_mat_mul(small_a, small_a), 20000),
        per_call(lambda: gen_math_ops.mat_mul(small_a, small_a), 20000),
        "us",
        1e6,
    )

    def matmul_graph(op):
        def build():
            x = tf.compat.v1.placeholder(tf.float32, [1024, 1024])
            y = tf.compat.v1.placeholder(tf.float32, [1024, 1024])
            return op(x, y), (x, y)

        return build

    feed_ab = lambda xy: {xy[0]: a.numpy(), xy[1]: b.numpy()}  # noqa: E731
    row(
        "MatMul 1024x1024, Session",
        session_time(matmul_graph(lambda x, y: lib.opreg_mat_mul(x, y)), feed_ab, 20),
        session_time(matmul_graph(lambda x, y: gen_math_ops.mat_mul(x, y)), feed_ab, 20),
        "ms",
        1e3,
    )

    print(f"TensorFlow {tf.__version__}, {os.cpu_count()} CPUs, medians of 7 repeats")
    print("| measurement | opreg kernel | TF kernel | opreg / TF |")
    print("|---|---|---|---|")
    for name, ours, theirs, unit, ratio in rows:
        print(f"| {name} | {ours:.3f} {unit} | {theirs:.3f} {unit} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
