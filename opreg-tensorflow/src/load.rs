//! What happens while TensorFlow loads an op library: TensorFlow found and
//! checked, the library's ops registered (those TensorFlow lacks), their
//! kernels registered, and every problem that stops the load reported as
//! TensorFlow's load error.

use std::collections::{BTreeMap, HashSet};
use std::ffi::CString;
use std::sync::OnceLock;

use prost::Message;
use registry_core::kernel::{KernelRegistration, TypeConstraint};
use registry_core::library::LibraryContents;
use registry_core::proto::op_def::ArgDef;
use registry_core::proto::{KernelList, OpDef, OpList};
use registry_core::spec::op_spec;

use crate::api::{ApiError, LoadErrorApi, Tensorflow, TfApi, tensorflow};
use crate::kernels::{compute, delete};
use crate::shapes::BridgedShapeFn;
use crate::slots::{SLOTS, create_fn, shape_fn};
use crate::status::{Status, c_string};

/// The oldest TensorFlow minor version of 2.x this crate supports: the
/// C API functions it calls are all there (it is tested with 2.21).
pub const MIN_TF_MINOR: u32 = 16;

/// A crate whose ops and kernels go to TensorFlow when TensorFlow loads the
/// library (what `export_tensorflow_library!` submits).
#[derive(Debug)]
pub struct TfExport {
    /// The crate's name.
    pub crate_name: &'static str,
}

inventory::collect!(TfExport);

/// A kernel registration TensorFlow may ask to build.
pub(crate) struct LoadedKernel {
    pub(crate) registration: &'static KernelRegistration,
    pub(crate) op_def: OpDef,
}

/// What the library gave TensorFlow, by slot.
pub(crate) struct Loaded {
    pub(crate) api: &'static TfApi,
    pub(crate) shape_fns: Vec<BridgedShapeFn>,
    pub(crate) kernels: Vec<LoadedKernel>,
}

static LOADED: OnceLock<Loaded> = OnceLock::new();

/// The library's registrations with TensorFlow, once made.
pub(crate) fn loaded() -> Option<&'static Loaded> {
    LOADED.get()
}

/// The load-time entry point: registers every exported crate's ops and
/// kernels with the TensorFlow of this process, if one is loaded.
pub(crate) fn load_into_tensorflow() {
    let crates: Vec<&'static str> = inventory::iter::<TfExport>
        .into_iter()
        .map(|e| e.crate_name)
        .collect();
    if crates.is_empty() || LOADED.get().is_some() {
        return;
    }
    let library = crates.join(", ");
    let tf = match tensorflow() {
        Ok(tf) => tf,
        Err(ApiError::NotLoaded) => return,
        Err(ApiError::Missing { missing, report }) => {
            let message = format!(
                "opreg op library {library} cannot load into this TensorFlow: its C API lacks {}",
                missing.join(", ")
            );
            match report {
                Some(report) => report_load_error(report, &message),
                // Without the registration functions, TensorFlow cannot
                // even be told.
                None => eprintln!("{message}"),
            }
            return;
        }
    };
    if let Err(message) = check_version(tf) {
        report_load_error(
            &tf.api.load_error_api(),
            &format!("opreg op library {library}: {message}"),
        );
        return;
    }
    let contents: Vec<LibraryContents> =
        crates.iter().map(|c| LibraryContents::collect(c)).collect();
    match plan(tf, &contents) {
        Ok(plan) => register(tf, plan),
        Err(message) => report_load_error(
            &tf.api.load_error_api(),
            &format!("opreg op library {library}: {message}"),
        ),
    }
}

/// Checks `TF_Version()` (when TensorFlow has it) against the versions this
/// crate supports.
fn check_version(tf: &Tensorflow) -> Result<(), String> {
    tf.version.as_deref().map_or(Ok(()), check_version_string)
}

/// Accepts TensorFlow 2.[`MIN_TF_MINOR`] and later 2.x versions.
fn check_version_string(version: &str) -> Result<(), String> {
    let mut parts = version.split(['.', '-']).map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(2), Some(minor)) if minor >= MIN_TF_MINOR => Ok(()),
        _ => Err(format!(
            "TensorFlow {version} is not supported (opreg-tensorflow {} supports TensorFlow 2.{MIN_TF_MINOR} and later 2.x releases)",
            env!("CARGO_PKG_VERSION")
        )),
    }
}

/// An op to register with TensorFlow.
struct PlannedOp {
    op_def: OpDef,
    shape_slot: Option<usize>,
}

/// A kernel to register: its slot and each type combination of its
/// constraints (TensorFlow's C API takes one type per attr).
struct PlannedKernel {
    slot: usize,
    combinations: Vec<Vec<(&'static str, i32)>>,
}

/// Everything to register, decided before anything is.
struct Plan {
    ops: Vec<PlannedOp>,
    kernels: Vec<PlannedKernel>,
    loaded: Loaded,
}

/// Decides what to register: the ops TensorFlow lacks (an op it has is
/// kept as it is; its kernels are added only when its definition is the
/// library's), and the CPU kernels of the ops that end up registered.
fn plan(tf: &'static Tensorflow, contents: &[LibraryContents]) -> Result<Plan, String> {
    let api = &tf.api;
    let existing = existing_ops(api);
    let mut ops = Vec::new();
    let mut shape_fns = Vec::new();
    let mut kernel_ops: BTreeMap<String, OpDef> = BTreeMap::new();
    let mut registrations: Vec<_> = contents
        .iter()
        .flat_map(|c| c.ops.iter().copied())
        .collect();
    registrations.sort_by_key(|r| r.name);
    for registration in registrations {
        let op_def = OpDef::decode(registration.op_def)
            .map_err(|e| format!("op {}'s OpDef does not decode: {e}", registration.name))?;
        if let Some(theirs) = existing.get(&op_def.name) {
            if without_docs(theirs) == without_docs(&op_def) {
                kernel_ops.insert(op_def.name.clone(), op_def);
            } else {
                eprintln!(
                    "opreg: op '{}' ({}) is not registered with TensorFlow: TensorFlow has an op of that name with another definition, which stays; its kernels are not registered either",
                    op_def.name, registration.location
                );
            }
            continue;
        }
        for problem in inexpressible(&op_def) {
            eprintln!("opreg: op '{}': {problem}", op_def.name);
        }
        let shape_slot = match registration.shape_fn {
            Some(f) if shape_fns.len() < SLOTS => {
                shape_fns.push(BridgedShapeFn::new(&op_def, f));
                Some(shape_fns.len() - 1)
            }
            Some(_) => return Err(format!("more than {SLOTS} ops with shape functions")),
            None => None,
        };
        kernel_ops.insert(op_def.name.clone(), op_def.clone());
        ops.push(PlannedOp { op_def, shape_slot });
    }
    let mut kernels = Vec::new();
    let mut loaded_kernels = Vec::new();
    let registered: HashSet<&str> = ops.iter().map(|o| o.op_def.name.as_str()).collect();
    for &registration in contents.iter().flat_map(|c| c.kernels.iter()) {
        if registration.device != "CPU" {
            // TensorFlow's C API gives no CUDA stream to kernels on its own
            // GPU device (only to pluggable devices): GPU kernels stay
            // opreg's.
            continue;
        }
        let Some(op_def) = kernel_ops.get(registration.op) else {
            continue;
        };
        if !registered.contains(registration.op) && tf_has_kernel(api, registration) {
            eprintln!(
                "opreg: kernel {} of op '{}' is not registered with TensorFlow: it has a kernel for the same device and types",
                registration.kernel_name, registration.op
            );
            continue;
        }
        if loaded_kernels.len() >= SLOTS {
            return Err(format!("more than {SLOTS} kernel registrations"));
        }
        kernels.push(PlannedKernel {
            slot: loaded_kernels.len(),
            combinations: combinations(registration.constraints),
        });
        loaded_kernels.push(LoadedKernel {
            registration,
            op_def: op_def.clone(),
        });
    }
    Ok(Plan {
        ops,
        kernels,
        loaded: Loaded {
            api,
            shape_fns,
            kernels: loaded_kernels,
        },
    })
}

/// The ops TensorFlow has now, by name (none when it cannot tell).
fn existing_ops(api: &TfApi) -> BTreeMap<String, OpDef> {
    let Some(get_all) = api.TF_GetAllOpList else {
        return BTreeMap::new();
    };
    // SAFETY: TF_GetAllOpList has no preconditions; the buffer is read and
    // then deleted once.
    let list = unsafe {
        let buffer = get_all();
        if buffer.is_null() {
            return BTreeMap::new();
        }
        let bytes = std::slice::from_raw_parts((*buffer).data.cast::<u8>(), (*buffer).length);
        let list = OpList::decode(bytes);
        (api.TF_DeleteBuffer)(buffer);
        list
    };
    list.map(|l| l.op.into_iter().map(|op| (op.name.clone(), op)).collect())
        .unwrap_or_default()
}

/// True when TensorFlow already has a kernel with `registration`'s device,
/// label, priority and type constraints (a library loaded twice, from two
/// paths, or one adding a kernel TensorFlow has).
fn tf_has_kernel(api: &TfApi, registration: &KernelRegistration) -> bool {
    let Some(get_kernels) = api.TF_GetRegisteredKernelsForOp else {
        return false;
    };
    let ours = registration.kernel_def();
    let name = c_string(registration.op);
    let status = Status::new(api);
    // SAFETY: the name and status are live; the buffer is read and then
    // deleted once.
    let list = unsafe {
        let buffer = get_kernels(name.as_ptr(), status.raw());
        if buffer.is_null() {
            return false;
        }
        let bytes = std::slice::from_raw_parts((*buffer).data.cast::<u8>(), (*buffer).length);
        let list = KernelList::decode(bytes);
        (api.TF_DeleteBuffer)(buffer);
        list
    };
    list.is_ok_and(|list| {
        list.kernel.iter().any(|k| {
            k.device_type == ours.device_type
                && k.label == ours.label
                && k.priority == ours.priority
                && k.constraint == ours.constraint
        })
    })
}

/// The OpDef without its Doc text (TensorFlow's C API cannot set it, so
/// TensorFlow's copy of a library's op has none).
pub fn without_docs(op_def: &OpDef) -> OpDef {
    let mut op_def = op_def.clone();
    op_def.summary.clear();
    op_def.description.clear();
    let clear = |args: &mut Vec<ArgDef>| args.iter_mut().for_each(|a| a.description.clear());
    clear(&mut op_def.input_arg);
    clear(&mut op_def.output_arg);
    op_def.attr.iter_mut().for_each(|a| a.description.clear());
    op_def
}

/// What of `op_def` TensorFlow's C API cannot say (so TensorFlow's copy
/// lacks it).
fn inexpressible(op_def: &OpDef) -> Vec<String> {
    let mut problems = Vec::new();
    if !op_def.control_output.is_empty() {
        problems.push(
            "its control outputs are not given to TensorFlow (the C API has no call for them)"
                .to_owned(),
        );
    }
    let typed = |a: &ArgDef| a.experimental_full_type.is_some() || !a.handle_data.is_empty();
    if op_def.input_arg.iter().chain(&op_def.output_arg).any(typed) {
        problems.push("its full type is not given to TensorFlow (the C API has no call for type constructors)".to_owned());
    }
    if op_def.is_distributed_communication {
        problems.push("its is_distributed_communication flag is not given to TensorFlow (the C API has no call for it)".to_owned());
    }
    problems
}

/// Every combination of one type per constrained attr.
fn combinations(constraints: &'static [TypeConstraint]) -> Vec<Vec<(&'static str, i32)>> {
    let mut combos: Vec<Vec<(&'static str, i32)>> = vec![Vec::new()];
    for constraint in constraints {
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                constraint.types.iter().map(move |&t| {
                    let mut next = combo.clone();
                    next.push((constraint.attr, t as i32));
                    next
                })
            })
            .collect();
    }
    combos
}

/// Registers the plan with TensorFlow: the ops (deferred by TensorFlow
/// until the library is loaded, then checked and recorded for the
/// library's Python wrappers), then the kernels.
fn register(tf: &'static Tensorflow, plan: Plan) {
    let Plan {
        ops,
        kernels,
        loaded,
    } = plan;
    let loaded = LOADED.get_or_init(|| loaded);
    let api = &tf.api;
    for op in &ops {
        if let Err(message) = register_op(api, op) {
            report_load_error(
                &api.load_error_api(),
                &format!("op '{}': {message}", op.op_def.name),
            );
            return;
        }
    }
    for kernel in &kernels {
        let registration = loaded.kernels[kernel.slot].registration;
        if let Err(message) = register_kernel(api, kernel, registration) {
            report_load_error(
                &api.load_error_api(),
                &format!(
                    "kernel {} of op '{}': {message}",
                    registration.kernel_name, registration.op
                ),
            );
            return;
        }
    }
}

/// Registers one op from its spec strings, as `REGISTER_OP` would.
fn register_op(api: &TfApi, op: &PlannedOp) -> Result<(), String> {
    let spec = op_spec(&op.op_def);
    let name = c_string(&op.op_def.name);
    // SAFETY: (all calls) the builder is live from its creation until
    // TF_RegisterOpDefinition takes it; the strings outlive each call.
    unsafe {
        let builder = (api.TF_NewOpDefinitionBuilder)(name.as_ptr());
        for attr in &spec.attrs {
            (api.TF_OpDefinitionBuilderAddAttr)(builder, c_string(attr).as_ptr());
        }
        for input in &spec.inputs {
            (api.TF_OpDefinitionBuilderAddInput)(builder, c_string(input).as_ptr());
        }
        for output in &spec.outputs {
            (api.TF_OpDefinitionBuilderAddOutput)(builder, c_string(output).as_ptr());
        }
        // TensorFlow's setters ignore their bool and set the flag: call
        // them only for the flags that are set.
        let op_def = &op.op_def;
        if op_def.is_commutative {
            (api.TF_OpDefinitionBuilderSetIsCommutative)(builder, true);
        }
        if op_def.is_aggregate {
            (api.TF_OpDefinitionBuilderSetIsAggregate)(builder, true);
        }
        if op_def.is_stateful {
            (api.TF_OpDefinitionBuilderSetIsStateful)(builder, true);
        }
        if op_def.allows_uninitialized_input {
            (api.TF_OpDefinitionBuilderSetAllowsUninitializedInput)(builder, true);
        }
        if let Some(deprecation) = &op_def.deprecation {
            let explanation = c_string(&deprecation.explanation);
            (api.TF_OpDefinitionBuilderDeprecated)(
                builder,
                deprecation.version,
                explanation.as_ptr(),
            );
        }
        if let Some(f) = op.shape_slot.and_then(shape_fn) {
            (api.TF_OpDefinitionBuilderSetShapeInferenceFunction)(builder, f);
        }
        let status = Status::new(api);
        (api.TF_RegisterOpDefinition)(builder, status.raw());
        status.check().map_err(|(_, message)| message)
    }
}

/// Registers one kernel registration: one TensorFlow kernel per type
/// combination of its constraints.
fn register_kernel(
    api: &TfApi,
    kernel: &PlannedKernel,
    registration: &KernelRegistration,
) -> Result<(), String> {
    let create = create_fn(kernel.slot).ok_or("no create slot")?;
    let op = c_string(registration.op);
    let device = c_string(registration.device);
    let name = c_string(registration.kernel_name);
    let label = c_string(registration.label);
    let host_memory: Vec<CString> = registration
        .host_memory
        .iter()
        .map(|a| c_string(a))
        .collect();
    for combination in &kernel.combinations {
        let status = Status::new(api);
        // SAFETY: (all calls) the builder is live from its creation until
        // TF_RegisterKernelBuilder takes it (or it is deleted on error);
        // the strings outlive each call.
        unsafe {
            let builder =
                (api.TF_NewKernelBuilder)(op.as_ptr(), device.as_ptr(), create, compute, delete);
            for (attr, dtype) in combination {
                (api.TF_KernelBuilder_TypeConstraint)(
                    builder,
                    c_string(attr).as_ptr(),
                    *dtype,
                    status.raw(),
                );
                if let Err((_, message)) = status.check() {
                    (api.TF_DeleteKernelBuilder)(builder);
                    return Err(message);
                }
            }
            for arg in &host_memory {
                (api.TF_KernelBuilder_HostMemory)(builder, arg.as_ptr());
            }
            if registration.priority != 0 {
                (api.TF_KernelBuilder_Priority)(builder, registration.priority);
            }
            if !registration.label.is_empty() {
                (api.TF_KernelBuilder_Label)(builder, label.as_ptr());
            }
            (api.TF_RegisterKernelBuilder)(name.as_ptr(), builder, status.raw());
        }
        status.check().map_err(|(_, message)| message)?;
    }
    Ok(())
}

/// Fails TensorFlow's load of this library with `message`.
///
/// The load happens in TensorFlow's `dlopen`, where a library cannot return
/// an error; but TensorFlow checks the ops registered meanwhile right after
/// it, and fails the load with the first registration's error. So the
/// message goes in an op registration that TensorFlow will reject: an attr
/// spec that is not one (TensorFlow's message quotes it), of an op named
/// `OpregLibraryLoadError`.
fn report_load_error(api: &LoadErrorApi, message: &str) {
    eprintln!("{message}");
    let name = c_string("OpregLibraryLoadError");
    let spec = c_string(&format!("{message} (this op library cannot be used)"));
    // SAFETY: the status is live until deleted, once; the builder is live
    // until TF_RegisterOpDefinition takes it; the strings outlive the calls.
    unsafe {
        let status = (api.TF_NewStatus)();
        let builder = (api.TF_NewOpDefinitionBuilder)(name.as_ptr());
        (api.TF_OpDefinitionBuilderAddAttr)(builder, spec.as_ptr());
        (api.TF_RegisterOpDefinition)(builder, status);
        (api.TF_DeleteStatus)(status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::proto::DataType;
    use registry_core::spec::OpSpec;

    #[test]
    fn versions_before_2_16_and_other_majors_are_refused() {
        assert!(check_version_string("2.21.0").is_ok());
        assert!(check_version_string("2.16.1").is_ok());
        assert!(check_version_string("2.30.0-rc1").is_ok());
        let old = check_version_string("2.15.0").unwrap_err();
        assert!(
            old.contains("TensorFlow 2.15.0 is not supported") && old.contains("2.16 and later"),
            "{old}"
        );
        assert!(check_version_string("3.0.0").is_err());
        assert!(check_version_string("1.15.5").is_err());
        assert!(check_version_string("nightly").is_err());
    }

    #[test]
    fn each_type_combination_of_the_constraints_is_one_kernel() {
        static T: [DataType; 2] = [DataType::DtFloat, DataType::DtDouble];
        static U: [DataType; 3] = [DataType::DtInt32, DataType::DtInt64, DataType::DtBool];
        static CONSTRAINTS: [TypeConstraint; 2] = [
            TypeConstraint {
                attr: "T",
                types: &T,
            },
            TypeConstraint {
                attr: "U",
                types: &U,
            },
        ];
        let combos = combinations(&CONSTRAINTS);
        assert_eq!(combos.len(), 6);
        assert_eq!(
            combos[0],
            [
                ("T", DataType::DtFloat as i32),
                ("U", DataType::DtInt32 as i32)
            ]
        );
        assert_eq!(
            combos[5],
            [
                ("T", DataType::DtDouble as i32),
                ("U", DataType::DtBool as i32)
            ]
        );
        assert_eq!(combinations(&[]), [Vec::<(&str, i32)>::new()]);
    }

    #[test]
    fn definitions_compare_without_their_docs() {
        let documented = OpSpec::new("Scale")
            .input("x: T")
            .output("y: T")
            .attr("T: {float, double}")
            .doc("Scales.\n\nx: the input.\ny: the output.\nT: the type.")
            .build()
            .unwrap();
        let bare = OpSpec::new("Scale")
            .input("x: T")
            .output("y: T")
            .attr("T: {float, double}")
            .build()
            .unwrap();
        assert_ne!(documented, bare);
        assert_eq!(without_docs(&documented), bare);
        let other = OpSpec::new("Scale")
            .input("x: T")
            .output("y: T")
            .attr("T: {float}")
            .build()
            .unwrap();
        assert_ne!(without_docs(&documented), other);
    }

    #[test]
    fn what_the_c_api_cannot_say_is_named() {
        let plain = OpSpec::new("Plain")
            .input("x: float")
            .output("y: float")
            .build()
            .unwrap();
        assert!(inexpressible(&plain).is_empty());
        let controlled = OpSpec::new("Controlled")
            .control_output("done")
            .build()
            .unwrap();
        assert!(inexpressible(&controlled)[0].contains("control outputs"));
    }
}
