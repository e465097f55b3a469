"""Op kernels and shape functions answered by TensorFlow 2.21 on CPU, for
opreg to replay: each case is a GraphDef (the inputs as Const nodes x0, x1,
... and the op as node y, every attr set as TF's graph construction sets it),
with what TF's CPU kernel computes for every output of y (each element's bits
as lowercase little-endian hex, never decimal text) or TF's error, and the
static shapes TF's C++ shape function infers. A second list per file,
"shape_cases", checks the shape functions alone on Placeholders with unknown
dims or rank (and Consts where the function reads a value). Writes
tests/data/tf-ops/<group>.json for the groups nn, activation, math, reduce and
array (see GROUPS at the bottom).

    py=$(scripts/install-tf.sh) && "$py" scripts/tf-oracle/ops.py [group...]

Dtypes: every type TF registers a CPU kernel for (read from TF's kernel
registry: kernels.get_registered_kernels_for_op; an op whose kernel has no
type constraint, such as Rank, StopGradient, Shape's T or IdentityN, whose
only kernel is registered for DEVICE_DEFAULT, gets ALL_TYPES), except string,
variant, resource and the quantized types (qint8, quint8, qint16, quint16,
qint32), which are skipped. complex64, complex128, float8_e4m3fn, float8_e5m2,
int4 and uint4 are included. Types a CPU kernel is registered for that the
OpDef refuses (LeakyRelu's integers, ResizeBilinear's uint32/uint64) are not
run as dtypes but get a NodeDef-validation error case each, and a type the
OpDef accepts but no CPU kernel takes gets a case with TF's "No OpKernel was
registered" error; up to MAX_NO_KERNEL of each kind per op. The attrs TF lists
in a "No OpKernel" message come in an order that changes from run to run (its
NodeDef attr map is unordered): compare that message loosely. Everything else
in the files is the same on every run.

Bits: int4 and uint4 are one byte each, the value widened to int8/uint8 (int4
-1 is "ff", uint4 15 is "0f"); complex64 is 16 hex digits and
complex128 32, the little-endian bytes as one integer (real part in the low
half, imaginary in the high half).

Graphs: built in graph mode under tf.device("/CPU:0") with tf.raw_ops; the
node y is also built by hand from the OpDef (inputs, inferred type and number
attrs, given attrs, defaults) and checked equal to TF's. When TF refuses to
build y the hand-built node goes in the graph instead, and the error has phase
"graph": TF's message when its C++ graph construction (shape function,
NodeDef validation) refused, or, where only TF's Python layer refused, the
message of importing the hand-built GraphDef (tf.graph_util.import_graph_def,
C++ again); when that import succeeds the graph is run like any other. A
run error's message is the runtime's status message, without the "Graph
execution error: Detected at node ..." header TF's Python Session adds. Runs
import the GraphDef into a fresh graph and run it in a tf.compat.v1.Session
with Grappler and the classic graph optimizer (constant folding) off, one
thread, and oneDNN off (TF_ENABLE_ONEDNN_OPTS=0: its graph rewrite swaps in
_Mkl kernels whose results depend on the host CPU), so TF's own registered
CPU kernel computes every answer.

Each case runs in a forked child (a few hundred per child); a case that makes
TF abort the process (a failed CHECK) is left out and listed on stderr. Two
do in TF 2.21: SplitV with a Const int8 size_splits (its shape function reads
the tensor as int64; the int8 Tlen is covered by a shape case with a
Placeholder) and SplitV with a rank-2 size_splits.
"""
import base64
import inspect
import json
import os
import re
import sys
import tempfile
import traceback
from collections import namedtuple

import ml_dtypes  # noqa: F401 - numpy types for bfloat16, float8, int4
import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# TF's own CPU kernels, not oneDNN's rewrites of them (_MklConv2D...), whose
# results and messages depend on the host's instruction set.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import node_def_pb2  # noqa: E402
from tensorflow.python.framework import error_interpolation  # noqa: E402
from tensorflow.python.framework import kernels, op_def_registry  # noqa: E402

# A Session's run error carries the runtime's status message, which the
# Python Session then wraps in "Graph execution error: Detected at node ...";
# the cases keep the runtime's message as it came.
error_interpolation.interpolate_graph = lambda message, graph: message

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(ROOT, "tests", "data", "tf-ops")
SEED = 20210
DEVICE = "/CPU:0"
SKIPPED_TYPES = {"string", "variant", "resource", "qint8", "quint8", "qint16", "quint16",
                 "qint32"}
ALL_TYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
             "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
             "float8_e4m3fn", "float8_e5m2", "int4", "uint4"]
FLOATS = {"float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"}
COMPLEX = {"complex64", "complex128"}
MAX_NO_KERNEL = 3
CASES_PER_CHILD = 400
CODES = {getattr(tf.errors, k): k for k in dir(tf.errors) if k.isupper()}

RNG = np.random.default_rng(SEED)

# A Placeholder input of a shape case: shape None is unknown rank, -1 an
# unknown dim.
P = namedtuple("P", "dtype shape")


# ---------------------------------------------------------------- values

def npt(dt):
    return np.dtype(tf.as_dtype(dt).as_numpy_dtype)


def A(values, dt):
    """An array of exactly these values (floats rounded to nearest even)."""
    t = npt(dt)
    if dt in COMPLEX:
        return np.array(values, dtype=np.complex128).astype(t)
    if dt == "bool":
        return np.array(values).astype(bool)
    if dt in FLOATS:
        with np.errstate(over="ignore"):  # 1e10 in half: inf, as TF would round it
            return np.array(values, dtype=np.float64).astype(t)
    return np.array(values, dtype=np.uint64 if dt == "uint64" else np.int64).astype(t)


def R(dt, shape, scale=1.0, lo=-5, hi=6, shift=0.0):
    """Random values: floats normal(shift, scale), integers in [lo, hi)
    (clamped to the type), bools half true."""
    shape = tuple(shape)
    if dt == "bool":
        return RNG.random(shape) < 0.5
    if dt in COMPLEX:
        v = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
        return (v * scale).astype(npt(dt))
    if dt in FLOATS:
        return (RNG.normal(size=shape) * scale + shift).astype(npt(dt))
    info = INT_RANGE[dt]
    lo, hi = max(lo, info[0]), min(hi, info[1] + 1)
    return RNG.integers(lo, hi, size=shape).astype(npt(dt))


INT_RANGE = {"int4": (-8, 7), "uint4": (0, 15)}
for _t in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
    INT_RANGE[_t] = (int(np.iinfo(_t).min), int(np.iinfo(_t).max))


def I32(v):
    return np.array(v, dtype=np.int32)


def I64(v):
    return np.array(v, dtype=np.int64)


def scalar_of(dt, v):
    return A(v, dt).reshape(())


def bits(a):
    a = np.ascontiguousarray(a)
    if a.dtype.name in ("int4", "uint4"):  # one byte each, the value widened
        a = a.astype(np.int8 if a.dtype.name == "int4" else np.uint8)
    w = a.dtype.itemsize
    if w in (1, 2, 4, 8):
        raw = a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[w]).reshape(-1)
        return ["%0*x" % (2 * w, int(v)) for v in raw]
    b = a.tobytes()
    return ["%0*x" % (2 * w, int.from_bytes(b[i:i + w], "little")) for i in range(0, len(b), w)]


# ---------------------------------------------------------------- registry

def _kernels(op):
    ks = [k for k in kernels.get_registered_kernels_for_op(op).kernel if k.device_type == "CPU"]
    if not ks:  # e.g. IdentityN: one kernel for DEVICE_DEFAULT, which CPU uses
        ks = [k for k in kernels.get_registered_kernels_for_op(op).kernel
              if k.device_type == "DEFAULT"]
    return ks


def _name(enum):
    return tf.as_dtype(enum).name


def opdef_types(op, attr):
    for a in op_def_registry.get(op).attr:
        if a.name == attr:
            if a.HasField("allowed_values"):
                return [_name(t) for t in a.allowed_values.list.type]
            return list(ALL_TYPES)
    raise KeyError(attr)


def cpu_types(op, attr="T"):
    """The types of attr that TF's CPU kernels for op accept, skipped ones
    left out, in ALL_TYPES order."""
    found = set()
    for k in _kernels(op):
        cons = [c for c in k.constraint if c.name == attr]
        if not cons:
            found.update(opdef_types(op, attr))
        else:
            found.update(_name(t) for t in cons[0].allowed_values.list.type)
    allowed = set(opdef_types(op, attr))
    return [t for t in ALL_TYPES if t in found and t in allowed]


def kernel_only_types(op, attr="T"):
    """Types a CPU kernel is registered for that op's OpDef refuses
    (ResizeBilinear's uint32, say): TF rejects the NodeDef."""
    found = set()
    for k in _kernels(op):
        for c in k.constraint:
            if c.name == attr:
                found.update(_name(t) for t in c.allowed_values.list.type)
    allowed = set(opdef_types(op, attr))
    return [t for t in ALL_TYPES if t in found and t not in allowed]


def cpu_combos(op, attrs):
    out = []
    for k in _kernels(op):
        d = {c.name: _name(c.allowed_values.list.type[0]) for c in k.constraint if c.name in attrs}
        if all(v not in SKIPPED_TYPES for v in d.values()) and d not in out:
            out.append(d)
    return out


def no_kernel_types(op, attr="T"):
    have = set(cpu_types(op, attr))
    return [t for t in opdef_types(op, attr) if t not in have and t not in SKIPPED_TYPES
            and t in ALL_TYPES][:MAX_NO_KERNEL]


# ---------------------------------------------------------------- cases

class Group:
    def __init__(self, name):
        self.name = name
        self.specs = []
        self.names = set()

    def _add(self, kind, op, suffix, inputs, attrs):
        name = "%s/%s" % (op, suffix)
        assert name not in self.names, name
        self.names.add(name)
        self.specs.append({"kind": kind, "name": name, "op": op, "inputs": inputs,
                           "attrs": attrs})

    def run(self, op, suffix, inputs, **attrs):
        self._add("run", op, suffix, inputs, attrs)

    def shape(self, op, suffix, inputs, **attrs):
        self._add("shape", op, suffix, inputs, attrs)

    def no_kernel(self, op, make, attr="T"):
        """make(dtype) -> (inputs, attrs) for each type op's OpDef allows
        without a CPU kernel."""
        for dt in no_kernel_types(op, attr):
            inputs, attrs = make(dt)
            self.run(op, "%s/no CPU kernel" % dt, inputs, **attrs)
        for dt in kernel_only_types(op, attr)[:MAX_NO_KERNEL]:
            inputs, attrs = make(dt)
            self.run(op, "%s/CPU kernel but not in OpDef" % dt, inputs, **attrs)


def _attr_value(av, kind, v):
    if kind == "int":
        av.i = int(v)
    elif kind == "float":
        av.f = float(v)
    elif kind == "bool":
        av.b = bool(v)
    elif kind == "string":
        av.s = v.encode() if isinstance(v, str) else v
    elif kind == "type":
        av.type = tf.as_dtype(v).as_datatype_enum
    elif kind == "list(int)":
        av.list.i.extend(int(x) for x in v)
        if not v:
            av.list.SetInParent()
    elif kind == "list(type)":
        av.list.type.extend(tf.as_dtype(x).as_datatype_enum for x in v)
    elif kind == "shape":
        av.shape.CopyFrom(tf.TensorShape(v).as_proto())
    else:
        raise ValueError("attr kind %s" % kind)


def hand_node(op, per_arg, attrs):
    """NodeDef y as TF's op_def_library builds it: per_arg is, per input arg,
    a list of (node name, tf.DType) and whether the arg is a list."""
    od = op_def_registry.get(op)
    nd = node_def_pb2.NodeDef(name="y", op=op, device="/device:CPU:0")
    kinds = {a.name: a.type for a in od.attr}
    for name, v in attrs.items():
        _attr_value(nd.attr[name], kinds[name], v)
    for arg, (items, _) in zip(od.input_arg, per_arg):
        nd.input.extend(n for n, _ in items)
        if arg.number_attr and arg.number_attr not in nd.attr:
            nd.attr[arg.number_attr].i = len(items)
        if arg.type_attr and arg.type_attr not in nd.attr and items:
            nd.attr[arg.type_attr].type = items[0][1].as_datatype_enum
        if arg.type_list_attr and arg.type_list_attr not in nd.attr:
            nd.attr[arg.type_list_attr].list.type.extend(d.as_datatype_enum for _, d in items)
    for a in od.attr:
        if a.name not in nd.attr and a.HasField("default_value"):
            nd.attr[a.name].CopyFrom(a.default_value)
    return nd


def n_outputs(op, nd):
    n = 0
    for arg in op_def_registry.get(op).output_arg:
        if arg.number_attr:
            n += nd.attr[arg.number_attr].i
        elif arg.type_list_attr:
            n += len(nd.attr[arg.type_list_attr].list.type)
        else:
            n += 1
    return n


def _error(phase, e):
    return {"phase": phase, "code": CODES.get(e.error_code, str(e.error_code)),
            "message": e.message}


def _shapes(op):
    """Each output's shape as TF's C++ shape refiner holds it (read through
    the C API: Python's TensorShape refuses the negative dims some shape
    functions produce, such as ResizeBilinear's for a negative size)."""
    out = []
    for t in op.outputs:
        dims, unknown_rank = t._shape  # noqa: SLF001 - TF_GraphGetTensorShape
        out.append(None if unknown_rank else [-1 if d is None else int(d) for d in dims])
    return out


def _config():
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                   inter_op_parallelism_threads=1)
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    cfg.graph_options.optimizer_options.opt_level = tf.compat.v1.OptimizerOptions.L0
    cfg.graph_options.optimizer_options.do_constant_folding = False
    return cfg


def evaluate(spec):
    op, attrs = spec["op"], spec["attrs"]
    od = op_def_registry.get(op)
    assert len(od.input_arg) == len(spec["inputs"]), spec["name"]
    g = tf.Graph()
    per_arg, kwargs, k = [], {}, 0
    build_error = None
    notes = []
    with g.as_default(), tf.device(DEVICE):
        for arg, inp in zip(od.input_arg, spec["inputs"]):
            is_list = isinstance(inp, list)
            tensors = []
            for item in (inp if is_list else [inp]):
                name = "x%d" % k
                k += 1
                if isinstance(item, P):
                    shape = None if item.shape is None else [
                        None if d == -1 else d for d in item.shape]
                    t = tf.compat.v1.placeholder(tf.as_dtype(item.dtype), shape=shape, name=name)
                else:
                    t = tf.constant(item, dtype=tf.as_dtype(item.dtype), name=name)
                assert t.op.name == name
                tensors.append(t)
            per_arg.append(([(t.op.name, t.dtype) for t in tensors], is_list))
            kwargs[_raw_arg(op, len(per_arg) - 1)] = tensors if is_list else tensors[0]
        raw_attrs = {n: (tf.as_dtype(v) if _is_type_attr(od, n) else v) for n, v in attrs.items()}
        try:
            getattr(tf.raw_ops, op)(**kwargs, **raw_attrs, name="y")
        except Exception as e:  # noqa: BLE001 - TF's refusal is the answer
            build_error = e
    gd = g.as_graph_def()
    nd = hand_node(op, per_arg, attrs)
    if build_error is None:
        yop = g.get_operation_by_name("y")
        tf_nd = node_def_pb2.NodeDef()
        tf_nd.CopyFrom(yop.node_def)
        tf_nd.ClearField("experimental_type")  # TF's full type, kept in the graph
        if tf_nd != nd:
            raise AssertionError("hand-built NodeDef differs:\n%s\nvs TF's\n%s"
                                 % (nd, yop.node_def))
    else:
        gd.node.append(nd)
        notes.append("build: %s: %s" % (type(build_error).__name__, build_error))
    assert [n.name for n in gd.node] == ["x%d" % i for i in range(k)] + ["y"]
    n_out = n_outputs(op, nd)
    case = {"name": spec["name"], "op": op,
            "graph": base64.b64encode(gd.SerializeToString(deterministic=True)).decode()}
    if spec["kind"] == "run":
        case["fetches"] = ["y:%d" % i for i in range(n_out)]
        case["outputs"] = None
    case["error"] = None
    case["shapes"] = None

    g2 = tf.Graph()
    import_error = None
    try:
        with g2.as_default():
            tf.graph_util.import_graph_def(gd, name="")
    except Exception as e:  # noqa: BLE001
        import_error = e
    cpp_build = getattr(build_error, "__context__", None)
    if isinstance(cpp_build, tf.errors.OpError):
        case["error"] = _error("graph", cpp_build)
        if import_error is None:
            notes.append("TF built nothing but imported the hand-built graph")
        return case, notes
    if import_error is not None:
        ctx = import_error.__context__
        if isinstance(ctx, tf.errors.OpError):
            case["error"] = _error("graph", ctx)
        else:
            case["error"] = {"phase": "graph", "code": "INVALID_ARGUMENT",
                             "message": str(import_error)}
        if build_error is None:
            notes.append("TF built y but refused to import it")
        return case, notes
    if build_error is not None:
        notes.append("only TF's Python layer refused; hand-built graph imported")
    yop = g2.get_operation_by_name("y")
    assert len(yop.outputs) == n_out
    case["shapes"] = _shapes(yop)
    if spec["kind"] == "shape":
        return case, notes
    try:
        with tf.compat.v1.Session(graph=g2, config=_config()) as s:
            vals = s.run(case["fetches"])
    except tf.errors.OpError as e:
        case["error"] = _error("run", e)
        return case, notes
    case["outputs"] = []
    for v in vals:
        v = np.asarray(v)
        case["outputs"].append({"dtype": v.dtype.name, "shape": list(v.shape), "bits": bits(v)})
    return case, notes


def _raw_arg(op, i):
    """The keyword tf.raw_ops.<op> takes input i under (its inputs come
    first, in OpDef order, some renamed: Min's reduction_indices is axis)."""
    return list(inspect.signature(getattr(tf.raw_ops, op)).parameters)[i]


def _is_type_attr(od, name):
    return any(a.name == name and a.type == "type" for a in od.attr)


def evaluate_all(specs):
    """Runs evaluate on every spec in forked children; a child that dies
    (TF aborted) loses the case it was on, reported in `crashed`."""
    results = [None] * len(specs)
    crashed = []
    i = 0
    while i < len(specs):
        end = min(len(specs), i + CASES_PER_CHILD)
        read_end, write_end = os.pipe()
        err = tempfile.TemporaryFile()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            os.dup2(err.fileno(), 2)
            with os.fdopen(write_end, "w") as out:
                for j in range(i, end):
                    try:
                        res = {"case": evaluate(specs[j])}
                    except Exception:  # noqa: BLE001 - a bug here, reported by the parent
                        res = {"bug": traceback.format_exc()}
                    out.write(json.dumps([j, res]) + "\n")
                    out.flush()
            os._exit(0)
        os.close(write_end)
        last = i - 1
        with os.fdopen(read_end) as inp:
            for line in inp:
                j, res = json.loads(line)
                results[j] = res
                last = j
        os.waitpid(pid, 0)
        if last < end - 1:
            err.seek(0)
            text = err.read().decode(errors="replace")
            fatal = [ln for ln in text.splitlines() if re.match(r"F\d{4} ", ln)]
            crashed.append((specs[last + 1]["name"], fatal[0] if fatal else text[-600:]))
            i = last + 2
        else:
            i = end
    return results, crashed


# ---------------------------------------------------------------- nn

def conv_nchw(x):
    return np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))


def conv3_ncdhw(x):
    return np.ascontiguousarray(np.transpose(x, (0, 4, 1, 2, 3)))


def gen_depthwise(c):
    op = "DepthwiseConv2dNative"
    for dt in cpu_types(op):
        c.run(op, "%s/NHWC/SAME" % dt, [R(dt, [2, 5, 5, 3]), R(dt, [3, 3, 3, 2])],
              strides=[1, 1, 1, 1], padding="SAME")
    c.no_kernel(op, lambda dt: ([R(dt, [1, 3, 3, 2]), R(dt, [2, 2, 2, 1])],
                                dict(strides=[1, 1, 1, 1], padding="VALID")))
    dt = "float32"
    x, f = R(dt, [2, 6, 5, 3]), R(dt, [3, 2, 3, 2])
    one = [1, 1, 1, 1]
    for suffix, at in [
            ("VALID", dict(strides=one, padding="VALID")),
            ("SAME/strides[1,2,2,1]", dict(strides=[1, 2, 2, 1], padding="SAME")),
            ("VALID/strides[1,3,2,1]", dict(strides=[1, 3, 2, 1], padding="VALID")),
            ("VALID/strides[1,2,2,1]", dict(strides=[1, 2, 2, 1], padding="VALID")),
            ("SAME/strides[1,3,3,1]", dict(strides=[1, 3, 3, 1], padding="SAME")),
            ("EXPLICIT", dict(strides=one, padding="EXPLICIT",
                              explicit_paddings=[0, 0, 1, 2, 2, 0, 0, 0])),
            ("EXPLICIT/strides2", dict(strides=[1, 2, 2, 1], padding="EXPLICIT",
                                       explicit_paddings=[0, 0, 3, 1, 0, 1, 0, 0])),
            ("SAME/dilations[1,2,2,1]", dict(strides=one, padding="SAME", dilations=[1, 2, 2, 1])),
            ("VALID/dilations[1,2,1,1]", dict(strides=one, padding="VALID",
                                              dilations=[1, 2, 1, 1])),
            ("SAME/strides2/dilations2", dict(strides=[1, 2, 2, 1], padding="SAME",
                                              dilations=[1, 2, 2, 1]))]:
        c.run(op, "float32/NHWC/" + suffix, [x, f], **at)
    xc = conv_nchw(x)
    c.run(op, "float32/NCHW/SAME", [xc, f], strides=one, padding="SAME", data_format="NCHW")
    c.run(op, "float32/NCHW/VALID/strides[1,1,2,2]", [xc, f], strides=[1, 1, 2, 2],
          padding="VALID", data_format="NCHW")
    c.run(op, "float32/NCHW/EXPLICIT", [xc, f], strides=one, padding="EXPLICIT",
          explicit_paddings=[0, 0, 0, 0, 1, 1, 2, 0], data_format="NCHW")
    c.run(op, "float64/NHWC/multiplier1/1x1", [R("float64", [1, 3, 4, 2]),
                                               R("float64", [1, 1, 2, 1])],
          strides=one, padding="VALID")
    c.run(op, "float32/empty batch", [R(dt, [0, 5, 5, 3]), f], strides=one, padding="SAME")
    c.run(op, "float32/empty depth multiplier", [x, R(dt, [3, 2, 3, 0])], strides=one,
          padding="SAME")
    # Bad inputs.
    c.run(op, "float32/bad/input rank 3", [R(dt, [6, 5, 3]), f], strides=one, padding="SAME")
    c.run(op, "float32/bad/filter rank 3", [x, R(dt, [3, 3, 3])], strides=one, padding="SAME")
    c.run(op, "float32/bad/in depth mismatch", [x, R(dt, [3, 3, 2, 2])], strides=one,
          padding="SAME")
    c.run(op, "float32/bad/strides length 3", [x, f], strides=[1, 1, 1], padding="SAME")
    c.run(op, "float32/bad/stride in batch", [x, f], strides=[2, 1, 1, 1], padding="SAME")
    c.run(op, "float32/bad/stride 0", [x, f], strides=[1, 0, 1, 1], padding="SAME")
    c.run(op, "float32/bad/data_format NCWH", [x, f], strides=one, padding="SAME",
          data_format="NCWH")
    c.run(op, "float32/bad/padding FULL", [x, f], strides=one, padding="FULL")
    c.run(op, "float32/bad/explicit_paddings length 6", [x, f], strides=one, padding="EXPLICIT",
          explicit_paddings=[1, 1, 1, 1, 0, 0])
    c.run(op, "float32/bad/explicit_paddings with SAME", [x, f], strides=one, padding="SAME",
          explicit_paddings=[0, 0, 1, 1, 1, 1, 0, 0])
    c.run(op, "float32/bad/negative explicit padding", [x, f], strides=one, padding="EXPLICIT",
          explicit_paddings=[0, 0, -1, 1, 1, 1, 0, 0])
    c.run(op, "float32/bad/explicit padding on batch", [x, f], strides=one, padding="EXPLICIT",
          explicit_paddings=[1, 0, 1, 1, 1, 1, 0, 0])
    c.run(op, "float32/bad/dilations length 3", [x, f], strides=one, padding="SAME",
          dilations=[1, 2, 2])
    c.run(op, "float32/bad/dilation in depth", [x, f], strides=one, padding="SAME",
          dilations=[1, 1, 1, 2])
    c.run(op, "float32/bad/filter larger than input VALID", [R(dt, [1, 2, 2, 3]), f],
          strides=one, padding="VALID")
    c.run(op, "float32/bad/type mismatch", [x, R("float64", [3, 2, 3, 2])], strides=one,
          padding="SAME")
    c.run(op, "int32/bad/type not allowed", [R("int32", [1, 3, 3, 1]), R("int32", [2, 2, 1, 1])],
          strides=one, padding="SAME")
    # Shape functions.
    c.shape(op, "unknown batch", [P(dt, [-1, 5, 5, 3]), f], strides=one, padding="SAME")
    c.shape(op, "unknown spatial VALID strides2", [P(dt, [2, -1, 7, 3]), f],
            strides=[1, 2, 2, 1], padding="VALID")
    c.shape(op, "unknown rank input", [P(dt, None), f], strides=one, padding="SAME")
    c.shape(op, "unknown filter", [x, P(dt, None)], strides=one, padding="VALID")
    c.shape(op, "unknown depth with known filter", [P(dt, [2, 5, 5, -1]), f], strides=one,
            padding="SAME")
    c.shape(op, "NCHW unknown batch", [P(dt, [-1, 3, 6, 5]), f], strides=[1, 1, 2, 2],
            padding="SAME", data_format="NCHW")
    c.shape(op, "EXPLICIT unknown batch", [P(dt, [-1, 6, 5, 3]), f], strides=one,
            padding="EXPLICIT", explicit_paddings=[0, 0, 1, 1, 2, 2, 0, 0])
    c.shape(op, "bad/depth mismatch", [P(dt, [-1, 5, 5, 4]), f], strides=one, padding="SAME")


def gen_conv2d_backprop_input(c):
    op = "Conv2DBackpropInput"
    one = [1, 1, 1, 1]
    for dt in cpu_types(op):
        c.run(op, "%s/NHWC/SAME" % dt, [I32([2, 5, 5, 3]), R(dt, [3, 3, 3, 4]),
                                         R(dt, [2, 5, 5, 4])], strides=one, padding="SAME")
    c.no_kernel(op, lambda dt: ([I32([1, 3, 3, 1]), R(dt, [2, 2, 1, 1]), R(dt, [1, 2, 2, 1])],
                                dict(strides=one, padding="VALID")))
    dt = "float32"
    f = R(dt, [3, 3, 3, 4])
    sizes = I32([2, 6, 5, 3])
    for suffix, ob, at in [
            ("VALID", [2, 4, 3, 4], dict(strides=one, padding="VALID")),
            ("SAME/strides[1,2,2,1]", [2, 3, 3, 4], dict(strides=[1, 2, 2, 1], padding="SAME")),
            ("VALID/strides[1,2,1,1]", [2, 2, 3, 4], dict(strides=[1, 2, 1, 1], padding="VALID")),
            ("EXPLICIT", [2, 7, 5, 4], dict(strides=one, padding="EXPLICIT",
                                            explicit_paddings=[0, 0, 1, 2, 1, 1, 0, 0])),
            ("EXPLICIT/strides2", [2, 3, 2, 4], dict(strides=[1, 2, 2, 1], padding="EXPLICIT",
                                                     explicit_paddings=[0, 0, 2, 0, 1, 0, 0, 0])),
            ("SAME/dilations[1,2,2,1]", [2, 6, 5, 4], dict(strides=one, padding="SAME",
                                                          dilations=[1, 2, 2, 1])),
            ("VALID/dilations[1,2,1,1]", [2, 2, 3, 4], dict(strides=one, padding="VALID",
                                                           dilations=[1, 2, 1, 1])),
            ("SAME/use_cudnn_on_gpu false", [2, 6, 5, 4], dict(strides=one, padding="SAME",
                                                              use_cudnn_on_gpu=False))]:
        c.run(op, "float32/NHWC/" + suffix, [sizes, f, R(dt, ob)], **at)
    c.run(op, "float32/NCHW/SAME", [I32([2, 3, 6, 5]), f, R(dt, [2, 4, 6, 5])], strides=one,
          padding="SAME", data_format="NCHW")
    c.run(op, "float32/NCHW/VALID/strides2", [I32([2, 3, 6, 5]), f, R(dt, [2, 4, 2, 2])],
          strides=[1, 1, 2, 2], padding="VALID", data_format="NCHW")
    c.run(op, "float32/NCHW/EXPLICIT", [I32([2, 3, 6, 5]), f, R(dt, [2, 4, 6, 5])], strides=one,
          padding="EXPLICIT", explicit_paddings=[0, 0, 0, 0, 1, 1, 1, 1], data_format="NCHW")
    c.run(op, "float32/empty batch", [I32([0, 5, 5, 3]), f, R(dt, [0, 5, 5, 4])], strides=one,
          padding="SAME")
    c.run(op, "float32/grouped filter", [I32([1, 4, 4, 4]), R(dt, [2, 2, 2, 4]),
                                         R(dt, [1, 4, 4, 4])], strides=one, padding="SAME")
    ob = R(dt, [2, 6, 5, 4])
    c.run(op, "float32/bad/input_sizes length 3", [I32([2, 6, 5]), f, ob], strides=one,
          padding="SAME")
    c.run(op, "float32/bad/input_sizes int64", [I64([2, 6, 5, 3]), f, ob], strides=one,
          padding="SAME")
    c.run(op, "float32/bad/out_backprop spatial mismatch", [sizes, f, R(dt, [2, 4, 4, 4])],
          strides=one, padding="SAME")
    c.run(op, "float32/bad/out_backprop depth mismatch", [sizes, f, R(dt, [2, 6, 5, 3])],
          strides=one, padding="SAME")
    c.run(op, "float32/bad/filter in depth mismatch", [sizes, R(dt, [3, 3, 2, 4]), ob],
          strides=one, padding="SAME")
    c.run(op, "float32/bad/out_backprop rank 3", [sizes, f, R(dt, [6, 5, 4])], strides=one,
          padding="SAME")
    c.run(op, "float32/bad/strides length 3", [sizes, f, ob], strides=[1, 1, 1], padding="SAME")
    c.run(op, "float32/bad/stride in batch", [sizes, f, ob], strides=[2, 1, 1, 1],
          padding="SAME")
    c.run(op, "float32/bad/data_format HWNC", [sizes, f, ob], strides=one, padding="SAME",
          data_format="HWNC")
    c.run(op, "float32/bad/negative input size", [I32([2, -6, 5, 3]), f, ob], strides=one,
          padding="SAME")
    c.run(op, "float32/bad/explicit_paddings length 4", [sizes, f, ob], strides=one,
          padding="EXPLICIT", explicit_paddings=[1, 1, 1, 1])
    c.shape(op, "const input_sizes", [I32([2, 6, 5, 3]), P(dt, None), P(dt, None)], strides=one,
            padding="SAME")
    c.shape(op, "placeholder input_sizes", [P("int32", [4]), f, P(dt, [-1, 6, 5, 4])],
            strides=one, padding="SAME")
    c.shape(op, "unknown rank input_sizes", [P("int32", None), f, ob], strides=one,
            padding="SAME")
    c.shape(op, "bad/input_sizes length 5", [I32([2, 6, 5, 3, 1]), f, P(dt, None)],
            strides=one, padding="SAME")


def gen_conv3d(c):
    op = "Conv3D"
    one = [1, 1, 1, 1, 1]
    for dt in cpu_types(op):
        c.run(op, "%s/NDHWC/SAME" % dt, [R(dt, [1, 4, 4, 4, 2]), R(dt, [2, 2, 2, 2, 3])],
              strides=one, padding="SAME")
    c.no_kernel(op, lambda dt: ([R(dt, [1, 2, 2, 2, 1]), R(dt, [1, 1, 1, 1, 1])],
                                dict(strides=one, padding="VALID")))
    dt = "float32"
    x, f = R(dt, [2, 5, 4, 6, 2]), R(dt, [3, 2, 2, 2, 3])
    for suffix, at in [
            ("VALID", dict(strides=one, padding="VALID")),
            ("SAME/strides[1,2,2,2,1]", dict(strides=[1, 2, 2, 2, 1], padding="SAME")),
            ("VALID/strides[1,1,2,3,1]", dict(strides=[1, 1, 2, 3, 1], padding="VALID")),
            ("SAME/dilations[1,2,2,2,1]", dict(strides=one, padding="SAME",
                                               dilations=[1, 2, 2, 2, 1])),
            ("VALID/dilations[1,1,2,1,1]", dict(strides=one, padding="VALID",
                                                dilations=[1, 1, 2, 1, 1]))]:
        c.run(op, "float32/NDHWC/" + suffix, [x, f], **at)
    c.run(op, "float32/NCDHW/SAME", [conv3_ncdhw(x), f], strides=one, padding="SAME",
          data_format="NCDHW")
    c.run(op, "float32/NCDHW/VALID/strides2", [conv3_ncdhw(x), f], strides=[1, 1, 2, 2, 2],
          padding="VALID", data_format="NCDHW")
    c.run(op, "float32/empty batch", [R(dt, [0, 5, 4, 6, 2]), f], strides=one, padding="SAME")
    c.run(op, "float32/grouped (in depth 4, filter depth 2)", [R(dt, [1, 3, 3, 3, 4]),
                                                               R(dt, [2, 2, 2, 2, 4])],
          strides=one, padding="SAME")
    c.run(op, "float32/bad/input rank 4", [R(dt, [5, 4, 6, 2]), f], strides=one, padding="SAME")
    c.run(op, "float32/bad/in depth not divisible", [R(dt, [1, 3, 3, 3, 3]), f], strides=one,
          padding="SAME")
    c.run(op, "float32/bad/strides length 4", [x, f], strides=[1, 1, 1, 1], padding="SAME")
    c.run(op, "float32/bad/stride in batch", [x, f], strides=[2, 1, 1, 1, 1], padding="SAME")
    c.run(op, "float32/bad/padding EXPLICIT", [x, f], strides=one, padding="EXPLICIT")
    c.run(op, "float32/bad/data_format NHWC", [x, f], strides=one, padding="SAME",
          data_format="NHWC")
    c.run(op, "float32/bad/filter larger than input VALID", [R(dt, [1, 2, 4, 6, 2]), f],
          strides=one, padding="VALID")
    c.run(op, "float32/bad/dilation in batch", [x, f], strides=one, padding="SAME",
          dilations=[2, 1, 1, 1, 1])
    c.shape(op, "unknown batch", [P(dt, [-1, 5, 4, 6, 2]), f], strides=one, padding="SAME")
    c.shape(op, "unknown spatial VALID strides2", [P(dt, [2, -1, -1, 6, 2]), f],
            strides=[1, 2, 2, 2, 1], padding="VALID")
    c.shape(op, "unknown rank", [P(dt, None), f], strides=one, padding="SAME")
    c.shape(op, "NCDHW unknown batch", [P(dt, [-1, 2, 5, 4, 6]), f], strides=one,
            padding="VALID", data_format="NCDHW")


def gen_pools(c):
    op = "AvgPool"
    k2, one = [1, 2, 2, 1], [1, 1, 1, 1]
    for dt in cpu_types(op):
        c.run(op, "%s/NHWC/SAME/k2s2" % dt, [R(dt, [2, 5, 5, 3])], ksize=k2, strides=k2,
              padding="SAME")
    c.no_kernel(op, lambda dt: ([R(dt, [1, 2, 2, 1])], dict(ksize=k2, strides=k2,
                                                            padding="VALID")))
    dt = "float32"
    x = R(dt, [2, 6, 5, 3])
    for suffix, at in [
            ("VALID/k2s2", dict(ksize=k2, strides=k2, padding="VALID")),
            ("SAME/k3s1", dict(ksize=[1, 3, 3, 1], strides=one, padding="SAME")),
            ("VALID/k[1,3,2,1]s[1,2,1,1]", dict(ksize=[1, 3, 2, 1], strides=[1, 2, 1, 1],
                                                padding="VALID")),
            ("SAME/k[1,4,4,1]s3", dict(ksize=[1, 4, 4, 1], strides=[1, 3, 3, 1], padding="SAME")),
            ("SAME/k1s1", dict(ksize=one, strides=one, padding="SAME"))]:
        c.run(op, "float32/NHWC/" + suffix, [x], **at)
    c.run(op, "float32/NCHW/SAME/k2s2", [conv_nchw(x)], ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2],
          padding="SAME", data_format="NCHW")
    c.run(op, "float32/empty batch", [R(dt, [0, 4, 4, 3])], ksize=k2, strides=k2, padding="SAME")
    c.run(op, "float32/bad/input rank 3", [R(dt, [6, 5, 3])], ksize=k2, strides=k2,
          padding="SAME")
    c.run(op, "float32/bad/ksize in batch", [x], ksize=[2, 2, 2, 1], strides=one, padding="SAME")
    c.run(op, "float32/bad/ksize in depth", [x], ksize=[1, 1, 1, 2], strides=one, padding="SAME")
    c.run(op, "float32/bad/ksize length 3", [x], ksize=[1, 2, 2], strides=k2, padding="SAME")
    c.run(op, "float32/bad/ksize 0", [x], ksize=[1, 0, 2, 1], strides=k2, padding="SAME")
    c.run(op, "float32/bad/stride 0", [x], ksize=k2, strides=[1, 0, 1, 1], padding="SAME")
    c.run(op, "float32/bad/window larger than input VALID", [x], ksize=[1, 7, 2, 1],
          strides=one, padding="VALID")
    c.run(op, "float32/bad/padding EXPLICIT", [x], ksize=k2, strides=k2, padding="EXPLICIT")
    c.run(op, "float32/bad/data_format NCWH", [x], ksize=k2, strides=k2, padding="SAME",
          data_format="NCWH")
    c.shape(op, "unknown batch", [P(dt, [-1, 6, 5, 3])], ksize=k2, strides=k2, padding="SAME")
    c.shape(op, "unknown spatial VALID", [P(dt, [2, -1, 5, -1])], ksize=[1, 3, 2, 1],
            strides=k2, padding="VALID")
    c.shape(op, "unknown rank", [P(dt, None)], ksize=k2, strides=k2, padding="SAME")
    c.shape(op, "NCHW unknown batch", [P(dt, [-1, 3, 6, 5])], ksize=[1, 1, 2, 2],
            strides=[1, 1, 2, 2], padding="VALID", data_format="NCHW")

    for op in ["MaxPool3D", "AvgPool3D"]:
        k2, one = [1, 2, 2, 2, 1], [1, 1, 1, 1, 1]
        for dt in cpu_types(op):
            c.run(op, "%s/NDHWC/VALID/k2s2" % dt, [R(dt, [1, 4, 4, 4, 2])], ksize=k2, strides=k2,
                  padding="VALID")
            c.run(op, "%s/NDHWC/SAME/k3s2" % dt, [R(dt, [1, 5, 4, 3, 2])],
                  ksize=[1, 3, 3, 3, 1], strides=k2, padding="SAME")
        c.no_kernel(op, lambda dt: ([R(dt, [1, 2, 2, 2, 1])], dict(ksize=k2, strides=k2,
                                                                   padding="VALID")))
        dt = "float32"
        x = R(dt, [2, 5, 4, 6, 2])
        c.run(op, "float32/NDHWC/SAME/k[1,1,2,3,1]s1", [x], ksize=[1, 1, 2, 3, 1], strides=one,
              padding="SAME")
        c.run(op, "float32/NDHWC/VALID/k[1,2,3,1,1]s[1,1,2,3,1]", [x], ksize=[1, 2, 3, 1, 1],
              strides=[1, 1, 2, 3, 1], padding="VALID")
        c.run(op, "float32/NCDHW/VALID/k2s2", [conv3_ncdhw(x)], ksize=[1, 1, 2, 2, 2],
              strides=[1, 1, 2, 2, 2], padding="VALID", data_format="NCDHW")
        c.run(op, "float32/empty batch", [R(dt, [0, 4, 4, 4, 2])], ksize=k2, strides=k2,
              padding="SAME")
        c.run(op, "float32/bad/input rank 4", [R(dt, [4, 4, 4, 2])], ksize=k2, strides=k2,
              padding="SAME")
        c.run(op, "float32/bad/ksize in batch", [x], ksize=[2, 2, 2, 2, 1], strides=one,
              padding="SAME")
        c.run(op, "float32/bad/ksize in depth", [x], ksize=[1, 1, 1, 1, 2], strides=one,
              padding="SAME")
        c.run(op, "float32/bad/ksize length 4", [x], ksize=[1, 2, 2, 1], strides=k2,
              padding="SAME")
        c.run(op, "float32/bad/window larger than input VALID", [x], ksize=[1, 6, 1, 1, 1],
              strides=one, padding="VALID")
        c.run(op, "float32/bad/data_format NHWC", [x], ksize=k2, strides=k2, padding="SAME",
              data_format="NHWC")
        c.shape(op, "unknown batch", [P(dt, [-1, 5, 4, 6, 2])], ksize=k2, strides=k2,
                padding="SAME")
        c.shape(op, "unknown spatial VALID", [P(dt, [2, -1, 4, -1, 2])], ksize=k2, strides=k2,
                padding="VALID")
        c.shape(op, "unknown rank", [P(dt, None)], ksize=k2, strides=k2, padding="SAME")


def gen_space_batch(c):
    op = "SpaceToBatchND"
    for dt in cpu_types(op):
        c.run(op, "%s/block[2,3]" % dt, [R(dt, [2, 4, 6, 2]), I32([2, 3]), I32([[0, 0], [0, 0]])])
    c.no_kernel(op, lambda dt: ([R(dt, [1, 2, 2, 1]), I32([2, 2]), I32([[0, 0], [0, 0]])], {}))
    dt = "float32"
    x = R(dt, [1, 2, 3, 2])
    c.run(op, "float32/paddings", [x, I32([2, 2]), I32([[1, 1], [0, 1]])])
    c.run(op, "float32/int64 block and paddings", [x, I64([2, 2]), I64([[1, 1], [1, 0]])])
    c.run(op, "float32/int64 block int32 paddings", [x, I64([2, 1]), I32([[0, 0], [1, 2]])])
    c.run(op, "float32/one block dim", [R(dt, [2, 4, 3]), I32([2]), I32([[0, 2]])])
    c.run(op, "float32/block[1,1]", [x, I32([1, 1]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/rank 5 three block dims", [R(dt, [1, 2, 2, 2, 1]), I32([2, 1, 2]),
                                                  I32([[0, 0], [1, 0], [0, 0]])])
    c.run(op, "float32/empty batch", [R(dt, [0, 4, 4, 1]), I32([2, 2]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/no block dims", [x, np.zeros([0], np.int32), np.zeros([0, 2], np.int32)])
    c.run(op, "float32/bad/not divisible", [x, I32([2, 2]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/bad/negative padding", [x, I32([2, 2]), I32([[-1, 1], [0, 1]])])
    c.run(op, "float32/bad/block 0", [x, I32([0, 1]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/bad/block rank 2", [x, I32([[2, 2]]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/bad/paddings shape [2,3]", [x, I32([2, 2]), I32([[0, 0, 0], [0, 0, 0]])])
    c.run(op, "float32/bad/paddings rows != block size", [x, I32([2, 2]), I32([[0, 0]])])
    c.run(op, "float32/bad/input rank too low", [R(dt, [4, 4]), I32([2, 2]),
                                                 I32([[0, 0], [0, 0]])])
    c.shape(op, "const block and paddings", [P(dt, [-1, 4, 6, 2]), I32([2, 3]),
                                             I32([[0, 0], [0, 0]])])
    c.shape(op, "placeholder block", [P(dt, [2, 4, 6, 2]), P("int32", [2]),
                                      I32([[0, 0], [0, 0]])])
    c.shape(op, "placeholder paddings", [P(dt, [2, 4, 6, 2]), I32([2, 3]), P("int32", [2, 2])])
    c.shape(op, "unknown rank input", [P(dt, None), I32([2, 3]), I32([[0, 0], [0, 0]])])
    c.shape(op, "bad/not divisible", [P(dt, [-1, 5, 6, 2]), I32([2, 3]), I32([[0, 0], [0, 0]])])

    op = "BatchToSpaceND"
    for dt in cpu_types(op):
        c.run(op, "%s/block[2,3]" % dt, [R(dt, [12, 2, 2, 2]), I32([2, 3]), I32([[0, 0], [0, 0]])])
    c.no_kernel(op, lambda dt: ([R(dt, [4, 1, 1, 1]), I32([2, 2]), I32([[0, 0], [0, 0]])], {}))
    dt = "float32"
    x = R(dt, [8, 2, 3, 1])
    c.run(op, "float32/crops", [x, I32([2, 2]), I32([[1, 0], [2, 1]])])
    c.run(op, "float32/int64 block and crops", [x, I64([2, 4]), I64([[0, 1], [3, 3]])])
    c.run(op, "float32/int32 block int64 crops", [x, I32([4, 2]), I64([[1, 1], [0, 0]])])
    c.run(op, "float32/one block dim", [R(dt, [4, 3, 2]), I32([2]), I32([[1, 0]])])
    c.run(op, "float32/crop everything", [x, I32([2, 2]), I32([[2, 2], [0, 0]])])
    c.run(op, "float32/bad/batch not divisible", [x, I32([3, 1]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/bad/negative crop", [x, I32([2, 2]), I32([[-1, 0], [0, 0]])])
    c.run(op, "float32/bad/crops too large", [x, I32([2, 2]), I32([[3, 2], [0, 0]])])
    c.run(op, "float32/bad/block 0", [x, I32([0, 2]), I32([[0, 0], [0, 0]])])
    c.run(op, "float32/bad/crops shape [2]", [x, I32([2, 2]), I32([0, 0])])
    c.shape(op, "const block and crops", [P(dt, [-1, 2, 3, 1]), I32([2, 2]),
                                          I32([[1, 0], [0, 0]])])
    c.shape(op, "known batch", [P(dt, [8, -1, 3, 1]), I32([2, 2]), I32([[0, 0], [1, 1]])])
    c.shape(op, "placeholder crops", [P(dt, [8, 2, 3, 1]), I32([2, 2]), P("int32", [2, 2])])
    c.shape(op, "bad/batch not divisible", [P(dt, [9, 2, 3, 1]), I32([2, 2]),
                                            I32([[0, 0], [0, 0]])])


def gen_depth_space(c):
    for op, shape, dims in [("DepthToSpace", [1, 2, 3, 8], (2, 3, 8)),
                            ("SpaceToDepth", [1, 4, 6, 2], (4, 6, 2))]:
        for dt in cpu_types(op):
            c.run(op, "%s/NHWC/block2" % dt, [R(dt, shape)], block_size=2)
        c.no_kernel(op, lambda dt: ([R(dt, shape)], dict(block_size=2)))
        dt = "float32"
        x = R(dt, [2] + shape[1:])
        c.run(op, "float32/NHWC/block2/batch2", [x], block_size=2)
        if op == "DepthToSpace":
            c.run(op, "float32/NHWC/block3", [R(dt, [1, 2, 2, 18])], block_size=3)
        else:
            c.run(op, "float32/NHWC/block3", [R(dt, [1, 3, 6, 2])], block_size=3)
        c.run(op, "float32/NCHW/block2", [conv_nchw(x)], block_size=2, data_format="NCHW")
        vect = [1, 4, 2, 3, 4] if op == "DepthToSpace" else [1, 1, 2, 2, 4]
        c.run(op, "float32/NCHW_VECT_C/block2", [R(dt, vect)], block_size=2,
              data_format="NCHW_VECT_C")
        c.run(op, "float32/empty batch", [R(dt, [0] + shape[1:])], block_size=2)
        c.run(op, "float32/bad/block_size 1", [x], block_size=1)
        c.run(op, "float32/bad/block_size 0", [x], block_size=0)
        c.run(op, "float32/bad/input rank 3", [R(dt, shape[1:])], block_size=2)
        if op == "DepthToSpace":
            c.run(op, "float32/bad/depth not divisible", [R(dt, [1, 2, 2, 6])], block_size=2)
        else:
            c.run(op, "float32/bad/height not divisible", [R(dt, [1, 3, 4, 2])], block_size=2)
        c.run(op, "float32/bad/data_format NCWH", [x], block_size=2, data_format="NCWH")
        c.shape(op, "unknown batch", [P(dt, [-1] + shape[1:])], block_size=2)
        c.shape(op, "unknown spatial", [P(dt, [1, -1, dims[1], -1])], block_size=2)
        c.shape(op, "unknown rank", [P(dt, None)], block_size=2)
        c.shape(op, "NCHW unknown batch", [P(dt, [-1, shape[3], shape[1], shape[2]])],
                block_size=2, data_format="NCHW")


def gen_resize(c):
    combos = [(False, False), (True, False), (False, True), (True, True)]
    for op in ["ResizeBilinear", "ResizeNearestNeighbor"]:
        for dt in cpu_types(op):
            scale = 10 if dt not in FLOATS else 1
            c.run(op, "%s/up [3,4]->[5,7]" % dt, [R(dt, [1, 3, 4, 2], scale=scale, lo=0, hi=50),
                                                   I32([5, 7])])
            c.run(op, "%s/up/half_pixel_centers" % dt,
                  [R(dt, [1, 3, 4, 1], lo=0, hi=50), I32([5, 7])], half_pixel_centers=True)
        dt = "float32"
        x = R(dt, [2, 4, 6, 2])
        for size in [[7, 9], [3, 4], [4, 6], [1, 1], [8, 3]]:
            for ac, hp in combos:
                c.run(op, "float32/[4,6]->%s/align_corners=%s/half_pixel_centers=%s"
                      % (size, ac, hp), [x, I32(size)], align_corners=ac, half_pixel_centers=hp)
        c.run(op, "float32/from 1x1", [R(dt, [1, 1, 1, 2]), I32([3, 2])], align_corners=True)
        c.run(op, "float32/empty batch", [R(dt, [0, 4, 6, 2]), I32([5, 5])])
        c.run(op, "float32/empty channels", [R(dt, [1, 4, 6, 0]), I32([5, 5])])
        c.run(op, "float32/bad/size length 3", [x, I32([5, 5, 5])])
        c.run(op, "float32/bad/size zero", [x, I32([0, 5])])
        c.run(op, "float32/bad/size negative", [x, I32([-2, 5])])
        c.run(op, "float32/bad/size int64", [x, I64([5, 5])])
        c.run(op, "float32/bad/images rank 3", [R(dt, [4, 6, 2]), I32([5, 5])])
        c.run(op, "float32/bad/empty image", [R(dt, [1, 0, 6, 2]), I32([5, 5])])
        c.no_kernel(op, lambda dt: ([R(dt, [1, 2, 2, 1]), I32([3, 3])], {}))
        c.shape(op, "const size", [P(dt, [-1, -1, -1, 3]), I32([5, 7])])
        c.shape(op, "placeholder size", [P(dt, [2, 4, 6, 3]), P("int32", [2])])
        c.shape(op, "unknown rank images", [P(dt, None), I32([5, 7])])
        c.shape(op, "bad/size length 3", [P(dt, [2, 4, 6, 3]), I32([5, 7, 1])])
        c.shape(op, "bad/images rank 5", [P(dt, [2, 4, 6, 3, 1]), I32([5, 7])])


def gen_pads(c):
    op = "MirrorPad"
    for dt in cpu_types(op):
        c.run(op, "%s/REFLECT" % dt, [R(dt, [3, 4]), I32([[1, 2], [2, 1]])], mode="REFLECT")
        c.run(op, "%s/SYMMETRIC" % dt, [R(dt, [3, 4]), I32([[2, 3], [0, 4]])], mode="SYMMETRIC")
    c.no_kernel(op, lambda dt: ([R(dt, [3]), I32([[1, 1]])], dict(mode="REFLECT")))
    dt = "float32"
    x = R(dt, [2, 3, 4])
    c.run(op, "float32/REFLECT/int64 paddings", [x, I64([[1, 0], [2, 2], [3, 0]])],
          mode="REFLECT")
    c.run(op, "float32/SYMMETRIC/int64 paddings", [x, I64([[2, 2], [3, 0], [0, 4]])],
          mode="SYMMETRIC")
    c.run(op, "float32/REFLECT/zero paddings", [x, I32([[0, 0], [0, 0], [0, 0]])],
          mode="REFLECT")
    c.run(op, "float32/SYMMETRIC/1-D", [R(dt, [5]), I32([[5, 3]])], mode="SYMMETRIC")
    c.run(op, "float32/REFLECT/scalar", [R(dt, []), np.zeros([0, 2], np.int32)], mode="REFLECT")
    c.run(op, "float32/REFLECT/empty dim unpadded", [R(dt, [0, 3]), I32([[0, 0], [1, 1]])],
          mode="REFLECT")
    c.run(op, "float32/SYMMETRIC/empty dim unpadded", [R(dt, [0, 3]), I32([[0, 0], [1, 1]])],
          mode="SYMMETRIC")
    c.run(op, "float32/bad/REFLECT padding = dim", [R(dt, [3, 4]), I32([[3, 0], [0, 0]])],
          mode="REFLECT")
    c.run(op, "float32/bad/SYMMETRIC padding > dim", [R(dt, [3, 4]), I32([[0, 4], [0, 0]])],
          mode="SYMMETRIC")
    c.run(op, "float32/bad/negative padding", [R(dt, [3, 4]), I32([[-1, 0], [0, 0]])],
          mode="REFLECT")
    c.run(op, "float32/bad/paddings rows != rank", [R(dt, [3, 4]), I32([[1, 1]])], mode="REFLECT")
    c.run(op, "float32/bad/paddings shape [2,3]", [R(dt, [3, 4]), I32([[1, 1, 1], [1, 1, 1]])],
          mode="REFLECT")
    c.run(op, "float32/bad/mode CONSTANT", [R(dt, [3, 4]), I32([[1, 1], [1, 1]])],
          mode="CONSTANT")
    c.run(op, "float32/bad/REFLECT on empty dim", [R(dt, [0, 3]), I32([[1, 0], [0, 0]])],
          mode="REFLECT")
    c.shape(op, "const paddings unknown dims", [P(dt, [-1, 4]), I32([[1, 2], [2, 1]])],
            mode="REFLECT")
    c.shape(op, "placeholder paddings", [P(dt, [3, 4]), P("int32", [2, 2])], mode="REFLECT")
    c.shape(op, "unknown rank, const paddings", [P(dt, None), I32([[1, 2], [2, 1]])],
            mode="SYMMETRIC")
    c.shape(op, "REFLECT padding = dim (a run-time check)", [P(dt, [-1, 4]), I32([[1, 1], [4, 0]])],
            mode="REFLECT")

    op = "PadV2"
    for dt in cpu_types(op):
        cv = scalar_of(dt, 1 if dt == "bool" else (7 if dt not in COMPLEX else 7 - 2j))
        c.run(op, "%s/[2,3]" % dt, [R(dt, [2, 3]), I32([[1, 0], [0, 2]]), cv])
    c.no_kernel(op, lambda dt: ([R(dt, [3]), I32([[1, 1]]), scalar_of(dt, 1)], {}))
    dt = "float32"
    cv = scalar_of(dt, -1.5)
    c.run(op, "float32/int64 paddings", [R(dt, [2, 3, 2]), I64([[0, 1], [2, 0], [1, 1]]), cv])
    c.run(op, "float32/scalar", [R(dt, []), np.zeros([0, 2], np.int32), cv])
    c.run(op, "float32/empty dim padded", [R(dt, [0, 2]), I32([[1, 1], [0, 0]]), cv])
    c.run(op, "float32/zero paddings", [R(dt, [2, 3]), I32([[0, 0], [0, 0]]), cv])
    c.run(op, "float32/nan constant", [R(dt, [2, 2]), I32([[1, 0], [0, 1]]),
                                       scalar_of(dt, float("nan"))])
    c.run(op, "float32/bad/negative padding", [R(dt, [2, 3]), I32([[-1, 0], [0, 0]]), cv])
    c.run(op, "float32/bad/paddings rows != rank", [R(dt, [2, 3]), I32([[1, 1]]), cv])
    c.run(op, "float32/bad/paddings rank 1", [R(dt, [2, 3]), I32([1, 1]), cv])
    c.run(op, "float32/bad/constant_values not scalar", [R(dt, [2, 3]), I32([[1, 1], [1, 1]]),
                                                         A([1, 2], dt)])
    c.run(op, "float32/bad/constant_values dtype", [R(dt, [2, 3]), I32([[1, 1], [1, 1]]),
                                                    scalar_of("float64", 1)])
    c.shape(op, "const paddings unknown dims", [P(dt, [-1, 3]), I32([[1, 2], [0, 1]]), cv])
    c.shape(op, "placeholder paddings", [P(dt, [2, 3]), P("int32", [2, 2]), cv])
    c.shape(op, "unknown rank, const paddings", [P(dt, None), I32([[1, 2], [0, 1]]), cv])
    c.shape(op, "unknown rank, placeholder paddings [3,2]", [P(dt, None), P("int32", [3, 2]),
                                                             cv])


# ---------------------------------------------------------------- activation

NAN, INF = float("nan"), float("inf")
SPECIAL = {
    "Relu6": ([-1, -0.0, 0, 3, 5.999, 6, 6.001, 6.5, 7, 100, -100, NAN, INF, -INF], 4, 3),
    "Elu": ([-0.0, 0, -1, -10, -100, -1e-3, 1e-3, 1, 100, NAN, INF, -INF], 3, 0),
    "Selu": ([-0.0, 0, -1, -10, -100, -1e-3, 1e-3, 1, 100, NAN, INF, -INF], 3, 0),
    "Softplus": ([-100, -40, -30, -20, -15, -10, -1, 0, 1, 10, 15, 20, 30, 40, 100, NAN, INF,
                  -INF], 8, 0),
    "Softsign": ([0, -0.0, 1, -1, 1e6, -1e6, NAN, INF, -INF], 3, 0),
    "Erf": ([0, -0.0, 0.5, -0.5, 1, 2, 3, 4, 5, 6, 10, 27, 30, -3, -6, -30, NAN, INF, -INF], 2, 0),
    "Erfc": ([0, -0.0, 0.5, -0.5, 1, 2, 3, 4, 5, 6, 9, 10, 27, 30, -3, -6, -30, NAN, INF, -INF],
             2, 0),
    "Log1p": ([0, -0.0, 1e-8, -1e-8, 1e-5, -1e-5, 1e-3, -0.5, -0.999, -1, -1.5, 1, 1e10, NAN,
               INF, -INF], 1, 0),
    "Expm1": ([0, -0.0, 1e-8, -1e-8, 1e-5, -1e-5, 1e-3, 1, 10, 80, 88, 89, 710, -100, NAN,
               INF, -INF], 1, 0),
    "Sign": ([0, -0.0, 1, -1, 2.5, -3, 1e-30, -1e-30, NAN, INF, -INF], 3, 0),
    "Reciprocal": ([0, -0.0, 1, -1, 2, -4, 3, 1e-30, 1e30, NAN, INF, -INF], 3, 0),
    "Round": ([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7, 0, -0.0,
               8388609, 1e10, NAN, INF, -INF], 4, 0),
    "Ceil": ([0.5, -0.5, -0.0, 0, -1, 1, 1.2, -1.2, 2.9999, 1e10, -1e-30, NAN, INF, -INF], 4, 0),
    "Sin": ([0, -0.0, np.pi, -np.pi / 2, 1e4, -1e6, 1e20, NAN, INF, -INF], 4, 0),
    "Cos": ([0, -0.0, np.pi, -np.pi / 2, 1e4, -1e6, 1e20, NAN, INF, -INF], 4, 0),
    "LeakyRelu": ([-0.0, 0, -1, -10, 1e-3, -1e-3, 1, 100, NAN, INF, -INF], 3, 0),
    "LogSoftmax": ([], 3, 0),
}
COMPLEX_VALUES = [0, 1, -1, 1j, -1j, 1 + 1j, -2 + 0.5j, 0.3 - 1.2j, 3 + 4j, -0.25 - 0.75j]


def float_vector(op, dt, n=12):
    special, scale, shift = SPECIAL[op]
    v = np.concatenate([np.array(special, np.float64), RNG.normal(size=n) * scale + shift])
    return A(v, dt)


def int_vector(dt):
    lo, hi = INT_RANGE[dt]
    v = [x for x in range(-10, 11) if lo <= x <= hi] + [lo, hi, lo + 1, hi - 1]
    return A(v, dt)


def unary_input(op, dt):
    if dt in COMPLEX:
        v = np.array(COMPLEX_VALUES + list(RNG.normal(size=6) * 2 + 1j * RNG.normal(size=6) * 2))
        return A(v, dt)
    if dt in FLOATS:
        return float_vector(op, dt)
    return int_vector(dt)


def gen_unary(c, op):
    for dt in cpu_types(op):
        c.run(op, "%s/specials" % dt, [unary_input(op, dt)])
    c.no_kernel(op, lambda dt: ([R(dt, [3])], {}))
    dt = "float32"
    c.run(op, "float32/[2,3,4]", [R(dt, [2, 3, 4], scale=SPECIAL[op][1], shift=SPECIAL[op][2])])
    c.run(op, "float32/scalar", [scalar_of(dt, 0.75)])
    c.run(op, "float32/empty", [R(dt, [0, 3])])
    c.run(op, "float64/[3,3]", [R("float64", [3, 3], scale=SPECIAL[op][1],
                                  shift=SPECIAL[op][2])])
    if "bool" not in cpu_types(op) and "bool" not in opdef_types(op, "T"):
        c.run(op, "bool/bad/type not allowed", [A([True, False], "bool")])
    if "complex64" not in opdef_types(op, "T"):
        c.run(op, "complex64/bad/type not allowed", [A([1 + 1j], "complex64")])
    c.shape(op, "unknown dims", [P(dt, [-1, 3, -1])])
    c.shape(op, "unknown rank", [P(dt, None)])


def gen_activation_ops(c):
    for op in ["Relu6", "Elu", "Selu", "Softplus", "Softsign", "Erf", "Erfc", "Log1p", "Expm1",
               "Sign", "Reciprocal", "Round", "Ceil", "Sin", "Cos"]:
        gen_unary(c, op)

    op = "LeakyRelu"
    for dt in cpu_types(op):
        c.run(op, "%s/alpha default" % dt, [unary_input(op, dt)])
    c.no_kernel(op, lambda dt: ([R(dt, [3])], dict(alpha=0.5)))
    x = float_vector(op, "float32")
    for alpha in [0.0, 0.01, 1.0, -0.5, 2.0, 1.5]:
        c.run(op, "float32/alpha %s" % alpha, [x], alpha=alpha)
    c.run(op, "float16/alpha 0.1", [float_vector(op, "float16")], alpha=0.1)
    c.run(op, "float32/empty", [R("float32", [2, 0])])
    c.run(op, "complex64/bad/type not allowed", [A([1 + 1j], "complex64")])
    c.run(op, "bool/bad/type not allowed", [A([True], "bool")])
    c.shape(op, "unknown dims", [P("float32", [-1, 2])], alpha=0.3)

    op = "LogSoftmax"
    for dt in cpu_types(op):
        c.run(op, "%s/[3,5]" % dt, [R(dt, [3, 5], scale=3)])
    c.no_kernel(op, lambda dt: ([R(dt, [2, 3])], {}))
    dt = "float32"
    c.run(op, "float32/large logits", [A([[1000, 999, -1000], [-1000, -1001, -1002],
                                          [0, 0, 0], [88, 89, 90]], dt)])
    c.run(op, "float32/nan and inf", [A([[NAN, 1, 2], [INF, 1, 2], [-INF, 1, 2],
                                         [-INF, -INF, -INF], [INF, INF, 0]], dt)])
    c.run(op, "float64/large logits", [A([[1e300, 0], [-745, -746], [709, 710]], "float64")])
    c.run(op, "float32/rank 1", [R(dt, [6], scale=2)])
    c.run(op, "float32/rank 3", [R(dt, [2, 3, 4], scale=2)])
    c.run(op, "float32/single class", [R(dt, [4, 1])])
    c.run(op, "float32/empty batch", [R(dt, [0, 4])])
    c.run(op, "float32/empty classes", [R(dt, [3, 0])])
    c.run(op, "float32/bad/scalar", [scalar_of(dt, 1.0)])
    c.run(op, "int32/bad/type not allowed", [A([1, 2], "int32")])
    c.shape(op, "unknown dims", [P(dt, [-1, 5])])
    c.shape(op, "unknown rank", [P(dt, None)])
    c.shape(op, "bad/scalar", [P(dt, [])])

    op = "ClipByValue"
    for dt in cpu_types(op):
        if dt in COMPLEX:
            t, lo, hi = unary_input("Sign", dt), scalar_of(dt, -1 + 0.5j), scalar_of(dt, 1 - 0.5j)
        elif dt in FLOATS:
            t = float_vector("Relu6", dt)
            lo, hi = scalar_of(dt, -0.5), scalar_of(dt, 6)
        else:
            t = int_vector(dt)
            lo, hi = scalar_of(dt, 2 if dt.startswith("u") else -3), scalar_of(dt, 7)
        c.run(op, "%s/scalar bounds" % dt, [t, lo, hi])
    c.no_kernel(op, lambda dt: ([R(dt, [3]), scalar_of(dt, 0), scalar_of(dt, 1)], {}))
    dt = "float32"
    t = R(dt, [2, 3], scale=3)
    c.run(op, "float32/tensor bounds", [t, R(dt, [2, 3]) - 1, R(dt, [2, 3]) + 1])
    c.run(op, "float32/scalar min tensor max", [t, scalar_of(dt, -1), R(dt, [2, 3]) + 1])
    c.run(op, "float32/min > max", [t, scalar_of(dt, 1), scalar_of(dt, -1)])
    c.run(op, "float32/nan bounds", [t, scalar_of(dt, NAN), scalar_of(dt, 1)])
    c.run(op, "float32/nan input", [A([NAN, -INF, INF, -0.0, 0.0], dt), scalar_of(dt, -0.0),
                                    scalar_of(dt, 0.0)])
    c.run(op, "float32/scalar input", [scalar_of(dt, 5), scalar_of(dt, -1), scalar_of(dt, 1)])
    c.run(op, "float32/empty", [R(dt, [0, 3]), scalar_of(dt, -1), scalar_of(dt, 1)])
    c.run(op, "float32/bad/min shape [3] vs [2,3]", [t, R(dt, [3]), scalar_of(dt, 1)])
    c.run(op, "float32/bad/max shape [2,1]", [t, scalar_of(dt, -1), R(dt, [2, 1])])
    c.run(op, "float32/bad/bounds dtype", [t, scalar_of("float64", -1), scalar_of("float64", 1)])
    c.shape(op, "unknown dims", [P(dt, [-1, 3]), P(dt, []), P(dt, [])])
    c.shape(op, "unknown rank", [P(dt, None), P(dt, None), P(dt, None)])


# ---------------------------------------------------------------- math

def paired(dt, shape):
    """x and y of one shape, about half their elements equal."""
    x = R(dt, shape, lo=-3, hi=4)
    y = R(dt, shape, lo=-3, hi=4)
    mask = RNG.random(shape) < 0.4
    y = np.where(mask, x, y).astype(x.dtype)
    return x, y


def gen_compare(c):
    for op in ["Less", "LessEqual", "GreaterEqual", "NotEqual"]:
        for dt in cpu_types(op):
            x, y = paired(dt, [3, 4])
            c.run(op, "%s/[3,4]" % dt, [x, y])
            if dt in FLOATS:
                s = A([NAN, NAN, 1, INF, -INF, -0.0, 0.0, INF, 1], dt)
                t = A([NAN, 1, NAN, INF, -INF, 0.0, -0.0, -INF, 1], dt)
                c.run(op, "%s/nan inf -0" % dt, [s, t])
            elif dt in INT_RANGE:
                lo, hi = INT_RANGE[dt]
                c.run(op, "%s/extremes" % dt, [A([lo, hi, lo, hi, 0], dt),
                                                A([hi, lo, lo, hi, hi], dt)])
        c.no_kernel(op, lambda dt: ([R(dt, [3]), R(dt, [3])], {}))
        dt = "float32"
        c.run(op, "float32/broadcast [2,1,3] vs [4,1]", [R(dt, [2, 1, 3]), R(dt, [4, 1])])
        c.run(op, "float32/broadcast scalar vs [3]", [scalar_of(dt, 0.0), R(dt, [3])])
        c.run(op, "float32/empty [0,3] vs [3]", [R(dt, [0, 3]), R(dt, [3])])
        c.run(op, "float32/broadcast [1] vs [2,0]", [R(dt, [1]), R(dt, [2, 0])])
        c.run(op, "float32/bad/shapes [2,3] vs [3,2]", [R(dt, [2, 3]), R(dt, [3, 2])])
        c.run(op, "float32/bad/shapes [2,3] vs [4,3]", [R(dt, [2, 3]), R(dt, [4, 3])])
        c.run(op, "float32/bad/dtype mismatch", [R(dt, [2]), R("int32", [2])])
        if op != "NotEqual":
            c.run(op, "bool/bad/type not allowed", [A([True], "bool"), A([False], "bool")])
        c.shape(op, "unknown dims broadcast", [P(dt, [-1, 1, 3]), P(dt, [4, -1])])
        c.shape(op, "unknown rank", [P(dt, None), P(dt, [2, 3])])
        c.shape(op, "bad/known mismatch", [P(dt, [-1, 2]), P(dt, [3])])
    op = "NotEqual"
    dt = "float32"
    for ise in [True, False]:
        c.run(op, "float32/incompatible_shape_error=%s/[2,3] vs [3,2]" % ise,
              [R(dt, [2, 3]), R(dt, [3, 2])], incompatible_shape_error=ise)
        c.run(op, "float32/incompatible_shape_error=%s/broadcast" % ise,
              [R(dt, [2, 1]), R(dt, [1, 3])], incompatible_shape_error=ise)
        c.shape(op, "incompatible_shape_error=%s/known mismatch" % ise,
                [P(dt, [2, 3]), P(dt, [3, 2])], incompatible_shape_error=ise)

    for op in ["LogicalOr"]:
        x, y = R("bool", [3, 4]), R("bool", [3, 4])
        c.run(op, "bool/[3,4]", [x, y])
        c.run(op, "bool/broadcast [2,1] vs [3]", [R("bool", [2, 1]), R("bool", [3])])
        c.run(op, "bool/scalar", [A(False, "bool"), A(True, "bool")])
        c.run(op, "bool/empty", [R("bool", [0, 2]), R("bool", [2])])
        c.run(op, "bool/bad/shapes", [R("bool", [2, 3]), R("bool", [3, 2])])
        c.run(op, "int32/bad/type", [R("int32", [2]), R("int32", [2])])
        c.shape(op, "unknown dims", [P("bool", [-1, 3]), P("bool", [1])])
        c.shape(op, "unknown rank", [P("bool", None), P("bool", [3])])
    op = "LogicalNot"
    c.run(op, "bool/[3,4]", [R("bool", [3, 4])])
    c.run(op, "bool/scalar", [A(True, "bool")])
    c.run(op, "bool/empty", [R("bool", [0])])
    c.run(op, "float32/bad/type", [R("float32", [2])])
    c.shape(op, "unknown dims", [P("bool", [-1, 3])])


def gen_matmul(c):
    op = "BatchMatMulV2"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,3,4]x[2,4,5]" % dt, [R(dt, [2, 3, 4]), R(dt, [2, 4, 5])])
    c.no_kernel(op, lambda dt: ([R(dt, [2, 2]), R(dt, [2, 2])], {}))
    for dt in ["float32", "complex64", "int32"]:
        for ax, ay in [(False, True), (True, False), (True, True)]:
            xs = [2, 4, 3] if ax else [2, 3, 4]
            ys = [2, 5, 4] if ay else [2, 4, 5]
            c.run(op, "%s/adj_x=%s/adj_y=%s" % (dt, ax, ay), [R(dt, xs), R(dt, ys)],
                  adj_x=ax, adj_y=ay)
    dt = "float32"
    for suffix, xs, ys in [("broadcast [2,1,3,4]x[3,4,5]", [2, 1, 3, 4], [3, 4, 5]),
                           ("broadcast [3,4]x[2,4,5]", [3, 4], [2, 4, 5]),
                           ("broadcast [2,1,3,4]x[1,3,4,2]", [2, 1, 3, 4], [1, 3, 4, 2]),
                           ("rank 2", [3, 4], [4, 2]),
                           ("rank 5", [1, 2, 1, 2, 3], [2, 1, 2, 3, 2]),
                           ("empty batch", [0, 3, 4], [0, 4, 5]),
                           ("broadcast empty batch", [0, 1, 3, 4], [2, 4, 5]),
                           ("K=0", [2, 3, 0], [2, 0, 5]),
                           ("M=0", [2, 0, 4], [2, 4, 5]),
                           ("bad/rank 1", [4], [4, 5]),
                           ("bad/inner mismatch", [2, 3, 4], [2, 3, 5]),
                           ("bad/batch mismatch", [2, 3, 4], [3, 4, 5]),
                           ("bad/batch mismatch [2,2,3,4]x[3,1,4,5]", [2, 2, 3, 4], [3, 1, 4, 5])]:
        c.run(op, "float32/" + suffix, [R(dt, xs), R(dt, ys)])
    c.run(op, "float32/grad_x grad_y", [R(dt, [2, 3]), R(dt, [3, 2])], grad_x=True, grad_y=True)
    c.run(op, "float32/bad/dtype mismatch", [R(dt, [2, 2]), R("float64", [2, 2])])
    c.run(op, "bool/bad/type not allowed", [R("bool", [2, 2]), R("bool", [2, 2])])
    c.shape(op, "unknown batch and M", [P(dt, [-1, -1, 4]), P(dt, [2, 4, 5])])
    c.shape(op, "unknown rank x", [P(dt, None), P(dt, [2, 4, 5])])
    c.shape(op, "broadcast unknown batch dims", [P(dt, [-1, 1, 3, 4]), P(dt, [5, 4, 2])])
    c.shape(op, "adj_x unknown inner", [P(dt, [3, -1, 4]), P(dt, [-1, 5])], adj_x=True)
    c.shape(op, "bad/inner mismatch", [P(dt, [-1, 3, 4]), P(dt, [-1, 3, 5])])

    op = "BatchMatMulV3"
    for combo in cpu_combos(op, ["Ta", "Tb", "Tout"]):
        ta, tb, tout = combo["Ta"], combo["Tb"], combo["Tout"]
        c.run(op, "%sx%s->%s/[2,3,4]x[2,4,5]" % (ta, tb, tout),
              [R(ta, [2, 3, 4], lo=-9, hi=10), R(tb, [2, 4, 5], lo=-9, hi=10)], Tout=tout)
    c.run(op, "int8xint8->int32/extremes", [A([[[-128, -128], [127, 127]]], "int8"),
                                             A([[[-128, 127], [-128, 127]]], "int8")],
          Tout="int32")
    c.run(op, "uint8xuint8->int32/extremes", [A([[[255, 255, 255]]], "uint8"),
                                               A([[[255], [255], [255]]], "uint8")], Tout="int32")
    dt = "float32"
    for ax, ay in [(False, True), (True, False), (True, True)]:
        xs = [2, 4, 3] if ax else [2, 3, 4]
        ys = [2, 5, 4] if ay else [2, 4, 5]
        c.run(op, "float32xfloat32->float32/adj_x=%s/adj_y=%s" % (ax, ay),
              [R(dt, xs), R(dt, ys)], Tout=dt, adj_x=ax, adj_y=ay)
        c.run(op, "int8xuint8->int32/adj_x=%s/adj_y=%s" % (ax, ay),
              [R("int8", xs), R("uint8", ys, hi=20)], Tout="int32", adj_x=ax, adj_y=ay)
    c.run(op, "complex64xcomplex64->complex64/adj_x adj_y",
          [R("complex64", [3, 2]), R("complex64", [4, 3])], Tout="complex64", adj_x=True,
          adj_y=True)
    c.run(op, "float32xfloat32->float32/broadcast [2,1,3,4]x[3,4,5]",
          [R(dt, [2, 1, 3, 4]), R(dt, [3, 4, 5])], Tout=dt)
    c.run(op, "bfloat16xint8->bfloat16/broadcast [3,4]x[2,4,2]",
          [R("bfloat16", [3, 4]), R("int8", [2, 4, 2])], Tout="bfloat16")
    c.run(op, "float32xfloat32->float32/empty batch", [R(dt, [0, 3, 4]), R(dt, [0, 4, 5])],
          Tout=dt)
    c.run(op, "float32xfloat32->float32/K=0", [R(dt, [2, 3, 0]), R(dt, [2, 0, 5])], Tout=dt)
    for ta, tb, tout in [("float32", "float32", "float64"), ("float16", "float16", "float16"),
                         ("int8", "int8", "int8"), ("float32", "float64", "float64"),
                         ("int8", "int8", "float32"), ("uint16", "uint16", "int32")]:
        c.run(op, "%sx%s->%s/no CPU kernel or bad" % (ta, tb, tout), [R(ta, [2, 2]),
                                                                     R(tb, [2, 2])], Tout=tout)
    c.run(op, "float32xfloat32->float32/bad/inner mismatch", [R(dt, [2, 3, 4]), R(dt, [2, 3, 5])],
          Tout=dt)
    c.run(op, "float32xfloat32->float32/bad/rank 1", [R(dt, [4]), R(dt, [4, 5])], Tout=dt)
    c.run(op, "float32xfloat32->float32/bad/batch mismatch", [R(dt, [2, 3, 4]), R(dt, [3, 4, 5])],
          Tout=dt)
    c.shape(op, "unknown batch", [P("int8", [-1, 3, 4]), P("int8", [-1, 4, 5])], Tout="int32")
    c.shape(op, "unknown rank", [P(dt, None), P(dt, [4, 5])], Tout=dt)
    c.shape(op, "bad/inner mismatch", [P(dt, [-1, 3, 4]), P(dt, [5, 2])], Tout=dt)


EINSUM = [
    ("ij,jk->ik", [[2, 3], [3, 4]]),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("bij,jk->bik", [[2, 3, 4], [4, 2]]),
    ("ij->ji", [[3, 4]]),
    ("ijk->kji", [[2, 3, 4]]),
    ("ij->i", [[3, 4]]),
    ("ij->j", [[3, 4]]),
    ("ij->", [[3, 4]]),
    ("ij", [[3, 4]]),
    ("ij,jk", [[2, 3], [3, 4]]),
    ("i,j->ij", [[3], [4]]),
    ("i,i->", [[5], [5]]),
    ("ij,ij->ij", [[2, 3], [2, 3]]),
    ("ij,ij->", [[2, 3], [2, 3]]),
    ("ii->i", [[4, 4]]),
    ("ii->", [[4, 4]]),
    ("iij->ij", [[3, 3, 2]]),
    ("ij,jj->i", [[2, 3], [3, 3]]),
    ("...ij,...jk->...ik", [[2, 3, 4, 5], [3, 5, 2]]),
    ("...ij,...jk->...ik", [[2, 1, 4, 5], [3, 5, 2]]),
    ("...ij,...jk->...ik", [[4, 5], [2, 5, 3]]),
    ("...ij,jk->...ik", [[2, 3, 4, 5], [5, 2]]),
    ("...i->...", [[2, 3, 4]]),
    ("i...->...i", [[2, 3, 4]]),
    ("...->...", [[2, 3]]),
    ("abcd,aecd->acbe", [[2, 3, 4, 5], [2, 6, 4, 5]]),
    ("abcd,adce->abce", [[2, 3, 4, 5], [2, 5, 4, 3]]),
    ("bhqd,bhkd->bhqk", [[1, 2, 3, 4], [1, 2, 5, 4]]),
    ("ab,cd->abcd", [[2, 3], [2, 2]]),
    ("ij,kj->ik", [[2, 3], [4, 3]]),
    ("ij,jk->ki", [[2, 3], [3, 4]]),
    ("ABc,cD->ABD", [[2, 2, 3], [3, 2]]),
    ("ij,jk->ik", [[2, 0], [0, 4]]),
    ("ij,jk->ik", [[0, 3], [3, 4]]),
    ("ij->i", [[3, 0]]),
    ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("i,j,k->ijk", [[2], [3], [2]]),
]
EINSUM_BAD = [
    ("bad/inner mismatch", "ij,jk->ik", [[2, 3], [4, 5]]),
    ("bad/output label not in inputs", "ij->ijk", [[2, 3]]),
    ("accepted/repeated output label", "ij->ii", [[3, 3]]),
    ("bad/two subscripts one input", "ij,jk->ik", [[2, 3]]),
    ("bad/one subscript two inputs", "ij->ij", [[2, 3], [2, 3]]),
    ("bad/rank mismatch", "ijk,jk->ik", [[2, 3], [3, 4]]),
    ("bad/no arrow double", "ij-->i", [[2, 3]]),
    ("accepted/invalid character", "i#,jk->ik", [[2, 3], [3, 4]]),
    ("bad/empty equation", "", [[2, 3]]),
    ("bad/diagonal mismatch", "ii->i", [[3, 4]]),
    ("bad/ellipsis broadcast mismatch", "...ij,...jk->...ik", [[2, 3, 4], [4, 4, 2]]),
    ("bad/two ellipses", "...i...->i", [[2, 3]]),
    ("accepted/ellipsis in output only", "ij->...ij", [[2, 3]]),
]


def gen_einsum(c):
    op = "Einsum"
    for dt in cpu_types(op):
        c.run(op, "%s/ij,jk->ik" % dt, [[R(dt, [2, 3]), R(dt, [3, 4])]], equation="ij,jk->ik")
        c.run(op, "%s/bij,bjk->bik" % dt, [[R(dt, [2, 2, 3]), R(dt, [2, 3, 2])]],
              equation="bij,bjk->bik")
    c.no_kernel(op, lambda dt: ([[R(dt, [2, 2]), R(dt, [2, 2])]], dict(equation="ij,jk->ik")))
    dt = "float32"
    for eq, shapes in EINSUM:
        c.run(op, "float32/%s/%s" % (eq, shapes), [[R(dt, s) for s in shapes]], equation=eq)
    c.run(op, "int32/ii->i", [[R("int32", [3, 3])]], equation="ii->i")
    for suffix, eq, shapes in EINSUM_BAD:
        c.run(op, "float32/%s/%s" % (suffix, eq), [[R(dt, s) for s in shapes]], equation=eq)
    c.run(op, "float32/bad/dtype mismatch", [[R(dt, [2, 3]), R("float64", [3, 4])]],
          equation="ij,jk->ik")
    c.shape(op, "unknown dims", [[P(dt, [-1, 3]), P(dt, [3, -1])]], equation="ij,jk->ik")
    c.shape(op, "unknown batch", [[P(dt, [-1, 3, 4]), P(dt, [-1, 4, 5])]],
            equation="bij,bjk->bik")
    c.shape(op, "unknown rank with ellipsis", [[P(dt, None), P(dt, [4, 5])]],
            equation="...ij,jk->...ik")
    c.shape(op, "unknown rank no ellipsis", [[P(dt, None), P(dt, [4, 5])]],
            equation="ij,jk->ik")
    c.shape(op, "broadcast unknown batch dims", [[P(dt, [-1, 1, 3, 4]), P(dt, [5, 4, 2])]],
            equation="...ij,...jk->...ik")
    c.shape(op, "transpose unknown", [[P(dt, [-1, 2, -1])]], equation="ijk->kji")
    c.shape(op, "bad/known mismatch", [[P(dt, [-1, 3]), P(dt, [4, -1])]], equation="ij,jk->ik")


def gen_cumsum(c):
    op = "Cumsum"
    for dt in cpu_types(op):
        c.run(op, "%s/[3,4]/axis 1" % dt, [R(dt, [3, 4]), I32(1)])
    c.no_kernel(op, lambda dt: ([R(dt, [3]), I32(0)], {}))
    dt = "float32"
    x = R(dt, [3, 4])
    for ex in [False, True]:
        for rev in [False, True]:
            for ax in [0, -1]:
                c.run(op, "float32/exclusive=%s/reverse=%s/axis %d" % (ex, rev, ax), [x, I32(ax)],
                      exclusive=ex, reverse=rev)
    c.run(op, "int32/exclusive reverse", [R("int32", [5]), I32(0)], exclusive=True, reverse=True)
    c.run(op, "float32/axis int64", [x, I64(1)])
    c.run(op, "float32/axis int64 -2", [x, I64(-2)], reverse=True)
    c.run(op, "float32/rank 3 axis 1", [R(dt, [2, 3, 2]), I32(1)], exclusive=True)
    c.run(op, "float32/rank 1", [R(dt, [6]), I32(0)])
    c.run(op, "float32/empty axis dim", [R(dt, [0, 4]), I32(0)])
    c.run(op, "float32/empty other dim", [R(dt, [0, 4]), I32(1)], exclusive=True)
    c.run(op, "float32/nan inf", [A([1, NAN, 2, INF, -INF, 3], dt), I32(0)])
    c.run(op, "int8/wraps", [A([100, 100, -100, -100, -100], "int8"), I32(0)])
    c.run(op, "uint8/wraps", [A([200, 100, 255], "uint8"), I32(0)])
    c.run(op, "float16/rounding", [A([2048, 1, 1, 1, 1], "float16"), I32(0)])
    c.run(op, "float32/bad/scalar input", [scalar_of(dt, 1), I32(0)])
    c.run(op, "float32/bad/axis 2 of rank 2", [x, I32(2)])
    c.run(op, "float32/bad/axis -3 of rank 2", [x, I32(-3)])
    c.run(op, "float32/bad/axis not scalar", [x, I32([1])])
    c.run(op, "float32/bad/axis float", [x, scalar_of("float32", 1)])
    c.shape(op, "unknown dims", [P(dt, [-1, 4]), I32(1)])
    c.shape(op, "unknown rank", [P(dt, None), I32(0)])
    c.shape(op, "placeholder axis", [P(dt, [3, 4]), P("int32", [])])
    c.shape(op, "axis rank 1 (a run-time check)", [P(dt, [3, 4]), P("int32", [1])])


# ---------------------------------------------------------------- reduce

def gen_reduce(c):
    for op in ["Min", "Prod"]:
        for dt in cpu_types(op):
            c.run(op, "%s/[3,4]/axis [1]" % dt, [R(dt, [3, 4], lo=-3, hi=4), I32([1])])
        c.no_kernel(op, lambda dt: ([R(dt, [3]), I32([0])], {}))
        dt = "float32"
        x = R(dt, [3, 4])
        x3 = R(dt, [2, 3, 4])
        for kd in [False, True]:
            for axis in [[1], [0], [-1], [0, 1], [], [-2, 1]]:
                c.run(op, "float32/axis %s/keep_dims=%s" % (axis, kd), [x, I32(axis)],
                      keep_dims=kd)
            c.run(op, "float32/rank 3 axis [0,2]/keep_dims=%s" % kd, [x3, I32([0, 2])],
                  keep_dims=kd)
            c.run(op, "float32/empty axis 0/keep_dims=%s" % kd, [R(dt, [0, 3]), I32([0])],
                  keep_dims=kd)
        c.run(op, "float32/scalar axis", [x, I32(0)])
        c.run(op, "float32/axis int64", [x3, I64([2, 0])])
        c.run(op, "float32/empty axis 1", [R(dt, [0, 3]), I32([1])])
        c.run(op, "float32/scalar input axis []", [scalar_of(dt, 3), I32([])])
        c.run(op, "float32/duplicate axes", [x, I32([1, 1])])
        c.run(op, "float32/duplicate axes 1 and -1", [x, I32([1, -1])])
        c.run(op, "float32/nan inf", [A([[NAN, 1, 2], [INF, -INF, 1], [1, -0.0, 0.0]], dt),
                                      I32([1])])
        for t in ["int32", "uint8", "int64"]:
            c.run(op, "%s/empty reduce" % t, [R(t, [0, 2]), I32([0])])
        c.run(op, "float32/bad/axis out of range", [x, I32([2])])
        c.run(op, "float32/bad/axis -3", [x, I32([-3])])
        c.run(op, "float32/bad/axis rank 2", [x, I32([[0], [1]])])
        c.run(op, "float32/bad/axis float", [x, A([1], "float32")])
        c.shape(op, "unknown rank, const axis", [P(dt, None), I32([1])])
        c.shape(op, "unknown rank, const axis/keep_dims", [P(dt, None), I32([1])], keep_dims=True)
        c.shape(op, "unknown dims, const axis", [P(dt, [-1, 3, -1]), I32([0, -1])])
        c.shape(op, "unknown dims, keep_dims", [P(dt, [-1, 3, -1]), I32([2])], keep_dims=True)
        c.shape(op, "placeholder axis", [P(dt, [2, 3, 4]), P("int32", [2])])
        c.shape(op, "placeholder axis/keep_dims", [P(dt, [2, 3, 4]), P("int32", [-1])],
                keep_dims=True)
        c.shape(op, "placeholder scalar axis", [P(dt, [2, 3, 4]), P("int32", [])])
        c.shape(op, "bad/axis out of range", [P(dt, [-1, 3]), I32([2])])
    prod_int = [("int8", [[100, 2], [-128, -1], [127, 127]]), ("uint8", [[16, 16], [255, 2],
                                                                           [0, 200]])]
    for t, v in prod_int:
        c.run("Prod", "%s/wraps" % t, [A(v, t), I32([1])])

    for op in ["All", "Any"]:
        x = R("bool", [3, 4])
        for kd in [False, True]:
            for axis in [[1], [0], [-1], [0, 1], []]:
                c.run(op, "bool/axis %s/keep_dims=%s" % (axis, kd), [x, I32(axis)], keep_dims=kd)
        c.run(op, "bool/axis int64", [x, I64([0])])
        c.run(op, "bool/all true/all false rows", [A([[1, 1], [0, 0], [1, 0]], "bool"), I32(1)])
        c.run(op, "bool/empty reduce", [R("bool", [0, 3]), I32([0])])
        c.run(op, "bool/empty axis 1", [R("bool", [0, 3]), I32([1])])
        c.run(op, "bool/scalar input", [A(True, "bool"), I32([])])
        c.run(op, "bool/rank 3 axis [0,2]", [R("bool", [2, 3, 2]), I32([0, 2])])
        c.run(op, "bool/bad/axis out of range", [x, I32([2])])
        c.run(op, "bool/bad/axis -3", [x, I32([-3])])
        c.run(op, "float32/bad/type", [R("float32", [3]), I32([0])])
        c.shape(op, "unknown rank", [P("bool", None), I32([1])])
        c.shape(op, "unknown dims keep_dims", [P("bool", [-1, 3]), I32([0])], keep_dims=True)
        c.shape(op, "placeholder axis", [P("bool", [2, 3]), P("int32", [1])])

    op = "ArgMin"
    for dt in cpu_types(op):
        c.run(op, "%s/[3,4]/axis 1" % dt, [R(dt, [3, 4], lo=-3, hi=4), I32(1)])
    for ot in cpu_types(op, "output_type"):
        c.run(op, "float32/output_type %s" % ot, [R("float32", [3, 4]), I32(0)], output_type=ot)
    for ot in [t for t in opdef_types(op, "output_type") if t not in cpu_types(op, "output_type")]:
        c.run(op, "float32/output_type %s/no CPU kernel" % ot, [R("float32", [3, 4]), I32(0)],
              output_type=ot)
    c.no_kernel(op, lambda dt: ([R(dt, [3]), I32(0)], {}))
    dt = "float32"
    x = R(dt, [3, 4])
    for tidx in opdef_types(op, "Tidx"):
        c.run(op, "float32/axis %s" % tidx, [x, A(1, tidx)])
    c.run(op, "float32/axis -1", [x, I32(-1)])
    c.run(op, "float32/axis -2", [x, I32(-2)])
    c.run(op, "float32/rank 1", [R(dt, [7]), I32(0)])
    c.run(op, "float32/rank 3 axis 1", [R(dt, [2, 3, 4]), I32(1)])
    c.run(op, "float32/ties first index", [A([[1, 0, 0, 2], [3, 3, 3, 3], [-1, 5, -1, -1]], dt),
                                           I32(1)])
    c.run(op, "int32/ties", [A([[2, 1, 1], [0, 0, 0]], "int32"), I32(1)])
    c.run(op, "bool/ties", [A([[True, False, False], [True, True, True]], "bool"), I32(1)])
    c.run(op, "float32/nan", [A([[1, NAN, 0], [NAN, 1, 2], [-INF, NAN, -INF], [0, -0.0, 1]], dt),
                              I32(1)])
    c.run(op, "float32/empty other dim", [R(dt, [0, 3]), I32(1)])
    c.run(op, "float32/bad/empty reduce dim", [R(dt, [0, 3]), I32(0)])
    c.run(op, "float32/bad/axis out of range", [x, I32(2)])
    c.run(op, "float32/bad/axis -3", [x, I32(-3)])
    c.run(op, "float32/bad/axis not scalar", [x, I32([1])])
    c.run(op, "float32/bad/scalar input", [scalar_of(dt, 1), I32(0)])
    c.run(op, "float32/bad/output_type float32", [x, I32(0)], output_type="float32")
    c.shape(op, "unknown rank", [P(dt, None), I32(0)])
    c.shape(op, "unknown dims const axis", [P(dt, [-1, 3, -1]), I32(-1)])
    c.shape(op, "placeholder axis", [P(dt, [2, 3, 4]), P("int32", [])])
    c.shape(op, "bad/axis out of range", [P(dt, [-1, 3]), I32(2)])


# ---------------------------------------------------------------- array

def gen_shape_ops(c):
    op = "Shape"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,3]" % dt, [R(dt, [2, 3])])
    for ot in cpu_types(op, "out_type"):
        c.run(op, "float32/out_type %s" % ot, [R("float32", [4, 1, 2])], out_type=ot)
    c.run(op, "float32/scalar", [scalar_of("float32", 1)])
    c.run(op, "float32/empty", [R("float32", [3, 0, 2])])
    c.run(op, "float32/bad/out_type float32", [R("float32", [2])], out_type="float32")
    c.shape(op, "unknown dims", [P("float32", [-1, 3])])
    c.shape(op, "unknown rank", [P("float32", None)])

    op = "ShapeN"
    for dt in cpu_types(op):
        c.run(op, "%s/N=2" % dt, [[R(dt, [2, 3]), R(dt, [4])]])
    for ot in cpu_types(op, "out_type"):
        c.run(op, "float32/N=3/out_type %s" % ot,
              [[R("float32", [2, 3]), scalar_of("float32", 1), R("float32", [0, 2, 1])]],
              out_type=ot)
    c.run(op, "float32/N=1", [[R("float32", [5])]])
    c.run(op, "float32/bad/mixed types", [[R("float32", [2]), R("int32", [2])]])
    c.run(op, "float32/bad/out_type float32", [[R("float32", [2])]], out_type="float32")
    c.shape(op, "unknown dims and rank", [[P("float32", [-1, 3]), P("float32", None)]])

    op = "Size"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,3]" % dt, [R(dt, [2, 3])])
    for ot in cpu_types(op, "out_type"):
        c.run(op, "float32/out_type %s" % ot, [R("float32", [4, 1, 2])], out_type=ot)
    c.run(op, "float32/scalar", [scalar_of("float32", 1)])
    c.run(op, "float32/empty", [R("float32", [3, 0, 2])])
    c.run(op, "float32/bad/out_type float32", [R("float32", [2])], out_type="float32")
    c.shape(op, "unknown dims", [P("float32", [-1, 3])])
    c.shape(op, "unknown rank", [P("float32", None)])

    op = "Rank"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,3]" % dt, [R(dt, [2, 3])])
    c.run(op, "float32/scalar", [scalar_of("float32", 1)])
    c.run(op, "float32/rank 5 empty", [R("float32", [1, 0, 2, 1, 1])])
    c.shape(op, "unknown dims", [P("float32", [-1, 3])])
    c.shape(op, "unknown rank", [P("float32", None)])


def gen_fill_like(c):
    op = "Fill"
    for dt in cpu_types(op):
        v = {"bool": True}.get(dt, -1.5 + 2j if dt in COMPLEX else (3 if dt not in FLOATS
                                                                    else -1.5))
        c.run(op, "%s/[2,3]" % dt, [I32([2, 3]), scalar_of(dt, v)])
    c.no_kernel(op, lambda dt: ([I32([2]), scalar_of(dt, 1)], {}))
    dt = "float32"
    v = scalar_of(dt, 0.25)
    c.run(op, "float32/dims int64", [I64([3, 1, 2]), v])
    c.run(op, "float32/scalar", [np.zeros([0], np.int32), v])
    c.run(op, "float32/empty", [I32([2, 0, 3]), v])
    c.run(op, "float32/nan", [I32([2]), scalar_of(dt, NAN)])
    c.run(op, "float32/bad/negative dim", [I32([2, -1]), v])
    c.run(op, "float32/bad/value not scalar", [I32([2, 3]), A([1, 2], dt)])
    c.run(op, "float32/bad/dims rank 2", [I32([[2, 3]]), v])
    c.run(op, "float32/bad/dims float", [A([2, 3], "float32"), v])
    c.shape(op, "const dims", [I32([2, 3]), P(dt, [])])
    c.shape(op, "placeholder dims [3]", [P("int32", [3]), v])
    c.shape(op, "placeholder dims unknown", [P("int32", [-1]), v])
    c.shape(op, "placeholder dims unknown rank", [P("int32", None), v])
    c.shape(op, "unknown value rank", [I32([4]), P(dt, None)])
    c.shape(op, "bad/negative const dim", [I32([2, -3]), v])
    c.shape(op, "bad/value rank 1", [I32([2]), P(dt, [2])])

    for op in ["ZerosLike", "OnesLike"]:
        for dt in cpu_types(op):
            c.run(op, "%s/[2,3]" % dt, [R(dt, [2, 3])])
        c.no_kernel(op, lambda dt: ([R(dt, [2])], {}))
        c.run(op, "float32/scalar", [scalar_of("float32", NAN)])
        c.run(op, "float32/empty", [R("float32", [0, 3])])
        c.shape(op, "unknown dims", [P("float32", [-1, 3])])
        c.shape(op, "unknown rank", [P("float32", None)])


def gen_range(c):
    op = "Range"
    for dt in cpu_types(op, "Tidx"):
        s = scalar_of
        c.run(op, "%s/0 to 5 by 1" % dt, [s(dt, 0), s(dt, 5), s(dt, 1)])
        c.run(op, "%s/7 to -4 by -3" % dt, [s(dt, 7), s(dt, -4), s(dt, -3)])
        c.run(op, "%s/empty 3 to 3" % dt, [s(dt, 3), s(dt, 3), s(dt, 2)])
        if dt in FLOATS:
            c.run(op, "%s/1 to 2 by 0.3" % dt, [s(dt, 1), s(dt, 2), s(dt, 0.3)])
            c.run(op, "%s/0.5 to -1 by -0.25" % dt, [s(dt, 0.5), s(dt, -1), s(dt, -0.25)])
    c.no_kernel(op, lambda dt: ([scalar_of(dt, 0), scalar_of(dt, 3), scalar_of(dt, 1)], {}),
                attr="Tidx")
    s = scalar_of
    c.run(op, "int32/0 to 10 by 3", [s("int32", 0), s("int32", 10), s("int32", 3)])
    c.run(op, "int32/-5 to 5 by 4", [s("int32", -5), s("int32", 5), s("int32", 4)])
    c.run(op, "int64/large", [s("int64", 2 ** 40), s("int64", 2 ** 40 + 5), s("int64", 2)])
    c.run(op, "float64/0 to 1 by 0.1", [s("float64", 0), s("float64", 1), s("float64", 0.1)])
    c.run(op, "float32/0 to 1 by 0.1", [s("float32", 0), s("float32", 1), s("float32", 0.1)])
    c.run(op, "float32/1e8 step 1", [s("float32", 1e8), s("float32", 1e8 + 8), s("float32", 1)])
    c.run(op, "float16/0 to 3 by 0.7", [s("float16", 0), s("float16", 3), s("float16", 0.7)])
    c.run(op, "int32/bad/delta 0", [s("int32", 0), s("int32", 5), s("int32", 0)])
    c.run(op, "int32/bad/start > limit with delta > 0", [s("int32", 5), s("int32", 0),
                                                         s("int32", 1)])
    c.run(op, "int32/bad/start < limit with delta < 0", [s("int32", 0), s("int32", 5),
                                                         s("int32", -1)])
    c.run(op, "float32/bad/delta 0", [s("float32", 0), s("float32", 1), s("float32", 0)])
    c.run(op, "float32/bad/nan limit", [s("float32", 0), s("float32", NAN), s("float32", 1)])
    c.run(op, "float32/bad/inf limit", [s("float32", 0), s("float32", INF), s("float32", 1)])
    c.run(op, "int32/bad/start not scalar", [I32([0]), s("int32", 5), s("int32", 1)])
    c.run(op, "int32/bad/mixed types", [s("int32", 0), s("int64", 5), s("int32", 1)])
    c.shape(op, "const inputs", [s("int32", 2), s("int32", 11), s("int32", 3)])
    c.shape(op, "const float inputs", [s("float32", 0), s("float32", 1), s("float32", 0.3)])
    c.shape(op, "placeholder limit", [s("int32", 0), P("int32", []), s("int32", 1)])
    c.shape(op, "placeholder all", [P("int64", []), P("int64", []), P("int64", [])])
    c.shape(op, "bad/const delta 0", [s("int32", 0), s("int32", 5), s("int32", 0)])
    c.shape(op, "bad/start rank 1", [P("int32", [1]), s("int32", 5), s("int32", 1)])


def gen_split(c):
    op = "Split"
    for dt in cpu_types(op):
        c.run(op, "%s/[4,6]/axis 1/3 ways" % dt, [I32(1), R(dt, [4, 6])], num_split=3)
    dt = "float32"
    x = R(dt, [4, 6])
    c.run(op, "float32/axis -1/2 ways", [I32(-1), x], num_split=2)
    c.run(op, "float32/axis -2/4 ways", [I32(-2), x], num_split=4)
    c.run(op, "float32/axis 0/1 way", [I32(0), x], num_split=1)
    c.run(op, "float32/axis 1/6 ways", [I32(1), x], num_split=6)
    c.run(op, "float32/rank 3 axis 1", [I32(1), R(dt, [2, 4, 3])], num_split=2)
    c.run(op, "float32/empty split dim", [I32(0), R(dt, [0, 3])], num_split=2)
    c.run(op, "float32/empty other dim", [I32(1), R(dt, [0, 4])], num_split=2)
    c.run(op, "float32/bad/not divisible", [I32(1), x], num_split=4)
    c.run(op, "float32/bad/axis out of range", [I32(2), x], num_split=2)
    c.run(op, "float32/bad/axis -3", [I32(-3), x], num_split=2)
    c.run(op, "float32/bad/num_split 0", [I32(0), x], num_split=0)
    c.run(op, "float32/bad/axis not scalar", [I32([1]), x], num_split=2)
    c.run(op, "float32/bad/axis int64", [I64(1), x], num_split=2)
    c.run(op, "float32/bad/scalar value", [I32(0), scalar_of(dt, 1)], num_split=1)
    c.shape(op, "const axis unknown dims", [I32(1), P(dt, [-1, 6])], num_split=3)
    c.shape(op, "const axis unknown split dim", [I32(0), P(dt, [-1, 6])], num_split=2)
    c.shape(op, "placeholder axis", [P("int32", []), P(dt, [4, 6])], num_split=2)
    c.shape(op, "unknown rank", [I32(1), P(dt, None)], num_split=2)
    c.shape(op, "bad/not divisible", [I32(1), P(dt, [-1, 5])], num_split=2)

    op = "SplitV"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,6]/sizes [1,2,3]" % dt, [R(dt, [2, 6]), I32([1, 2, 3]), I32(1)],
              num_split=3)
    dt = "float32"
    for tl in cpu_types(op, "Tlen"):
        c.run(op, "float32/Tlen %s/sizes [2,-1,3]" % tl, [R(dt, [2, 7]), A([2, -1, 3], tl),
                                                          I32(-1)], num_split=3)
    x = R(dt, [4, 5])
    c.run(op, "float32/axis 0/sizes [3,1]", [x, I32([3, 1]), I32(0)], num_split=2)
    c.run(op, "float32/axis -2/sizes [-1,1]", [x, I32([-1, 1]), I32(-2)], num_split=2)
    c.run(op, "float32/sizes with 0", [x, I32([0, 5, 0]), I32(1)], num_split=3)
    c.run(op, "float32/-1 takes 0", [x, I32([5, -1]), I32(1)], num_split=2)
    c.run(op, "float32/one size", [x, I32([5]), I32(1)], num_split=1)
    c.run(op, "float32/one size -1", [x, I32([-1]), I32(1)], num_split=1)
    c.run(op, "float32/empty", [R(dt, [0, 5]), I32([2, 3]), I32(1)], num_split=2)
    c.run(op, "float32/bad/two -1", [x, I32([-1, -1, 1]), I32(1)], num_split=3)
    c.run(op, "float32/bad/sum mismatch", [x, I32([1, 2]), I32(1)], num_split=2)
    c.run(op, "float32/bad/sum exceeds with -1", [x, I32([4, -1, 2]), I32(1)], num_split=3)
    c.run(op, "float32/bad/negative size", [x, I32([-2, 7]), I32(1)], num_split=2)
    c.run(op, "float32/bad/num_split != len", [x, I32([1, 4]), I32(1)], num_split=3)
    c.run(op, "float32/bad/axis out of range", [x, I32([1, 4]), I32(2)], num_split=2)
    c.run(op, "float32/bad/sizes rank 2", [x, I32([[1, 4]]), I32(1)], num_split=2)
    c.shape(op, "const sizes and axis", [P(dt, [-1, 7]), I32([2, -1, 3]), I32(1)], num_split=3)
    c.shape(op, "const sizes, -1 with unknown dim", [P(dt, [2, -1]), I32([2, -1, 3]), I32(1)],
            num_split=3)
    c.shape(op, "placeholder sizes", [P(dt, [2, 7]), P("int32", [3]), I32(1)], num_split=3)
    # A Const int8 size_splits aborts TF's shape function (it reads the
    # tensor as int64): only a Placeholder one gets through.
    c.shape(op, "placeholder int8 sizes", [P(dt, [2, 7]), P("int8", [3]), I32(1)], num_split=3)
    c.shape(op, "placeholder axis", [P(dt, [2, 7]), I32([2, 5]), P("int32", [])], num_split=2)
    c.shape(op, "unknown rank", [P(dt, None), I32([2, 5]), I32(0)], num_split=2)
    c.shape(op, "bad/sum mismatch", [P(dt, [-1, 7]), I32([2, 3]), I32(1)], num_split=2)

    op = "Unpack"
    for dt in cpu_types(op):
        c.run(op, "%s/[3,2]/axis 0" % dt, [R(dt, [3, 2])], num=3)
    c.no_kernel(op, lambda dt: ([R(dt, [2, 2])], dict(num=2)))
    dt = "float32"
    x = R(dt, [3, 2, 4])
    c.run(op, "float32/axis 1", [x], num=2, axis=1)
    c.run(op, "float32/axis -1", [x], num=4, axis=-1)
    c.run(op, "float32/axis -3", [x], num=3, axis=-3)
    c.run(op, "float32/rank 1", [R(dt, [3])], num=3)
    c.run(op, "float32/empty other dim", [R(dt, [0, 2])], num=2, axis=1)
    c.run(op, "float32/num 0", [R(dt, [0, 2])], num=0)
    c.run(op, "float32/bad/num mismatch", [x], num=2)
    c.run(op, "float32/bad/axis out of range", [x], num=3, axis=3)
    c.run(op, "float32/bad/axis -4", [x], num=3, axis=-4)
    c.run(op, "float32/bad/scalar", [scalar_of(dt, 1)], num=1)
    c.shape(op, "unknown dims", [P(dt, [3, -1])], num=3)
    c.shape(op, "unknown dim unpacked", [P(dt, [-1, 2])], num=4)
    c.shape(op, "unknown rank", [P(dt, None)], num=2, axis=1)
    c.shape(op, "bad/num mismatch", [P(dt, [3, -1])], num=2)


def gen_broadcast_reverse(c):
    op = "BroadcastTo"
    for dt in cpu_types(op):
        c.run(op, "%s/[3]->[2,3]" % dt, [R(dt, [3]), I32([2, 3])])
    c.no_kernel(op, lambda dt: ([R(dt, [2]), I32([2, 2])], {}))
    for ti in opdef_types(op, "Tidx"):
        c.run(op, "float32/shape %s" % ti, [R("float32", [2, 1]), A([2, 4], ti)])
    dt = "float32"
    for suffix, xs, shape in [("scalar->[2,2]", [], [2, 2]), ("same shape", [2, 3], [2, 3]),
                              ("[1,3]->[2,4,3]", [1, 3], [2, 4, 3]),
                              ("[2,1,1]->[2,3,4]", [2, 1, 1], [2, 3, 4]),
                              ("[1,3]->[0,3]", [1, 3], [0, 3]), ("[0]->[2,0]", [0], [2, 0]),
                              ("scalar->[]", [], []),
                              ("bad/[3]->[2,4]", [3], [2, 4]), ("bad/[2,3]->[3]", [2, 3], [3]),
                              ("bad/[2]->[2,-1]", [2], [2, -1]), ("bad/[2,1]->[3,1]", [2, 1],
                                                                  [3, 1])]:
        c.run(op, "float32/" + suffix, [R(dt, xs), I32(shape)])
    c.run(op, "float32/bad/shape rank 2", [R(dt, [3]), I32([[2, 3]])])
    c.shape(op, "const shape", [P(dt, [-1]), I32([2, 3])])
    c.shape(op, "placeholder shape [3]", [P(dt, [3]), P("int32", [3])])
    c.shape(op, "placeholder shape unknown", [P(dt, [3]), P("int32", [-1])])
    c.shape(op, "unknown rank input", [P(dt, None), I32([2, 3])])
    c.shape(op, "bad/const shape incompatible", [P(dt, [3]), I32([2, 4])])

    op = "ReverseV2"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,3]/axis [1]" % dt, [R(dt, [2, 3]), I32([1])])
    for ti in cpu_types(op, "Tidx"):
        c.run(op, "float32/axis %s" % ti, [R("float32", [2, 3]), A([0], ti)])
    dt = "float32"
    x = R(dt, [2, 3, 4])
    for axis in [[], [-1], [0, 1], [0, 2], [2, 1, 0], [-3]]:
        c.run(op, "float32/rank 3 axis %s" % axis, [x, I32(axis)])
    c.run(op, "float32/empty", [R(dt, [0, 3]), I32([0, 1])])
    c.run(op, "float32/scalar axis []", [scalar_of(dt, 2), I32([])])
    c.run(op, "float32/rank 6", [R(dt, [2, 1, 2, 1, 2, 2]), I32([0, 4, 5])])
    c.run(op, "float32/bad/duplicate axis", [x, I32([1, 1])])
    c.run(op, "float32/bad/duplicate axis 1 and -2", [x, I32([1, -2])])
    c.run(op, "float32/bad/axis out of range", [x, I32([3])])
    c.run(op, "float32/bad/axis -4", [x, I32([-4])])
    c.run(op, "float32/bad/axis rank 2", [x, I32([[0]])])
    c.run(op, "float32/bad/axis scalar", [x, I32(0)])
    c.shape(op, "unknown dims", [P(dt, [-1, 3]), I32([0])])
    c.shape(op, "unknown rank", [P(dt, None), I32([0])])
    c.shape(op, "placeholder axis", [P(dt, [2, 3]), P("int32", [-1])])
    c.shape(op, "axis count exceeds rank (a run-time check)", [P(dt, [2, 3]), P("int32", [3])])


def gen_gather_nd(c):
    op = "GatherNd"
    idx = I32([[0, 1], [2, 3], [1, 0]])
    for dt in cpu_types(op, "Tparams"):
        c.run(op, "%s/[3,4] depth 2" % dt, [R(dt, [3, 4]), idx])
    c.no_kernel(op, lambda dt: ([R(dt, [2, 2]), I32([[0, 1]])], {}), attr="Tparams")
    for ti in cpu_types(op, "Tindices"):
        c.run(op, "float32/indices %s" % ti, [R("float32", [3, 4]), A([[1], [0]], ti)])
    dt = "float32"
    p = R(dt, [3, 4, 2])
    for suffix, ind in [("depth 1", [[2], [0]]), ("depth 2", [[0, 3], [2, 1]]),
                        ("depth 3 (full)", [[0, 3, 1], [2, 1, 0]]),
                        ("batched indices [2,2,1]", [[[1], [2]], [[0], [0]]]),
                        ("batched indices [2,1,3]", [[[1, 1, 1]], [[2, 3, 0]]]),
                        ("single index vector", [1, 2]),
                        ("negative index", [[-1, 0]]),
                        ("out of range", [[3, 0]]),
                        ("out of range inner", [[0, 4]]),
                        ("depth > rank", [[0, 0, 0, 0]])]:
        c.run(op, "float32/" + suffix, [p, I32(ind)])
    c.run(op, "float32/depth 0", [p, np.zeros([2, 0], np.int32)])
    c.run(op, "float32/empty indices", [p, np.zeros([0, 2], np.int32)])
    c.run(op, "float32/empty params dim with empty indices", [R(dt, [0, 3]),
                                                              np.zeros([0, 1], np.int32)])
    c.run(op, "float32/empty params with index", [R(dt, [0, 3]), I32([[0]])])
    c.run(op, "float32/scalar indices", [p, I32(1)])
    for policy in ["DEFAULT", "ERROR", "IGNORE"]:
        c.run(op, "float32/bad_indices_policy %s/in range" % policy, [p, I32([[1, 1]])],
              bad_indices_policy=policy)
        c.run(op, "float32/bad_indices_policy %s/out of range" % policy,
              [p, I32([[1, 1], [5, 0], [0, -1]])], bad_indices_policy=policy)
    c.run(op, "float32/bad_indices_policy FOO", [p, I32([[1, 1]])], bad_indices_policy="FOO")
    c.run(op, "float32/bad/indices float", [p, A([[1.0]], "float32")])
    c.shape(op, "const indices unknown params dims", [P(dt, [-1, 4, -1]), idx])
    c.shape(op, "unknown indices depth", [P(dt, [3, 4, 2]), P("int32", [5, -1])])
    c.shape(op, "unknown params rank", [P(dt, None), P("int32", [5, 2])])
    c.shape(op, "unknown indices rank", [P(dt, [3, 4, 2]), P("int32", None)])
    c.shape(op, "bad/depth > rank", [P(dt, [3, 4]), P("int32", [2, 3])])


def gen_band_topk(c):
    op = "MatrixBandPart"
    for dt in cpu_types(op):
        c.run(op, "%s/[3,4]/lower 1 upper 2" % dt, [R(dt, [3, 4]), I64(1), I64(2)])
    c.no_kernel(op, lambda dt: ([R(dt, [2, 2]), I64(0), I64(0)], {}))
    for ti in opdef_types(op, "Tindex"):
        c.run(op, "float32/Tindex %s" % ti, [R("float32", [4, 3]), A(0, ti), A(1, ti)])
    dt = "float32"
    x = R(dt, [2, 3, 4])
    for lo, up in [(0, 0), (-1, 0), (0, -1), (-1, -1), (2, 0), (0, 3), (3, 4), (-1, 1)]:
        c.run(op, "float32/batch [2,3,4]/lower %d upper %d" % (lo, up), [x, I64(lo), I64(up)])
    c.run(op, "float32/empty", [R(dt, [0, 3, 3]), I64(1), I64(1)])
    c.run(op, "float32/empty matrix", [R(dt, [2, 0, 3]), I64(0), I64(0)])
    c.run(op, "float32/bad/lower > rows", [x, I64(4), I64(0)])
    c.run(op, "float32/bad/upper > cols", [x, I64(0), I64(5)])
    c.run(op, "float32/accepted/lower -2", [x, I64(-2), I64(0)])
    c.run(op, "float32/bad/rank 1", [R(dt, [4]), I64(0), I64(0)])
    c.run(op, "float32/bad/num_lower not scalar", [x, I64([1]), I64(0)])
    c.run(op, "float32/bad/mixed index types", [x, I64(1), I32(0)])
    c.shape(op, "unknown dims", [P(dt, [-1, -1, 4]), I64(1), I64(1)])
    c.shape(op, "unknown rank", [P(dt, None), I64(1), I64(1)])
    c.shape(op, "rank 1 (a run-time check)", [P(dt, [-1]), I64(1), I64(1)])

    op = "TopKV2"
    for dt in cpu_types(op):
        c.run(op, "%s/[2,6]/k 3 ties" % dt, [R(dt, [2, 6], lo=-2, hi=3).astype(npt(dt))
                                              if dt not in FLOATS else
                                              A(np.round(RNG.normal(size=[2, 6]) * 2) / 2, dt),
                                              I32(3)])
    for tk in opdef_types(op, "Tk"):
        c.run(op, "float32/Tk %s" % tk, [R("float32", [2, 5]), A(2, tk)])
    for it in opdef_types(op, "index_type"):
        c.run(op, "float32/index_type %s" % it, [R("float32", [2, 5]), I32(2)], index_type=it)
    dt = "float32"
    ties = A([[3, 1, 3, 2, 3, 1, 2, 0], [0, 0, 0, 0, 0, 0, 0, 0]], dt)
    for srt in [True, False]:
        c.run(op, "float32/ties/sorted=%s" % srt, [ties, I32(5)], sorted=srt)
        c.run(op, "float32/random [3,10] k 4/sorted=%s" % srt, [R(dt, [3, 10]), I32(4)],
              sorted=srt)
    c.run(op, "int32/ties unsorted", [A([5, 1, 5, 5, 2, 5, 0, 1], "int32"), I32(3)], sorted=False)
    c.run(op, "float32/k 0", [R(dt, [2, 4]), I32(0)])
    c.run(op, "float32/k = n", [R(dt, [2, 4]), I32(4)])
    c.run(op, "float32/rank 1", [R(dt, [7]), I32(2)])
    c.run(op, "float32/rank 3", [R(dt, [2, 2, 5]), I32(3)])
    c.run(op, "float32/nan inf -0", [A([[NAN, 1, INF, -INF, -0.0, 0.0, NAN, 2]], dt), I32(5)])
    c.run(op, "float32/empty batch", [R(dt, [0, 4]), I32(2)])
    c.run(op, "float32/empty last dim k 0", [R(dt, [3, 0]), I32(0)])
    c.run(op, "float32/bad/k > n", [R(dt, [2, 4]), I32(5)])
    c.run(op, "float32/bad/k negative", [R(dt, [2, 4]), I32(-1)])
    c.run(op, "float32/bad/scalar input", [scalar_of(dt, 1), I32(1)])
    c.run(op, "float32/bad/k not scalar", [R(dt, [2, 4]), I32([1])])
    c.run(op, "complex64/bad/type not allowed", [R("complex64", [4]), I32(1)])
    c.shape(op, "const k unknown dims", [P(dt, [-1, 6]), I32(3)])
    c.shape(op, "const k unknown last dim", [P(dt, [2, -1]), I32(3)])
    c.shape(op, "placeholder k", [P(dt, [2, 6]), P("int32", [])])
    c.shape(op, "unknown rank", [P(dt, None), I32(3)])
    c.shape(op, "bad/const k > last dim", [P(dt, [-1, 2]), I32(3)])


def gen_identity(c):
    op = "IdentityN"
    for dt in cpu_types(op):
        c.run(op, "%s/one input" % dt, [[R(dt, [2, 3])]])
    c.run(op, "mixed/every type", [[R(dt, [2]) for dt in cpu_types(op)]])
    c.run(op, "mixed/scalar empty and matrix", [[scalar_of("int32", 7), R("float32", [0, 2]),
                                                 R("bool", [2, 2]), R("float16", [3])]])
    c.run(op, "bad/no inputs", [[]])
    c.shape(op, "unknown dims and rank", [[P("float32", [-1, 2]), P("int64", None),
                                           P("bool", [])]])

    for op in ["StopGradient", "PreventGradient", "Snapshot"]:
        for dt in cpu_types(op):
            c.run(op, "%s/[2,3]" % dt, [R(dt, [2, 3])])
        c.no_kernel(op, lambda dt: ([R(dt, [2])], {}))
        c.run(op, "float32/empty", [R("float32", [0, 3])])
        c.run(op, "float32/scalar nan", [scalar_of("float32", NAN)])
        c.shape(op, "unknown dims", [P("float32", [-1, 3])])
        c.shape(op, "unknown rank", [P("float32", None)])
    c.run("PreventGradient", "float32/message", [R("float32", [2])], message="no gradient here")


GROUPS = {
    "nn": [gen_depthwise, gen_conv2d_backprop_input, gen_conv3d, gen_pools, gen_space_batch,
           gen_depth_space, gen_resize, gen_pads],
    "activation": [gen_activation_ops],
    "math": [gen_compare, gen_matmul, gen_einsum, gen_cumsum],
    "reduce": [gen_reduce],
    "array": [gen_shape_ops, gen_fill_like, gen_range, gen_split, gen_broadcast_reverse,
              gen_gather_nd, gen_band_topk, gen_identity],
}


def main():
    global RNG
    only = sys.argv[1:]
    os.makedirs(OUT_DIR, exist_ok=True)
    bugs, crashed_all, notes_all = [], [], []
    for group, gens in GROUPS.items():
        if only and group not in only:
            continue
        # Each group draws from its own stream, so a run of some groups
        # writes the same values as a run of all.
        RNG = np.random.default_rng([SEED, list(GROUPS).index(group)])
        c = Group(group)
        for gen in gens:
            gen(c)
        results, crashed = evaluate_all(c.specs)
        crashed_all += crashed
        cases, shape_cases = [], []
        stats = {}
        for spec, res in zip(c.specs, results):
            if res is None:
                continue
            if "bug" in res:
                bugs.append((spec["name"], res["bug"]))
                continue
            case, notes = res["case"]
            notes_all += ["%s: %s" % (spec["name"], n) for n in notes]
            st = stats.setdefault(spec["op"], [0, 0, 0])
            if spec["kind"] == "shape":
                shape_cases.append(case)
                st[2] += 1
            else:
                cases.append(case)
                st[0 if case["error"] is None else 1] += 1
        path = os.path.join(OUT_DIR, group + ".json")
        with open(path, "w") as f:
            json.dump({"tensorflow": tf.__version__, "device": "CPU", "group": group,
                       "cases": cases, "shape_cases": shape_cases}, f, indent=0)
            f.write("\n")
        print("%s: %d cases, %d shape cases, %d bytes -> %s"
              % (group, len(cases), len(shape_cases), os.path.getsize(path),
                 os.path.relpath(path, ROOT)))
        for op, (ok, err, sh) in stats.items():
            print("  %-24s ok %4d  error %4d  shape %3d" % (op, ok, err, sh))
    for name, text in crashed_all:
        print("CRASHED (left out): %s\n  %s" % (name, text.replace("\n", "\n  ")), file=sys.stderr)
    for n in notes_all:
        if "build:" not in n:
            print("NOTE %s" % n, file=sys.stderr)
    for name, tb in bugs:
        print("BUG %s\n%s" % (name, tb), file=sys.stderr)
    if bugs:
        sys.exit(1)


if __name__ == "__main__":
    main()
