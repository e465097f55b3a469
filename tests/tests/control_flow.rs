//! Control flow, functions and TensorLists.
//!
//! - Graphs made by TensorFlow 2.21 (`tests/data/tf-control-flow`, from
//!   `scripts/tf-oracle/control_flow.py`): counted, zero-iteration,
//!   data-dependent and nested loops, conds in loops, a loop on an untaken
//!   branch, conds whose branches use many kinds of ops, TensorArrays in
//!   loops, `Case`, functions calling functions and Keras GRU/LSTM layers,
//!   each in TF 1 form (Enter/Exit/Switch/Merge) and TF 2 form
//!   (While/If/Case with a function library), all matching TF's outputs.
//! - Hand-made graphs: loop limits, dead fetches, frame validation, attr
//!   substitution in functions, library errors.

use std::path::PathBuf;
use std::time::Duration;

use opreg_runtime::{Graph, GraphError, RunError, Session, SessionOptions};
use opreg_tests::graphs::{compare_model, load};
use registry_core::proto::{GraphDef, TextFormat};
use registry_core::tensor::Tensor;

fn cases() -> Vec<PathBuf> {
    let root = opreg_tests::workspace_root().join("tests/data/tf-control-flow");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("io.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn tensorflow_control_flow_graphs_match() {
    kernels_cpu::link();
    let cases = cases();
    assert!(cases.len() >= 28, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for dir in &cases {
        let case = load(dir).unwrap();
        let result = (|| -> Result<f64, String> {
            let graph = Graph::from_file(dir.join("graph.pbtxt")).map_err(|e| e.to_string())?;
            let session = Session::new(graph);
            let feeds: Vec<(&str, Tensor)> = case.feed_pairs();
            let fetches: Vec<&str> = case.fetch_names();
            let outputs = session.run(&feeds, &fetches).map_err(|e| e.to_string())?;
            let mut worst: f64 = 0.0;
            for (fetch, ours) in case.fetches.iter().zip(&outputs) {
                worst = worst.max(compare_model(&fetch.name, ours, &fetch.tensor)?);
            }
            // A second run of the same session (cached plans, function
            // instances and kernels) gives the same values.
            let again = session.run(&feeds, &fetches).map_err(|e| e.to_string())?;
            if again != outputs {
                return Err("a second run differs".into());
            }
            Ok(worst)
        })();
        match result {
            Ok(worst) => eprintln!("{}: ok (worst error / scale {worst:e})", case.name),
            Err(e) => failures.push(format!("{}: {e}", case.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lstm_while_model_matches_tensorflow() {
    kernels_cpu::link();
    let m = opreg_tests::graphs::shared_model("lstm_while");
    let graph = Graph::from_file(m.dir.join("graph.pb")).unwrap();
    let session = Session::new(graph);
    let feeds: Vec<(&str, Tensor)> = m.feed_pairs();
    let fetches: Vec<&str> = m.fetch_names();
    let outputs = session.run(&feeds, &fetches).unwrap();
    for (fetch, ours) in m.fetches.iter().zip(&outputs) {
        compare_model(&fetch.name, ours, &fetch.tensor).unwrap();
    }
}

fn graph(text: &str) -> Result<Graph, GraphError> {
    Graph::new(GraphDef::from_pbtxt(text).unwrap())
}

/// `i = 0; while i < limit: i += step` in TF 1 form, with `limit` and
/// `step` constants.
fn counting_loop(limit: i32, step: i32) -> String {
    format!(
        r#"
  node {{ name: "zero" op: "Const" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
         attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{}} int_val: 0 }} }} }} }}
  node {{ name: "enter" op: "Enter" input: "zero" attr {{ key: "T" value {{ type: DT_INT32 }} }}
         attr {{ key: "frame_name" value {{ s: "count" }} }} attr {{ key: "parallel_iterations" value {{ i: 3 }} }} }}
  node {{ name: "merge" op: "Merge" input: "enter" input: "next"
         attr {{ key: "T" value {{ type: DT_INT32 }} }} attr {{ key: "N" value {{ i: 2 }} }} }}
  node {{ name: "limit" op: "Const" input: "^merge" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
         attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{}} int_val: {limit} }} }} }} }}
  node {{ name: "less" op: "Less" input: "merge" input: "limit" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
  node {{ name: "cond" op: "LoopCond" input: "less" }}
  node {{ name: "switch" op: "Switch" input: "merge" input: "cond" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
  node {{ name: "body" op: "Identity" input: "switch:1" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
  node {{ name: "step" op: "Const" input: "^body" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
         attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{}} int_val: {step} }} }} }} }}
  node {{ name: "add" op: "AddV2" input: "body" input: "step" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
  node {{ name: "next" op: "NextIteration" input: "add" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
  node {{ name: "exit" op: "Exit" input: "switch" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
"#
    )
}

fn scalar_i32(t: &Tensor) -> i32 {
    t.as_slice::<i32>().unwrap()[0]
}

#[test]
fn a_tf1_loop_counts_and_stops_at_its_limit() {
    let session = Session::new(graph(&counting_loop(10, 3)).unwrap());
    let out = session.run(&[], &["exit"]).unwrap();
    assert_eq!(scalar_i32(&out[0]), 12);
    // Zero iterations: the Exit gets the Enter's value.
    let session = Session::new(graph(&counting_loop(-1, 3)).unwrap());
    assert_eq!(scalar_i32(&session.run(&[], &["exit"]).unwrap()[0]), 0);
}

#[test]
fn a_loop_that_never_ends_is_stopped_by_the_iteration_limit() {
    let options = SessionOptions {
        max_loop_iterations: Some(50),
        ..Default::default()
    };
    let session = Session::with_options(graph(&counting_loop(1000, 1)).unwrap(), options);
    let error = session.run(&[], &["exit"]).unwrap_err();
    assert!(
        matches!(error, RunError::LoopLimit { iterations: 50, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("loop 'count'"), "{error}");
    // Within the limit it runs.
    let options = SessionOptions {
        max_loop_iterations: Some(1000),
        ..Default::default()
    };
    let session = Session::with_options(graph(&counting_loop(1000, 1)).unwrap(), options);
    assert_eq!(scalar_i32(&session.run(&[], &["exit"]).unwrap()[0]), 1000);
}

#[test]
fn a_loop_that_runs_too_long_is_stopped_by_the_timeout() {
    let options = SessionOptions {
        max_loop_iterations: None,
        loop_timeout: Some(Duration::from_millis(20)),
        ..Default::default()
    };
    let session = Session::with_options(graph(&counting_loop(i32::MAX, 1)).unwrap(), options);
    let error = session.run(&[], &["exit"]).unwrap_err();
    assert!(error.to_string().contains("per loop"), "{error}");
}

#[test]
fn fetching_a_dead_tensor_fails() {
    // switch:0 is dead once the loop runs its first iteration... fetch the
    // untaken output of a plain Switch instead.
    let session = Session::new(
        graph(
            r#"
  node { name: "x" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
  node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
  node { name: "switch" op: "Switch" input: "x" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "neg" op: "Neg" input: "switch:1" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "abs" op: "Abs" input: "switch" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "merge" op: "Merge" input: "neg" input: "abs"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
"#,
        )
        .unwrap(),
    );
    let yes = Tensor::scalar(true);
    let out = session
        .run(&[("p", yes.clone())], &["merge", "merge:1", "neg"])
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [-2.0]);
    assert_eq!(scalar_i32(&out[1]), 0);
    let error = session.run(&[("p", yes)], &["abs"]).unwrap_err();
    assert!(error.is_dead_fetch(), "{error}");
    let out = session
        .run(&[("p", Tensor::scalar(false))], &["merge", "merge:1"])
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [2.0]);
    assert_eq!(scalar_i32(&out[1]), 1);
}

#[test]
fn frames_are_checked_before_running() {
    // An input from inside the loop used outside it without an Exit.
    let text = counting_loop(10, 1)
        + r#"
  node { name: "leak" op: "Identity" input: "add" input: "^zero" attr { key: "T" value { type: DT_INT32 } } }
"#;
    let error = graph(&text).unwrap_err();
    assert!(
        matches!(&error, GraphError::ControlFlow { node, .. } if node == "leak"),
        "{error}"
    );
    assert!(error.to_string().contains("different frames"), "{error}");
    // A back edge that does not end at a Merge.
    let text = counting_loop(10, 1)
        + r#"
  node { name: "bad" op: "Identity" input: "next" attr { key: "T" value { type: DT_INT32 } } }
"#;
    let error = graph(&text).unwrap_err();
    assert!(error.to_string().contains("must end at a Merge"), "{error}");
    // An Exit outside any loop.
    let error = graph(
        r#"
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "exit" op: "Exit" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "merge" op: "Merge" input: "exit" attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 1 } } }
"#,
    )
    .unwrap_err();
    assert!(error.to_string().contains("not inside a loop"), "{error}");
    // Fetching from inside a loop.
    let session = Session::new(graph(&counting_loop(10, 1)).unwrap());
    let error = session.run(&[], &["add"]).unwrap_err();
    assert!(
        error.to_string().contains("inside loop frame 'count'"),
        "{error}"
    );
}

/// A library whose `Scale` is generic in `T` (`$T` placeholders), called
/// with two types, and `Twice` calls it (a function calling a function).
const GENERIC_LIBRARY: &str = r#"
  function {
    signature {
      name: "Scale"
      input_arg { name: "x" type_attr: "T" }
      output_arg { name: "y" type_attr: "T" }
      attr { name: "T" type: "type" }
    }
    node_def { name: "k" op: "Const"
               attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 3 } } } }
    node_def { name: "k_cast" op: "Cast" input: "k:output:0"
               attr { key: "SrcT" value { type: DT_INT32 } } attr { key: "DstT" value { placeholder: "T" } } }
    node_def { name: "mul" op: "Mul" input: "x" input: "k_cast:y:0" attr { key: "T" value { placeholder: "T" } } }
    ret { key: "y" value: "mul:z:0" }
  }
  function {
    signature {
      name: "Twice"
      input_arg { name: "x" type_attr: "T" }
      output_arg { name: "y" type_attr: "T" }
      attr { name: "T" type: "type" }
    }
    node_def { name: "a" op: "Scale" input: "x" attr { key: "T" value { placeholder: "T" } } }
    node_def { name: "b" op: "Scale" input: "a:y:0" attr { key: "T" value { placeholder: "T" } } }
    ret { key: "y" value: "b:y:0" }
  }
"#;

#[test]
fn functions_are_instantiated_per_attr_set() {
    kernels_cpu::link();
    let text = format!(
        r#"
  node {{ name: "i" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_INT32 }} }} }}
  node {{ name: "f" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
  node {{ name: "twice_i" op: "Twice" input: "i" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
  node {{ name: "twice_f" op: "Twice" input: "f" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}
  node {{ name: "call_f" op: "PartitionedCall" input: "f"
         attr {{ key: "Tin" value {{ list {{ type: DT_FLOAT }} }} }}
         attr {{ key: "Tout" value {{ list {{ type: DT_FLOAT }} }} }}
         attr {{ key: "f" value {{ func {{ name: "Scale" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }} }} }} }}
  library {{ {GENERIC_LIBRARY} }}
"#
    );
    let graph = graph(&text).unwrap();
    assert_eq!(graph.library().names(), ["Scale", "Twice"]);
    let session = Session::new(graph);
    let feeds = [
        ("i", Tensor::from_vec([2], vec![1i32, -2]).unwrap()),
        ("f", Tensor::from_vec([2], vec![0.5f32, 2.0]).unwrap()),
    ];
    let out = session
        .run(&feeds, &["twice_i", "twice_f", "call_f"])
        .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [9, -18]);
    assert_eq!(out[1].as_slice::<f32>().unwrap(), [4.5, 18.0]);
    assert_eq!(out[2].as_slice::<f32>().unwrap(), [1.5, 6.0]);
    // A call whose attr does not fit the function: a clear error.
    let bad = text.replace(
        r#"op: "Twice" input: "f" attr { key: "T" value { type: DT_FLOAT } }"#,
        r#"op: "Twice" input: "f" attr { key: "T" value { type: DT_INT32 } }"#,
    );
    let error = Graph::new(GraphDef::from_pbtxt(&bad).unwrap()).unwrap_err();
    assert!(error.to_string().contains("twice_f"), "{error}");
}

#[test]
fn library_errors_are_clear() {
    let error = graph(
        r#"
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  library { function { signature { name: "Abs" } } }
"#,
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Cannot add function 'Abs' because an op with the same name already exists"),
        "{error}"
    );
    let error = graph(
        r#"
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  library { function { signature { name: "F" } } function { signature { name: "F" } } }
"#,
    )
    .unwrap_err();
    assert!(error.to_string().contains("defines 'F' twice"), "{error}");
    // A call of a function whose body reads a missing name.
    let session = Session::new(
        graph(
            r#"
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "call" op: "Broken" input: "x" }
  library { function {
    signature { name: "Broken" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "b" type: DT_FLOAT } }
    node_def { name: "n" op: "Neg" input: "nowhere:y:0" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "b" value: "n:y:0" }
  } }
"#,
        )
        .unwrap(),
    );
    let error = session
        .run(&[("x", Tensor::scalar(1f32))], &["call"])
        .unwrap_err();
    assert!(error.to_string().contains("reads 'nowhere:y:0'"), "{error}");
}

#[test]
fn a_while_op_that_never_ends_is_stopped() {
    kernels_cpu::link();
    let text = r#"
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "loop" op: "While" input: "x"
         attr { key: "T" value { list { type: DT_INT32 } } }
         attr { key: "cond" value { func { name: "Always" } } }
         attr { key: "body" value { func { name: "Inc" } } } }
  library {
    function {
      signature { name: "Always" input_arg { name: "i" type: DT_INT32 } output_arg { name: "c" type: DT_BOOL } }
      node_def { name: "t" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
                 attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }
      ret { key: "c" value: "t:output:0" }
    }
    function {
      signature { name: "Inc" input_arg { name: "i" type: DT_INT32 } output_arg { name: "j" type: DT_INT32 } }
      node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
      node_def { name: "add" op: "AddV2" input: "i" input: "one:output:0" attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "j" value: "add:z:0" }
    }
  }
"#;
    let options = SessionOptions {
        max_loop_iterations: Some(100),
        ..Default::default()
    };
    let session = Session::with_options(graph(text).unwrap(), options);
    let error = session
        .run(&[("x", Tensor::scalar(0i32))], &["loop"])
        .unwrap_err();
    assert!(error.to_string().contains("ran 100 iterations"), "{error}");
}

/// `acc = [1.0]; while size(acc) < 2^20: acc = concat(acc, acc)`: the
/// loop variable doubles every iteration (TF 1 style).
const DOUBLING_LOOP: &str = r#"
  node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 } } } }
  node { name: "enter" op: "Enter" input: "one" attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "frame_name" value { s: "grow" } } }
  node { name: "merge" op: "Merge" input: "enter" input: "next"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
  node { name: "size" op: "Size" input: "merge"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
  node { name: "limit" op: "Const" input: "^merge" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1048576 } } } }
  node { name: "less" op: "Less" input: "size" input: "limit" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "cond" op: "LoopCond" input: "less" }
  node { name: "switch" op: "Switch" input: "merge" input: "cond" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "body" op: "Identity" input: "switch:1" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "axis" op: "Const" input: "^body" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
  node { name: "concat" op: "ConcatV2" input: "body" input: "body" input: "axis"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } }
         attr { key: "Tidx" value { type: DT_INT32 } } }
  node { name: "next" op: "NextIteration" input: "concat" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "exit" op: "Exit" input: "switch" attr { key: "T" value { type: DT_FLOAT } } }
"#;

#[test]
fn the_memory_limit_holds_inside_loops() {
    kernels_cpu::link();
    // A TensorList written in a TF 1 loop: the list grows every iteration.
    let dir = opreg_tests::workspace_root().join("tests/data/tf-control-flow/tensor_array_loop_v1");
    let case = load(&dir).unwrap();
    let feeds: Vec<(&str, Tensor)> = case.feed_pairs();
    let fetches: Vec<&str> = case.fetch_names();
    let run = |limit: Option<u64>| {
        let options = SessionOptions {
            max_memory_bytes: limit,
            ..Default::default()
        };
        let graph = Graph::from_file(dir.join("graph.pbtxt")).unwrap();
        Session::with_options(graph, options).run(&feeds, &fetches)
    };
    let unlimited = run(None).unwrap();
    assert_eq!(run(Some(1 << 20)).unwrap(), unlimited);
    let error = run(Some(100)).unwrap_err();
    let RunError::MemoryLimit { bytes, limit, .. } = &error else {
        panic!("{error}");
    };
    assert!(*bytes > 100 && *limit == 100, "{error}");
    assert!(
        error
            .to_string()
            .contains("over the session's limit of 100 bytes")
    );
    // A loop variable that doubles each iteration: stopped inside the loop,
    // at the kernel that went over, not after the loop.
    let run = |limit: Option<u64>| {
        let options = SessionOptions {
            max_memory_bytes: limit,
            ..Default::default()
        };
        Session::with_options(graph(DOUBLING_LOOP).unwrap(), options).run(&[], &["exit"])
    };
    assert_eq!(run(None).unwrap()[0].num_elements(), 1 << 20);
    let error = run(Some(3 << 19)).unwrap_err();
    let RunError::MemoryLimit { node, bytes, .. } = &error else {
        panic!("{error}");
    };
    // 1.5 MiB: the concat that makes 2 MiB (2^19 f32) goes over; its
    // 1 MiB input was its last use, so it no longer counts.
    assert_eq!(node, "concat", "{error}");
    assert_eq!(*bytes, 2 << 20, "{error}");
}
