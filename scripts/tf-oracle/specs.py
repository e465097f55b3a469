"""Spec cases answered by TensorFlow 2.21: default values in every number and
bool form TF's text parser accepts or rejects, every DataType of types.proto,
and the messages of the errors TF reports. Writes
tests/data/tf-specs/fidelity.json in the conformance format of
shared/conformance/README.md, every error case marked "exact_message": opreg's
message must be TF's, word for word.

    py=$(scripts/install-tf.sh) && "$py" scripts/tf-oracle/specs.py
"""
import os
import random
import struct
from decimal import Decimal, getcontext

from tf_oracle import build_op, write_json

getcontext().prec = 200
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def f32_from_bits(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def halfway_strings(rng, count):
    """Decimal strings just below, at and just above the midpoint of two
    neighbouring floats: only a correctly rounded parser gets all three."""
    out = []
    for _ in range(count):
        exponent_field = rng.choice([rng.randrange(1, 255), rng.randrange(1, 4), rng.randrange(250, 255), 0])
        bits = (exponent_field << 23) | rng.randrange(0, 1 << 23)
        lo, hi = f32_from_bits(bits), f32_from_bits(bits + 1)
        if hi != hi or hi == float("inf"):
            continue
        mid = (Decimal(lo) + Decimal(hi)) / 2
        ulp = Decimal(hi) - Decimal(lo)
        for delta in (-ulp / 1000000, 0, ulp / 1000000):
            out.append(format(mid + delta, ".%de" % rng.choice([20, 30, 45])))
    return out


def main():
    rng = random.Random(2021)
    ints = ["5", "-5", "+5", "0", "-0", "+0", "00", "-00", "+00", "01", "-01", "+01", "010", "0005",
            "0x10", "0X10", "-0x10", "0b1", "1e3", "1.0", "1.", "5.", "5 ", "5\t", "5 junk", "5junk",
            "5,", "1 # comment", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "2147483648", "- 5", "--5", "+-5",
            "-+5", "5L", "5u", "1_000", "inf", "-", "+", "1-2", "1+2", "99999999999999999999"]
    floats = ["1.5", "-1.5", "+1.5", "1e10", "1E10", "1e+10", "1e-10", ".5", "5.", "-.5", "+.5",
              "1.5f", "1.5F", "1f", "1.5d", "1.5L", "1d5", "1.5e", "1e", "1e+", "1e-", "e5", "e",
              ".", "-.", "+-1", "-+1", "1.2.3", "1..5", "1,5", "1_0", "1_5", "1.5junk",
              "1.5 junk", "1.5 # c", "1.5e5.5",
              "inf", "-inf", "+inf", "Inf", "INF", "iNf", "infinity", "Infinity", "INFINITY",
              "-infinity", "infinit", "infinityx", "inf1", "inf junk", "nan", "NaN", "NAN",
              "-nan", "-NaN", "+nan", "nan1", "nan(123)", "nan()",
              "0x10", "0x1p3", "0x1.8p1", "0X1P3", "0x1P+3", "-0x1p3", "+0x1p3", "0x.8p1",
              "0x1.8", "0x1p-1074", "0x1p-149", "0x1p-150", "0x1.8p-150", "0x1.0000001p-150",
              "0x1P-126", "0x1.fffffep127", "0x1.ffffffp127", "0x1.fffffefp127", "0x1p128",
              "0x1.000001p0", "0x1.000003p0", "0x1.0000010000000000000001p0",
              "0x123456789abcdef0123456p-80", "0x0.00000000000000000000000001p100",
              "0xg", "0x", "-0x", "0x-1", "0x1p", "0x1.8p", "0x1p3f", "0x1p3p3", "0x10 junk",
              "0x1p99999999999999999999", "0x1p-99999999999999999999", "-0x0p0", "0x0",
              "1e39", "-1e39", "1e400", "1e-46", "1e-45", "1.4e-45", "7e-46", "7.1e-46", "1e-40",
              "5e-324", "3.4028235e38", "3.4028236e38",
              "3.40282356779733661637539395458142568448e38", "3.4028235677973366e38",
              "1.17549435e-38", "00.5", "0.5", "0", "00", "-0", "-00", "-0.0", "0.1",
              "16777217", "1.00000005960464477550", "1.0000000596046447755", "1e-0",
              "1E+0005", "9999999999999999999999999", "1000000000000000.5",
              "0.000000000000000000000000000000000000000000001", " 1.5", "1.5\""]
    floats += halfway_strings(rng, 40)
    bools = ["true", "false", "True", "False", "TRUE", "FALSE", "tRue", "1", "0", "t", "f", "T",
             "F", "yes", "no", "2", "-1", "+1", "-0", "1.0", "tru", "truee", "true junk",
             "true1", "1true", "01", "00", " 1", "True False"]
    lists = [("list(int)", x) for x in ["[1, 0x10]", "[1,2,]", "[1 2]", "[-0, 5]", "[00]",
                                       "[+3]", "[1;2]", "[ ]", "[]", "[1]", "1", "[[1]]",
                                       "[9223372036854775808]"]]
    lists += [("list(float)", x) for x in ["[1.5, 0x1p3]", "[inf, nan, -nan]", "[1f, 2]",
                                           "[00.5]", "[1e39, -1e-46]", "[Infinity, 0x1p-149]",
                                           "[1.5, 2.5"]]
    lists += [("list(bool)", x) for x in ["[true, t]", "[1, 0]", "[T]", "[True, False]",
                                          "[true, False, 1]"]]
    strings = ["'a\\q'", "'a\\x'", "'a\\xg'", "'a\\x41'", "'a\\xfff'", "'a\\x100000041'",
               "'a\\777'", "'a\\400'", "'a\\101'", "'a\\8'", "'a\\u12'", "'a\\u00e9'",
               "'a\\u12G4'", "'a\\uD800'", "'a\\U0010FFFF'", "'a\\U00110000'", "'a\\UFFFFFFFF'",
               "'a\\U0001F600'", "'abc", "'a\\'", "\"a\\xfff\"", "'a\\?\\a\\b\\f\\v'",
               "'\\\"'", "\"'\""]
    tensors = ["{ dtype: DT_FLOAT tensor_shape { } float_val: 0x1p3 }",
               "{ dtype: DT_FLOAT tensor_shape { } float_val: 1.5f }",
               "{ dtype: DT_DOUBLE tensor_shape { } double_val: 1000000000000000.5 }",
               "{ dtype: DT_DOUBLE tensor_shape { } double_val: -nan }",
               "{ dtype: DT_INT32 tensor_shape { } int_val: 0x10 }",
               "{ dtype: DT_BOOL tensor_shape { } bool_val: t }",
               "{ dtype: DT_FLOAT8_E4M3FN tensor_shape { } }"]

    attrs = [[("a: int = %s" % x)] for x in ints]
    attrs += [[("a: float = %s" % x)] for x in floats]
    attrs += [[("a: bool = %s" % x)] for x in bools]
    attrs += [[("a: %s = %s" % t)] for t in lists]
    attrs += [[("a: string = %s" % x)] for x in strings]
    attrs += [[("a: tensor = %s" % x)] for x in tensors]

    # Every DataType, by name in sets, arguments and defaults.
    dtypes = ["float4_e2m1fn", "int2", "uint2", "int4", "uint4", "float8_e5m2", "float8_e4m3fn",
              "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz", "bfloat16", "half",
              "float16", "float32", "float64", "qint16", "quint16", "resource", "variant",
              "complex", "uint32", "uint64", "float8", "int1"]
    for d in dtypes:
        attrs.append(["a: {%s}" % d])
        attrs.append(["a: list({float, %s})" % d])
        attrs.append(["a: type = DT_%s" % d.upper()])
    attrs.append(["a: list(type) = [DT_INT2, DT_UINT2, DT_FLOAT4_E2M1FN]"])
    attrs.append(["a: type = DT_FLOAT4_E2M1FN_REF"])
    attrs.append(["a: {float, int32} = DT_INT4"])
    attrs.append(["a: type = 33"])
    attrs.append(["a: type = 34"])

    # Error messages and where they point.
    attrs += [[x] for x in [
        "a: {float, int33}", "a: {float,}", "a: {}", "a: { }", "a: {float int32}",
        "a: {float, int32", "a: {float, int32} junk", "a: list({float, bar})", "a: list(foo)",
        "a: list(int", "a: list(int) x", "a: foo", "a: foo bar", "a: Foo", "a: 3", "a:",
        "a: int >= x", "a: int >= 1.5", "a: int >= ", "a: int >= 99999999999999999999",
        "a: list(int) >= -1", "a: int = ", "a: {'x', 'y\\q'}", "a: {'x', 'y",
        "a: {'x', \"y\\z\"}", "a: {'a\\x'}", "a: {'a\\xg'}", "a: {'a\\777'}", "a: {'a\\u12'}",
        "a: {'a\\uD800'}", "a: {'a\\U00110000'}", "a: {'a\\x100'}", "a: {'x' 'y'}",
        "a: {'x',}", "a: {'x', 3}", "a: {'a\\U12'}", "a: {'a\\u12G4'}", "a: {'a\\U0010FFFG'}",
        "a: {'a\\uDFFF'}", "a: {'a\\U0000D800'}", "a: {'a\\UFFFFFFFF'}", "a: {'a\\U0001F600'}",
        "a: {'a\\x100000041'}", "a: {'a\\x0000000041'}", "a: {'a\\8'}", "a: {'a\\400'}",
        "a: {'a\\u'}", "a: {'a\\U'}", "a: {'a\\X41'}", "a: {'a\\u00e9\\x'}", "a: {'a\\'}",
        "a: {float, list(int32)}", "a: list(list(int))", "a: list({'a'})",
    ]]
    args = [(["T: type"], ["x: T x"], []), ([], ["x: flot"], []), ([], ["x: Ref(flot)"], []),
            ([], ["x: Ref(float"], []), ([], ["x: float)"], []), ([], ["x: N * flot"], []),
            ([], ["x: int33"], []), (["T: type"], ["x: T*2"], []), ([], ["x: float "], []),
            ([], ["x: float junk"], []), ([], ["x: 3"], []), ([], ["x: "], []),
            ([], ["x: *float"], []), (["N: int"], ["x: N * "], []), (["N: int"], ["x: N * 3"], []),
            (["N: int"], ["x: N*float8_e4m3b11fnuz"], []), ([], ["x: Ref(Ref(float))"], []),
            ([], [], ["y: float4_e2m1fn"]), ([], ["x: int2", "y: uint2"], ["z: uint4"])]
    for d in dtypes:
        args.append(([], ["x: %s" % d], []))

    # The angle form `T: <float, int32>` is opreg's own (TF rejects it), so no
    # case of TF's may contain it.
    attrs = [a for a in attrs if not any("<" in x for x in a)]
    cases = []
    for spec in attrs:
        cases.append(([*spec], [], []))
    cases += args
    out = []
    for i, (a, inp, outp) in enumerate(cases):
        name = "Fidelity%d" % i
        expect = build_op(name, a, inp, outp)
        if "error" in expect:
            expect["exact_message"] = True
        out.append({"id": "fidelity-%d" % i, "name": name, "source": "specs.py",
                    "attrs": a, "inputs": inp, "outputs": outp, "flags": [],
                    "deprecated": None, "doc": None, "control_outputs": [], "expect": expect})
    write_json(os.path.join(ROOT, "tests", "data", "tf-specs", "fidelity.json"), out)


if __name__ == "__main__":
    main()
