//! The kernel layer: TensorFlow's kernel lookup rules, the "no kernel"
//! message, the `KernelList` export (byte for byte against TF 2.21's
//! `tf_2_21_kernels.pb`), typed attr getters, the compute context,
//! `create_op_kernel`'s errors and `KernelInstance::compute`'s checks.
//!
//! Test ops are declared here with `#[op]` and test kernels with
//! `#[kernel]` (they land in this binary's global registries); lookup rules
//! are tested on isolated registries built from hand-made registrations.

// The standard ops, which these tests look up (linked by naming the crate).
use opreg_standard_ops as _;

use std::sync::atomic::{AtomicUsize, Ordering};

use opreg_standard_ops::ArgMax;
use prost::Message;
use registry_core::device::cpu_device;
use registry_core::kernel::{
    BuildKernel, CreateKernelError, FnKernel, KERNEL_LABEL_ATTR, KernelCall, KernelError,
    KernelLookupError, KernelRegistration, KernelRegistry, NodeInfo, OpKernel,
    OpKernelConstruction, OpKernelContext, TypeConstraint, constraint_types, create_op_kernel_in,
    node_label, summarize_registration,
};
use registry_core::op::SourceLocation;
use registry_core::proto::attr_value::{ListValue, Value};
use registry_core::proto::tensor_shape_proto::Dim;
use registry_core::proto::{
    AttrValue, DataType, KernelDef, KernelList, NodeDef, TensorProto, TensorShapeProto,
};
use registry_core::tensor::Tensor;
use registry_core::{OpRegistry, create_op_kernel, kernel, op};

// ------------------------------------------------------------ test ops

/// A unary op over a few types (`Kr` = kernel registry test).
#[op(
    input = "x: T",
    output = "y: T",
    attr = "T: {float, double, int32, string}"
)]
pub struct KrUnary;

/// An op with a `list(type)` attr.
#[op(input = "xs: Tin", output = "y: float", attr = "Tin: list(type)")]
pub struct KrList;

/// An op whose output dtype is another attr's.
#[op(input = "x: T", output = "y: U", attr = "T: type", attr = "U: type")]
pub struct KrConvert;

/// An op with an attr of every kind, most with defaults.
#[op(
    input = "x: float",
    output = "y: float",
    attr = "i: int = 3",
    attr = "f: float = 0.5",
    attr = "b: bool = true",
    attr = "s: string = 'hi'",
    attr = "t: type = DT_INT32",
    attr = "sh: shape = { dim { size: 2 } dim { size: -1 } }",
    attr = "li: list(int) = [1, 2]",
    attr = "lf: list(float) = [1.5]",
    attr = "lb: list(bool) = [true, false]",
    attr = "ls: list(string) = ['a', 'b']",
    attr = "lt: list(type) = [DT_FLOAT, DT_INT64]",
    attr = "lsh: list(shape) = []",
    attr = "ten: tensor",
    attr = "req: int"
)]
pub struct KrAttrs;

/// An op with two outputs.
#[op(input = "x: float", output = "a: float", output = "b: float")]
pub struct KrTwoOut;

// ------------------------------------------------- test kernels (global)

/// `KrUnary` for float and double: negates (function form, generic).
#[kernel(op = KrUnary, device = CPU, T = [float, double])]
fn kr_neg<T>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError>
where
    T: registry_core::tensor::TensorElement + std::ops::Neg<Output = T> + Copy,
{
    if ctx.forward_input(0, 0)? {
        for v in ctx.output_mut(0)?.as_mut_slice::<T>()? {
            *v = -*v;
        }
        return Ok(());
    }
    let x = ctx.input(0)?.clone();
    let out = ctx.allocate_output(0, x.shape())?;
    for (o, &i) in out.as_mut_slice::<T>()?.iter_mut().zip(x.as_slice::<T>()?) {
        *o = -i;
    }
    Ok(())
}

/// `KrAttrs`: reads attrs at construction and outputs `x * i`.
#[kernel(op = KrAttrs, device = CPU)]
#[derive(Debug)]
pub struct KrAttrsKernel {
    scale: f32,
}

impl BuildKernel for KrAttrsKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let i: i64 = ctx.attr("i")?;
        let _: String = ctx.attr("s")?;
        let _: Tensor = ctx.attr("ten")?;
        Ok(Self { scale: i as f32 })
    }
}

impl OpKernel for KrAttrsKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.input(0)?.clone();
        let out = ctx.allocate_output(0, x.shape())?;
        for (o, &i) in out
            .as_mut_slice::<f32>()?
            .iter_mut()
            .zip(x.as_slice::<f32>()?)
        {
            *o = i * self.scale;
        }
        Ok(())
    }
}

/// `KrConvert` float -> int32: its constructor always refuses.
#[kernel(op = KrConvert, device = CPU, T = [float], U = [int32])]
#[derive(Debug)]
pub struct KrRefuses;

impl BuildKernel for KrRefuses {
    fn build(_: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Err(KernelError::unimplemented("KrRefuses never builds"))
    }
}

impl OpKernel for KrRefuses {
    fn compute(&self, _: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        Ok(())
    }
}

/// `KrTwoOut`: forgets output 1.
#[kernel(op = KrTwoOut, device = CPU)]
fn kr_forgets(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

/// The standard `ArgMax`, float -> int64, registered as TF's CPU kernel is.
#[kernel(op = ArgMax, device = CPU, T = [float], output_type = [int64], host_memory = ["dimension"])]
fn kr_arg_max(_: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

// ------------------------------------------------------------- helpers

fn type_value(t: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(t as i32)),
    }
}

fn type_list(types: &[DataType]) -> AttrValue {
    AttrValue {
        value: Some(Value::List(ListValue {
            r#type: types.iter().map(|&t| t as i32).collect(),
            ..Default::default()
        })),
    }
}

fn value(v: Value) -> AttrValue {
    AttrValue { value: Some(v) }
}

fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| (*s).to_owned()).collect(),
        attr: attrs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        ..Default::default()
    }
}

fn unary_node(t: DataType) -> NodeDef {
    node("u", "KrUnary", &["x"], &[("T", type_value(t))])
}

/// Constructed kernels, counted per factory call.
static BUILT: AtomicUsize = AtomicUsize::new(0);

fn noop_factory(_: &OpKernelConstruction<'_>) -> Result<Box<dyn OpKernel>, KernelError> {
    BUILT.fetch_add(1, Ordering::Relaxed);
    Ok(Box::new(FnKernel(|_| Ok(()))))
}

fn location() -> SourceLocation {
    SourceLocation {
        file: file!(),
        line: line!(),
        module_path: module_path!(),
    }
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn leak_str(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// A registration with a no-op factory.
fn reg(
    op: &'static str,
    device: &'static str,
    constraints: &[(&'static str, &[DataType])],
    label: &'static str,
    priority: i32,
    kernel_name: &'static str,
) -> KernelRegistration {
    KernelRegistration {
        op,
        device,
        constraints: leak(
            constraints
                .iter()
                .map(|&(attr, types)| TypeConstraint {
                    attr,
                    types: leak(types.to_vec()),
                })
                .collect(),
        ),
        host_memory: &[],
        label,
        priority,
        factory: noop_factory,
        kernel_name,
        sources: None,
        location: location(),
    }
}

fn registry(regs: Vec<KernelRegistration>) -> KernelRegistry {
    let kernels = KernelRegistry::new();
    for r in regs {
        kernels.register(r);
    }
    kernels
}

fn lookup_error(kernels: &KernelRegistry, n: &NodeDef, device: &str) -> KernelLookupError {
    match kernels.find_kernel(n, device) {
        Ok(r) => panic!("expected no kernel, got {}", r.kernel_name),
        Err(e) => e,
    }
}

// ---------------------------------------------------------- lookup rules

#[test]
fn type_constraints_must_match() {
    use DataType::*;
    let kernels = registry(vec![
        reg("KrUnary", "CPU", &[("T", &[DtFloat])], "", 0, "float_k"),
        reg("KrUnary", "CPU", &[("T", &[DtDouble])], "", 0, "double_k"),
        reg("KrUnary", "GPU", &[("T", &[DtInt32])], "", 0, "gpu_int_k"),
    ]);
    let found = kernels.find_kernel(&unary_node(DtFloat), "CPU").unwrap();
    assert_eq!(found.kernel_name, "float_k");
    let found = kernels.find_kernel(&unary_node(DtDouble), "CPU").unwrap();
    assert_eq!(found.kernel_name, "double_k");
    assert_eq!(constraint_types(found, "T"), Some(&[DtDouble][..]));
    assert_eq!(constraint_types(found, "U"), None);
    // int32 is only on GPU.
    let err = lookup_error(&kernels, &unary_node(DtInt32), "CPU");
    let KernelLookupError::NotFound { attr_mismatch, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(*attr_mismatch);
    assert_eq!(
        kernels
            .find_kernel(&unary_node(DtInt32), "GPU")
            .unwrap()
            .kernel_name,
        "gpu_int_k"
    );
}

#[test]
fn list_type_constraints_need_every_element_allowed() {
    use DataType::*;
    let kernels = registry(vec![reg(
        "KrList",
        "CPU",
        &[("Tin", &[DtFloat, DtInt32])],
        "",
        0,
        "list_k",
    )]);
    let n = |types: &[DataType]| node("l", "KrList", &[], &[("Tin", type_list(types))]);
    assert!(
        kernels
            .find_kernel(&n(&[DtFloat, DtInt32, DtFloat]), "CPU")
            .is_ok()
    );
    assert!(kernels.find_kernel(&n(&[]), "CPU").is_ok());
    let err = lookup_error(&kernels, &n(&[DtFloat, DtDouble]), "CPU");
    assert!(
        err.to_string()
            .contains("Requested attributes: Tin=[DT_FLOAT, DT_DOUBLE]"),
        "{err}"
    );
    // A list of ints cannot satisfy a type constraint.
    let ints = value(Value::List(ListValue {
        i: vec![1, 2],
        ..Default::default()
    }));
    let err = lookup_error(&kernels, &node("l", "KrList", &[], &[("Tin", ints)]), "CPU");
    assert!(
        matches!(&err, KernelLookupError::ConstraintAttrKind { attr, found, .. } if attr == "Tin" && found == "list"),
        "{err:?}"
    );
    let err = lookup_error(
        &kernels,
        &node("l", "KrList", &[], &[("Tin", value(Value::I(3)))]),
        "CPU",
    );
    assert_eq!(
        err.to_string(),
        "OpKernel 'list_k' for op 'KrList' has a type constraint on attr 'Tin', but node 'l' \
         sets it to a int, not a type or list of types"
    );
}

#[test]
fn labels_must_match() {
    use DataType::*;
    let kernels = registry(vec![
        reg("KrUnary", "CPU", &[("T", &[DtFloat])], "", 0, "plain"),
        reg("KrUnary", "CPU", &[("T", &[DtFloat])], "fast", 0, "fast_k"),
    ]);
    let mut n = unary_node(DtFloat);
    assert_eq!(node_label(&n), "");
    assert_eq!(kernels.find_kernel(&n, "CPU").unwrap().kernel_name, "plain");
    n.attr
        .insert(KERNEL_LABEL_ATTR.into(), value(Value::S(b"fast".to_vec())));
    assert_eq!(node_label(&n), "fast");
    assert_eq!(
        kernels.find_kernel(&n, "CPU").unwrap().kernel_name,
        "fast_k"
    );
    n.attr
        .insert(KERNEL_LABEL_ATTR.into(), value(Value::S(b"slow".to_vec())));
    let msg = lookup_error(&kernels, &n, "CPU").to_string();
    assert!(
        msg.starts_with(
            "No registered 'KrUnary' OpKernel for 'CPU' devices compatible with node 'u' (label 'slow')\n"
        ),
        "{msg}"
    );
    assert!(
        msg.contains("(no kernel of 'KrUnary' for device 'CPU' has label 'slow')"),
        "{msg}"
    );
    // `_kernel` is internal: not listed among the requested attrs.
    assert!(msg.contains("Requested attributes: T=DT_FLOAT\n"), "{msg}");

    // Only labelled kernels, and the node asks for none.
    let labelled = registry(vec![reg("KrUnary", "CPU", &[], "fast", 0, "fast_k")]);
    let msg = lookup_error(&labelled, &unary_node(DtFloat), "CPU").to_string();
    assert!(
        msg.contains(
            "every kernel of 'KrUnary' for device 'CPU' has a label; set the node's '_kernel' attr"
        ),
        "{msg}"
    );
    assert!(msg.contains("device='CPU'; label='fast'"), "{msg}");
}

#[test]
fn highest_priority_wins_in_any_registration_order() {
    use DataType::*;
    let low = || reg("KrUnary", "CPU", &[("T", &[DtFloat])], "", 1, "low");
    let high = || {
        reg(
            "KrUnary",
            "CPU",
            &[("T", &[DtFloat, DtDouble])],
            "",
            5,
            "high",
        )
    };
    let any = || reg("KrUnary", "CPU", &[], "", -3, "any");
    for regs in [
        vec![low(), high(), any()],
        vec![high(), any(), low()],
        vec![any(), low(), high()],
    ] {
        let kernels = registry(regs);
        assert_eq!(
            kernels
                .find_kernel(&unary_node(DtFloat), "CPU")
                .unwrap()
                .kernel_name,
            "high"
        );
        // Only `any` accepts int32.
        assert_eq!(
            kernels
                .find_kernel(&unary_node(DtInt32), "CPU")
                .unwrap()
                .kernel_name,
            "any"
        );
    }
    // Two matches at a lower priority do not hide a higher one.
    let kernels = registry(vec![
        reg("KrUnary", "CPU", &[], "", 0, "a"),
        reg("KrUnary", "CPU", &[], "", 0, "b"),
        reg("KrUnary", "CPU", &[("T", &[DtFloat])], "", 2, "c"),
    ]);
    assert_eq!(
        kernels
            .find_kernel(&unary_node(DtFloat), "CPU")
            .unwrap()
            .kernel_name,
        "c"
    );
    // ... but they are ambiguous where they are the best.
    let err = lookup_error(&kernels, &unary_node(DtDouble), "CPU");
    assert!(
        matches!(err, KernelLookupError::Ambiguous { priority: 0, .. }),
        "{err:?}"
    );
}

#[test]
fn equal_priority_matches_are_ambiguous() {
    use DataType::*;
    let kernels = KernelRegistry::from_registrations([
        &*Box::leak(Box::new(reg(
            "KrUnary",
            "CPU",
            &[("T", &[DtFloat])],
            "",
            7,
            "one",
        ))),
        &*Box::leak(Box::new(reg(
            "KrUnary",
            "CPU",
            &[("T", &[DtFloat, DtInt32])],
            "",
            7,
            "two",
        ))),
    ]);
    let err = lookup_error(&kernels, &unary_node(DtFloat), "CPU");
    let KernelLookupError::Ambiguous {
        node: node_name,
        op,
        device,
        priority,
        first_kernel,
        second_kernel,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (node_name.as_str(), op.as_str(), device.as_str()),
        ("u", "KrUnary", "CPU")
    );
    assert_eq!(*priority, 7);
    let mut names = [first_kernel.as_str(), second_kernel.as_str()];
    names.sort();
    assert_eq!(names, ["one", "two"]);
    let msg = err.to_string();
    assert!(msg.starts_with("Multiple OpKernel registrations match node 'u' (op 'KrUnary', device 'CPU') with priority 7: "), "{msg}");
    assert!(
        msg.contains("device='CPU'; T in [DT_FLOAT]; priority=7 (one)"),
        "{msg}"
    );
    assert!(
        msg.contains("device='CPU'; T in [DT_FLOAT, DT_INT32]; priority=7 (two)"),
        "{msg}"
    );
    // int32 has a single match.
    assert_eq!(
        kernels
            .find_kernel(&unary_node(DtInt32), "CPU")
            .unwrap()
            .kernel_name,
        "two"
    );
}

#[test]
fn a_constraint_on_a_missing_attr_is_an_error() {
    let kernels = registry(vec![reg(
        "KrUnary",
        "CPU",
        &[("U", &[DataType::DtFloat])],
        "",
        0,
        "needs_u",
    )]);
    let err = lookup_error(&kernels, &unary_node(DataType::DtFloat), "CPU");
    assert_eq!(
        err,
        KernelLookupError::ConstraintAttrMissing {
            node: "u".into(),
            op: "KrUnary".into(),
            attr: "U".into(),
            kernel: "needs_u".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "OpKernel 'needs_u' for op 'KrUnary' has a constraint on attr 'U', which node 'u' does not have"
    );
}

#[test]
fn the_no_kernel_message_lists_everything() {
    use DataType::*;
    let kernels = registry(vec![
        reg("KrUnary", "CPU", &[("T", &[DtFloat])], "", 0, "f"),
        reg("KrUnary", "CPU", &[("T", &[DtDouble])], "", 3, "d"),
        reg("KrUnary", "GPU", &[("T", &[DtFloat])], "gpu_label", 0, "g"),
    ]);
    let mut n = unary_node(DtInt32);
    n.attr
        .insert("_class".into(), value(Value::S(b"loc".to_vec())));
    let err = lookup_error(&kernels, &n, "CPU");
    let KernelLookupError::NotFound {
        node: node_name,
        op,
        device,
        requested,
        label_note,
        attr_mismatch,
        registered,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (node_name.as_str(), op.as_str(), device.as_str()),
        ("u", "KrUnary", "CPU")
    );
    assert_eq!(requested, "T=DT_INT32");
    assert_eq!(label_note, "");
    assert!(*attr_mismatch);
    assert_eq!(registered.len(), 3);
    assert_eq!(
        err.to_string(),
        "No registered 'KrUnary' OpKernel for 'CPU' devices compatible with node 'u'\n\
         \t(OpKernel was found, but attributes didn't match) Requested attributes: T=DT_INT32\n\
         \tRegistered kernels of 'KrUnary':\n\
         \t  device='CPU'; T in [DT_FLOAT]\n\
         \t  device='CPU'; T in [DT_DOUBLE]; priority=3\n\
         \t  device='GPU'; label='gpu_label'; T in [DT_FLOAT]"
    );
    // No kernel for the device: no "attributes didn't match" note.
    let err = lookup_error(&kernels, &unary_node(DtFloat), "TPU");
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            KernelLookupError::NotFound {
                attr_mismatch: false,
                ..
            }
        ),
        "{msg}"
    );
    assert!(!msg.contains("attributes didn't match"), "{msg}");
    assert!(
        msg.contains("(no kernel of 'KrUnary' is registered for device 'TPU') Requested attributes: T=DT_FLOAT"),
        "{msg}"
    );
    // An op without kernels.
    let n = node("l", "KrList", &[], &[("Tin", type_list(&[DtFloat]))]);
    let msg = lookup_error(&kernels, &n, "CPU").to_string();
    assert_eq!(
        msg,
        "No registered 'KrList' OpKernel for 'CPU' devices compatible with node 'l'\n\
         \t(no kernel of 'KrList' is registered for any device) Requested attributes: Tin=[DT_FLOAT]\n\
         \tRegistered kernels of 'KrList':\n\
         \t  <no registered kernels>"
    );
}

#[test]
fn static_and_runtime_registrations_combine() {
    use DataType::*;
    let statics: &'static KernelRegistration = Box::leak(Box::new(reg(
        "KrUnary",
        "CPU",
        &[("T", &[DtFloat])],
        "",
        0,
        "static",
    )));
    let kernels = KernelRegistry::from_registrations([statics]);
    assert_eq!(kernels.len(), 1);
    assert!(!kernels.is_empty());
    assert!(KernelRegistry::new().is_empty());
    kernels.register(reg(
        "KrUnary",
        "CPU",
        &[("T", &[DtDouble])],
        "",
        0,
        "runtime",
    ));
    kernels.register(reg("NoSuchOp", "CPU", &[], "", 0, "orphan"));
    assert_eq!(kernels.len(), 3);
    assert_eq!(kernels.kernels_for_op("KrUnary").len(), 2);
    assert_eq!(
        kernels
            .find_kernel(&unary_node(DtDouble), "CPU")
            .unwrap()
            .kernel_name,
        "runtime"
    );
    assert_eq!(
        kernels
            .find_kernel(&unary_node(DtFloat), "CPU")
            .unwrap()
            .kernel_name,
        "static"
    );
    let orphans = kernels.kernels_without_op(OpRegistry::global());
    assert_eq!(orphans.len(), 1);
    assert_eq!(orphans[0].kernel_name, "orphan");
    // `all` is sorted by op, then device and constraints.
    let ops: Vec<&str> = kernels.all().iter().map(|r| r.op).collect();
    assert_eq!(ops, ["KrUnary", "KrUnary", "NoSuchOp"]);
}

// ------------------------------------------------------ KernelList export

fn tf_kernels() -> KernelList {
    let bytes = std::fs::read("/work/shared/conformance/tf_2_21_kernels.pb")
        .expect("read tf_2_21_kernels.pb");
    KernelList::decode(&bytes[..]).expect("decode TF's KernelList")
}

/// The types of a TF constraint, when it is a list of types only.
fn tf_types(c: &registry_core::proto::kernel_def::AttrConstraint) -> Option<Vec<DataType>> {
    match c.allowed_values.as_ref()?.value.as_ref()? {
        Value::List(l)
            if l.s.is_empty()
                && l.i.is_empty()
                && l.f.is_empty()
                && l.b.is_empty()
                && l.shape.is_empty()
                && l.tensor.is_empty()
                && l.func.is_empty() =>
        {
            l.r#type
                .iter()
                .map(|&t| DataType::try_from(t).ok())
                .collect()
        }
        _ => None,
    }
}

/// Our registration for TF's KernelDef (type constraints only).
fn registration_for(def: &KernelDef) -> Option<KernelRegistration> {
    let mut constraints = Vec::new();
    for c in &def.constraint {
        constraints.push(TypeConstraint {
            attr: leak_str(&c.name),
            types: leak(tf_types(c)?),
        });
    }
    Some(KernelRegistration {
        op: leak_str(&def.op),
        device: leak_str(&def.device_type),
        constraints: leak(constraints),
        host_memory: leak(def.host_memory_arg.iter().map(|s| leak_str(s)).collect()),
        label: leak_str(&def.label),
        priority: def.priority,
        factory: noop_factory,
        kernel_name: "tf",
        sources: None,
        location: location(),
    })
}

/// `#[kernel(op = ArgMax, device = CPU, T = [float], output_type = [int64],
/// host_memory = ["dimension"])]` exports exactly TF's KernelDef bytes.
#[test]
fn kernel_def_of_a_macro_registration_matches_tf_bytes() {
    let tf = tf_kernels();
    let theirs = tf
        .kernel
        .iter()
        .find(|k| {
            k.op == "ArgMax"
                && k.device_type == "CPU"
                && k.constraint.len() == 2
                && tf_types(&k.constraint[0]) == Some(vec![DataType::DtFloat])
                && tf_types(&k.constraint[1]) == Some(vec![DataType::DtInt64])
        })
        .expect("TF has ArgMax<CPU, float, int64>");
    assert_eq!(theirs.constraint[0].name, "T");
    assert_eq!(theirs.constraint[1].name, "output_type");
    assert_eq!(theirs.host_memory_arg, ["dimension"]);

    let ours = KernelRegistry::global().kernel_list();
    let ours: Vec<&KernelDef> = ours.kernel.iter().filter(|k| k.op == "ArgMax").collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0], theirs);
    assert_eq!(ours[0].encode_to_vec(), theirs.encode_to_vec());
}

/// Every TF kernel whose constraints are type lists (with any host-memory
/// args, label and priority), rebuilt as our registration, encodes to TF's
/// exact bytes.
#[test]
fn kernel_defs_round_trip_tf_2_21_byte_for_byte() {
    let tf = tf_kernels();
    let mut checked = 0;
    let (mut labelled, mut prioritized, mut host) = (0, 0, 0);
    for theirs in &tf.kernel {
        let Some(ours) = registration_for(theirs) else {
            continue;
        };
        let def = ours.kernel_def();
        assert_eq!(&def, theirs);
        assert_eq!(def.encode_to_vec(), theirs.encode_to_vec(), "{theirs:?}");
        checked += 1;
        labelled += usize::from(!theirs.label.is_empty());
        prioritized += usize::from(theirs.priority != 0);
        host += usize::from(!theirs.host_memory_arg.is_empty());
    }
    assert!(checked > 10_000, "{checked}");
    assert!(labelled > 0 && prioritized > 0 && host > 0);
}

#[test]
fn kernel_list_exports_every_registration_sorted() {
    use DataType::*;
    let kernels = registry(vec![
        reg("KrUnary", "GPU", &[("T", &[DtFloat])], "", 0, "g"),
        reg("KrUnary", "CPU", &[("T", &[DtDouble])], "lbl", -2, "d"),
        reg("KrList", "CPU", &[("Tin", &[DtFloat, DtInt32])], "", 0, "l"),
    ]);
    let list = kernels.kernel_list();
    let summary: Vec<(&str, &str, &str, i32)> = list
        .kernel
        .iter()
        .map(|k| {
            (
                k.op.as_str(),
                k.device_type.as_str(),
                k.label.as_str(),
                k.priority,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("KrList", "CPU", "", 0),
            ("KrUnary", "CPU", "lbl", -2),
            ("KrUnary", "GPU", "", 0)
        ]
    );
    let c = &list.kernel[0].constraint[0];
    assert_eq!(c.name, "Tin");
    assert_eq!(tf_types(c), Some(vec![DtFloat, DtInt32]));
    // Decoding the encoded list gives it back.
    let back = KernelList::decode(&list.encode_to_vec()[..]).unwrap();
    assert_eq!(back, list);
    let global = KernelRegistry::global();
    assert_eq!(global.kernel_list().kernel.len(), global.len());
}

#[test]
fn summaries_name_device_label_constraints_and_priority() {
    use DataType::*;
    let r = reg("KrUnary", "CPU", &[("T", &[DtFloat, DtHalf])], "l", 4, "k");
    assert_eq!(
        summarize_registration(&r),
        "device='CPU'; label='l'; T in [DT_FLOAT, DT_HALF]; priority=4"
    );
    let r = reg("KrUnary", "GPU", &[], "", 0, "k");
    assert_eq!(summarize_registration(&r), "device='GPU'");
}

// ------------------------------------------------- OpKernelConstruction

fn attrs_node() -> NodeDef {
    let ten = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap().to_proto();
    node(
        "attrs",
        "KrAttrs",
        &["x"],
        &[
            ("ten", value(Value::Tensor(ten))),
            ("req", value(Value::I(1 << 40))),
            ("b", value(Value::B(false))),
            ("s", value(Value::S(vec![0xff, 0xfe]))),
            ("t", value(Value::Type(999))),
        ],
    )
}

#[test]
fn construction_reads_every_attr_kind_with_defaults() {
    let op_def = OpRegistry::global().look_up_op_def("KrAttrs").unwrap();
    let n = node(
        "attrs",
        "KrAttrs",
        &["x"],
        &[
            ("ten", value(Value::Tensor(Tensor::scalar(7i32).to_proto()))),
            ("req", value(Value::I(-4))),
            ("b", value(Value::B(false))),
        ],
    );
    let inputs = [DataType::DtFloat];
    let outputs = [DataType::DtFloat];
    let ctx = OpKernelConstruction::new(&n, op_def, &**cpu_device(), &inputs, &outputs);
    assert_eq!(ctx.name(), "attrs");
    assert_eq!(ctx.op(), "KrAttrs");
    assert_eq!(ctx.device_type(), "CPU");
    assert_eq!(ctx.input_types(), &inputs);
    assert_eq!(ctx.output_types(), &outputs);
    assert_eq!(ctx.node_def(), &n);
    assert_eq!(ctx.op_def().name, "KrAttrs");
    // The node's values.
    assert_eq!(ctx.attr::<i64>("req").unwrap(), -4);
    assert_eq!(ctx.attr::<i32>("req").unwrap(), -4);
    assert!(!ctx.attr::<bool>("b").unwrap());
    let ten: Tensor = ctx.attr("ten").unwrap();
    assert_eq!(ten.as_slice::<i32>().unwrap(), &[7]);
    let proto: TensorProto = ctx.attr("ten").unwrap();
    assert_eq!(proto.dtype, DataType::DtInt32 as i32);
    // The OpDef's defaults.
    assert_eq!(ctx.attr::<i64>("i").unwrap(), 3);
    assert_eq!(ctx.attr::<f32>("f").unwrap(), 0.5);
    assert_eq!(ctx.attr::<String>("s").unwrap(), "hi");
    assert_eq!(ctx.attr::<Vec<u8>>("s").unwrap(), b"hi");
    assert_eq!(ctx.attr::<DataType>("t").unwrap(), DataType::DtInt32);
    let sh: TensorShapeProto = ctx.attr("sh").unwrap();
    assert_eq!(
        sh.dim,
        [
            Dim {
                size: 2,
                name: String::new()
            },
            Dim {
                size: -1,
                name: String::new()
            }
        ]
    );
    assert_eq!(ctx.attr::<Vec<i64>>("li").unwrap(), [1, 2]);
    assert_eq!(ctx.attr::<Vec<i32>>("li").unwrap(), [1, 2]);
    assert_eq!(ctx.attr::<Vec<f32>>("lf").unwrap(), [1.5]);
    assert_eq!(ctx.attr::<Vec<bool>>("lb").unwrap(), [true, false]);
    assert_eq!(ctx.attr::<Vec<String>>("ls").unwrap(), ["a", "b"]);
    assert_eq!(
        ctx.attr::<Vec<DataType>>("lt").unwrap(),
        [DataType::DtFloat, DataType::DtInt64]
    );
    assert!(ctx.attr::<Vec<TensorShapeProto>>("lsh").unwrap().is_empty());
    let raw: AttrValue = ctx.attr("i").unwrap();
    assert_eq!(raw, value(Value::I(3)));
    assert!(ctx.has_attr("i") && ctx.has_attr("ten") && !ctx.has_attr("nope"));
    assert_eq!(ctx.attr_value("b"), Some(&value(Value::B(false))));
    assert_eq!(ctx.attr_value("nope"), None);
}

#[test]
fn construction_errors_name_node_op_and_attr() {
    let op_def = OpRegistry::global().look_up_op_def("KrAttrs").unwrap();
    let n = attrs_node();
    let ctx = OpKernelConstruction::new(&n, op_def, &**cpu_device(), &[], &[]);
    let err = ctx.attr::<i64>("b").unwrap_err();
    assert_eq!(
        err,
        KernelError::Attr {
            node: "attrs".into(),
            op: "KrAttrs".into(),
            attr: "b".into(),
            message: "expected an int, got a bool".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "attr 'b' of node 'attrs' (op 'KrAttrs'): expected an int, got a bool"
    );
    let cases: Vec<(KernelError, &str)> = vec![
        (
            ctx.attr::<bool>("nope").unwrap_err(),
            "attr 'nope' of node 'attrs' (op 'KrAttrs'): the node does not set it and the op has no default",
        ),
        (
            ctx.attr::<i32>("req").unwrap_err(),
            "value 1099511627776 does not fit in a 32-bit integer",
        ),
        (
            ctx.attr::<String>("s").unwrap_err(),
            "the string is not UTF-8",
        ),
        (
            ctx.attr::<DataType>("t").unwrap_err(),
            "999 is not a DataType enum value",
        ),
        (
            ctx.attr::<f32>("i").unwrap_err(),
            "expected a float, got an int",
        ),
        (
            ctx.attr::<String>("i").unwrap_err(),
            "expected a string, got an int",
        ),
        (
            ctx.attr::<Vec<u8>>("b").unwrap_err(),
            "expected a string, got a bool",
        ),
        (
            ctx.attr::<TensorShapeProto>("li").unwrap_err(),
            "expected a shape, got a list",
        ),
        (
            ctx.attr::<TensorProto>("f").unwrap_err(),
            "expected a tensor, got a float",
        ),
        (
            ctx.attr::<Tensor>("sh").unwrap_err(),
            "expected a tensor, got a shape",
        ),
        (
            ctx.attr::<Vec<i64>>("i").unwrap_err(),
            "expected a list(int), got an int",
        ),
        (
            ctx.attr::<Vec<DataType>>("t").unwrap_err(),
            "expected a list(type), got a type",
        ),
        (
            ctx.attr::<Vec<String>>("s").unwrap_err(),
            "expected a list(string), got a string",
        ),
    ];
    for (err, want) in cases {
        let msg = err.to_string();
        assert!(matches!(err, KernelError::Attr { .. }), "{msg}");
        assert!(msg.contains(want), "{msg} does not contain {want}");
        assert!(msg.contains("of node 'attrs' (op 'KrAttrs')"), "{msg}");
    }
    // A tensor attr that does not decode.
    let bad = TensorProto {
        dtype: DataType::DtFloat as i32,
        tensor_shape: Some(TensorShapeProto {
            dim: vec![Dim {
                size: 3,
                name: String::new(),
            }],
            ..Default::default()
        }),
        tensor_content: vec![0; 5],
        ..Default::default()
    };
    let n = node(
        "attrs",
        "KrAttrs",
        &["x"],
        &[("ten", value(Value::Tensor(bad)))],
    );
    let ctx = OpKernelConstruction::new(&n, op_def, &**cpu_device(), &[], &[]);
    let err = ctx.attr::<Tensor>("ten").unwrap_err();
    assert!(
        matches!(err, KernelError::Attr { ref attr, .. } if attr == "ten"),
        "{err}"
    );
    // A list(int) element that does not fit in i32 is an error for
    // `Vec<i32>`, not a truncation.
    let n = node(
        "attrs",
        "KrAttrs",
        &["x"],
        &[(
            "li",
            value(Value::List(ListValue {
                i: vec![1 << 33],
                ..Default::default()
            })),
        )],
    );
    let ctx = OpKernelConstruction::new(&n, op_def, &**cpu_device(), &[], &[]);
    assert!(ctx.attr::<Vec<i32>>("li").is_err());
    assert_eq!(ctx.attr::<Vec<i64>>("li").unwrap(), [1 << 33]);
}

// --------------------------------------------------------- OpKernelContext

fn float_info(outputs: Vec<DataType>) -> NodeInfo {
    NodeInfo::new("n", "KrConvert", "CPU", vec![DataType::DtFloat], outputs)
}

#[test]
fn forward_input_only_when_unique_and_same_dtype() {
    let info = float_info(vec![DataType::DtFloat]);
    assert_eq!(info.node_name(), "n");
    assert_eq!(info.op(), "KrConvert");
    assert_eq!(info.device_type(), "CPU");
    // Unique: forwarded; the input can no longer be read.
    let mut call = KernelCall::new(&info, [Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap()]);
    let mut ctx = call.context(&info);
    assert_eq!(ctx.node_name(), "n");
    assert_eq!(ctx.info().op(), "KrConvert");
    assert!(ctx.forward_input(0, 0).unwrap());
    assert_eq!(
        ctx.input(0).unwrap_err(),
        KernelError::InputForwarded { index: 0 }
    );
    assert_eq!(
        ctx.take_input(0).unwrap_err(),
        KernelError::InputForwarded { index: 0 }
    );
    ctx.output_mut(0).unwrap().as_mut_slice::<f32>().unwrap()[0] = 9.0;
    let out = call.into_outputs().unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[9.0, 2.0]);

    // Shared with the caller: not forwarded, the caller's tensor is intact
    // (over 16 bytes: a clone of a smaller tensor is a copy, never shared).
    let x = Tensor::from_vec([5], vec![1.0f32, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let mut call = KernelCall::new(&info, [x.clone()]);
    let mut ctx = call.context(&info);
    assert!(!ctx.forward_input(0, 0).unwrap());
    assert!(ctx.output(0).is_none());
    assert_eq!(
        ctx.input(0).unwrap().as_slice::<f32>().unwrap(),
        &[1.0, 2.0, 3.0, 4.0, 5.0]
    );
    drop(call);
    assert!(x.is_unique());
    // A small tensor's clone is a copy: forwarded, the caller's intact.
    let x = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let mut call = KernelCall::new(&info, [x.clone()]);
    let mut ctx = call.context(&info);
    assert!(ctx.forward_input(0, 0).unwrap());
    ctx.output_mut(0).unwrap().as_mut_slice::<f32>().unwrap()[0] = 9.0;
    assert_eq!(
        call.into_outputs().unwrap()[0].as_slice::<f32>().unwrap(),
        &[9.0, 2.0]
    );
    assert_eq!(x.as_slice::<f32>().unwrap(), &[1.0, 2.0]);

    // Another dtype: not forwarded.
    let info = float_info(vec![DataType::DtInt32]);
    let mut call = KernelCall::new(&info, [Tensor::from_vec([1], vec![1.0f32]).unwrap()]);
    let mut ctx = call.context(&info);
    assert!(!ctx.forward_input(0, 0).unwrap());
    assert_eq!(
        ctx.forward_input(0, 1).unwrap_err(),
        KernelError::OutputIndex { index: 1, count: 1 }
    );
    assert_eq!(
        ctx.forward_input(3, 0).unwrap_err(),
        KernelError::InputIndex { index: 3, count: 1 }
    );
}

#[test]
fn forward_input_with_shape_reshapes_or_refuses() {
    use registry_core::tensor::TensorShape;
    let info = float_info(vec![DataType::DtFloat]);
    let x = || Tensor::from_vec([2, 3], vec![0.0f32; 6]).unwrap();
    let mut call = KernelCall::new(&info, [x()]);
    let mut ctx = call.context(&info);
    assert!(
        !ctx.forward_input_with_shape(0, 0, &TensorShape::new([4]).unwrap())
            .unwrap()
    );
    assert!(
        ctx.forward_input_with_shape(0, 0, &TensorShape::new([3, 2]).unwrap())
            .unwrap()
    );
    assert_eq!(ctx.output(0).unwrap().dims(), &[3, 2]);
    let kept = x();
    let mut call = KernelCall::new(&info, [kept.clone()]);
    let mut ctx = call.context(&info);
    assert!(
        !ctx.forward_input_with_shape(0, 0, &TensorShape::new([6]).unwrap())
            .unwrap()
    );
}

#[test]
fn outputs_get_the_node_dtype_and_are_checked() {
    let info = NodeInfo::new(
        "n",
        "KrTwoOut",
        "CPU",
        vec![DataType::DtFloat],
        vec![DataType::DtInt64, DataType::DtHalf],
    );
    let mut call = KernelCall::new(&info, [Tensor::scalar(1.0f32)]);
    let mut ctx = call.context(&info);
    assert_eq!(ctx.num_inputs(), 1);
    assert_eq!(ctx.num_outputs(), 2);
    assert_eq!(ctx.output_type(1).unwrap(), DataType::DtHalf);
    assert_eq!(
        ctx.output_type(2).unwrap_err(),
        KernelError::OutputIndex { index: 2, count: 2 }
    );
    let out = ctx.allocate_output(0, [2, 2]).unwrap();
    assert_eq!(out.dtype(), DataType::DtInt64);
    assert_eq!(out.as_slice::<i64>().unwrap(), &[0; 4]);
    assert!(ctx.allocate_output(5, [1]).is_err());
    // set_output checks the dtype.
    let err = ctx.set_output(1, Tensor::scalar(1.0f32)).unwrap_err();
    assert_eq!(
        err,
        KernelError::OutputDtype {
            index: 1,
            expected: DataType::DtHalf,
            actual: DataType::DtFloat
        }
    );
    assert_eq!(
        err.to_string(),
        "output 1 was set with dtype float, but the node declares half"
    );
    assert_eq!(
        ctx.set_output(2, Tensor::scalar(1.0f32)).unwrap_err(),
        KernelError::OutputIndex { index: 2, count: 2 }
    );
    // Output 1 is still missing.
    assert_eq!(
        ctx.output_mut(1).unwrap_err(),
        KernelError::MissingOutput { index: 1 }
    );
    assert_eq!(
        ctx.output_mut(4).unwrap_err(),
        KernelError::OutputIndex { index: 4, count: 2 }
    );
    let err = call.into_outputs().unwrap_err();
    assert_eq!(err, KernelError::MissingOutput { index: 1 });
    assert_eq!(err.to_string(), "the kernel did not set output 1");
    // A huge output is an error, not an abort.
    let mut call = KernelCall::new(&info, [Tensor::scalar(1.0f32)]);
    let mut ctx = call.context(&info);
    assert!(matches!(
        ctx.allocate_output(0, [1usize << 62, 4]).unwrap_err(),
        KernelError::Tensor(_)
    ));
}

#[test]
fn input_accessors_check_indices_and_dtypes() {
    let info = float_info(vec![DataType::DtFloat]);
    let mut call = KernelCall::new(&info, [Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap()]);
    let mut ctx = call.context(&info);
    assert_eq!(ctx.input_slice::<f32>(0).unwrap(), &[1.0, 2.0]);
    let err = ctx.input_slice::<i32>(0).unwrap_err();
    assert!(matches!(err, KernelError::Tensor(_)), "{err}");
    assert_eq!(
        ctx.input(1).unwrap_err(),
        KernelError::InputIndex { index: 1, count: 1 }
    );
    assert_eq!(
        ctx.input(1).unwrap_err().to_string(),
        "input index 1 is out of range: the node has 1 inputs"
    );
    assert_eq!(
        ctx.take_input(2).unwrap_err(),
        KernelError::InputIndex { index: 2, count: 1 }
    );
    let taken = ctx.take_input(0).unwrap();
    assert_eq!(taken.num_elements(), 2);
    assert_eq!(
        ctx.input(0).unwrap_err(),
        KernelError::InputForwarded { index: 0 }
    );
}

// ------------------------------------------------------ create_op_kernel

#[test]
fn create_op_kernel_builds_macro_kernels() {
    let k = create_op_kernel("CPU", &unary_node(DataType::DtDouble)).unwrap();
    assert!(
        k.registration().kernel_name.ends_with("::kr_neg::<f64>"),
        "{}",
        k.registration().kernel_name
    );
    assert_eq!(k.info().input_types(), &[DataType::DtDouble]);
    let x = Tensor::from_vec([3], vec![1.0f64, -2.0, 0.5]).unwrap();
    let out = k.compute([x.clone()]).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[-1.0, 2.0, -0.5]);
    // Unique input: computed in place and returned.
    let out = k
        .compute([Tensor::from_vec([1], vec![4.0f64]).unwrap()])
        .unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[-4.0]);
    let _ = format!("{k:?}");
    let _ = k.kernel();

    // The struct form reads attrs (defaults included) once.
    let n = node(
        "a",
        "KrAttrs",
        &["x"],
        &[
            (
                "ten",
                value(Value::Tensor(Tensor::scalar(1.0f32).to_proto())),
            ),
            ("req", value(Value::I(0))),
            ("i", value(Value::I(4))),
        ],
    );
    let k = create_op_kernel("CPU", &n).unwrap();
    let out = k
        .compute([Tensor::from_vec([2], vec![1.0f32, 2.5]).unwrap()])
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[4.0, 10.0]);
}

#[test]
fn create_op_kernel_error_paths() {
    // Unknown op.
    let err = create_op_kernel("CPU", &node("n", "KrNoSuchOp", &[], &[])).unwrap_err();
    assert!(
        matches!(err, CreateKernelError::Op { ref node, .. } if node == "n"),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("node 'n': ") && msg.contains("KrNoSuchOp"),
        "{msg}"
    );

    // Invalid NodeDef: a missing required attr, a wrong input count.
    let err = create_op_kernel("CPU", &node("n", "KrUnary", &["x"], &[])).unwrap_err();
    assert!(matches!(err, CreateKernelError::NodeDef(_)), "{err:?}");
    assert!(err.to_string().contains('T'), "{err}");
    let err = create_op_kernel(
        "CPU",
        &node(
            "n",
            "KrUnary",
            &["x", "y"],
            &[("T", type_value(DataType::DtFloat))],
        ),
    )
    .unwrap_err();
    assert!(matches!(err, CreateKernelError::NodeDef(_)), "{err:?}");
    let err = create_op_kernel(
        "CPU",
        &node(
            "bad name!",
            "KrUnary",
            &["x"],
            &[("T", type_value(DataType::DtFloat))],
        ),
    )
    .unwrap_err();
    assert!(matches!(err, CreateKernelError::NodeDef(_)), "{err:?}");

    // A type the op allows, without a kernel.
    let err = create_op_kernel("CPU", &unary_node(DataType::DtInt32)).unwrap_err();
    assert!(
        matches!(
            err,
            CreateKernelError::Lookup(KernelLookupError::NotFound { .. })
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("(OpKernel was found, but attributes didn't match)")
    );

    // The constructor refuses: wrapped with node, op and kernel.
    let n = node(
        "conv",
        "KrConvert",
        &["x"],
        &[
            ("T", type_value(DataType::DtFloat)),
            ("U", type_value(DataType::DtInt32)),
        ],
    );
    let err = create_op_kernel("CPU", &n).unwrap_err();
    let CreateKernelError::Construction {
        node: node_name,
        op,
        kernel,
        source,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((node_name.as_str(), op.as_str()), ("conv", "KrConvert"));
    assert!(kernel.ends_with("::KrRefuses"), "{kernel}");
    assert_eq!(
        source,
        &KernelError::unimplemented("KrRefuses never builds")
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("building kernel ")
            && msg.ends_with(" for node 'conv' (op 'KrConvert'): KrRefuses never builds"),
        "{msg}"
    );
    assert!(std::error::Error::source(&err).is_some());

    // An attr error raised by the constructor (`s` is not UTF-8; validation
    // only checks the attr's kind).
    let n = node(
        "a",
        "KrAttrs",
        &["x"],
        &[
            (
                "ten",
                value(Value::Tensor(Tensor::scalar(1.0f32).to_proto())),
            ),
            ("req", value(Value::I(0))),
            ("s", value(Value::S(vec![0xff]))),
        ],
    );
    let err = create_op_kernel("CPU", &n).unwrap_err();
    assert!(
        matches!(&err, CreateKernelError::Construction { source: KernelError::Attr { attr, .. }, .. } if attr == "s"),
        "{err:?}"
    );
}

registry_core::register_device!("MyDevice", || Ok(std::sync::Arc::new(
    registry_core::device::HostDevice::new("MyDevice")
)));

#[test]
fn create_op_kernel_in_uses_the_given_registries() {
    let before = BUILT.load(Ordering::Relaxed);
    let kernels = registry(vec![reg("KrUnary", "MyDevice", &[], "", 0, "mine")]);
    let device = registry_core::device::open_device("MyDevice").unwrap();
    let k = create_op_kernel_in(
        OpRegistry::global(),
        &kernels,
        &device,
        &unary_node(DataType::DtInt32),
    )
    .unwrap();
    assert_eq!(k.registration().kernel_name, "mine");
    assert_eq!(k.info().device_type(), "MyDevice");
    assert!(BUILT.load(Ordering::Relaxed) > before);
    // The global registry has no MyDevice kernel.
    let err = create_op_kernel("MyDevice", &unary_node(DataType::DtInt32)).unwrap_err();
    assert!(err.to_string().contains("for 'MyDevice' devices"), "{err}");
}

// ------------------------------------------------- KernelInstance::compute

#[test]
fn compute_checks_input_count_and_dtypes() {
    let k = create_op_kernel("CPU", &unary_node(DataType::DtFloat)).unwrap();
    let err = k.compute([]).unwrap_err();
    assert_eq!(
        err,
        KernelError::InputCount {
            expected: 1,
            actual: 0
        }
    );
    assert_eq!(err.to_string(), "expected 1 inputs, got 0");
    let err = k
        .compute([Tensor::scalar(1.0f32), Tensor::scalar(2.0f32)])
        .unwrap_err();
    assert_eq!(
        err,
        KernelError::InputCount {
            expected: 1,
            actual: 2
        }
    );
    let err = k.compute([Tensor::scalar(1i32)]).unwrap_err();
    assert_eq!(
        err,
        KernelError::InputDtype {
            index: 0,
            expected: DataType::DtFloat,
            actual: DataType::DtInt32
        }
    );
    assert_eq!(
        err.to_string(),
        "input 0 has dtype int32, but the node expects float"
    );
    // A kernel that leaves an output unset.
    let k = create_op_kernel("CPU", &node("two", "KrTwoOut", &["x"], &[])).unwrap();
    let err = k.compute([Tensor::scalar(1.0f32)]).unwrap_err();
    assert_eq!(err, KernelError::MissingOutput { index: 1 });
}
