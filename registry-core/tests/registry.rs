//! Run-time registration, lookup errors, export, the watcher and thread
//! safety of the op registry, each on its own (non-global) registry.

// The standard ops, which these tests look up (linked by naming the crate).
use opreg_standard_ops as _;

use std::sync::{Arc, Barrier, Mutex};

use registry_core::proto::{DataType, NodeDef, OpDef, OpList, TextFormat, op_def::ArgDef};
use registry_core::registry::{InvalidOp, OpOrigin, OpRegistrationData, OpRegistry, RegistryError};
use registry_core::shape::{InferenceContext, Shape, ShapeError};
use registry_core::spec::OpSpec;

fn unary(name: &str) -> OpSpec {
    OpSpec::new(name)
        .input("x: T")
        .output("y: T")
        .attr("T: {float, int32}")
}

fn same_shape(ctx: &mut InferenceContext) -> Result<(), ShapeError> {
    for i in 0..ctx.num_outputs() {
        let shape = ctx.input(i)?.clone();
        ctx.set_output(i, shape)?;
    }
    Ok(())
}

#[test]
fn registry_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OpRegistry>();
    assert_send_sync::<OpRegistrationData>();
    assert_send_sync::<RegistryError>();
}

#[test]
fn register_and_look_up() {
    let registry = OpRegistry::new();
    assert!(registry.is_empty());
    let spec = unary("Square").doc("Squares x.");
    let line = line!() + 1;
    registry.register(spec, Some(same_shape)).unwrap();
    let data = registry.look_up("Square").unwrap();
    assert_eq!(data.name(), "Square");
    assert_eq!(data.op_def().attr[0].name, "T");
    assert_eq!(data.op_def().summary, "Squares x.");
    let OpOrigin::RunTime(caller) = data.origin() else {
        panic!("{:?}", data.origin())
    };
    assert_eq!((caller.file(), caller.line()), (file!(), line));
    assert!(data.origin().source_location().is_none());
    let shape_fn = data.shape_fn().unwrap();
    let node = NodeDef {
        name: "sq".into(),
        op: "Square".into(),
        ..Default::default()
    };
    let inputs = [Shape::from([2])];
    let mut ctx = InferenceContext::new(&node, data.op_def(), &inputs, &[]).unwrap();
    ctx.run(shape_fn).unwrap();
    assert_eq!(ctx.into_outputs().unwrap(), inputs);
    assert_eq!(registry.look_up_op_def("Square").unwrap(), data.op_def());
    assert!(registry.contains("Square"));
    assert_eq!(registry.len(), 1);
}

#[test]
fn look_up_references_stay_valid_while_registering() {
    let registry = OpRegistry::new();
    registry.register(unary("First"), None).unwrap();
    let first = registry.look_up("First").unwrap();
    for i in 0..1000 {
        registry.register(unary(&format!("Grow{i}")), None).unwrap();
    }
    assert_eq!(first.name(), "First");
    assert!(std::ptr::eq(first, registry.look_up("First").unwrap()));
}

#[test]
fn not_found_suggests_nearest_names() {
    let registry = OpRegistry::new();
    for name in ["MatMul", "BatchMatMul", "Conv2D", "Relu", "Relu6"] {
        registry.register(unary(name), None).unwrap();
    }
    let suggestions = |name: &str| match registry.look_up(name) {
        Err(RegistryError::NotFound { suggestions, .. }) => suggestions,
        other => panic!("{other:?}"),
    };
    assert_eq!(suggestions("MatMull"), ["MatMul"]);
    assert_eq!(suggestions("conv2d"), ["Conv2D"]);
    assert_eq!(suggestions("Relu5"), ["Relu", "Relu6"]);
    assert!(suggestions("Softmax").is_empty());

    let message = registry.look_up("Relu5").unwrap_err().to_string();
    assert_eq!(
        message,
        "op 'Relu5' is not registered in this binary; did you mean 'Relu' or 'Relu6'?"
    );
    let message = registry.look_up("Softmax").unwrap_err().to_string();
    assert!(message.contains("link_ops!"), "{message}");
}

#[test]
fn duplicates_are_refused_and_name_both_places() {
    let registry = OpRegistry::new();
    let first_line = line!() + 1;
    registry.register(unary("Dup"), None).unwrap();
    let second_line = line!() + 1;
    let err = registry.register(OpSpec::new("Dup"), None).unwrap_err();
    let RegistryError::AlreadyExists {
        name,
        first: OpOrigin::RunTime(first),
        again: OpOrigin::RunTime(again),
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(name, "Dup");
    assert_eq!((first.line(), again.line()), (first_line, second_line));
    let message = err.to_string();
    assert!(
        message.contains(&format!("{}:{first_line}:", file!())),
        "{message}"
    );
    assert!(
        message.contains(&format!("{}:{second_line}:", file!())),
        "{message}"
    );
    // The first registration is kept.
    assert_eq!(registry.look_up("Dup").unwrap().op_def().input_arg.len(), 1);

    // Same through register_op_def.
    let err = registry
        .register_op_def(
            OpDef {
                name: "Dup".into(),
                ..OpDef::default()
            },
            None,
        )
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::AlreadyExists { .. }),
        "{err:?}"
    );
}

#[test]
fn invalid_specs_report_every_error() {
    let registry = OpRegistry::new();
    let spec = OpSpec::new("Bad").input("x: Q").attr("T: {flaot}");
    let err = registry.register(spec, None).unwrap_err();
    let RegistryError::Invalid {
        name,
        origin: OpOrigin::RunTime(_),
        reason: InvalidOp::Spec(errors),
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(name, "Bad");
    assert!(!errors.errors().is_empty());
    assert!(
        err.to_string()
            .starts_with("invalid registration of op 'Bad' (registered at run time at"),
        "{err}"
    );
    assert!(!registry.contains("Bad"), "an invalid op is not registered");
}

#[test]
fn register_op_def_validates() {
    let registry = OpRegistry::new();
    let bad = OpDef {
        name: "lower_case".into(),
        ..OpDef::default()
    };
    let err = registry.register_op_def(bad, None).unwrap_err();
    assert!(
        matches!(
            err,
            RegistryError::Invalid {
                reason: InvalidOp::Validation(_),
                ..
            }
        ),
        "{err:?}"
    );

    let good = OpDef {
        name: "Identity2".into(),
        input_arg: vec![ArgDef {
            name: "x".into(),
            r#type: DataType::DtFloat as i32,
            ..ArgDef::default()
        }],
        output_arg: vec![ArgDef {
            name: "y".into(),
            r#type: DataType::DtFloat as i32,
            ..ArgDef::default()
        }],
        ..OpDef::default()
    };
    registry.register_op_def(good.clone(), None).unwrap();
    assert_eq!(registry.look_up_op_def("Identity2").unwrap(), &good);
}

#[test]
fn export_is_sorted_and_hides_internal_ops() {
    let registry = OpRegistry::new();
    for name in ["Zeta", "_Internal", "Alpha", "Mid"] {
        registry.register(unary(name), None).unwrap();
    }
    let names = |list: &OpList| list.op.iter().map(|op| op.name.clone()).collect::<Vec<_>>();
    let public = registry.export_op_list(false);
    assert_eq!(names(&public), ["Alpha", "Mid", "Zeta"]);
    assert_eq!(
        names(&registry.export_op_list(true)),
        ["Alpha", "Mid", "Zeta", "_Internal"]
    );
    assert_eq!(registry.op_names(), ["Alpha", "Mid", "Zeta", "_Internal"]);

    let text = registry.debug_string(false);
    assert_eq!(OpList::from_pbtxt(&text).unwrap(), public);
    assert!(!text.contains("_Internal"));
    assert!(registry.process_registrations().is_ok());
}

#[test]
fn watcher_sees_every_later_registration() {
    let registry = OpRegistry::new();
    registry.register(unary("Before"), None).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    registry
        .set_watcher(move |result, op_def| {
            log.lock()
                .unwrap()
                .push((op_def.name.clone(), result.clone()))
        })
        .unwrap();
    assert_eq!(
        registry.set_watcher(|_, _| {}),
        Err(RegistryError::WatcherAlreadySet)
    );

    registry.register(unary("After"), None).unwrap();
    let _ = registry.register(unary("After"), None);
    let _ = registry.register(OpSpec::new("Broken").attr("T: {flaot}"), None);
    {
        let seen = seen.lock().unwrap();
        let summary: Vec<_> = seen
            .iter()
            .map(|(name, result)| (name.as_str(), result.is_ok()))
            .collect();
        assert_eq!(
            summary,
            [("After", true), ("After", false), ("Broken", false)]
        );
        assert!(matches!(
            seen[1].1,
            Err(RegistryError::AlreadyExists { .. })
        ));
        assert!(matches!(seen[2].1, Err(RegistryError::Invalid { .. })));
    }

    assert!(registry.clear_watcher());
    assert!(!registry.clear_watcher());
    registry.register(unary("Unwatched"), None).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 3);
    registry.set_watcher(|_, _| {}).unwrap();
}

#[test]
fn watcher_may_use_the_registry() {
    let registry = Arc::new(OpRegistry::new());
    let inner = Arc::clone(&registry);
    let found = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&found);
    registry
        .set_watcher(move |_, op_def| {
            log.lock()
                .unwrap()
                .push(inner.look_up(&op_def.name).is_ok())
        })
        .unwrap();
    registry.register(unary("Reentrant"), None).unwrap();
    assert_eq!(*found.lock().unwrap(), [true]);
    // Break the Arc cycle (registry -> watcher -> registry).
    registry.clear_watcher();
}

#[test]
fn concurrent_registration_and_lookup() {
    const THREADS: usize = 8;
    const OPS: usize = 200;
    let registry = OpRegistry::new();
    registry.register(unary("Shared0"), None).unwrap();
    let barrier = Barrier::new(THREADS);
    let outcomes: Vec<(usize, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (registry, barrier) = (&registry, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let (mut won, mut refused) = (0, 0);
                    for i in 0..OPS {
                        // Every thread races for the same names, and adds its own.
                        match registry.register(unary(&format!("Race{i}")), None) {
                            Ok(()) => won += 1,
                            Err(RegistryError::AlreadyExists { .. }) => refused += 1,
                            Err(e) => panic!("{e}"),
                        }
                        registry
                            .register(unary(&format!("Own{t}x{i}")), None)
                            .unwrap();
                        assert_eq!(registry.look_up("Shared0").unwrap().name(), "Shared0");
                        assert_eq!(
                            registry.look_up(&format!("Race{i}")).unwrap().name(),
                            format!("Race{i}")
                        );
                        assert!(registry.look_up(&format!("Own{t}x{i}")).is_ok());
                    }
                    (won, refused)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let won: usize = outcomes.iter().map(|o| o.0).sum();
    let refused: usize = outcomes.iter().map(|o| o.1).sum();
    assert_eq!(won, OPS, "each raced name is registered exactly once");
    assert_eq!(refused, OPS * (THREADS - 1));
    assert_eq!(registry.len(), 1 + OPS + THREADS * OPS);
    assert_eq!(registry.export_op_list(false).op.len(), registry.len());
}
