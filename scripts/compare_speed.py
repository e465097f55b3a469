#!/usr/bin/env python3
"""Times every graph of shared/models and shared/graphs through opreg,
TensorFlow 2.21 and ONNX Runtime, side by side in one run, and prints the
median time per run of each with the ratios (run by scripts/compare-speed.sh,
which installs what it needs into .cache/speed).

    compare_speed.py OPREG SHARED_DIR [--runs N] [--rounds R] [--only NAME...] [--kernels]

With --kernels, times the single-kernel rows of the speed issue instead:
MatMul f32 NxN for N = 256 ... 4096, Abs on 16M floats (a fresh output
each run) and a chain of 1,000 Abs nodes on one float (the executor's cost
per node), each built by TensorFlow into a temporary folder, with NumPy
(its bundled OpenBLAS on 2 threads, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
unset) as a fourth
column where it has the same operation.

- opreg: `OPREG bench GRAPH --feeds io.json --runs N/R --times FILE` a turn
  (each run's time).
- TensorFlow: a Session on the frozen GraphDef, Grappler and oneDNN as
  TensorFlow sets them by default, 2 intra-op threads.
- ONNX Runtime: the GraphDef converted by tf2onnx (opset 17), 2 intra-op
  threads, all graph optimizations. A graph tf2onnx cannot convert, or ORT
  cannot run, is reported as such.

Each graph's outputs are checked against io.json's fetches (within 1e-3 of
the scale) for TF and ORT too, so that a wrong conversion is not timed. The
engines take turns: with --rounds R (default 5) each is timed R times,
N/R runs a turn after warm-up runs, the order rotating, each turn after a
pause of SETTLE_S so that the threads of the engine before (OpenBLAS's and
ONNX Runtime's spin for a while after a call) are idle again and do not
take the cores from the next. Each engine's median is that of all its runs
together (opreg's from `opreg bench --times`). On a shared machine whose
speed changes from minute to minute, turns spread each engine's runs over
the same minutes; one block of runs each (--rounds 1) measured ratios from
0.77 to 1.66 for the same two builds a minute apart.
"""
import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# NumPy's OpenBLAS at its own best on the 2 threads the others get: some
# environments pin OPENBLAS_CORETYPE (and its L2 size) to an older core,
# which halves it.
os.environ.pop("OPENBLAS_CORETYPE", None)
os.environ.pop("OPENBLAS_L2_SIZE", None)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

DTYPES = {"DT_FLOAT": np.float32, "DT_DOUBLE": np.float64, "DT_HALF": np.float16,
          "DT_INT32": np.int32, "DT_INT64": np.int64, "DT_BOOL": np.bool_,
          "DT_INT8": np.int8, "DT_UINT8": np.uint8}


# Seconds of quiet before each engine's timing (see the module docs).
SETTLE_S = 0.5


def settled(timer):
    """`timer()`, after SETTLE_S of quiet."""
    time.sleep(SETTLE_S)
    return timer()


def decode(entry):
    values = [float("nan") if v == "NaN" else float("inf") if v == "Infinity"
              else float("-inf") if v == "-Infinity" else v for v in entry["values"]]
    return np.array(values, dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])


def load(folder):
    graph_def = tf.compat.v1.GraphDef()
    with open(os.path.join(folder, "graph.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    with open(os.path.join(folder, "io.json")) as f:
        io = json.load(f)
    feeds = {e["name"]: decode(e) for e in io["feeds"]}
    fetches = [e["name"] for e in io["fetches"]]
    expected = [decode(e) if "values" in e else None for e in io["fetches"]]
    return graph_def, feeds, fetches, expected


def close(ours, want):
    if want is None:
        return True
    ours = np.asarray(ours)
    if ours.shape != want.shape:
        return False
    if want.dtype.kind in "iub":
        return np.array_equal(ours, want)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    return bool(np.all(np.abs(ours.astype(np.float64) - want.astype(np.float64)) <= 1e-3 * scale))


def run_times_us(run, runs, warmup=5):
    """Each of `runs` timed calls of `run` (after `warmup` untimed), in us."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e6)
    return times


def median(times):
    times = sorted(times)
    return times[len(times) // 2] if times else None


class Engine:
    """One engine ready to time a graph: `turn(runs, warmup)` returns the
    times of that many runs in us, or raises `EngineError`; `close()` frees
    its session. `error` is set instead when it cannot run the graph."""

    def __init__(self, turn=None, close=lambda: None, error=None):
        self.turn, self.close, self.error = turn, close, error


class EngineError(Exception):
    pass


def opreg_engine(opreg, folder):
    def turn(runs, warmup):
        with tempfile.NamedTemporaryFile(prefix="opreg-times-", suffix=".txt") as times:
            out = subprocess.run(
                [opreg, "bench", os.path.join(folder, "graph.pb"), "--feeds",
                 os.path.join(folder, "io.json"), "--runs", str(runs), "--warmup",
                 str(warmup), "--times", times.name],
                capture_output=True, text=True)
            if out.returncode != 0:
                lines = out.stderr.strip().splitlines()
                raise EngineError(lines[-1] if lines else "failed")
            return [float(line) for line in open(times.name) if line.strip()]
    return Engine(turn)


def tf_session(graph_def, feeds, fetches):
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=2,
                                      inter_op_parallelism_threads=1)
    return tf.compat.v1.Session(graph=graph, config=config)


def tf_engine(graph_def, feeds, fetches, expected):
    try:
        sess = tf_session(graph_def, feeds, fetches)
        outputs = sess.run(fetches, feeds)
    except Exception as e:  # a graph TF itself cannot run here
        return Engine(error=f"TF: {type(e).__name__}")
    if not all(close(o, w) for o, w in zip(outputs, expected)):
        sess.close()
        return Engine(error="TF's outputs differ from io.json")
    return Engine(lambda runs, warmup: run_times_us(lambda: sess.run(fetches, feeds), runs,
                                                    warmup),
                  sess.close)


def ort_engine(graph_def, feeds, fetches, expected):
    try:
        import onnxruntime as ort
        import tf2onnx
    except ImportError as e:
        return Engine(error=f"not installed: {e.name}")
    try:
        model, _ = tf2onnx.convert.from_graph_def(
            graph_def, input_names=list(feeds), output_names=fetches, opset=17)
    except Exception as e:
        return Engine(error=f"tf2onnx: {type(e).__name__}: "
                            f"{str(e).splitlines()[0][:80] if str(e) else ''}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        sess = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        feed = {n: feeds[n] for n in names}
        outputs = sess.run(fetches, feed)
    except Exception as e:
        return Engine(error=f"ORT: {type(e).__name__}: "
                            f"{str(e).splitlines()[0][:80] if str(e) else ''}")
    if not all(close(o, w) for o, w in zip(outputs, expected)):
        return Engine(error="ORT's outputs differ from io.json")
    return Engine(lambda runs, warmup: run_times_us(lambda: sess.run(fetches, feed), runs,
                                                    warmup))


def numpy_engine(numpy_run):
    if numpy_run is None:
        return Engine(error="")
    return Engine(lambda runs, warmup: run_times_us(numpy_run, runs, warmup))


def timed_in_turns(engines, runs, rounds, warmup, first=0):
    """`{name: (median us or None, note or None)}` for `engines` (a list of
    (name, make) whose `make()` returns an Engine), each timed `rounds`
    turns of `runs / rounds` runs (at least 1), taking turns, the order
    rotating from `first`; the median is that of all of an engine's runs."""
    ready = []
    results = {}
    for name, make in engines:
        engine = make()
        if engine.error is not None:
            results[name] = (None, engine.error or None)
        else:
            ready.append((name, engine))
    per_turn = max(1, runs // max(1, rounds))
    times = {name: [] for name, _ in ready}
    failed = {}
    try:
        for r in range(max(1, rounds)):
            k = (first + r) % len(ready) if ready else 0
            for name, engine in ready[k:] + ready[:k]:
                if name in failed:
                    continue
                try:
                    times[name] += settled(lambda: engine.turn(per_turn, warmup))
                except EngineError as e:
                    failed[name] = str(e)
    finally:
        for _, engine in ready:
            engine.close()
        # ONNX Runtime's spinning intra-op threads must not compete with
        # what comes next.
        ready.clear()
        gc.collect()
    for name in times:
        results[name] = (None, failed[name]) if name in failed else (median(times[name]), None)
    return results


def fmt(us):
    if us is None:
        return "-"
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} us"


def ratio(ours, theirs):
    return f"{ours / theirs:.2f}" if ours and theirs else "-"


# Feed values on a grid of eighths: short in JSON, and MatMul's sums of
# their products are exact in float, so every engine's result can be
# compared exactly.
GRID = [k / 8 for k in range(-8, 9)]
GRID_TEXT = [repr(v) for v in GRID]


def grid_values(shape, rng):
    index = rng.integers(0, len(GRID), size=shape)
    return np.array(GRID, dtype=np.float32)[index], index


def write_case(folder, graph_def, feeds, fetch):
    """graph.pb and an io.json whose feeds are `{name: (array, grid index)}`;
    the fetch's values are left out (not compared by `opreg bench`)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.pb"), "wb") as f:
        f.write(graph_def.SerializeToString())
    with open(os.path.join(folder, "io.json"), "w") as f:
        f.write('{"feeds": [')
        for i, (name, (array, index)) in enumerate(feeds.items()):
            f.write(("," if i else "") + json.dumps(
                {"name": name, "dtype": "DT_FLOAT", "shape": list(array.shape)})[:-1])
            f.write(', "values": [')
            f.write(",".join(GRID_TEXT[k] for k in index.ravel().tolist()))
            f.write("]}")
        f.write('], "fetches": [' + json.dumps({"name": fetch}) + "]}")


def kernel_cases(root, rng):
    """(label, folder, graph_def, feeds, fetch, expected, NumPy's run or None)
    for each single-kernel row, written under `root` as it is reached."""
    v1 = tf.compat.v1
    for n in (256, 512, 1024, 2048, 4096):
        graph = tf.Graph()
        with graph.as_default():
            a = v1.placeholder(tf.float32, [n, n], name="a")
            b = v1.placeholder(tf.float32, [n, n], name="b")
            tf.linalg.matmul(a, b, name="y")
        feeds = {"a:0": grid_values((n, n), rng), "b:0": grid_values((n, n), rng)}
        x, y = feeds["a:0"][0], feeds["b:0"][0]
        folder = os.path.join(root, f"matmul_{n}")
        graph_def = graph.as_graph_def()
        write_case(folder, graph_def, feeds, "y:0")
        yield (f"MatMul f32 {n}x{n}", folder, graph_def,
               {k: v[0] for k, v in feeds.items()}, ["y:0"], [x @ y], lambda x=x, y=y: x @ y)
    graph = tf.Graph()
    with graph.as_default():
        tf.abs(v1.placeholder(tf.float32, [1 << 24], name="x"), name="y")
    feeds = {"x:0": grid_values((1 << 24,), rng)}
    x = feeds["x:0"][0]
    folder = os.path.join(root, "abs_16m")
    graph_def = graph.as_graph_def()
    write_case(folder, graph_def, feeds, "y:0")
    yield ("Abs f32 16M (fresh output)", folder, graph_def, {"x:0": x}, ["y:0"],
           [np.abs(x)], lambda: np.abs(x))
    graph = tf.Graph()
    with graph.as_default():
        y = v1.placeholder(tf.float32, [1], name="x")
        for i in range(1000):
            y = tf.abs(y, name=f"abs_{i}")
    feeds = {"x:0": grid_values((1,), rng)}
    x = feeds["x:0"][0]
    folder = os.path.join(root, "abs_chain_1000")
    graph_def = graph.as_graph_def()
    write_case(folder, graph_def, feeds, "abs_999:0")
    yield ("Abs chain of 1,000 nodes (1 float)", folder, graph_def, {"x:0": x},
           ["abs_999:0"], [np.abs(x)], None)


def run_kernels(args):
    print(f"median per run of the runs below in up to {args.rounds} turns of each engine "
          "(warm-up runs a turn); ratio = opreg / other (below 1: opreg faster); "
          "NumPy on OpenBLAS with OPENBLAS_NUM_THREADS="
          f"{os.environ['OPENBLAS_NUM_THREADS']}, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset")
    print()
    print("| kernel | opreg | TensorFlow | ONNX Runtime | NumPy | opreg/TF | opreg/ORT "
          "| opreg/NumPy | runs | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="opreg-kernels-") as root:
        for i, (label, folder, graph_def, feeds, fetches, expected, numpy_run) in \
                enumerate(kernel_cases(root, rng)):
            if args.only and not any(word in label for word in args.only):
                continue
            # As many runs as fit in about 4 s per engine (at least 5).
            start = time.perf_counter()
            (numpy_run or (lambda: None))()
            once = time.perf_counter() - start
            runs = max(5, min(args.runs, int(4.0 / once))) if numpy_run else args.runs
            warmup = 2 if once > 0.05 else 5
            engines = [
                ("opreg", lambda: opreg_engine(args.opreg, folder)),
                ("tf", lambda: tf_engine(graph_def, feeds, fetches, expected)),
                ("ort", lambda: ort_engine(graph_def, feeds, fetches, expected)),
                ("numpy", lambda: numpy_engine(numpy_run)),
            ]
            rounds = min(args.rounds, runs)
            results = timed_in_turns(engines, runs, rounds, warmup, first=i)
            notes = "; ".join(f"{n}: {r[1]}" for n, r in results.items() if r[1])
            ours, t_tf, t_ort, t_np = (results[n][0] for n in ("opreg", "tf", "ort", "numpy"))
            print(f"| {label} | {fmt(ours)} | {fmt(t_tf)} | {fmt(t_ort)} | {fmt(t_np)} | "
                  f"{ratio(ours, t_tf)} | {ratio(ours, t_ort)} | {ratio(ours, t_np)} | "
                  f"{runs} | {notes} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("opreg")
    parser.add_argument("shared")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5,
                        help="turns each engine takes, runs/rounds runs a turn (see above)")
    parser.add_argument("--only", nargs="*",
                        help="only these graph folders (with --kernels: the rows whose "
                             "label contains one of these words, e.g. chain or 1024x1024)")
    parser.add_argument("--kernels", action="store_true",
                        help="time the single-kernel rows (MatMul sizes, Abs) instead")
    args = parser.parse_args()
    if args.kernels:
        return run_kernels(args)
    folders = []
    for kind in ("models", "graphs"):
        root = os.path.join(args.shared, kind)
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            if os.path.exists(os.path.join(folder, "graph.pb")) and \
                    os.path.exists(os.path.join(folder, "io.json")) and \
                    (not args.only or name in args.only):
                folders.append((f"{kind}/{name}", folder))
    print(f"median per run of {args.runs} runs in {args.rounds} turns of each engine "
          f"(5 warm-up runs a turn); ratio = opreg / other (below 1: opreg faster)")
    print(f"TF {tf.__version__}", end="")
    try:
        import onnxruntime
        import tf2onnx
        print(f", ONNX Runtime {onnxruntime.__version__}, tf2onnx {tf2onnx.__version__}")
    except ImportError:
        print(", ONNX Runtime not installed")
    print()
    print(f"| graph | opreg | TensorFlow | ONNX Runtime | opreg/TF | opreg/ORT | notes |")
    print("|---|---|---|---|---|---|---|")
    for i, (label, folder) in enumerate(folders):
        graph_def, feeds, fetches, expected = load(folder)
        engines = [
            ("opreg", lambda: opreg_engine(args.opreg, folder)),
            ("tf", lambda: tf_engine(graph_def, feeds, fetches, expected)),
            ("ort", lambda: ort_engine(graph_def, feeds, fetches, expected)),
        ]
        results = timed_in_turns(engines, args.runs, args.rounds, 5, first=i)
        notes = "; ".join(f"{n}: {r[1]}" for n, r in results.items() if r[1])
        ours, theirs_tf, theirs_ort = (results[n][0] for n in ("opreg", "tf", "ort"))
        print(f"| {label} | {fmt(ours)} | {fmt(theirs_tf)} | {fmt(theirs_ort)} | "
              f"{ratio(ours, theirs_tf)} | {ratio(ours, theirs_ort)} | {notes} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
