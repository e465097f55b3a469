"""Float kernels at extreme magnitudes, answered by TensorFlow 2.21 on CPU:
each op of opreg's standard set that takes floats, on values around 2^53 and
1e15, denormals, infinities, NaN and -0, for float, double, half and
bfloat16. TF runs its CPU kernels with denormals flushed to zero (inputs and
results), so these are the answers a TF user sees. Every value is written as
its bits (hex), never as decimal text. Writes tests/data/tf-numerics/extremes.json.

    py=$(scripts/install-tf.sh) && "$py" scripts/tf-oracle/numerics.py
"""
import itertools
import json
import os

import ml_dtypes
import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VALUES = {
    "double": [0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310, 2.2250738585072014e-308, 1e-300,
               0.5, 1.0, -1.0, 1.5, -1.5, 2.5, -2.5, 3.0, 1e15, 1000000000000000.5,
               2.0 ** 53, 2.0 ** 53 + 2, -(2.0 ** 53), 4503599627370495.5, 1e300,
               1.7976931348623157e308, float("inf"), float("-inf"), float("nan")],
    "float": [0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.17549435e-38, 1e-30, 0.5, 1.0, -1.0,
              1.5, -1.5, 2.5, -2.5, 3.0, 8388607.5, 16777216.0, 16777218.0, -16777216.0, 1e15,
              1e30, 3.4028235e38, float("inf"), float("-inf"), float("nan")],
    "half": [0.0, -0.0, 6e-8, -6e-8, 3e-5, 6.104e-5, 0.5, 1.0, -1.0, 1.5, -2.5, 3.0, 1024.5,
             2048.0, 65504.0, float("inf"), float("-inf"), float("nan")],
    "bfloat16": [0.0, -0.0, 1e-40, -1e-40, 1.2e-38, 0.5, 1.0, -1.0, 1.5, -2.5, 3.0, 256.5,
                 1e30, 3.38e38, float("inf"), float("-inf"), float("nan")],
}
# Binary ops take every pair of this subset (denormals, zeros, specials, ties).
PAIR_VALUES = {
    "double": [0.0, -0.0, 5e-324, -5e-324, 1e-310, 1.0, -1.0, 2.5, 3.0, 1e15,
               1000000000000000.5, 2.0 ** 53, 1.7976931348623157e308, float("inf"),
               float("-inf"), float("nan")],
    "float": [0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.0, -1.0, 2.5, 3.0, 16777216.0, 1e30,
              3.4028235e38, float("inf"), float("-inf"), float("nan")],
    "half": [0.0, -0.0, 6e-8, 1.0, -1.0, 2.5, 3.0, 2048.0, 65504.0, float("inf"),
             float("-inf"), float("nan")],
    "bfloat16": [0.0, -0.0, 1e-40, 1.0, -1.0, 2.5, 3.0, 256.5, 3.38e38, float("inf"),
                 float("-inf"), float("nan")],
}
DTYPES = {"double": tf.float64, "float": tf.float32, "half": tf.float16, "bfloat16": tf.bfloat16}
UNARY = ["Abs", "Neg", "Exp", "Log", "Floor", "Rsqrt", "Sqrt", "Square", "Sigmoid", "Tanh",
         "Relu"]
BINARY = ["AddV2", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Maximum", "Minimum",
          "Pow", "SquaredDifference", "Equal", "Greater"]
CASTS = ["int32", "int64", "float", "double", "half", "bfloat16", "bool"]
REDUCTIONS = ["Sum", "Mean", "Max"]


def bits(t):
    a = t.numpy()
    width = a.dtype.itemsize
    raw = a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width])
    return ["%0*x" % (2 * width, int(v)) for v in raw.reshape(-1)]


def tensor(dtype, values):
    """A constant holding exactly these values, denormals kept (numpy rounds
    to nearest even; a TF Cast would flush them)."""
    np_type = {"double": np.float64, "float": np.float32, "half": np.float16,
               "bfloat16": ml_dtypes.bfloat16}[dtype]
    return tf.constant(np.array(values, dtype=np.float64).astype(np_type), dtype=DTYPES[dtype])


def entry(op, dtype, attrs, inputs, output):
    return {"op": op, "T": dtype, "attrs": attrs,
            "inputs": [{"dtype": i.dtype.name if i.dtype.name != "float32" else "float",
                        "shape": i.shape.as_list(), "bits": bits(i)} for i in inputs],
            "output": {"dtype": output.dtype.name, "shape": output.shape.as_list(),
                       "bits": bits(output)} if output is not None else None}


def run(fn):
    try:
        with tf.device("/CPU:0"):
            return fn()
    except (tf.errors.OpError, TypeError, ValueError):
        return None


def main():
    cases = []
    for dtype in DTYPES:
        x = tensor(dtype, VALUES[dtype])
        for op in UNARY:
            y = run(lambda: getattr(tf.raw_ops, op)(x=x) if op != "Relu" else tf.raw_ops.Relu(features=x))
            if y is not None:
                cases.append(entry(op, dtype, {}, [x], y))
        pairs = list(itertools.product(PAIR_VALUES[dtype], repeat=2))
        a = tensor(dtype, [p[0] for p in pairs])
        b = tensor(dtype, [p[1] for p in pairs])
        for op in BINARY:
            y = run(lambda: getattr(tf.raw_ops, op)(x=a, y=b))
            if y is not None:
                cases.append(entry(op, dtype, {}, [a, b], y))
        for target in CASTS:
            y = run(lambda: tf.raw_ops.Cast(x=x, DstT=tf.dtypes.as_dtype(target if target not in ("float",) else "float32")))
            if y is not None:
                cases.append(entry("Cast", dtype, {"DstT": target}, [x], y))
        # Reductions over rows of extremes: sums that overflow, cancel, or
        # meet NaN and denormals.
        v = VALUES[dtype]
        rows = [[v[2], v[2]], [v[0], v[1]], [v[1], v[1]], [v[-4], v[-4]], [v[-3], v[-2]],
                [v[-1], v[9]], [v[2], v[9]], [v[9], v[10]]]
        m = tensor(dtype, rows)
        axis = tf.constant([1], dtype=tf.int32)
        for op in REDUCTIONS:
            y = run(lambda: getattr(tf.raw_ops, op)(input=m, axis=axis, keep_dims=False))
            if y is not None:
                c = entry(op, dtype, {"keep_dims": False}, [m], y)
                c["axis"] = [1]
                cases.append(c)
    path = os.path.join(ROOT, "tests", "data", "tf-numerics", "extremes.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "device": "CPU", "cases": cases}, f, indent=0)
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), path))


if __name__ == "__main__":
    main()
