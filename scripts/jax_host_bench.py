"""Times the example op library (examples/zero_out) called from JAX through
opreg_jax, against a jnp expression doing the same work and against the
same kernel run by opreg's own executor (`opreg bench`). Run by
scripts/jax-host-bench.sh:

    python jax_host_bench.py target/release/libzero_out.so target/release/opreg

Per-call overhead: small inputs, median time per call of a jitted function
(and of an eager call), over batches of calls. Throughput: large inputs,
median time per jitted call with its result ready, against `opreg bench`'s
median run of a graph with the op fed the same input.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import opreg_jax  # noqa: E402

REPEATS = 7


def per_call(fn, *args, calls=2000):
    """Median over REPEATS batches of the time per call, result ready."""
    jax.block_until_ready(fn(*args))
    batches = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(calls):
            out = fn(*args)
        jax.block_until_ready(out)
        batches.append((time.perf_counter() - start) / calls)
    return statistics.median(batches)


def per_run(fn, *args, runs=20):
    """Median time of one call with its result ready."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def opreg_bench(opreg, library, graph, feeds, runs=20):
    """`opreg bench`'s median run, in seconds."""
    with tempfile.TemporaryDirectory() as scratch:
        graph_path = os.path.join(scratch, "graph.pbtxt")
        feeds_path = os.path.join(scratch, "io.json")
        with open(graph_path, "w") as f:
            f.write(graph)
        with open(feeds_path, "w") as f:
            json.dump({"feeds": feeds, "fetches": [{"name": "y:0"}]}, f)
        out = subprocess.run(
            [opreg, "--load", library, "bench", graph_path, "--feeds", feeds_path,
             "--runs", str(runs), "--warmup", "3"],
            check=True, capture_output=True, text=True,
        ).stdout
    match = re.search(r"median\s+([0-9.]+)\s*(us|ms|s)\b", out)
    if not match:
        raise RuntimeError(f"no median in opreg bench's output:\n{out}")
    value, unit = float(match.group(1)), match.group(2)
    return value * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def feed(name, array):
    dtype = {"int32": "DT_INT32", "float32": "DT_FLOAT"}[array.dtype.name]
    return {"name": f"{name}:0", "dtype": dtype, "shape": list(array.shape),
            "values": array.ravel().tolist()}


def placeholder(name, dtype):
    return f'node {{ name: "{name}" op: "Placeholder" attr {{ key: "dtype" value {{ type: {dtype} }} }} }}\n'


def zero_out_jnp(x):
    flat = x.ravel()
    return jnp.zeros_like(flat).at[0].set(flat[0]).reshape(x.shape)


def weighted_sum_jnp(values, weights):
    return sum(w * v for w, v in zip(values, weights))


def fmt(seconds):
    return f"{seconds * 1e6:,.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def main():
    library, opreg = sys.argv[1], sys.argv[2]
    lib = opreg_jax.load(library)
    rows = []

    # Per-call overhead, small inputs.
    x = jnp.arange(4, dtype=jnp.int32) + 1
    a = jnp.ones((4,), jnp.float32)
    w = jnp.array([1.0, 2.0], jnp.float32)
    jit_op = jax.jit(lib.zero_out)
    jit_ref = jax.jit(zero_out_jnp)
    rows.append(("ZeroOut, 4 int32, jit (per call)", per_call(jit_op, x), per_call(jit_ref, x)))
    rows.append(("ZeroOut, 4 int32, eager (per call)", per_call(lib.zero_out, x, calls=300),
                 per_call(zero_out_jnp, x, calls=300)))
    jit_ws = jax.jit(lambda a, b, w: lib.weighted_sum([a, b], w))
    jit_ws_ref = jax.jit(lambda a, b, w: weighted_sum_jnp([a, b], w))
    rows.append(("WeightedSum, 2 x 4 float32, jit (per call)", per_call(jit_ws, a, a, w),
                 per_call(jit_ws_ref, a, a, w)))
    print("| measurement | opreg op from JAX | jnp expression | opreg / jnp |")
    print("|---|---|---|---|")
    for name, ours, ref in rows:
        print(f"| {name} | {fmt(ours)} | {fmt(ref)} | {ours / ref:.2f} |")
    print()

    # Throughput, large inputs, against opreg's own executor: three rounds,
    # each measuring every contender in turn; the medians of the rounds.
    n = 1 << 22  # 4M elements: 16 MB per array
    big = (np.arange(n, dtype=np.int32) % 1000) + 1
    jax_big = jnp.asarray(big)
    zero_out_graph = placeholder("x", "DT_INT32") + 'node { name: "y" op: "ZeroOut" input: "x" }\n'
    zero_out_feeds = [feed("x", big)]
    values = [np.full(n, i + 1, np.float32) for i in range(4)]
    weights = np.array([0.5, 1.0, 1.5, 2.0], np.float32)
    ws_graph = "".join(placeholder(f"v{i}", "DT_FLOAT") for i in range(4)) + placeholder("w", "DT_FLOAT")
    ws_graph += ('node { name: "y" op: "WeightedSum" input: "v0" input: "v1" input: "v2" input: "v3" input: "w" '
                 'attr { key: "N" value { i: 4 } } attr { key: "T" value { type: DT_FLOAT } } }\n')
    ws_feeds = [feed(f"v{i}", v) for i, v in enumerate(values)] + [feed("w", weights)]
    jax_values = [jnp.asarray(v) for v in values]
    jax_weights = jnp.asarray(weights)
    contenders = {
        "zero_out": (
            lambda: per_run(jax.jit(lib.zero_out), jax_big),
            lambda: opreg_bench(opreg, library, zero_out_graph, zero_out_feeds),
            lambda: per_run(jax.jit(zero_out_jnp), jax_big),
        ),
        "weighted_sum": (
            lambda: per_run(jax.jit(lambda v, w: lib.weighted_sum(v, w)), jax_values, jax_weights),
            lambda: opreg_bench(opreg, library, ws_graph, ws_feeds),
            lambda: per_run(jax.jit(weighted_sum_jnp), jax_values, jax_weights),
        ),
    }
    rounds = {name: ([], [], []) for name in contenders}
    for _ in range(3):
        for name, fns in contenders.items():
            for column, fn in zip(rounds[name], fns):
                column.append(fn())
    med = {name: [statistics.median(c) for c in columns] for name, columns in rounds.items()}
    print("| large input (median of 3 rounds) | opreg op from JAX (jit) | same kernel in opreg's executor | throughput vs executor | jnp expression |")
    print("|---|---|---|---|---|")
    for label, name in [("ZeroOut, 4M int32", "zero_out"), ("WeightedSum, 4 x 4M float32", "weighted_sum")]:
        ours, executor, ref = med[name]
        print(f"| {label} | {fmt(ours)} | {fmt(executor)} | {executor / ours:.2f}x | {fmt(ref)} |")
    stats = lib.stats()
    print(f"\nhandler counters: {stats}")


if __name__ == "__main__":
    main()
