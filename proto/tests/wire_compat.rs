//! Wire compatibility with TensorFlow: TF 2.21's own serialized registry
//! (`../shared/conformance/*.pb`) decodes and re-encodes byte for byte, which
//! shows that every field number, type and the field order match TF's.

use std::path::PathBuf;

use opreg_proto::{DataType, GraphDef, KernelList, OpList, TextFormat};
use prost::Message;

fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

fn read(rel: &str) -> Vec<u8> {
    let path = shared_dir().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn tf_op_list_round_trips_byte_for_byte() {
    let bytes = read("conformance/tf_2_21_ops.pb");
    let list = OpList::decode(bytes.as_slice()).unwrap();
    assert_eq!(list.op.len(), 1908);
    assert_eq!(list.encode_to_vec(), bytes);
}

#[test]
fn tf_kernel_list_round_trips_byte_for_byte() {
    let bytes = read("conformance/tf_2_21_kernels.pb");
    let list = KernelList::decode(bytes.as_slice()).unwrap();
    assert_eq!(list.kernel.len(), 11000);
    assert_eq!(list.encode_to_vec(), bytes);
}

#[test]
fn shared_graphs_binary_and_text_agree() {
    let graphs = shared_dir().join("graphs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&graphs).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("graph.pb").exists() {
            continue;
        }
        let bytes = std::fs::read(dir.join("graph.pb")).unwrap();
        let from_binary = GraphDef::decode(bytes.as_slice()).unwrap();
        assert_eq!(
            from_binary.encode_to_vec().len(),
            bytes.len(),
            "{}",
            dir.display()
        );
        let text = std::fs::read_to_string(dir.join("graph.pbtxt")).unwrap();
        let from_text =
            GraphDef::from_pbtxt(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(from_binary, from_text, "{}", dir.display());
        let rewritten = GraphDef::from_pbtxt(&from_binary.to_pbtxt()).unwrap();
        assert_eq!(rewritten, from_binary, "{}", dir.display());
        seen += 1;
    }
    assert!(seen >= 7, "expected the shared graphs, found {seen}");
}

#[test]
fn op_list_text_round_trip() {
    let bytes = read("conformance/tf_2_21_ops.pb");
    let list = OpList::decode(bytes.as_slice()).unwrap();
    let text = list.to_pbtxt();
    assert_eq!(OpList::from_pbtxt(&text).unwrap(), list);
}

#[test]
fn malformed_inputs_are_errors() {
    assert!(OpList::decode(&[0x0a, 0xff, 0xff][..]).is_err());
    let err = GraphDef::from_pbtxt("node { name: \"a\" op: }").unwrap_err();
    assert!(err.to_string().contains("tensorflow.GraphDef"), "{err}");
    assert_eq!(DataType::try_from(1).unwrap(), DataType::DtFloat);
}

#[test]
fn pbtxt_printer_writes_what_tensorflow_wrote() {
    let graphs = shared_dir().join("graphs");
    let mut compared = 0;
    for entry in std::fs::read_dir(&graphs).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("graph.pbtxt")) else {
            continue;
        };
        let graph = GraphDef::from_pbtxt(&text).unwrap();
        let ours = graph.to_pbtxt();
        if ours != text {
            let line = ours
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{}: first difference at line {}:\n  ours: {:?}\n  TF's: {:?}",
                dir.display(),
                line + 1,
                ours.lines().nth(line),
                text.lines().nth(line)
            );
        }
        compared += 1;
    }
    assert!(compared >= 7);
}
