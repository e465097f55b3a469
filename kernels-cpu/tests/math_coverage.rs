//! Every math op has a CPU kernel for every type TF 2.21's CPU kernels
//! have (`shared/graphs/tf_cpu_kernels.md`, minus variant, resource and
//! float8 types): a node per type is built and `create_op_kernel` must
//! succeed, and the kernel must run on a small input of that type.

use crate::math_common;

use std::path::PathBuf;

use math_common::*;
use registry_core::create_op_kernel;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::Tensor;

fn kernels_md() -> String {
    let dir = std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    std::fs::read_to_string(dir.join("graphs/tf_cpu_kernels.md")).unwrap()
}

/// The `T=` types TF registers for `op` (None for "(no constraint)").
fn tf_types(md: &str, op: &str) -> Option<Vec<String>> {
    let prefix = format!("- **{op}** (");
    let line = md
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{op}"));
    let regs = line.split_once("): ").unwrap().1;
    if regs.trim() == "(no constraint)" {
        return None;
    }
    Some(
        regs.split("; ")
            .map(|r| {
                r.trim()
                    .strip_prefix("T=")
                    .unwrap_or_else(|| panic!("{op}: {r}"))
                    .to_owned()
            })
            .collect(),
    )
}

/// A small tensor of `dtype` (values 1).
fn ones(dtype: DataType, n: usize) -> Tensor {
    match dtype {
        DataType::DtString => Tensor::from_strings([n], vec![b"x".to_vec(); n]).unwrap(),
        DataType::DtBool => Tensor::from_vec([n], vec![true; n]).unwrap(),
        _ => {
            let ints = Tensor::from_vec([n], vec![1i32; n]).unwrap();
            let k = create(&node(
                "Cast",
                &[DataType::DtInt32],
                &[("DstT", dtype.into())],
            ));
            k.compute([ints]).unwrap().remove(0)
        }
    }
}

#[test]
fn every_tf_type_has_a_kernel() {
    kernels_cpu::link();
    let md = kernels_md();
    let mut count = 0;
    for op in MATH_OPS {
        let Some(types) = tf_types(&md, op) else {
            continue;
        };
        for name in types {
            if name == "variant" || name == "resource" || name.starts_with("float8") {
                continue;
            }
            let dt = DataType::from_type_name(&name).unwrap_or_else(|e| panic!("{op}: {e}"));
            let dtypes = match *op {
                "Select" | "SelectV2" => vec![DataType::DtBool, dt, dt],
                "Abs" | "Neg" | "Exp" | "Log" | "Sqrt" | "Rsqrt" | "Square" | "Sigmoid"
                | "Tanh" | "Floor" => vec![dt],
                _ => vec![dt, dt],
            };
            let k = create_op_kernel("CPU", &node(op, &dtypes, &[]))
                .unwrap_or_else(|e| panic!("{op} T={name}: {e}"));
            let x = ones(dt, 3);
            let args: Vec<Tensor> = match dtypes.len() {
                1 => vec![x],
                2 => vec![x.clone(), x],
                _ => vec![
                    Tensor::from_vec([3], vec![true, false, true]).unwrap(),
                    x.clone(),
                    x,
                ],
            };
            let out = k
                .compute(args)
                .unwrap_or_else(|e| panic!("{op} T={name}: {e}"));
            assert_eq!(out[0].dims(), &[3], "{op} T={name}");
            count += 1;
        }
    }
    assert!(count > 200, "{count} registrations checked");
}

#[test]
fn unconstrained_ops() {
    kernels_cpu::link();
    let md = kernels_md();
    assert!(tf_types(&md, "Cast").is_none() && tf_types(&md, "LogicalAnd").is_none());
    let k = kernel("LogicalAnd", &[DataType::DtBool; 2]);
    let x = Tensor::from_vec([2], vec![true, false]).unwrap();
    assert_eq!(
        k.compute([x.clone(), x]).unwrap()[0]
            .as_slice::<bool>()
            .unwrap(),
        &[true, false]
    );
    // Cast: every pair of fixed-size types (quantized included) builds.
    let fixed = [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "half",
        "bfloat16",
        "float",
        "double",
        "complex64",
        "complex128",
        "qint8",
        "quint8",
        "qint16",
        "quint16",
        "qint32",
    ];
    for s in fixed {
        for d in fixed {
            let (src, dst) = (
                DataType::from_type_name(s).unwrap(),
                DataType::from_type_name(d).unwrap(),
            );
            let k = create_op_kernel("CPU", &node("Cast", &[src], &[("DstT", dst.into())]))
                .unwrap_or_else(|e| panic!("Cast {s} -> {d}: {e}"));
            let y = k
                .compute([ones(src, 2)])
                .unwrap_or_else(|e| panic!("Cast {s} -> {d}: {e}"));
            assert_eq!(y[0].dtype(), dst);
        }
    }
}
