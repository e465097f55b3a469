"""Drives JAX with an opreg op library through the opreg_jax package.

Run by tests/tests/jax_host.rs, which writes the request and checks the
report against opreg's own executor:

    python jax_host.py REQUEST.json REPORT.json

The request names the library, the calls to make (each eagerly, under
jax.jit and under jax.vmap over a batch of two copies) and extra checks
(`checks`). Tensors travel as {"dtype": numpy name, "shape": [...], "hex":
raw little-endian bytes}.
"""

import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import opreg_jax  # noqa: E402

from host_tensors import error, from_array, map_args, outputs, to_array  # noqa: E402

# float64 and int64 arrays stay what they are (JAX narrows them otherwise).
jax.config.update("jax_enable_x64", True)


def run(mode, fn, args, attrs):
    """One call: its outputs, or its error."""
    try:
        arrays = map_args(args, lambda t: jnp.asarray(to_array(t)))
        if mode == "eager":
            out = fn(*arrays, **attrs)
        elif mode == "jit":
            out = jax.jit(lambda *a: fn(*a, **attrs))(*arrays)
        else:
            # A batch of two copies: each row must be the unbatched result.
            batch = map_args(arrays, lambda a: jnp.stack([a, a]))
            out = jax.vmap(lambda *a: fn(*a, **attrs))(*batch)
            out = [o[1] for o in out] if isinstance(out, (list, tuple)) else out[1]
        return outputs(jax.block_until_ready(out))
    except Exception as e:  # noqa: BLE001 - the error is the result
        return error(e)


def check_load_twice(lib, path, request):
    again = opreg_jax.load(path)
    x = jnp.array([[5, 6], [7, 8]], jnp.int32)
    report = {
        "same_ops": sorted(again.ops) == sorted(lib.ops),
        "zero_out_after": from_array(again.zero_out(x)),
    }
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "copy_" + os.path.basename(path))
        shutil.copy(path, copy)
        try:
            opreg_jax.load(copy)
            report["copy"] = {"error": None}
        except Exception as e:  # noqa: BLE001
            report["copy"] = error(e)
    report["zero_out_after_copy"] = from_array(lib.zero_out(x))
    return report


def check_zero_copy(lib, path, request):
    big = jnp.arange(300 * 400, dtype=jnp.int32).reshape(300, 400) + 1
    weights = jnp.array([1.0, 2.0], jnp.float32)
    values = [jnp.ones((256, 256), jnp.float32)] * 2
    before = lib.stats()
    jax.block_until_ready(lib.zero_out(big))
    jax.block_until_ready(lib.zero_out(big))
    jax.block_until_ready(jax.jit(lambda x: lib.zero_out(x) * 2)(big))
    jax.block_until_ready(lib.weighted_sum(values, weights))
    after = lib.stats()
    return {k: after[k] - before[k] for k in after}


def check_versions(lib, path, request):
    report = {"jaxlib": list(opreg_jax.jaxlib_ffi_api_version()), "library": list(lib.ffi_api)}
    for name, jaxlib_version in [("older_minor", (0, 2)), ("other_major", (1, 3)), ("newer_minor", (0, 9))]:
        try:
            opreg_jax.check_ffi_version(lib.ffi_api, jaxlib_version)
            report[name] = {"error": None}
        except Exception as e:  # noqa: BLE001
            report[name] = error(e)
    # A library loaded under an old jaxlib is refused before anything of it
    # is registered.
    other = request.get("other_library")
    if other:
        real = opreg_jax.jaxlib_ffi_api_version
        opreg_jax.jaxlib_ffi_api_version = lambda: (0, 2)
        try:
            opreg_jax.load(other)
            report["old_jaxlib_load"] = {"error": None}
        except Exception as e:  # noqa: BLE001
            report["old_jaxlib_load"] = error(e)
        finally:
            opreg_jax.jaxlib_ffi_api_version = real
        report["registered_after_refusal"] = sorted(
            t for t, (p, _) in opreg_jax._TARGETS.items() if os.path.realpath(other) == p
        )
    return report


def check_raw_call(lib, path, request):
    """The handlers called straight through jax.ffi.ffi_call, without the
    package's wrapper: they infer N and T from the buffers."""
    a = jnp.array([1.0, 2.0, 3.0], jnp.float32)
    w = jnp.array([2.0, 1.0], jnp.float32)
    target = lib.weighted_sum.target
    report = {}
    try:
        out = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((3,), jnp.float32))(a, a, w)
        report["inferred"] = from_array(out)
    except Exception as e:  # noqa: BLE001
        report["inferred"] = error(e)
    try:
        out = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((3,), jnp.int32))(a, a, w)
        report["wrong_result_dtype"] = from_array(jax.block_until_ready(out))
    except Exception as e:  # noqa: BLE001
        report["wrong_result_dtype"] = error(e)
    try:
        out = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((3,), jnp.float32))(a, a, w, N=np.int64(3))
        report["wrong_n"] = from_array(jax.block_until_ready(out))
    except Exception as e:  # noqa: BLE001
        report["wrong_n"] = error(e)
    return report


CHECKS = {
    "load_twice": check_load_twice,
    "zero_copy": check_zero_copy,
    "versions": check_versions,
    "raw_call": check_raw_call,
}


def main():
    request_path, report_path = sys.argv[1], sys.argv[2]
    with open(request_path) as f:
        request = json.load(f)
    path = request["library"]
    lib = opreg_jax.load(path)
    report = {
        "jax": jax.__version__,
        "library": lib.library,
        "functions": sorted(op.__name__ for op in lib.ops.values()),
        "skipped": lib.skipped,
        "cases": [],
    }
    for case in request.get("cases", []):
        fn = getattr(lib, case["function"])
        attrs = case.get("attrs", {})
        report["cases"].append(
            {mode: run(mode, fn, case["args"], attrs) for mode in ("eager", "jit", "vmap")}
        )
    for check in request.get("checks", []):
        report[check] = CHECKS[check](lib, path, request)
    report["stats"] = lib.stats()
    with open(report_path, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
