//! The identities besides `Identity`: `StopGradient`, `PreventGradient`,
//! `IdentityN` and `Snapshot`, run through `create_op_kernel`. Their values
//! are their inputs (TF 2.21 returns them unchanged, strings included, and
//! has no CPU `Snapshot` of strings: "Could not find device for node
//! Snapshot[T=DT_STRING]"); what is checked here is which outputs share
//! their input's buffer and which are copies.

use crate::common;

use registry_core::create_op_kernel;
use registry_core::kernel::{KernelError, KernelInstance};
use registry_core::proto::{AttrValue, DataType};
use registry_core::tensor::{INLINE_CAPACITY, Tensor};

fn kernel(op: &str, inputs: &[Tensor], attrs: &[(&str, AttrValue)]) -> KernelInstance {
    let dtypes: Vec<DataType> = inputs.iter().map(Tensor::dtype).collect();
    let node = common::node(op, &dtypes, attrs);
    create_op_kernel("CPU", &node).unwrap_or_else(|e| panic!("{op}: {e}"))
}

fn run(op: &str, inputs: Vec<Tensor>, attrs: &[(&str, AttrValue)]) -> Vec<Tensor> {
    let k = kernel(op, &inputs, attrs);
    k.compute(inputs)
        .unwrap_or_else(|e| panic!("{op}: {e}"))
        .into_vec()
}

/// Held by value (small) rather than in a shared buffer.
fn inline(x: &Tensor) -> bool {
    x.as_bytes().is_ok_and(|b| b.len() <= INLINE_CAPACITY)
}

/// `out` holds `x`'s values without a copy of its buffer (small tensors are
/// held by value, so they are equal and independent instead).
fn assert_not_copied(out: &Tensor, x: &Tensor) {
    assert_eq!(out, x);
    if inline(x) {
        assert!(!out.shares_buffer_with(x));
    } else {
        assert!(out.shares_buffer_with(x), "{x:?} was copied");
    }
}

fn samples() -> Vec<Tensor> {
    let mut q8 = Tensor::zeros(DataType::DtQint8, [3]).unwrap();
    q8.as_mut_bytes().unwrap().copy_from_slice(&[0x80, 0, 0x7f]);
    vec![
        Tensor::from_vec([2, 3], vec![1.0f32, -2.0, 3.5, 0.0, 5.0, -6.25]).unwrap(),
        Tensor::from_vec([5], vec![1i64, 2, 3, 4, 5]).unwrap(),
        Tensor::from_vec([2], vec![true, false]).unwrap(),
        Tensor::from_strings([2], vec![b"a".to_vec(), b"bc".to_vec()]).unwrap(),
        Tensor::scalar(7i32),
        q8,
        Tensor::zeros(DataType::DtFloat, [0, 4]).unwrap(),
    ]
}

#[test]
fn stop_and_prevent_gradient_forward_every_dtype() {
    kernels_cpu::link();
    for x in samples() {
        let out = run("StopGradient", vec![x.clone()], &[]);
        assert_not_copied(&out[0], &x);
        let message = ("message", AttrValue::from("not differentiable"));
        let out = run("PreventGradient", vec![x.clone()], &[message]);
        assert_not_copied(&out[0], &x);
    }
}

#[test]
fn identity_n_forwards_each_input() {
    kernels_cpu::link();
    let xs = samples();
    let out = run("IdentityN", xs.clone(), &[]);
    assert_eq!(out.len(), xs.len());
    for (o, x) in out.iter().zip(&xs) {
        assert_not_copied(o, x);
    }
    // One input.
    let x = Tensor::from_strings([1], vec![b"z".to_vec()]).unwrap();
    let out = run("IdentityN", vec![x.clone()], &[]);
    assert_not_copied(&out[0], &x);
    // Inputs are checked against the node's type list.
    let k = kernel("IdentityN", &xs[..2], &[]);
    let swapped = vec![xs[1].clone(), xs[0].clone()];
    assert!(matches!(
        k.compute(swapped),
        Err(KernelError::InputDtype { index: 0, .. })
    ));
}

#[test]
fn snapshot_copies_a_shared_buffer_and_forwards_a_unique_one() {
    kernels_cpu::link();
    let values: Vec<f32> = (0..64).map(|i| i as f32 * 0.5).collect();
    let x = Tensor::from_slice([64], &values).unwrap();
    // `x` is still held here: the output must be a copy of its own.
    let out = run("Snapshot", vec![x.clone()], &[]).remove(0);
    assert_eq!(out, x);
    assert!(!out.shares_buffer_with(&x) && out.is_unique());
    // Nothing else holds the buffer: it becomes the output.
    let want = Tensor::from_slice([64], &values).unwrap();
    assert!(x.is_unique());
    let k = kernel("Snapshot", std::slice::from_ref(&x), &[]);
    let before = x.as_bytes().unwrap().as_ptr();
    let out = k.compute([x]).unwrap().remove(0);
    assert_eq!(out.as_bytes().unwrap().as_ptr(), before);
    assert_eq!(out, want);
    // Bool, complex, half and empty tensors.
    for x in [
        Tensor::from_vec([40], vec![true; 40]).unwrap(),
        Tensor::from_vec(
            [3],
            vec![registry_core::tensor::Complex128::new(1.0, -2.0); 3],
        )
        .unwrap(),
        Tensor::from_vec([2], vec![registry_core::tensor::f16::from_f32(1.5); 2]).unwrap(),
        Tensor::zeros(DataType::DtInt64, [3, 0]).unwrap(),
    ] {
        let out = run("Snapshot", vec![x.clone()], &[]).remove(0);
        assert_eq!(out, x);
        assert!(!out.shares_buffer_with(&x));
    }
}

#[test]
fn snapshot_has_no_string_or_quantized_kernel() {
    kernels_cpu::link();
    // TF_CALL_POD_TYPES: TF has no CPU Snapshot of strings or quantized types.
    for dtype in [DataType::DtString, DataType::DtQint8] {
        let node = common::node("Snapshot", &[dtype], &[]);
        let e = create_op_kernel("CPU", &node).unwrap_err().to_string();
        assert!(e.contains("No registered 'Snapshot' OpKernel"), "{e}");
    }
}
