"""Call the ops of an opreg op library from JAX, through XLA's FFI.

``load(path)`` opens a library built with ``opreg_jax::export_jax_library!``,
registers one XLA FFI target per op with a CPU kernel, and returns a
``Library`` whose attributes are the ops as functions (``lib.zero_out(x)``).
See README.md for the calling conventions.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import re
import threading
from typing import Any, Sequence

import numpy as np

__all__ = [
    "ABI_VERSION",
    "Library",
    "LibraryError",
    "Op",
    "OpregJaxError",
    "UnsupportedJaxError",
    "check_ffi_version",
    "jaxlib_ffi_api_version",
    "load",
]

#: The version of the protocol between this package and an op library's C
#: entry points (``opreg_jax::ABI_VERSION`` on the Rust side).
ABI_VERSION = 1

#: How ``jax.vmap`` batches an op unless ``load`` is told otherwise.
DEFAULT_VMAP_METHOD = "sequential"


class OpregJaxError(Exception):
    """Base of this package's own errors."""


class UnsupportedJaxError(OpregJaxError, RuntimeError):
    """The installed JAX (or the library) cannot be used together."""


class LibraryError(OpregJaxError, OSError):
    """The file is not an op library this package can load, or its targets
    clash with a library loaded before."""


def jaxlib_ffi_api_version() -> tuple[int, int]:
    """The XLA FFI API version (major, minor) of the installed jaxlib, read
    from the C header it ships (``jax.ffi.include_dir()``)."""
    import jax

    ffi = getattr(jax, "ffi", None)
    if ffi is None or not hasattr(ffi, "ffi_call") or not hasattr(ffi, "include_dir"):
        raise UnsupportedJaxError(
            f"jax {jax.__version__} has no jax.ffi.ffi_call; opreg_jax needs jax 0.5 or later"
        )
    header = os.path.join(ffi.include_dir(), "xla", "ffi", "api", "c_api.h")
    try:
        with open(header, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UnsupportedJaxError(
            f"cannot read jaxlib's XLA FFI header {header} to learn its FFI API version: {e}"
        ) from None
    major = re.search(r"#define\s+XLA_FFI_API_MAJOR\s+(\d+)", text)
    minor = re.search(r"#define\s+XLA_FFI_API_MINOR\s+(\d+)", text)
    if not major or not minor:
        raise UnsupportedJaxError(f"{header} does not define XLA_FFI_API_MAJOR/MINOR")
    return int(major.group(1)), int(minor.group(1))


def check_ffi_version(library: Sequence[int], jaxlib: Sequence[int], *, what: str = "the op library") -> None:
    """Refuses a jaxlib whose XLA FFI API cannot run handlers written for
    ``library``'s: another major version, or an older minor one."""
    lib_major, lib_minor = library
    jax_major, jax_minor = jaxlib
    if lib_major != jax_major or jax_minor < lib_minor:
        import jaxlib as _jaxlib

        raise UnsupportedJaxError(
            f"{what} was built for XLA FFI API {lib_major}.{lib_minor}, but jaxlib "
            f"{getattr(_jaxlib, '__version__', '?')} has FFI API {jax_major}.{jax_minor}; "
            f"a library needs a jaxlib of the same major version and at least its minor "
            f"version (rebuild the library against a matching opreg-jax, or install another jaxlib)"
        )


class _Native:
    """The loaded shared library and its C entry points."""

    def __init__(self, path: str):
        try:
            self.cdll = ctypes.CDLL(path)
        except OSError as e:
            raise LibraryError(f"cannot load {path}: {e}") from None
        try:
            describe = self.cdll.opreg_jax_describe
            self._infer = self.cdll.opreg_jax_infer
            self._stats = self.cdll.opreg_jax_stats
            self._free = self.cdll.opreg_jax_free
        except AttributeError:
            raise LibraryError(
                f"{path} is not an opreg op library for JAX: it lacks the opreg_jax_* entry points "
                f"(does the crate call opreg_jax::export_jax_library!?)"
            ) from None
        for fn in (describe, self._stats):
            fn.restype = ctypes.c_void_p
            fn.argtypes = []
        self._infer.restype = ctypes.c_void_p
        self._infer.argtypes = [ctypes.c_size_t, ctypes.c_char_p]
        self._free.restype = None
        self._free.argtypes = [ctypes.c_void_p]
        self.description = self._json(describe())

    def _json(self, pointer: int | None) -> Any:
        if not pointer:
            raise OpregJaxError("the op library returned no answer")
        try:
            return json.loads(ctypes.string_at(pointer).decode("utf-8"))
        finally:
            self._free(pointer)

    def infer(self, index: int, request: str) -> Any:
        return self._json(self._infer(index, request.encode("utf-8")))

    def stats(self) -> dict:
        return self._json(self._stats())


_LOCK = threading.Lock()
_NATIVE: dict[str, _Native] = {}
#: (native library, vmap_method) -> the Library ``load`` returned for them.
_LIBRARIES: dict[tuple[int, str], "Library"] = {}
#: target name -> (library path, handler address) of every target registered.
_TARGETS: dict[str, tuple[str, int]] = {}


def _open(path: str) -> _Native:
    real = os.path.realpath(path)
    with _LOCK:
        native = _NATIVE.get(real)
        if native is not None:
            return native
        if not os.path.exists(real):
            raise LibraryError(f"no op library at {path}")
        native = _Native(real)
        desc = native.description
        if "error" in desc:
            raise LibraryError(f"{path}: {desc['error']['message']}")
        if desc.get("abi") != ABI_VERSION:
            raise UnsupportedJaxError(
                f"{path} speaks opreg_jax protocol {desc.get('abi')}, this package {ABI_VERSION} "
                f"(library built with opreg-jax {desc.get('opreg_jax')}); rebuild it or "
                f"install the matching package"
            )
        check_ffi_version(desc["ffi_api"], jaxlib_ffi_api_version(), what=f"{path}")
        # Every target is checked before any is registered.
        for op in desc["ops"]:
            known = _TARGETS.get(op["target"])
            if known is not None and known != (real, op["handler"]):
                raise LibraryError(
                    f"{path}: op {op['name']}'s XLA FFI target {op['target']} is already "
                    f"registered by {known[0]}; XLA keeps one handler per target, so two "
                    f"libraries of crate {desc['library']} cannot be loaded in one process"
                )
        import jax

        for op in desc["ops"]:
            if op["target"] in _TARGETS:
                continue
            if not op["handler"]:
                raise LibraryError(f"{path}: op {op['name']} has no handler")
            jax.ffi.register_ffi_target(
                op["target"], jax.ffi.pycapsule(op["handler"]), platform="cpu"
            )
            _TARGETS[op["target"]] = (real, op["handler"])
        _NATIVE[real] = native
        return native


def load(path: str | os.PathLike, *, vmap_method: str = DEFAULT_VMAP_METHOD) -> "Library":
    """Loads the op library at ``path`` (once per process; later calls return
    the same ops) and returns its ops as functions.

    ``vmap_method`` is how ``jax.vmap`` batches its ops (see
    ``jax.ffi.ffi_call``); the default, ``"sequential"``, is right for every
    op.
    """
    native = _open(os.fspath(path))
    key = (id(native), vmap_method)
    with _LOCK:
        library = _LIBRARIES.get(key)
        if library is None:
            library = _LIBRARIES[key] = Library(native, vmap_method)
        return library


_ERRORS = {
    "type": TypeError,
    "value": ValueError,
    "unsupported": NotImplementedError,
}


def _call_attr(kind: str, value: Any) -> Any:
    if kind == "string":
        return value
    if kind.endswith("[]"):
        return np.asarray(value, dtype=np.dtype(kind[:-2]))
    return np.dtype(kind).type(value)


def _json_attr(value: Any) -> Any:
    """A user's attr value as JSON: dtypes by name, NumPy scalars and
    arrays as Python values."""
    if isinstance(value, (list, tuple)):
        return [_json_attr(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json_attr(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.generic):
        return _json_attr(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or infinities: the library reads these names.
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (np.dtype, type)):
        return np.dtype(value).name
    return value


class Op:
    """One op of a library, called like a function: inputs positionally (or
    by input name), attrs as keywords."""

    def __init__(self, library: "Library", index: int, description: dict):
        self._library = library
        self._index = index
        self.name: str = description["name"]
        self.target: str = description["target"]
        self.inputs: list[dict] = description["inputs"]
        self.attrs: list[dict] = description["attrs"]
        self.outputs: list[str] = description["outputs"]
        args = ", ".join(
            ("[" + i["name"] + ", ...]") if i["list"] else i["name"] for i in self.inputs
        )
        attrs = ", ".join(
            f"{a['name']}: {a['type']}" + (f" = {a['default']}" if a["default"] is not None else "")
            for a in self.attrs
        )
        self.__name__ = description["function"]
        self.__doc__ = (
            f"{self.name}({args}{'; ' + attrs if attrs else ''}) -> {', '.join(self.outputs)}\n\n"
            f"{description.get('summary') or ''}"
        )

    def __repr__(self) -> str:
        return f"<opreg op {self.name} of {self._library.path}>"

    def _arrange(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        names = [i["name"] for i in self.inputs]
        if len(args) > len(names):
            raise TypeError(f"{self.__name__}() takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
        inputs = list(args)
        for name in names[len(args):]:
            if name not in kwargs:
                raise TypeError(f"{self.__name__}() is missing input '{name}'")
            inputs.append(kwargs.pop(name))
        return inputs, kwargs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import jax.numpy as jnp

        inputs, attrs = self._arrange(args, kwargs)
        flat: list = []
        avals: list = []
        for spec, value in zip(self.inputs, inputs):
            if spec["list"]:
                if not isinstance(value, (list, tuple)):
                    raise TypeError(
                        f"{self.__name__}(): input '{spec['name']}' is a list of arrays, got {type(value).__name__}"
                    )
                arrays = [jnp.asarray(v) for v in value]
                avals.append([{"dtype": a.dtype.name, "shape": list(a.shape)} for a in arrays])
                flat.extend(arrays)
            else:
                array = jnp.asarray(value)
                avals.append({"dtype": array.dtype.name, "shape": list(array.shape)})
                flat.append(array)
        request = json.dumps(
            {"inputs": avals, "attrs": {k: _json_attr(v) for k, v in attrs.items()}},
            sort_keys=True,
        )
        return self._library._callable(self._index, request)(*flat)


class Library:
    """An op library's ops, as attributes named like TensorFlow's Python
    functions (``lib.zero_out``), and by op name (``lib.ops["ZeroOut"]``)."""

    def __init__(self, native: _Native, vmap_method: str):
        desc = native.description
        self._native = native
        self.vmap_method = vmap_method
        self.path: str = native.cdll._name
        self.library: str = desc["library"]
        self.ffi_api: tuple[int, int] = tuple(desc["ffi_api"])
        #: Ops of the library JAX cannot call, and why (no CPU kernel, ...).
        self.skipped: list[str] = desc["skipped"]
        self.ops: dict[str, Op] = {}
        for index, op in enumerate(desc["ops"]):
            function = Op(self, index, op)
            self.ops[op["name"]] = function
            # An op whose Python name is one of this class's (``stats``)
            # stays reachable as ``lib.ops[name]``.
            if not hasattr(type(self), op["function"]):
                setattr(self, op["function"], function)

    def __repr__(self) -> str:
        return f"<opreg library {self.library} ({len(self.ops)} ops) at {self.path}>"

    @functools.lru_cache(maxsize=4096)
    def _callable(self, index: int, request: str) -> Any:
        """The jitted call of op ``index`` for ``request`` (its input dtypes
        and shapes, and attrs): result shapes from the library's shape
        function, attrs as XLA attributes. Jitted, an eager call costs one
        dispatch of a cached executable; traced, it is inlined."""
        import jax

        answer = self._native.infer(index, request)
        if "error" in answer:
            error = answer["error"]
            raise _ERRORS.get(error["kind"], RuntimeError)(error["message"])
        results = [
            jax.ShapeDtypeStruct(tuple(o["shape"]), np.dtype(o["dtype"])) for o in answer["outputs"]
        ]
        call_attrs = {a["name"]: _call_attr(a["kind"], a["value"]) for a in answer["attrs"]}
        call = jax.ffi.ffi_call(
            self._native.description["ops"][index]["target"],
            results[0] if len(results) == 1 else results,
            vmap_method=self.vmap_method,
        )
        single = len(results) == 1

        def run(*flat):
            out = call(*flat, **call_attrs)
            return out if single else tuple(out)

        return jax.jit(run)

    def stats(self) -> dict:
        """The handlers' counters: calls, kernels built (one per distinct
        op, attrs and input dtypes), outputs copied into XLA's buffers."""
        return self._native.stats()
