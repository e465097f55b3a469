"""Drives TensorFlow 2.21 with an opreg op library (tf.load_op_library).

Run by tests/tests/tensorflow_host.rs, which writes the request and checks
the report against opreg's own executor:

    python tf_host.py REQUEST.json REPORT.json

The request names the library, the ops whose OpDefs to return, the calls
to make (each in eager mode, inside tf.function and in a TF 1 graph
Session), the partial input shapes whose inferred output shapes
tf.function should report, and extra checks (`checks`). Tensors travel as
{"dtype": numpy name, "shape": [...], "hex": raw little-endian bytes}.
"""

import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402

from host_tensors import error, from_array, map_args, outputs, to_array  # noqa: E402


def run_eager(fn, args, attrs):
    """One call in eager mode: its outputs, or its error."""
    try:
        return outputs(fn(*map_args(args, lambda t: tf.constant(to_array(t))), **attrs))
    except Exception as e:  # noqa: BLE001 - the error is the result
        return error(e)


def run_function(fn, args, attrs):
    try:
        traced = tf.function(lambda *a: fn(*a, **attrs))
        result = traced(*map_args(args, lambda t: tf.constant(to_array(t))))
        return outputs([r.numpy() for r in result] if isinstance(result, (list, tuple)) else result.numpy())
    except Exception as e:  # noqa: BLE001
        return error(e)


def run_session(fn, args, attrs):
    try:
        with tf.Graph().as_default():
            feeds = {}

            def placeholder(t):
                p = tf.compat.v1.placeholder(tf.as_dtype(t["dtype"]), t["shape"])
                feeds[p] = to_array(t)
                return p

            y = fn(*map_args(args, placeholder), **attrs)
            with tf.compat.v1.Session() as session:
                return outputs(session.run(y, feeds))
    except Exception as e:  # noqa: BLE001
        return error(e)


MODES = {"eager": run_eager, "function": run_function, "session": run_session}


def inferred_shapes(fn, specs, attrs):
    """The output shapes tf.function infers for inputs of partial shapes."""
    signature = map_args(
        specs,
        lambda s: tf.TensorSpec(
            None if s["shape"] is None else [None if d < 0 else d for d in s["shape"]], tf.as_dtype(s["dtype"])
        ),
    )
    flat = [s for a in signature for s in (a if isinstance(a, list) else [a])]
    structure = [len(a) if isinstance(a, list) else None for a in signature]

    def call(*flat_args):
        args, i = [], 0
        for n in structure:
            args.append(list(flat_args[i : i + n]) if n is not None else flat_args[i])
            i += n if n is not None else 1
        return fn(*args, **attrs)

    try:
        concrete = tf.function(call).get_concrete_function(*flat)
    except Exception as e:  # noqa: BLE001
        return error(e)
    result = concrete.structured_outputs
    result = result if isinstance(result, (list, tuple)) else [result]
    return [None if r.shape.rank is None else [-1 if d is None else d for d in r.shape.as_list()] for r in result]


def extra_checks(lib, library, checks):
    report = {}
    if "clash" in checks:
        # TensorFlow keeps its Abs; the library's Abs kernel (identity) is
        # not registered, so TF's kernel answers.
        report["clash"] = {
            "wrapper": hasattr(lib, "abs"),
            "abs_int8": from_array(tf.abs(tf.constant([-3, 4], tf.int8)).numpy()),
            "abs_float": from_array(tf.abs(tf.constant([-1.5], tf.float32)).numpy()),
            "op_def": op_def_registry.get("Abs").SerializeToString().hex(),
        }
    if "forwarding" in checks:
        # An intermediate used once is forwarded by TensorFlow (x + 1 has no
        # other reference); a constant is not. Both must compute right.
        a = np.arange(1, 4097, dtype=np.float32)

        @tf.function
        def scaled_sum(x):
            return lib.fixture_scale(x + 1.0, factor=2.0)

        report["forwarding"] = {
            "graph": from_array(scaled_sum(tf.constant(a)).numpy()),
            "eager": from_array(lib.fixture_scale(tf.constant(a), factor=2.0).numpy()),
            "expected": from_array((a + 1.0) * 2.0),
        }
    if "load_twice" in checks:
        again = tf.load_op_library(library)
        copy_dir = tempfile.mkdtemp()
        try:
            copy = os.path.join(copy_dir, os.path.basename(library))
            shutil.copy(library, copy)
            other = tf.load_op_library(copy)
            report["load_twice"] = {
                "same_module_functions": sorted(n for n in dir(again) if not n.startswith("_")),
                "copy_functions": sorted(n for n in dir(other) if not n.startswith("_")),
                "zero_out_after": from_array(lib.zero_out([[5, 6], [7, 8]]).numpy()),
            }
        finally:
            shutil.rmtree(copy_dir)
    return report


def main():
    with open(sys.argv[1]) as f:
        request = json.load(f)
    library = request["library"]
    lib = tf.load_op_library(library)
    report = {
        "version": tf.__version__,
        "functions": sorted(n for n in dir(lib) if not n.startswith("_")),
        "op_defs": {},
        "cases": [],
        "shapes": [],
    }
    for name in request.get("ops", []):
        op_def = op_def_registry.get(name)
        report["op_defs"][name] = None if op_def is None else op_def.SerializeToString().hex()
    for case in request.get("cases", []):
        fn = getattr(lib, case["function"])
        report["cases"].append(
            {mode: MODES[mode](fn, case["args"], case.get("attrs", {})) for mode in case.get("modes", MODES)}
        )
    for query in request.get("shapes", []):
        fn = getattr(lib, query["function"])
        report["shapes"].append(inferred_shapes(fn, query["args"], query.get("attrs", {})))
    report.update(extra_checks(lib, library, request.get("checks", [])))
    with open(sys.argv[2], "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
