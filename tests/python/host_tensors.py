"""What the host drivers (tf_host.py, jax_host.py) share: tensors as the
Rust tests write and read them ({"dtype": numpy name, "shape": [...],
"hex": raw little-endian bytes}), errors as reports, and the arguments of a
call (a tensor, or a list of them for a list input)."""

import numpy as np


def to_array(t):
    return np.frombuffer(bytes.fromhex(t["hex"]), dtype=t["dtype"]).reshape(t["shape"])


def from_array(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "hex": a.tobytes().hex()}


def error(e):
    return {"error": type(e).__name__, "message": str(e)}


def outputs(result):
    if isinstance(result, (list, tuple)):
        return [from_array(r) for r in result]
    return [from_array(result)]


def map_args(args, f):
    """Applies f to every tensor of args (a tensor or a list of them each)."""
    return [[f(t) for t in a] if isinstance(a, list) else f(a) for a in args]
