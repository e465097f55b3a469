"""TensorFlow 2.21 as an oracle: what TF itself builds, answers or rejects.

Imported by the generator scripts beside this file (specs.py, numerics.py,
versions.py); run them with the python that scripts/install-tf.sh prints.
"""
import base64
import ctypes
import json
import os
import re
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402

_lib = ctypes.CDLL(os.path.join(os.path.dirname(tf.__file__), "libtensorflow_framework.so.2"))
_lib.TF_NewOpDefinitionBuilder.restype = ctypes.c_void_p
_lib.TF_NewOpDefinitionBuilder.argtypes = [ctypes.c_char_p]
_lib.TF_NewStatus.restype = ctypes.c_void_p
_lib.TF_Message.restype = ctypes.c_char_p
_lib.TF_Message.argtypes = [ctypes.c_void_p]
_lib.TF_GetCode.argtypes = [ctypes.c_void_p]
for _f in ("TF_OpDefinitionBuilderAddAttr", "TF_OpDefinitionBuilderAddInput",
           "TF_OpDefinitionBuilderAddOutput"):
    getattr(_lib, _f).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_lib.TF_RegisterOpDefinition.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


def in_child(work):
    """Runs work() in a forked child and returns its JSON-able result, or
    {"error": message} when TF aborts the child (a failed CHECK prints the
    message on stderr: TF's registry aborts on a bad op after start-up)."""
    read_end, write_end = os.pipe()
    err = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.dup2(err.fileno(), 2)
        try:
            out = work()
        except Exception as e:  # noqa: BLE001 - reported to the parent
            out = {"exception": "%s: %s" % (type(e).__name__, e)}
        os.write(write_end, json.dumps(out).encode())
        os._exit(0)
    os.close(write_end)
    data = b""
    while True:
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    if data:
        return json.loads(data)
    err.seek(0)
    text = err.read().decode(errors="replace").strip()
    m = re.search(r"is OK \((.*)\)\s*$", text, re.S)
    return {"error": m.group(1) if m else text[-2000:]}


def build_op(name, attrs=(), inputs=(), outputs=()):
    """Registers the spec chain through TF's C API (OpDefBuilder + ValidateOpDef)
    and returns the conformance `expect` object: the OpDef TF built, or TF's
    error without its status code prefix."""

    def work():
        b = _lib.TF_NewOpDefinitionBuilder(name.encode())
        for a in attrs:
            _lib.TF_OpDefinitionBuilderAddAttr(b, a.encode())
        for a in inputs:
            _lib.TF_OpDefinitionBuilderAddInput(b, a.encode())
        for a in outputs:
            _lib.TF_OpDefinitionBuilderAddOutput(b, a.encode())
        st = _lib.TF_NewStatus()
        _lib.TF_RegisterOpDefinition(b, st)
        if _lib.TF_GetCode(st):
            return {"error": _lib.TF_Message(st).decode()}
        od = op_def_registry.get(name)
        return {"op_def_pb_b64": base64.b64encode(od.SerializeToString()).decode(),
                "op_def_text": str(od)}

    out = in_child(work)
    if "error" in out:
        out["error"] = re.sub(r"^[A-Z_]+: ", "", out["error"])
    return out


def write_json(path, cases):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), path))
