#!/usr/bin/env python3
"""Times TensorFlow 2.21 on the shared graphs, for comparison with
`cargo bench -p opreg-tests --bench executor` (run both on the same machine,
one after the other).

Setup (not needed by the project or CI):
    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu==2.21.0
Run:
    TF_ENABLE_ONEDNN_OPTS=0 /tmp/tfenv/bin/python scripts/tf_graph_timing.py ../shared/graphs

Prints the median time per Session.run of mlp_f32 and cnn_f32 (feeds from
io.json, fetches as io.json), and of a chain of 1,000 Abs nodes on a
1-element tensor next to a 1-node chain (TF's per-node executor cost).
With graph names after the folder, times those graphs only, e.g. the models
beside `opreg run --repeat 50`:

    TF_ENABLE_ONEDNN_OPTS=0 "$py" scripts/tf_graph_timing.py ../shared/models mobilenet_v2 unet_small

With --loops, times the counted loops of tests/data/tf-control-flow (TF 1
form and While form) for n = 1,000 iterations, beside the `loop/` group of
`cargo bench -p opreg-tests --bench executor`:

    TF_ENABLE_ONEDNN_OPTS=0 "$py" scripts/tf_graph_timing.py --loops
"""
import json
import os
import sys
import time

import numpy as np
import tensorflow as tf

DTYPES = {"DT_FLOAT": np.float32, "DT_DOUBLE": np.float64, "DT_HALF": np.float16,
          "DT_INT32": np.int32, "DT_INT64": np.int64, "DT_BOOL": np.bool_}


def median_run_us(sess, fetches, feed_dict, runs=300):
    for _ in range(20):
        sess.run(fetches, feed_dict)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(fetches, feed_dict)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e6


def config():
    # Grappler off, as in the golden runs (it would fold Abs(Abs(x)) chains).
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=1)
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    return cfg


def shared_graph(root, name, overrides=None):
    graph_def = tf.compat.v1.GraphDef()
    binary = os.path.join(root, name, "graph.pb")
    if os.path.exists(binary):
        with open(binary, "rb") as f:
            graph_def.ParseFromString(f.read())
    else:
        from google.protobuf import text_format
        with open(os.path.join(root, name, "graph.pbtxt")) as f:
            text_format.Parse(f.read(), graph_def)
    io = json.load(open(os.path.join(root, name, "io.json")))
    for feed in io["feeds"]:
        if overrides and feed["name"] in overrides:
            feed["values"] = [overrides[feed["name"]]]
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    feed = {graph.get_tensor_by_name(f["name"]): np.array(f["values"], dtype=DTYPES[f["dtype"]]).reshape(f["shape"])
            for f in io["feeds"]}
    fetches = [graph.get_tensor_by_name(f["name"]) for f in io["fetches"]]
    with tf.compat.v1.Session(graph=graph, config=config()) as sess:
        return median_run_us(sess, fetches, feed)


def abs_chain(n):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1], name="x")
        y = x
        for _ in range(n):
            y = tf.abs(y)
    with tf.compat.v1.Session(graph=graph, config=config()) as sess:
        return median_run_us(sess, y, {x: np.array([-1.5], np.float32)})


LOOP_ITERATIONS = 1000


def main():
    if sys.argv[1:] == ["--loops"]:
        root = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "tf-control-flow")
        for name in ("counted_loop_v1", "counted_loop_fn"):
            us = shared_graph(root, name, {"n:0": LOOP_ITERATIONS})
            print(f"loop/{name}: {us:.1f} us per run of {LOOP_ITERATIONS} iterations "
                  f"({us * 1000 / LOOP_ITERATIONS:.0f} ns per iteration)")
        return
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/graphs"
    names = sys.argv[2:] or ["mlp_f32", "cnn_f32"]
    for name in names:
        print(f"{name}: {shared_graph(root, name):.1f} us per run (median)")
    if sys.argv[2:]:
        return
    one, thousand = abs_chain(1), abs_chain(1000)
    print(f"abs chain: 1 node {one:.1f} us, 1000 nodes {thousand:.1f} us, "
          f"{(thousand - one) / 999 * 1000:.0f} ns per extra node")


if __name__ == "__main__":
    main()
