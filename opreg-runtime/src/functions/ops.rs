//! The kernels of nodes that call functions: a node whose op is a
//! function of the library, and TensorFlow's functional ops (`While`,
//! `StatelessWhile`, `If`, `StatelessIf`, `Case`, `StatelessCase`,
//! `PartitionedCall`, `StatefulPartitionedCall`). Each instantiates its
//! functions once, when the kernel is built (TF's `FunctionLibraryRuntime`
//! handles), and runs them through the executor on every call.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::{AttrValue, DataType, NameAttrList};

use super::{FunctionInstance, FunctionRuntime, func_attr};
use crate::{GraphError, GraphNode, RunError};
use registry_core::kernel::{KernelError, KernelRegistration, OpKernel, OpKernelContext};
use registry_core::op::SourceLocation;
use registry_core::tensor::Tensor;

/// The functional ops the runtime runs itself.
pub const FUNCTIONAL_OPS: &[&str] = &[
    "While",
    "StatelessWhile",
    "If",
    "StatelessIf",
    "Case",
    "StatelessCase",
    "PartitionedCall",
    "StatefulPartitionedCall",
];

/// What a call kernel runs.
enum Call {
    /// A function with the node's inputs (a node whose op is a function,
    /// `PartitionedCall`).
    Function(Arc<FunctionInstance>),
    /// `While`: `cond` on the loop variables, then `body` while it holds.
    While {
        cond: Arc<FunctionInstance>,
        body: Arc<FunctionInstance>,
    },
    /// `If`: input 0 picks `then_branch` (true) or `else_branch`.
    If {
        then_branch: Arc<FunctionInstance>,
        else_branch: Arc<FunctionInstance>,
    },
    /// `Case`: input 0 (an int32 index) picks a branch, the last one when
    /// out of range.
    Case(Vec<Arc<FunctionInstance>>),
}

/// The kernel of a node that calls functions.
pub(crate) struct CallKernel {
    call: Call,
    /// Stop a loop after this many iterations (`None`: never).
    max_iterations: Option<u64>,
    /// Stop a loop that runs longer than this.
    timeout: Option<std::time::Duration>,
}

/// The registration call kernels report (they are built by the runtime,
/// not looked up).
pub(crate) static CALL_REGISTRATION: KernelRegistration = KernelRegistration {
    op: "<function call>",
    device: registry_core::device::DEVICE_CPU,
    constraints: &[],
    host_memory: &[],
    label: "",
    priority: 0,
    factory: |_| {
        Err(KernelError::internal(
            "function calls are built by the runtime",
        ))
    },
    kernel_name: "opreg_runtime::functions::CallKernel",
    sources: None,
    location: SourceLocation {
        file: file!(),
        line: line!(),
        module_path: module_path!(),
    },
};

/// True when the runtime builds this node's kernel itself: its op is a
/// function of the library or a functional op.
pub(crate) fn is_call(runtime: &FunctionRuntime, op: &str) -> bool {
    FUNCTIONAL_OPS.contains(&op) || runtime.library().signature(op).is_some()
}

/// Builds the call kernel of `node`.
pub(crate) fn build_call(
    runtime: &FunctionRuntime,
    node: &GraphNode,
) -> Result<CallKernel, GraphError> {
    let def = &node.def;
    let func = |attr: &str| -> Result<Arc<FunctionInstance>, GraphError> {
        let f = def
            .attr
            .get(attr)
            .and_then(func_attr)
            .ok_or_else(|| bad_attr(node, attr, "a function (func attr)"))?;
        instance(runtime, f)
    };
    let call = match def.op.as_str() {
        "While" | "StatelessWhile" => Call::While {
            cond: func("cond")?,
            body: func("body")?,
        },
        "If" | "StatelessIf" => Call::If {
            then_branch: func("then_branch")?,
            else_branch: func("else_branch")?,
        },
        "Case" | "StatelessCase" => {
            let branches = match def.attr.get("branches").and_then(|v| v.value.as_ref()) {
                Some(Value::List(ListValue { func, .. })) if !func.is_empty() => func
                    .iter()
                    .map(|f| instance(runtime, f))
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err(bad_attr(node, "branches", "a non-empty list of functions")),
            };
            Call::Case(branches)
        }
        "PartitionedCall" | "StatefulPartitionedCall" => Call::Function(func("f")?),
        // A node whose op is a function: its attrs instantiate it.
        name => {
            let attrs: BTreeMap<String, AttrValue> = def
                .attr
                .iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Call::Function(runtime.instance(name, &attrs)?)
        }
    };
    Ok(CallKernel {
        call,
        max_iterations: runtime.options().max_loop_iterations,
        timeout: runtime.options().loop_timeout,
    })
}

fn instance(
    runtime: &FunctionRuntime,
    f: &NameAttrList,
) -> Result<Arc<FunctionInstance>, GraphError> {
    let attrs: BTreeMap<String, AttrValue> =
        f.attr.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    runtime.instance(&f.name, &attrs)
}

fn bad_attr(node: &GraphNode, attr: &str, expected: &str) -> GraphError {
    GraphError::Function(super::FunctionError::Invalid {
        function: node.def.op.clone(),
        message: format!("node '{}': attr '{attr}' must be {expected}", node.def.name),
    })
}

impl OpKernel for CallKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let mut inputs = Vec::with_capacity(ctx.num_inputs());
        for index in 0..ctx.num_inputs() {
            inputs.push(ctx.take_input(index)?);
        }
        let outputs = match &self.call {
            Call::Function(f) => call(f, inputs)?,
            Call::While { cond, body } => self.run_while(cond, body, inputs)?,
            Call::If {
                then_branch,
                else_branch,
            } => {
                let mut inputs = inputs.into_iter();
                let predicate = inputs
                    .next()
                    .ok_or_else(|| KernelError::invalid_argument("If needs a condition input"))?;
                let branch = if to_bool(&predicate)? {
                    then_branch
                } else {
                    else_branch
                };
                call(branch, inputs.collect())?
            }
            Call::Case(branches) => {
                let mut inputs = inputs.into_iter();
                let index = inputs
                    .next()
                    .ok_or_else(|| KernelError::invalid_argument("Case needs a branch index"))?;
                let index = scalar_i32(&index, "branch_index")?;
                // TF: an index out of range runs the last branch.
                let last = branches.len() - 1;
                let chosen = usize::try_from(index).map_or(last, |i| i.min(last));
                call(&branches[chosen], inputs.collect())?
            }
        };
        if outputs.len() != ctx.num_outputs() {
            return Err(KernelError::invalid_argument(format!(
                "the function returned {} results but the node has {} outputs",
                outputs.len(),
                ctx.num_outputs()
            )));
        }
        for (index, tensor) in outputs.into_iter().enumerate() {
            ctx.set_output(index, tensor)?;
        }
        Ok(())
    }
}

impl CallKernel {
    /// TF's `WhileOp`: `cond` on the variables; while true, `body` makes
    /// the next ones.
    fn run_while(
        &self,
        cond: &FunctionInstance,
        body: &FunctionInstance,
        mut vars: Vec<Tensor>,
    ) -> Result<Vec<Tensor>, KernelError> {
        let start = Instant::now();
        let mut iterations: u64 = 0;
        loop {
            let result = call(cond, vars.clone())?;
            let [predicate] = result.as_slice() else {
                return Err(KernelError::invalid_argument(format!(
                    "the loop condition '{}' must return 1 tensor, returned {}",
                    cond.name(),
                    result.len()
                )));
            };
            if !to_bool(predicate)? {
                return Ok(vars);
            }
            if let Some(limit) = self.max_iterations
                && iterations >= limit
            {
                return Err(KernelError::resource_exhausted(format!(
                    "the loop (body '{}') ran {iterations} iterations, the session's limit \
                     (SessionOptions::max_loop_iterations, `opreg run --max-iterations`)",
                    body.name()
                )));
            }
            if let Some(timeout) = self.timeout
                && start.elapsed() > timeout
            {
                return Err(KernelError::resource_exhausted(format!(
                    "the loop (body '{}') ran longer than the session's limit of {timeout:?} \
                     (SessionOptions::loop_timeout) after {iterations} iterations",
                    body.name()
                )));
            }
            let next = call(body, vars)?;
            if next.len() != body.num_args() {
                return Err(KernelError::invalid_argument(format!(
                    "the loop body '{}' returned {} tensors for {} loop variables",
                    body.name(),
                    next.len(),
                    body.num_args()
                )));
            }
            vars = next;
            iterations += 1;
        }
    }
}

/// Calls `f`, turning its failure into the kernel error of the same kind
/// with the function's and inner node's names.
fn call(f: &FunctionInstance, args: Vec<Tensor>) -> Result<Vec<Tensor>, KernelError> {
    f.call(args).map_err(|e| nested_error(f.name(), e))
}

fn nested_error(function: &str, error: RunError) -> KernelError {
    let message = format!("in function '{function}': {error}");
    match error {
        RunError::Compute { source, .. } => match *source {
            KernelError::InvalidArgument(_) => KernelError::InvalidArgument(message),
            KernelError::OutOfRange(_) => KernelError::OutOfRange(message),
            KernelError::Unimplemented(_) => KernelError::Unimplemented(message),
            KernelError::ResourceExhausted(_) => KernelError::ResourceExhausted(message),
            _ => KernelError::Internal(message),
        },
        RunError::LoopLimit { .. } | RunError::MemoryLimit { .. } => {
            KernelError::ResourceExhausted(message)
        }
        RunError::FeedType { .. } | RunError::FeedCount { .. } => {
            KernelError::InvalidArgument(message)
        }
        _ => KernelError::Internal(message),
    }
}

/// TF's `ToBool`: a scalar is true when non-zero (a string when not
/// empty); any other tensor when it has elements.
pub(crate) fn to_bool(t: &Tensor) -> Result<bool, KernelError> {
    let t = if t.is_on_host() {
        t.clone()
    } else {
        t.to_host()?
    };
    if !t.dims().is_empty() {
        return Ok(t.num_elements() > 0);
    }
    Ok(match t.dtype() {
        DataType::DtBool => t.as_slice::<bool>()?[0],
        DataType::DtFloat => t.as_slice::<f32>()?[0] != 0.0,
        DataType::DtDouble => t.as_slice::<f64>()?[0] != 0.0,
        DataType::DtInt32 => t.as_slice::<i32>()?[0] != 0,
        DataType::DtInt64 => t.as_slice::<i64>()?[0] != 0,
        DataType::DtInt16 => t.as_slice::<i16>()?[0] != 0,
        DataType::DtInt8 => t.as_slice::<i8>()?[0] != 0,
        DataType::DtUint8 => t.as_slice::<u8>()?[0] != 0,
        DataType::DtString => !t.as_strings()?[0].is_empty(),
        other => {
            return Err(KernelError::invalid_argument(format!(
                "{} cannot be converted to a boolean",
                opreg_proto::DataTypeExt::type_name(other)
            )));
        }
    })
}

fn scalar_i32(t: &Tensor, what: &str) -> Result<i32, KernelError> {
    let t = if t.is_on_host() {
        t.clone()
    } else {
        t.to_host()?
    };
    match (t.dtype(), t.dims()) {
        (DataType::DtInt32, []) => Ok(t.as_slice::<i32>()?[0]),
        _ => Err(KernelError::invalid_argument(format!(
            "{what} must be an int32 scalar, got {:?} of shape {}",
            t.dtype(),
            t.shape()
        ))),
    }
}
