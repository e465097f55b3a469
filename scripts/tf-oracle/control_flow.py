"""Control flow graphs made by TensorFlow 2.21, with TF's outputs.

Writes tests/data/tf-control-flow/<case>/{graph.pbtxt,io.json} (the layout
of shared/graphs: io.json's feeds and fetches with their values) for the
tests of tests/tests/control_flow.rs:

- TF 1 style (Enter/Exit/Switch/Merge/NextIteration/LoopCond), built with
  control flow v1 or lowered by convert_variables_to_constants_v2: counted
  and data-dependent loops, zero iterations, nested loops, conds inside
  loops, a loop on an untaken branch, Keras GRU/LSTM layers;
- TF 2 style (While/StatelessIf/Case/PartitionedCall with a function
  library): the same kinds of programs frozen with lower_control_flow=False,
  functions calling functions, TensorLists carried by a While.

Run: py=$(scripts/install-tf.sh) && "$py" scripts/tf-oracle/control_flow.py
"""
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)
from tensorflow.python.ops import control_flow_util  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "tf-control-flow")
RNG = np.random.default_rng(2026)


def tensor_entry(name, value):
    value = np.asarray(value)
    dtype = {
        np.dtype("float32"): "DT_FLOAT",
        np.dtype("float64"): "DT_DOUBLE",
        np.dtype("int32"): "DT_INT32",
        np.dtype("int64"): "DT_INT64",
        np.dtype("bool"): "DT_BOOL",
    }[value.dtype]
    node, _, port = name.partition(":")
    values = value.reshape(-1).tolist()
    if value.dtype == np.dtype("bool"):
        values = [bool(v) for v in values]
    return {
        "name": name,
        "node": node,
        "port": int(port or 0),
        "dtype": dtype,
        "shape": list(value.shape),
        "values": values,
    }


def write_case(name, graph_def, feeds, fetches, description):
    """feeds: [(name, value)], fetches: [(name, value)]."""
    folder = os.path.join(ROOT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "graph.pbtxt"), "w") as f:
        f.write(str(graph_def))
    ops = sorted({n.op for n in graph_def.node})
    io = {
        "name": name,
        "description": description,
        "tf_version": tf.__version__,
        "op_types": ops,
        "num_functions": len(graph_def.library.function),
        "feeds": [tensor_entry(n, v) for n, v in feeds],
        "fetches": [tensor_entry(n, v) for n, v in fetches],
    }
    with open(os.path.join(folder, "io.json"), "w") as f:
        json.dump(io, f, indent=1)
    print("%-28s %3d nodes %2d functions  %s" % (
        name, len(graph_def.node), len(graph_def.library.function), " ".join(ops)))


def frozen(fn, specs, lower):
    """The frozen concrete function; `lower=None` keeps it as traced (no
    freezing, so calls of other tf.functions stay calls)."""
    concrete = tf.function(fn).get_concrete_function(*specs)
    if lower is None:
        return concrete
    return convert_variables_to_constants_v2(concrete, lower_control_flow=lower)


def run_frozen(name, fn, specs, feeds, lower, description):
    """Freezes fn (TF 1 style when lower, else functional ops) and records
    its outputs on feeds, computed by TF on the frozen function."""
    func = frozen(fn, specs, lower)
    graph_def = func.graph.as_graph_def()
    outputs = func(*[tf.constant(v) for v in feeds])
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    feed_names = [t.name for t in func.inputs]
    fetch_names = [t.name for t in func.outputs]
    write_case(name, graph_def, list(zip(feed_names, feeds)),
               [(n, o.numpy()) for n, o in zip(fetch_names, outputs)], description)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# --- programs ---------------------------------------------------------------

def counted_loop(n, x):
    def body(i, acc):
        return i + 1, acc * 0.5 + x * tf.cast(i, tf.float32)
    _, acc = tf.while_loop(lambda i, acc: i < n, body, (tf.constant(0), tf.zeros_like(x)))
    return acc


def data_dependent_loop_with_cond(x):
    # Runs until the sum's magnitude passes 10; each step takes one of two
    # branches depending on the step's parity.
    def body(i, v):
        v = tf.cond(tf.equal(i % 2, 0), lambda: v * 1.5 + 1.0, lambda: v - 0.25)
        return i + 1, v
    i, v = tf.while_loop(lambda i, v: tf.reduce_sum(tf.abs(v)) < 10.0, body,
                         (tf.constant(0), x), maximum_iterations=100)
    return i, v


def nested_loops(n, x):
    def outer(i, acc):
        def inner(j, a):
            return j + 1, a + tf.cast(i * j, tf.float32) * x
        _, acc = tf.while_loop(lambda j, a: j < i, inner, (tf.constant(0), acc))
        return i + 1, acc
    _, acc = tf.while_loop(lambda i, acc: i < n, outer, (tf.constant(0), tf.zeros_like(x)))
    return acc


def loop_on_a_branch(pred, x):
    # The loop lies on one branch of a cond: when that branch is not taken,
    # the whole loop is dead.
    def looping():
        _, v = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * 2.0),
                             (tf.constant(0), x))
        return v
    return tf.cond(pred, looping, lambda: tf.reshape(tf.concat([x, -x], 0)[: tf.size(x)], tf.shape(x)))


def branches_of_every_kind(pred, x, w):
    # Both branches use different kinds of ops (matmul, reductions,
    # reshapes, casts, gathers); only one runs.
    def then():
        return tf.nn.relu(tf.matmul(x, w)) + tf.reduce_mean(x)

    def otherwise():
        y = tf.cast(tf.cast(x * 3.0, tf.int32), tf.float32)
        g = tf.gather(tf.reshape(y, [-1]), tf.range(tf.size(y))[::-1])
        return tf.reduce_sum(tf.reshape(g, tf.shape(x)), axis=1, keepdims=True) * tf.ones_like(w[:1])
    return tf.cond(pred, then, otherwise)


def tensor_array_loop(x):
    # A TensorArray carried through a while loop: TensorLists.
    steps = tf.shape(x)[0]
    ta = tf.TensorArray(tf.float32, size=steps)
    inputs = tf.TensorArray(tf.float32, size=steps).unstack(x)

    def body(t, h, ta):
        h = tf.tanh(inputs.read(t) + 0.5 * h)
        return t + 1, h, ta.write(t, h)
    _, h, ta = tf.while_loop(lambda t, h, ta: t < steps, body, (0, tf.zeros_like(x[0]), ta))
    return ta.stack(), h


@tf.function
def scaled(v, k):
    return v * k + 1.0


@tf.function
def twice_scaled(v):
    return scaled(scaled(v, 2.0), 0.5)


def functions_calling_functions(x):
    return twice_scaled(x) - scaled(x, 3.0)


def switch_case(index, x):
    return tf.switch_case(index, [lambda: x * 2.0, lambda: tf.sin(x), lambda: -x])


def keras_recurrent(layer_cls, seed):
    tf.keras.utils.set_random_seed(seed)
    layer = layer_cls(5, return_sequences=False)
    model = tf.keras.Sequential([tf.keras.Input((7, 4)), layer])
    return model


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    n_spec = tf.TensorSpec([], tf.int32)
    x3 = f32(3)
    for lower, style in ((True, "v1"), (False, "fn")):
        kind = ("TF 1 style (lowered to Enter/Exit/Switch/Merge)" if lower
                else "TF 2 style (While/If with a function library)")
        run_frozen("counted_loop_%s" % style, counted_loop,
                   [n_spec, tf.TensorSpec([3], tf.float32)], [np.int32(5), x3], lower,
                   "a counted loop, 5 iterations; " + kind)
        run_frozen("zero_iterations_%s" % style, counted_loop,
                   [n_spec, tf.TensorSpec([3], tf.float32)], [np.int32(0), x3], lower,
                   "the counted loop with 0 iterations; " + kind)
        run_frozen("cond_in_loop_%s" % style, data_dependent_loop_with_cond,
                   [tf.TensorSpec([4], tf.float32)], [f32(4)], lower,
                   "a data-dependent trip count with a cond in the body; " + kind)
        run_frozen("nested_loops_%s" % style, nested_loops,
                   [n_spec, tf.TensorSpec([2], tf.float32)], [np.int32(4), f32(2)], lower,
                   "nested loops whose inner trip count is the outer counter; " + kind)
        for taken in (True, False):
            run_frozen("loop_on_branch_%s_%s" % ("taken" if taken else "dead", style),
                       loop_on_a_branch, [tf.TensorSpec([], tf.bool), tf.TensorSpec([3], tf.float32)],
                       [np.bool_(taken), x3], lower,
                       "a loop on one branch of a cond, that branch %s; %s"
                       % ("taken" if taken else "not taken (the loop is dead)", kind))
            run_frozen("branches_%s_%s" % ("then" if taken else "else", style),
                       branches_of_every_kind,
                       [tf.TensorSpec([], tf.bool), tf.TensorSpec([2, 3], tf.float32),
                        tf.TensorSpec([3, 4], tf.float32)],
                       [np.bool_(taken), f32(2, 3), f32(3, 4)], lower,
                       "a cond whose branches use many kinds of ops; " + kind)
        run_frozen("tensor_array_loop_%s" % style, tensor_array_loop,
                   [tf.TensorSpec([6, 3], tf.float32)], [f32(6, 3)], lower,
                   "a TensorArray (TensorList ops) written in a loop; " + kind)
        run_frozen("switch_case_%s" % style, switch_case,
                   [tf.TensorSpec([], tf.int32), tf.TensorSpec([3], tf.float32)],
                   [np.int32(1), x3], lower, "tf.switch_case; " + kind)
        for name, cls, seed in (("keras_lstm", tf.keras.layers.LSTM, 7),
                                ("keras_gru", tf.keras.layers.GRU, 8)):
            model = keras_recurrent(cls, seed)
            run_frozen("%s_%s" % (name, style), lambda x, m=model: m(x),
                       [tf.TensorSpec([2, 7, 4], tf.float32)], [f32(2, 7, 4)], lower,
                       "Keras %s layer; %s" % (cls.__name__, kind))
    run_frozen("functions_calling_functions", functions_calling_functions,
               [tf.TensorSpec([3], tf.float32)], [x3], None,
               "tf.functions calling tf.functions (StatefulPartitionedCall in a library), as traced")
    for index in (1, 7):
        run_frozen("case_index_%d" % index, switch_case,
                   [tf.TensorSpec([], tf.int32), tf.TensorSpec([3], tf.float32)],
                   [np.int32(index), x3], None,
                   "tf.switch_case as traced (a Case op; index 7 is out of range: the last branch)")

    # Control flow v1 built directly (not lowered from functions): the
    # graph TF 1 code makes, parallel_iterations and all.
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = False
    try:
        graph = tf.Graph()
        with graph.as_default():
            n = tf.compat.v1.placeholder(tf.int32, [], name="n")
            x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
            out = tf.identity(nested_loops(n, x), name="out")
        with tf.compat.v1.Session(graph=graph) as sess:
            xv = f32(3)
            got = sess.run(out, {n: 5, x: xv})
        write_case("nested_loops_tf1_graph", graph.as_graph_def(),
                   [("n:0", np.int32(5)), ("x:0", xv)], [("out:0", got)],
                   "nested loops built with control flow v1 in a TF 1 graph")
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = True


if __name__ == "__main__":
    main()
