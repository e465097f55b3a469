//! The TensorList kernels against TensorFlow 2.21: results, TF's error
//! messages (checked with TF 2.21's `tf.raw_ops`), in-place updates of
//! unshared lists and copies of shared ones, and the sequences a Keras LSTM
//! frozen to a graph runs.

use crate::common;

use common::{invalid, run, run_all, s, t, try_run, vals};
use registry_core::kernel::KernelError;
use registry_core::proto::{AttrValue, DataType};
use registry_core::shape::Shape;
use registry_core::tensor::{Tensor, TensorList, TensorShape, Variant};

const F: DataType = DataType::DtFloat;

fn dtype(name: &'static str, d: DataType) -> (&'static str, AttrValue) {
    (name, AttrValue::from(d))
}

fn shape(v: &[i32]) -> Tensor {
    t(&[v.len()], v)
}

fn reserve(es: Tensor, n: i32) -> Tensor {
    run(
        "TensorListReserve",
        vec![es, s(n)],
        &[dtype("element_dtype", F)],
    )
}

fn empty(es: Tensor, max: i32) -> Tensor {
    run(
        "EmptyTensorList",
        vec![es, s(max)],
        &[dtype("element_dtype", F)],
    )
}

fn list(h: &Tensor) -> &TensorList {
    TensorList::from_tensor(h).unwrap()
}

fn set(h: Tensor, i: i32, item: Tensor) -> Tensor {
    run("TensorListSetItem", vec![h, s(i), item], &[])
}

fn get(h: Tensor, i: i32, es: Tensor) -> Tensor {
    run(
        "TensorListGetItem",
        vec![h, s(i), es],
        &[dtype("element_dtype", F)],
    )
}

fn stack(h: Tensor, es: Tensor) -> Tensor {
    run("TensorListStack", vec![h, es], &[dtype("element_dtype", F)])
}

fn f2(a: f32, b: f32) -> Tensor {
    t(&[2], &[a, b])
}

#[test]
fn reserve_set_get_stack() {
    let h = reserve(shape(&[2]), 3);
    assert_eq!(list(&h).len(), 3);
    assert!(list(&h).items.iter().all(Option::is_none));
    let h = set(h, 1, f2(1.0, 2.0));
    let got = get(h.clone(), 1, shape(&[2]));
    assert_eq!(vals::<f32>(&got), [1.0, 2.0]);
    // Unset items read as zeros of the (fully known) element shape.
    assert_eq!(vals::<f32>(&get(h.clone(), 0, s(-1))), [0.0, 0.0]);
    let out = stack(h, shape(&[2]));
    assert_eq!(out.dims(), &[3, 2]);
    assert_eq!(vals::<f32>(&out), [0.0, 0.0, 1.0, 2.0, 0.0, 0.0]);
}

#[test]
fn length_and_element_shape() {
    let h = empty(shape(&[-1, 3]), -1);
    let len = run("TensorListLength", vec![h.clone()], &[]);
    assert_eq!(vals::<i32>(&len), [0]);
    let es64 = run(
        "TensorListElementShape",
        vec![h.clone()],
        &[dtype("shape_type", DataType::DtInt64)],
    );
    assert_eq!(
        (es64.dims(), vals::<i64>(&es64)),
        (&[2usize][..], vec![-1, 3])
    );
    let unknown = empty(s(-1), -1);
    let es32 = run(
        "TensorListElementShape",
        vec![unknown],
        &[dtype("shape_type", DataType::DtInt32)],
    );
    assert_eq!((es32.dims(), vals::<i32>(&es32)), (&[][..], vec![-1]));
}

#[test]
fn push_back_pop_back() {
    let h = empty(shape(&[2]), 2);
    let h = run("TensorListPushBack", vec![h, f2(1.0, 2.0)], &[]);
    let h = run("TensorListPushBack", vec![h, f2(3.0, 4.0)], &[]);
    assert_eq!(
        invalid("TensorListPushBack", vec![h.clone(), f2(5.0, 6.0)], &[]),
        "Tried to push item into a full list list size: 2 max_num_elements: 2"
    );
    let out = run_all(
        "TensorListPopBack",
        vec![h, shape(&[2])],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(vals::<f32>(&out[1]), [3.0, 4.0]);
    assert_eq!(list(&out[0]).len(), 1);
    let empty_list = empty(shape(&[2]), 1);
    assert_eq!(
        invalid(
            "TensorListPopBack",
            vec![empty_list, shape(&[2])],
            &[dtype("element_dtype", F)]
        ),
        "Trying to pop from an empty list."
    );
    // An unset last item pops as zeros, or fails without a known shape.
    let out = run_all(
        "TensorListPopBack",
        vec![reserve(shape(&[2]), 1), s(-1)],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(vals::<f32>(&out[1]), [0.0, 0.0]);
    assert_eq!(
        invalid(
            "TensorListPopBack",
            vec![reserve(s(-1), 1), s(-1)],
            &[dtype("element_dtype", F)]
        ),
        "Trying to read an uninitialized tensor but element_shape is not fully defined.<unknown>"
    );
}

#[test]
fn from_tensor_and_items() {
    let value = t(&[3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let h = run(
        "TensorListFromTensor",
        vec![value.clone(), shape(&[2])],
        &[],
    );
    assert_eq!(list(&h).len(), 3);
    assert_eq!(list(&h).element_dtype, F);
    assert_eq!(vals::<f32>(&get(h.clone(), 2, s(-1))), [5.0, 6.0]);
    assert_eq!(stack(h, s(-1)), value);
    assert_eq!(
        invalid("TensorListFromTensor", vec![s(1.0f32), s(-1)], &[]),
        "Tensor must be at least a vector, but saw shape: []"
    );
    assert_eq!(
        invalid(
            "TensorListFromTensor",
            vec![t(&[1, 2], &[1.0f32, 2.0]), shape(&[3])],
            &[]
        ),
        "Specified a list with shape [3] from a tensor with shape [2]"
    );
    // An empty tensor with more rows than an int32 index reaches: an error,
    // not a 2^40-item allocation.
    let huge = Tensor::zeros(F, TensorShape::new(vec![1usize << 40, 0]).unwrap()).unwrap();
    assert!(
        invalid("TensorListFromTensor", vec![huge, s(-1)], &[])
            .starts_with("TensorListFromTensor: a list holds at most 2147483647 items"),
    );
}

#[test]
fn element_shape_tensors() {
    assert_eq!(
        invalid(
            "EmptyTensorList",
            vec![s(3), s(1)],
            &[dtype("element_dtype", F)]
        ),
        "The only valid scalar shape tensor is the fully unknown shape specified as -1."
    );
    assert_eq!(
        invalid(
            "EmptyTensorList",
            vec![shape(&[-2, 3]), s(1)],
            &[dtype("element_dtype", F)]
        ),
        "Dimension -2 must be >= -1"
    );
    assert_eq!(
        invalid(
            "EmptyTensorList",
            vec![shape(&[2]), t(&[1], &[1])],
            &[dtype("element_dtype", F)]
        ),
        "max_num_elements expected to be a scalar but got shape: [1]"
    );
    let h64 = run(
        "EmptyTensorList",
        vec![t(&[2], &[4i64, -1]), s(-1)],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(list(&h64).element_shape, Shape::from([4, -1]));
}

#[test]
fn reserve_errors() {
    assert_eq!(
        invalid(
            "TensorListReserve",
            vec![shape(&[2]), s(-1)],
            &[dtype("element_dtype", F)]
        ),
        "The num_elements to reserve must be a non negative number, but got -1"
    );
}

#[test]
fn get_item_errors() {
    let h = reserve(shape(&[2]), 3);
    for (index, message) in [
        (3, "Trying to access element 3 in a list with 3 elements."),
        (-1, "Trying to access element -1 in a list with 3 elements."),
    ] {
        assert_eq!(
            invalid(
                "TensorListGetItem",
                vec![h.clone(), s(index), shape(&[2])],
                &[dtype("element_dtype", F)]
            ),
            message
        );
    }
    assert_eq!(
        invalid(
            "TensorListGetItem",
            vec![h.clone(), s(0), shape(&[2])],
            &[dtype("element_dtype", DataType::DtInt32)]
        ),
        "Invalid data types; op elements int32 but list elements float"
    );
    assert_eq!(
        invalid(
            "TensorListGetItem",
            vec![h, s(0), shape(&[3])],
            &[dtype("element_dtype", F)]
        ),
        "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2]"
    );
    for (es, message) in [
        (
            s(-1),
            "Trying to read an uninitialized tensor but element_shape is not fully defined: \
             <unknown> and no list element is set.",
        ),
        (
            shape(&[-1, 2]),
            "Trying to read an uninitialized tensor but element_shape is not fully defined: \
             [?,2] and no list element is set.",
        ),
    ] {
        assert_eq!(
            invalid(
                "TensorListGetItem",
                vec![reserve(es.clone(), 2), s(0), s(-1)],
                &[dtype("element_dtype", F)]
            ),
            message
        );
    }
    // The shape of an unset item comes from the set ones when needed.
    let h = set(reserve(s(-1), 2), 1, f2(7.0, 8.0));
    assert_eq!(vals::<f32>(&get(h, 0, s(-1))), [0.0, 0.0]);
}

#[test]
fn set_item_errors_and_resize() {
    let h = reserve(shape(&[2]), 3);
    for (index, message) in [
        (3, "Trying to modify element 3 in a list with 3 elements."),
        (-1, "Trying to modify element -1 in a list with 3 elements."),
    ] {
        assert_eq!(
            invalid(
                "TensorListSetItem",
                vec![h.clone(), s(index), f2(1.0, 2.0)],
                &[]
            ),
            message
        );
    }
    assert_eq!(
        invalid(
            "TensorListSetItem",
            vec![h.clone(), s(0), t(&[2], &[1, 2])],
            &[]
        ),
        "Invalid data types; op elements int32 but list elements float"
    );
    assert_eq!(
        invalid(
            "TensorListSetItem",
            vec![h.clone(), s(0), t(&[3], &[1.0f32, 2.0, 3.0])],
            &[]
        ),
        "Tried to set a tensor with incompatible shape at a list index. Item element shape: [3] \
         list shape: [2]"
    );
    let grown = run(
        "TensorListSetItem",
        vec![h.clone(), s(5), f2(1.0, 2.0)],
        &[("resize_if_index_out_of_bounds", AttrValue::from(true))],
    );
    assert_eq!(vals::<i32>(&run("TensorListLength", vec![grown], &[])), [6]);
    assert_eq!(
        invalid(
            "TensorListSetItem",
            vec![h, s(-1), f2(1.0, 2.0)],
            &[("resize_if_index_out_of_bounds", AttrValue::from(true))]
        ),
        "Trying to modify element -1 in a list with 3 elements."
    );
}

#[test]
fn push_back_errors() {
    let h = reserve(shape(&[2]), 3);
    assert_eq!(
        invalid("TensorListPushBack", vec![h.clone(), t(&[2], &[1, 2])], &[]),
        "Invalid data types; op elements int32 but list elements float"
    );
    assert_eq!(
        invalid(
            "TensorListPushBack",
            vec![h, t(&[3], &[1.0f32, 2.0, 3.0])],
            &[]
        ),
        "Tried to append a tensor with incompatible shape to a list. Op element shape: [3] list \
         shape: [2]"
    );
}

#[test]
fn stack_errors() {
    let attrs = [dtype("element_dtype", F)];
    assert_eq!(
        invalid("TensorListStack", vec![reserve(s(-1), 2), s(-1)], &attrs),
        "Tried to stack list which only contains uninitialized tensors and has a \
         non-fully-defined element_shape: <unknown>"
    );
    assert_eq!(
        invalid("TensorListStack", vec![empty(s(-1), -1), s(-1)], &attrs),
        "Tried to stack elements of an empty list with non-fully-defined element_shape: <unknown>"
    );
    assert_eq!(
        invalid(
            "TensorListStack",
            vec![reserve(shape(&[2]), 3), shape(&[2])],
            &[
                dtype("element_dtype", F),
                ("num_elements", AttrValue::from(2))
            ]
        ),
        "Operation expected a list with 2 elements but got a list with 3 elements."
    );
    assert_eq!(
        invalid(
            "TensorListStack",
            vec![reserve(shape(&[2]), 3), shape(&[3])],
            &attrs
        ),
        "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2]"
    );
    assert_eq!(
        invalid(
            "TensorListStack",
            vec![reserve(shape(&[2]), 3), s(5)],
            &attrs
        ),
        "The only valid scalar shape tensor is the fully unknown shape specified as -1."
    );
    // An empty list with a known shape stacks to [0, ...].
    let out = stack(empty(shape(&[2, 3]), -1), s(-1));
    assert_eq!(out.dims(), &[0, 2, 3]);
}

#[test]
fn resize() {
    let h = reserve(shape(&[2]), 3);
    let h = set(h, 0, f2(1.0, 2.0));
    let grown = run("TensorListResize", vec![h.clone(), s(5)], &[]);
    assert_eq!(list(&grown).len(), 5);
    let cut = run("TensorListResize", vec![h.clone(), s(1)], &[]);
    assert_eq!(vals::<f32>(&stack(cut, shape(&[2]))), [1.0, 2.0]);
    assert_eq!(
        invalid("TensorListResize", vec![h.clone(), s(-1)], &[]),
        "TensorListSlice expects size to be non-negative. Got: -1"
    );
    assert_eq!(
        invalid("TensorListResize", vec![h, t(&[1], &[1])], &[]),
        "size must be a scalar"
    );
}

#[test]
fn split_and_concat() {
    let value = t(&[3, 1], &[1.0f32, 2.0, 3.0]);
    let lengths = t(&[2], &[1i64, 2]);
    let h = run(
        "TensorListSplit",
        vec![value.clone(), shape(&[-1, 1]), lengths],
        &[],
    );
    assert_eq!(list(&h).items[1].as_ref().unwrap().dims(), &[2, 1]);
    let out = run_all(
        "TensorListConcatV2",
        vec![h, shape(&[-1, 1]), t::<i64>(&[0], &[])],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(out[0], value);
    assert_eq!(vals::<i64>(&out[1]), [1, 2]);

    // Unset items concatenate as zeros of `leading_dims` rows.
    let out = run_all(
        "TensorListConcatV2",
        vec![
            reserve(shape(&[-1, 2]), 2),
            shape(&[-1, 2]),
            t(&[2], &[1i64, 2]),
        ],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(out[0].dims(), &[3, 2]);
    assert_eq!(vals::<i64>(&out[1]), [1, 2]);
    assert_eq!(
        invalid(
            "TensorListConcatV2",
            vec![
                reserve(shape(&[-1, 2]), 2),
                shape(&[-1, 2]),
                t(&[1], &[1i64])
            ],
            &[dtype("element_dtype", F)]
        ),
        "List contains uninitialized tensor at index 1 but leading_dims has only 1 elements."
    );
    assert_eq!(
        invalid(
            "TensorListConcatV2",
            vec![
                reserve(shape(&[2]), 3),
                t::<i32>(&[0], &[]),
                t::<i64>(&[0], &[])
            ],
            &[dtype("element_dtype", F)]
        ),
        "PartialTensorShape: Incompatible ranks during merge: 0 vs. 1"
    );

    let split = |lengths: &[i64], es: Tensor| {
        invalid(
            "TensorListSplit",
            vec![
                t(&[3], &[1.0f32, 2.0, 3.0]),
                es,
                t(&[lengths.len()], lengths),
            ],
            &[],
        )
    };
    assert_eq!(
        split(&[1, 1], shape(&[-1])),
        "Unused values in tensor. Length of tensor: 3 Values used: 2"
    );
    assert_eq!(
        split(&[2, 2], shape(&[-1])),
        "Attempting to slice [2, 4] from tensor with length 3"
    );
    assert_eq!(
        split(&[-1, 4], shape(&[-1])),
        "Invalid value in lengths: -1"
    );
    assert_eq!(
        split(&[3], t::<i32>(&[0], &[])),
        "TensorListSplit requires element_shape to be at least of rank 1, but saw: []"
    );
}

#[test]
fn gather_and_scatter() {
    let value = t(&[3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let h = run("TensorListFromTensor", vec![value, shape(&[2])], &[]);
    let out = run(
        "TensorListGather",
        vec![h.clone(), t(&[2], &[2, 0]), shape(&[2])],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(vals::<f32>(&out), [5.0, 6.0, 1.0, 2.0]);
    assert_eq!(
        invalid(
            "TensorListGather",
            vec![h.clone(), t(&[1], &[5]), shape(&[2])],
            &[dtype("element_dtype", F)]
        ),
        "Trying to gather element 5 in a list with 3 elements."
    );
    let scattered = run(
        "TensorListScatterIntoExistingList",
        vec![
            reserve(shape(&[2]), 3),
            t(&[1, 2], &[7.0f32, 8.0]),
            t(&[1], &[4]),
        ],
        &[],
    );
    assert_eq!(
        vals::<f32>(&stack(scattered, shape(&[2]))),
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 8.0]
    );
    assert!(matches!(
        try_run(
            "TensorListScatterIntoExistingList",
            vec![h, t(&[1, 2], &[7.0f32, 8.0]), t(&[1], &[-1])],
            &[]
        ),
        Err(KernelError::InvalidArgument(_))
    ));
}

#[test]
fn not_a_list() {
    let m = invalid(
        "TensorListLength",
        vec![Tensor::from_variants([2], vec![Variant::empty(), Variant::empty()]).unwrap()],
        &[],
    );
    assert_eq!(m, "Input list must be a scalar saw: [2]");
    let m = invalid(
        "TensorListLength",
        vec![Tensor::zeros(DataType::DtVariant, [0usize; 0]).unwrap()],
        &[],
    );
    assert!(m.starts_with("Input handle is not a list."), "{m}");
}

/// An unshared handle is updated in place (the same list allocation); a
/// shared one is copied and the original stays as it was.
#[test]
fn in_place_when_unique_copy_when_shared() {
    let h = reserve(shape(&[2]), 2);
    let before = list(&h) as *const TensorList;
    let h = set(h, 0, f2(1.0, 2.0));
    assert_eq!(list(&h) as *const TensorList, before, "updated in place");

    let kept = h.clone();
    let updated = set(h, 1, f2(3.0, 4.0));
    assert!(
        list(&kept).items[1].is_none(),
        "the shared list is unchanged"
    );
    assert_eq!(
        vals::<f32>(list(&updated).items[1].as_ref().unwrap()),
        [3.0, 4.0]
    );
    // The copy is shallow: item 0 shares its buffer with the original's.
    let a = list(&kept).items[0].as_ref().unwrap();
    let b = list(&updated).items[0].as_ref().unwrap();
    assert_eq!(a, b);

    let popped = run_all(
        "TensorListPopBack",
        vec![updated.clone(), shape(&[2])],
        &[dtype("element_dtype", F)],
    );
    assert_eq!(
        list(&updated).len(),
        2,
        "PopBack of a shared list copies it"
    );
    assert_eq!(list(&popped[0]).len(), 1);
}

/// Every element type TF registers the item kernels for, with strings and
/// variants among them.
#[test]
fn element_types() {
    let strings = common::strt(&[2], &["ab", "c"]);
    let h = run("TensorListFromTensor", vec![strings.clone(), s(-1)], &[]);
    let out = run(
        "TensorListStack",
        vec![h, s(-1)],
        &[dtype("element_dtype", DataType::DtString)],
    );
    assert_eq!(out, strings);

    let inner = reserve(shape(&[2]), 1);
    let outer = run(
        "TensorListReserve",
        vec![s(-1), s(2)],
        &[dtype("element_dtype", DataType::DtVariant)],
    );
    let outer = set(outer, 1, inner.clone());
    let stacked = run(
        "TensorListStack",
        vec![outer, t::<i32>(&[0], &[])],
        &[dtype("element_dtype", DataType::DtVariant)],
    );
    assert_eq!(stacked.dims(), &[2]);
    assert!(stacked.as_variants().unwrap()[0].is_empty());
    assert_eq!(
        stacked.as_variants().unwrap()[1],
        inner.as_variants().unwrap()[0]
    );

    for (value, dt) in [
        (t(&[2], &[1i64, 2]), DataType::DtInt64),
        (t(&[2], &[true, false]), DataType::DtBool),
        (t(&[2], &[1u8, 2]), DataType::DtUint8),
        (t(&[2], &[1.0f64, 2.0]), DataType::DtDouble),
    ] {
        let h = run("TensorListFromTensor", vec![value.clone(), s(-1)], &[]);
        let out = run(
            "TensorListStack",
            vec![h, s(-1)],
            &[dtype("element_dtype", dt)],
        );
        assert_eq!(out, value);
    }
}

/// A Keras LSTM frozen to a graph: the input sequence is unstacked into a
/// list read step by step, and each step's output is written to a reserved
/// list stacked at the end.
#[test]
fn keras_lstm_sequence() {
    let steps = 4;
    let input = Tensor::from_vec(
        [steps, 3],
        (0..steps * 3).map(|v| v as f32).collect::<Vec<_>>(),
    )
    .unwrap();
    let inputs = run("TensorListFromTensor", vec![input, shape(&[3])], &[]);
    let mut outputs = reserve(shape(&[3]), steps as i32);
    let mut state = [0.0f32; 3];
    for step in 0..steps as i32 {
        let x = get(inputs.clone(), step, shape(&[3]));
        let x = vals::<f32>(&x);
        for (s, x) in state.iter_mut().zip(&x) {
            *s = 0.5 * *s + x;
        }
        outputs = set(outputs, step, t(&[3], &state));
    }
    let stacked = stack(outputs, shape(&[3]));
    assert_eq!(stacked.dims(), &[4, 3]);
    assert_eq!(
        vals::<f32>(&stacked),
        [
            0.0, 1.0, 2.0, 3.0, 4.5, 6.0, 7.5, 9.25, 11.0, 12.75, 14.625, 16.5
        ]
    );
}
