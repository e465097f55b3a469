"""GraphDef versions and op deprecation as TensorFlow 2.21 enforces them when
it loads a graph (tf.graph_util.import_graph_def, the C API's
TF_GraphImportGraphDef, and a Session on the imported graph): versions.producer
against the minimum producer, versions.min_consumer and bad_consumers against
TF's GraphDef version, and ops deprecated at a version the graph's producer has
reached. Writes tests/data/tf-graphs/versions.json: each case a graph in text
form with TF's outcome (loaded, or its error message).

    py=$(scripts/install-tf.sh) && "$py" scripts/tf-oracle/versions.py
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.python.framework import op_def_registry, versions  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def placeholder(name):
    return 'node { name: "%s" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }' % name


CONST = ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
         'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }')
# AdjustContrast: deprecated at GraphDef version 2 in TF's registry.
DEPRECATED = " ".join([placeholder("i"), placeholder("f"), placeholder("lo"), placeholder("hi"),
                       'node { name: "a" op: "AdjustContrast" input: "i" input: "f" input: "lo" '
                       'input: "hi" attr { key: "T" value { type: DT_FLOAT } } }'])


def outcome(text):
    graph = graph_pb2.GraphDef()
    text_format.Parse(text, graph)
    try:
        with tf.Graph().as_default():
            tf.graph_util.import_graph_def(graph, name="")
        return {"ok": True}
    except Exception as e:  # noqa: BLE001 - TF's message is the answer
        return {"error": str(e)}


def main():
    v = versions.GRAPH_DEF_VERSION
    cases = []
    for body, what in [(CONST, "const"), (DEPRECATED, "deprecated op")]:
        for ver in ["", "versions { }", "versions { producer: 1 }", "versions { producer: 2 }",
                    "versions { producer: 3 }", "versions { producer: -1 }",
                    "versions { producer: -7 min_consumer: 99999 }",
                    "versions { producer: %d }" % v, "versions { producer: %d }" % (v + 1000),
                    "versions { producer: 10 min_consumer: %d }" % v,
                    "versions { producer: 10 min_consumer: %d }" % (v + 1),
                    "versions { producer: 10 bad_consumers: %d }" % v,
                    "versions { producer: 10 bad_consumers: 3 bad_consumers: %d }" % v,
                    "versions { producer: 10 bad_consumers: %d }" % (v - 1),
                    "versions { producer: 1 min_consumer: %d bad_consumers: %d }" % (v + 5, v)]:
            text = body + " " + ver
            cases.append({"what": what, "graph_pbtxt": text, "expect": outcome(text)})
    dep = op_def_registry.get("AdjustContrast").deprecation
    path = os.path.join(ROOT, "tests", "data", "tf-graphs", "versions.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "graph_def_version": v,
                   "min_producer": versions.GRAPH_DEF_VERSION_MIN_PRODUCER,
                   "deprecated_op": {"name": "AdjustContrast", "version": dep.version,
                                     "explanation": dep.explanation},
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), path))


if __name__ == "__main__":
    main()
