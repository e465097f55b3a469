//! TF 1 control flow's static structure ([`ControlFlow`]): the loop frame
//! of every node (TF's `BuildControlFlowInfo`), checked before anything
//! runs. Values enter a loop's frame through `Enter` (a frame per
//! `frame_name` within its parent frame), leave it through `Exit`, and go
//! from one iteration to the next through `NextIteration` into a `Merge`.

use crate::{Graph, GraphError};
use registry_core::attr::NodeAttrs;

/// The ops that make TF 1 control flow.
pub const CONTROL_FLOW_OPS: &[&str] = &[
    "Enter",
    "Exit",
    "Switch",
    "_SwitchN",
    "Merge",
    "NextIteration",
    "LoopCond",
];

/// The index of a frame in [`ControlFlow::frames`]; the root frame (outside
/// every loop) is 0.
pub type FrameId = usize;

/// One loop frame: the nodes of a `tf.while_loop` (of one level of
/// nesting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The `frame_name` of its `Enter` nodes (`""` for the root frame).
    pub name: String,
    /// The enclosing frame (`None` for the root).
    pub parent: Option<FrameId>,
    /// The most iterations that may run at once (the first `Enter`'s
    /// `parallel_iterations`).
    pub parallel_iterations: u32,
    /// The `Enter` nodes into it, as indices into [`Graph::nodes`].
    pub enters: Vec<usize>,
    /// Its `Exit` nodes.
    pub exits: Vec<usize>,
}

/// The loop frames of a graph and the frame of each node.
///
/// ```
/// use opreg_runtime::Graph;
/// use registry_core::proto::{GraphDef, TextFormat};
/// # use opreg_standard_ops as _; // the ops used below
///
/// // i = 0; while i < 3: i += 1  (TF 1 style)
/// let graph = Graph::new(GraphDef::from_pbtxt(r#"
///   node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
///          attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
///   node { name: "enter" op: "Enter" input: "zero" attr { key: "T" value { type: DT_INT32 } }
///          attr { key: "frame_name" value { s: "loop" } } }
///   node { name: "merge" op: "Merge" input: "enter" input: "next"
///          attr { key: "T" value { type: DT_INT32 } } attr { key: "N" value { i: 2 } } }
///   node { name: "three" op: "Const" input: "^merge" attr { key: "dtype" value { type: DT_INT32 } }
///          attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 3 } } } }
///   node { name: "less" op: "Less" input: "merge" input: "three" attr { key: "T" value { type: DT_INT32 } } }
///   node { name: "cond" op: "LoopCond" input: "less" }
///   node { name: "switch" op: "Switch" input: "merge" input: "cond" attr { key: "T" value { type: DT_INT32 } } }
///   node { name: "body" op: "Identity" input: "switch:1" attr { key: "T" value { type: DT_INT32 } } }
///   node { name: "one" op: "Const" input: "^body" attr { key: "dtype" value { type: DT_INT32 } }
///          attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
///   node { name: "add" op: "AddV2" input: "body" input: "one" attr { key: "T" value { type: DT_INT32 } } }
///   node { name: "next" op: "NextIteration" input: "add" attr { key: "T" value { type: DT_INT32 } } }
///   node { name: "exit" op: "Exit" input: "switch" attr { key: "T" value { type: DT_INT32 } } }
/// "#).unwrap()).unwrap();
/// let flow = graph.control_flow().unwrap();
/// let frame = flow.frame_of(graph.index_of("add").unwrap());
/// assert_eq!(flow.frames()[frame].name, "loop");
/// assert_eq!(flow.frame_of(graph.index_of("zero").unwrap()), 0); // the root frame
/// // Exit's output is back in the root frame.
/// assert_eq!(flow.output_frame(graph.index_of("exit").unwrap()), 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlFlow {
    frames: Vec<Frame>,
    frame_of: Vec<FrameId>,
}

impl ControlFlow {
    /// The frames; index 0 is the root frame.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The frame node `node` runs in (an `Enter`'s is the frame it enters).
    pub fn frame_of(&self, node: usize) -> FrameId {
        self.frame_of[node]
    }

    /// The frame node `node`'s outputs are in: its own, except for an
    /// `Exit`, whose outputs are in the enclosing frame.
    pub fn output_frame(&self, node: usize) -> FrameId {
        self.output_frame_with(node, None)
    }

    fn output_frame_with(&self, node: usize, op: Option<&str>) -> FrameId {
        let frame = self.frame_of[node];
        if op == Some("Exit") || (op.is_none() && self.frames[frame].exits.contains(&node)) {
            self.frames[frame].parent.unwrap_or(0)
        } else {
            frame
        }
    }

    /// The frame's name for messages: `'name'`, or `the root frame`.
    pub fn describe(&self, frame: FrameId) -> String {
        if frame == 0 {
            "the root frame".to_owned()
        } else {
            format!("loop frame '{}'", self.frames[frame].name)
        }
    }

    /// Assigns every node of `graph` its frame and checks the structure:
    /// each node's inputs (data and control) come from one frame, `Exit`
    /// and `NextIteration` are inside a loop, an `Enter` names its frame,
    /// every `NextIteration` feeds only `Merge`s of its own frame, and every
    /// loop `Merge` also has an input from outside the back edge. `None`
    /// when the graph has no control flow op.
    pub(crate) fn analyze(graph: &Graph) -> Result<Option<Self>, GraphError> {
        let nodes = graph.nodes();
        if !nodes
            .iter()
            .any(|n| CONTROL_FLOW_OPS.contains(&n.def.op.as_str()))
        {
            return Ok(None);
        }
        let mut flow = ControlFlow {
            frames: vec![Frame {
                name: String::new(),
                parent: None,
                parallel_iterations: 1,
                enters: Vec::new(),
                exits: Vec::new(),
            }],
            frame_of: vec![0; nodes.len()],
        };
        let error = |node: usize, message: String| GraphError::ControlFlow {
            node: nodes[node].def.name.clone(),
            op: nodes[node].def.op.clone(),
            message,
        };
        // Nodes are in topological order (back edges aside), so every
        // input's frame is known when a node is reached.
        for (i, node) in nodes.iter().enumerate() {
            let mut sources = node
                .inputs
                .iter()
                .enumerate()
                .filter(|&(k, _)| !graph.is_back_edge(i, k))
                .map(|(_, e)| e.node)
                .chain(node.control_inputs.iter().copied());
            let first = sources.next();
            let in_frame = match first {
                Some(s) => flow.output_frame_with(s, Some(nodes[s].def.op.as_str())),
                None => 0,
            };
            if let Some(first) = first {
                for s in sources {
                    let frame = flow.output_frame_with(s, Some(nodes[s].def.op.as_str()));
                    if frame != in_frame {
                        return Err(error(
                            i,
                            format!(
                                "its inputs come from different frames: '{}' from {} and '{}' from {} \
                                 (values enter a loop through Enter and leave it through Exit)",
                                nodes[first].def.name,
                                flow.describe(in_frame),
                                nodes[s].def.name,
                                flow.describe(frame)
                            ),
                        ));
                    }
                }
            }
            flow.frame_of[i] = match node.def.op.as_str() {
                "Enter" => {
                    let attrs = NodeAttrs::new(&node.def, &node.op_def);
                    let name: String = attrs
                        .get::<&str>("frame_name")
                        .map(str::to_owned)
                        .unwrap_or_default();
                    if name.is_empty() {
                        return Err(error(i, "an Enter needs a non-empty frame_name".into()));
                    }
                    let parallel = attrs.get::<i64>("parallel_iterations").unwrap_or(10);
                    let frame = flow.child(in_frame, &name, parallel);
                    flow.frames[frame].enters.push(i);
                    frame
                }
                op @ ("Exit" | "NextIteration") => {
                    if in_frame == 0 {
                        return Err(error(
                            i,
                            format!("{op} is not inside a loop: its input is in the root frame"),
                        ));
                    }
                    if op == "Exit" {
                        flow.frames[in_frame].exits.push(i);
                    }
                    in_frame
                }
                "Merge" if first.is_none() && !node.inputs.is_empty() => {
                    return Err(error(
                        i,
                        "every input is a NextIteration: a loop's Merge also needs the Enter \
                         that starts it"
                            .into(),
                    ));
                }
                _ => in_frame,
            };
        }
        // Back edges: a NextIteration feeds only Merges of its own frame.
        for (i, node) in nodes.iter().enumerate() {
            for e in &node.inputs {
                if nodes[e.node].def.op != "NextIteration" {
                    continue;
                }
                if node.def.op != "Merge" {
                    return Err(error(
                        e.node,
                        format!(
                            "it feeds '{}' (op '{}'): a loop's back edge must end at a Merge",
                            node.def.name, node.def.op
                        ),
                    ));
                }
                if flow.frame_of[e.node] != flow.frame_of[i] {
                    return Err(error(
                        e.node,
                        format!(
                            "it is in {} but feeds Merge '{}' of {}",
                            flow.describe(flow.frame_of[e.node]),
                            node.def.name,
                            flow.describe(flow.frame_of[i])
                        ),
                    ));
                }
            }
        }
        Ok(Some(flow))
    }

    /// The frame `name` inside `parent`, made on first use.
    fn child(&mut self, parent: FrameId, name: &str, parallel_iterations: i64) -> FrameId {
        if let Some(found) = self
            .frames
            .iter()
            .position(|f| f.parent == Some(parent) && f.name == name)
        {
            return found;
        }
        self.frames.push(Frame {
            name: name.to_owned(),
            parent: Some(parent),
            parallel_iterations: u32::try_from(parallel_iterations.max(1)).unwrap_or(u32::MAX),
            enters: Vec::new(),
            exits: Vec::new(),
        });
        self.frames.len() - 1
    }
}
