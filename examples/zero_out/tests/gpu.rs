//! The crate's GPU kernels (the `cuda` feature): the CUDA C their
//! registrations attach compiles with NVRTC (on any machine with the NVRTC
//! library, GPU or not; without it the test prints `skipped:`, or fails
//! under `OPREG_REQUIRE_NVRTC=1`), and on a machine with a GPU a graph
//! mixing them with standard ops gives the CPU kernels' results (ignored
//! unless asked for with `--ignored`).
#![cfg(feature = "cuda")]

use opreg_cuda::check_compiles;
// The crate under test: its ops and kernels are linked by naming it.
use opreg_runtime::{Graph, Session, SessionOptions};
use registry_core::proto::{GraphDef, TextFormat};
use registry_core::tensor::Tensor;
use zero_out as _;

#[test]
fn every_gpu_kernel_source_compiles() {
    let sources: Vec<_> = registry_core::KernelRegistry::global()
        .all()
        .into_iter()
        .filter(|r| r.device == "GPU" && ["ZeroOut", "WeightedSum"].contains(&r.op))
        .flat_map(|r| r.kernel_sources().unwrap())
        .collect();
    assert_eq!(sources.len(), 4, "ZeroOut and WeightedSum for 3 types");
    for source in &sources {
        match check_compiles(source) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh");
                return;
            }
            Err(log) => panic!("{} does not compile:\n{log}", source.key()),
        }
    }
}

#[test]
fn gpu_kernels_are_registered_for_the_ops() {
    let kernels = registry_core::KernelRegistry::global().all();
    let gpu = |op: &str| {
        kernels
            .iter()
            .filter(|r| r.op == op && r.device == "GPU")
            .count()
    };
    assert_eq!(gpu("ZeroOut"), 1);
    assert_eq!(gpu("WeightedSum"), 3);
}

/// x -> ZeroOut -> Cast... kept to the crate's ops and AddV2/Abs: y =
/// WeightedSum([Abs(a), b], w) and z = ZeroOut(i).
const GRAPH: &str = r#"
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "abs" op: "Abs" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "WeightedSum" input: "abs" input: "b" input: "w"
       attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "normalize" value { b: true } } }
node { name: "z" op: "ZeroOut" input: "i" }
"#;

#[test]
#[ignore = "needs a GPU"]
fn a_mixed_graph_on_the_gpu_matches_the_cpu() {
    kernels_cpu::link();
    kernels_cuda::link();
    if let Err(why) = kernels_cuda::gpu_available() {
        panic!("this test needs a GPU: {why}");
    }
    let def = GraphDef::from_pbtxt(GRAPH).unwrap();
    let feeds = [
        (
            "a",
            Tensor::from_vec([2, 3], vec![-1.0f32, 2.0, -3.0, 4.0, -5.0, 6.0]).unwrap(),
        ),
        ("b", Tensor::from_vec([2, 3], vec![0.5f32; 6]).unwrap()),
        ("w", Tensor::from_vec([2], vec![3.0f32, 1.0]).unwrap()),
        ("i", Tensor::from_vec([4], vec![7i32, 8, 9, 10]).unwrap()),
    ];
    let cpu = Session::new(Graph::new(def.clone()).unwrap());
    let gpu = Session::with_options(
        Graph::new(def).unwrap(),
        SessionOptions {
            devices: vec!["GPU".into(), "CPU".into()],
            ..Default::default()
        },
    );
    let expected = cpu.run(&feeds, &["y", "z"]).unwrap();
    let actual = gpu.run(&feeds, &["y", "z"]).unwrap();
    assert_eq!(gpu.placement("y").as_deref(), Some("GPU"));
    assert_eq!(gpu.placement("z").as_deref(), Some("GPU"));
    assert_eq!(actual, expected);
    assert_eq!(actual[1].as_slice::<i32>().unwrap(), &[7, 0, 0, 0]);
}
