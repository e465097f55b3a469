//! The GPU array kernels against the CPU kernels: each case runs the same
//! node on both devices (the GPU's inputs uploaded, host-memory args left
//! on the host) and the outputs must be identical, bit for bit (these ops
//! only move elements), or both must fail with the same message. Ignored
//! unless asked for with `--ignored` (they need a GPU).
#![cfg(feature = "cuda")]

use crate::common;

use common::{compute_on_gpu, gpu, node_for, run_cpu, upload};
use opreg_cuda::GpuDevice;
use registry_core::create_op_kernel;
use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{AttrValue, DataType};
use registry_core::tensor::Tensor;

/// Random elements of any fixed-size dtype (bools 0 or 1), from `seed`.
fn data(dtype: DataType, shape: &[usize], seed: u64) -> Tensor {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    if dtype == DataType::DtBool {
        // Bools have no writable byte view (a byte must be 0 or 1).
        let n = shape.iter().product();
        return Tensor::from_vec(shape, (0..n).map(|_| next() & 1 == 1).collect()).unwrap();
    }
    let mut t = Tensor::zeros(dtype, shape).unwrap();
    for b in t.as_mut_bytes().unwrap() {
        *b = (next() >> 24) as u8;
    }
    t
}

fn i32v(v: &[i32]) -> Tensor {
    Tensor::from_slice([v.len()], v).unwrap()
}

fn i64v(v: &[i64]) -> Tensor {
    Tensor::from_slice([v.len()], v).unwrap()
}

/// Runs `op` on both devices; `host` lists the inputs that stay on the
/// host for the GPU kernel. Returns the GPU's output (on the host), after
/// checking it equals the CPU's, or the common error message.
fn compare(
    dev: &GpuDevice,
    op: &str,
    inputs: &[Tensor],
    host: &[usize],
    attrs: &[(&str, AttrValue)],
) -> Result<Tensor, String> {
    let node = node_for(op, inputs, attrs);
    let want = run_cpu(&node, inputs);
    let got = compute_on_gpu(&node, upload(dev, inputs, host));
    match (want, got) {
        (Ok(want), Ok(mut got)) => {
            assert_eq!(got.len(), 1);
            let got = got.remove(0);
            let want = &want[0];
            assert_eq!(got.dtype(), want.dtype(), "{op}");
            assert_eq!(got.shape(), want.shape(), "{op}");
            assert_eq!(
                got.as_bytes().unwrap(),
                want.as_bytes().unwrap(),
                "{op} on {:?}: GPU and CPU differ",
                inputs.first().map(Tensor::shape)
            );
            Ok(got)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{op}: different errors");
            Err(a.to_string())
        }
        (a, b) => panic!("{op}: CPU gave {a:?}, GPU gave {b:?}"),
    }
}

const TYPES: [DataType; 8] = [
    DataType::DtFloat,
    DataType::DtHalf,
    DataType::DtInt64,
    DataType::DtBool,
    DataType::DtUint8,
    DataType::DtComplex128,
    DataType::DtBfloat16,
    DataType::DtInt32,
];

#[test]
#[ignore = "needs a GPU"]
fn const_identity_and_reshapes() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        let value = data(dt, &[2, 3], k as u64);
        let node = NodeDefBuilder::new("c", "Const")
            .attr("dtype", dt)
            .attr("value", value.to_proto())
            .finalize()
            .unwrap();
        let c = create_op_kernel("GPU", &node).unwrap();
        let a = c.compute([]).unwrap().remove(0);
        let b = c.compute([]).unwrap().remove(0);
        assert!(a.shares_buffer_with(&b), "Const outputs share one buffer");
        // int32 stays in host memory (TF's HostMemory("output")).
        assert_eq!(a.is_on_host(), dt == DataType::DtInt32, "{dt:?}");
        assert_eq!(
            a.to_host().unwrap().as_bytes().unwrap(),
            value.as_bytes().unwrap()
        );

        let x = data(dt, &[2, 3, 4], 10 + k as u64);
        compare(&dev, "Identity", std::slice::from_ref(&x), &[], &[]).unwrap();
        compare(&dev, "Reshape", &[x.clone(), i32v(&[4, -1])], &[1], &[]).unwrap();
        compare(&dev, "Reshape", &[x.clone(), i64v(&[5, -1])], &[1], &[]).unwrap_err();
        compare(
            &dev,
            "ExpandDims",
            &[x.clone(), Tensor::scalar(-1i32)],
            &[1],
            &[],
        )
        .unwrap();
        compare(
            &dev,
            "ExpandDims",
            &[x.clone(), Tensor::scalar(5i64)],
            &[1],
            &[],
        )
        .unwrap_err();
        let y = data(dt, &[1, 3, 1], 20);
        compare(&dev, "Squeeze", std::slice::from_ref(&y), &[], &[]).unwrap();
        compare(
            &dev,
            "Squeeze",
            std::slice::from_ref(&y),
            &[],
            &[("squeeze_dims", [-1].into())],
        )
        .unwrap();
        compare(&dev, "Squeeze", &[y], &[], &[("squeeze_dims", [1].into())]).unwrap_err();
    }
    let node = NodeDefBuilder::new("n", "NoOp").finalize().unwrap();
    assert!(
        create_op_kernel("GPU", &node)
            .unwrap()
            .compute([])
            .unwrap()
            .is_empty()
    );
}

#[test]
#[ignore = "needs a GPU"]
fn transpose_matches_cpu() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        let x = data(dt, &[2, 3, 4, 5], k as u64);
        for perm in [
            [0, 1, 2, 3],
            [3, 2, 1, 0],
            [0, 2, 1, 3],
            [1, 0, 3, 2],
            [0, 1, 3, 2],
        ] {
            compare(&dev, "Transpose", &[x.clone(), i32v(&perm)], &[1], &[]).unwrap();
        }
        let big = data(dt, &[67, 129], 3);
        compare(&dev, "Transpose", &[big, i64v(&[1, 0])], &[1], &[]).unwrap();
        let empty = data(dt, &[0, 3], 3);
        compare(&dev, "Transpose", &[empty, i32v(&[1, 0])], &[1], &[]).unwrap();
        let ones = data(dt, &[1, 3, 1, 2], 3);
        compare(&dev, "Transpose", &[ones, i32v(&[2, 1, 0, 3])], &[1], &[]).unwrap();
        compare(
            &dev,
            "Transpose",
            &[x.clone(), i32v(&[0, 0, 1, 2])],
            &[1],
            &[],
        )
        .unwrap_err();
        compare(&dev, "Transpose", &[x, i32v(&[0, 1])], &[1], &[]).unwrap_err();
    }
    // Nine dimensions that merge to fewer.
    let x = data(DataType::DtFloat, &[2, 1, 2, 1, 2, 1, 2, 1, 3], 9);
    compare(
        &dev,
        "Transpose",
        &[x, i32v(&[8, 1, 2, 3, 4, 5, 6, 7, 0])],
        &[1],
        &[],
    )
    .unwrap();
}

#[test]
#[ignore = "needs a GPU"]
fn concat_and_pack_match_cpu() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        let a = data(dt, &[2, 3, 4], k as u64);
        let b = data(dt, &[2, 1, 4], 1 + k as u64);
        let c = data(dt, &[2, 0, 4], 2);
        for axis in [1i32, -2] {
            compare(
                &dev,
                "ConcatV2",
                &[a.clone(), b.clone(), c.clone(), Tensor::scalar(axis)],
                &[3],
                &[],
            )
            .unwrap();
        }
        let a2 = data(dt, &[2, 3, 4], 5);
        for axis in [0i64, 2] {
            compare(
                &dev,
                "ConcatV2",
                &[a.clone(), a2.clone(), Tensor::scalar(axis)],
                &[2],
                &[],
            )
            .unwrap();
        }
        compare(
            &dev,
            "ConcatV2",
            &[a.clone(), b.clone(), Tensor::scalar(0i32)],
            &[2],
            &[],
        )
        .unwrap_err();
        compare(
            &dev,
            "ConcatV2",
            &[a.clone(), b.clone(), Tensor::scalar(3i32)],
            &[2],
            &[],
        )
        .unwrap_err();
        let s1 = data(dt, &[], 7);
        let s2 = data(dt, &[], 8);
        compare(
            &dev,
            "ConcatV2",
            &[s1.clone(), s2.clone(), Tensor::scalar(0i32)],
            &[2],
            &[],
        )
        .unwrap();
        for axis in [0i64, 1, 3, -1] {
            compare(
                &dev,
                "Pack",
                &[a.clone(), a2.clone(), a.clone()],
                &[],
                &[("axis", axis.into())],
            )
            .unwrap();
        }
        compare(&dev, "Pack", &[s1, s2], &[], &[]).unwrap();
        compare(
            &dev,
            "Pack",
            std::slice::from_ref(&a),
            &[],
            &[("axis", 1.into())],
        )
        .unwrap();
        compare(&dev, "Pack", &[a.clone(), b], &[], &[]).unwrap_err();
        compare(&dev, "Pack", &[a.clone(), a2], &[], &[("axis", 5.into())]).unwrap_err();
    }
}

#[test]
#[ignore = "needs a GPU"]
fn slices_match_cpu() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        let x = data(dt, &[4, 5, 6], k as u64);
        let cases: [(&[i32], &[i32]); 5] = [
            (&[1, 0, 2], &[2, 5, 3]),
            (&[0, 0, 0], &[-1, -1, -1]),
            (&[3, 4, 5], &[1, 1, 1]),
            (&[1, 2, 3], &[0, 2, 2]),
            (&[0, 1, 0], &[4, -1, 1]),
        ];
        for (b, s) in cases {
            compare(&dev, "Slice", &[x.clone(), i32v(b), i32v(s)], &[1, 2], &[]).unwrap();
        }
        compare(
            &dev,
            "Slice",
            &[x.clone(), i64v(&[0, 0, 5]), i64v(&[1, 1, 2])],
            &[1, 2],
            &[],
        )
        .unwrap_err();

        let ss = |b: &[i32], e: &[i32], s: &[i32], masks: &[(&str, i64)]| {
            let attrs: Vec<(&str, AttrValue)> = masks.iter().map(|&(n, v)| (n, v.into())).collect();
            compare(
                &dev,
                "StridedSlice",
                &[x.clone(), i32v(b), i32v(e), i32v(s)],
                &[1, 2, 3],
                &attrs,
            )
        };
        ss(&[0, 0, 0], &[4, 5, 6], &[1, 1, 1], &[]).unwrap();
        ss(
            &[3, 4, 5],
            &[0, 0, 0],
            &[-1, -1, -1],
            &[("begin_mask", 0), ("end_mask", 7)],
        )
        .unwrap();
        ss(&[1, 0, 0], &[3, 5, 6], &[1, 2, -2], &[("end_mask", 4)]).unwrap();
        ss(
            &[-1, 0, 0],
            &[0, 0, 0],
            &[1, 1, 1],
            &[("shrink_axis_mask", 1), ("end_mask", 6)],
        )
        .unwrap();
        ss(&[0, 2], &[0, 5], &[1, 3], &[("ellipsis_mask", 1)]).unwrap();
        ss(
            &[0, 0, 1],
            &[0, 0, 4],
            &[1, 1, 2],
            &[("new_axis_mask", 2), ("begin_mask", 1), ("end_mask", 1)],
        )
        .unwrap();
        ss(&[1, 1, 1], &[1, 1, 1], &[1, 1, 1], &[]).unwrap();
        ss(&[0, 0, 0], &[4, 5, 6], &[1, 0, 1], &[]).unwrap_err();
        ss(
            &[9, 0, 0],
            &[0, 5, 6],
            &[1, 1, 1],
            &[("shrink_axis_mask", 1)],
        )
        .unwrap_err();
    }
}

#[test]
#[ignore = "needs a GPU"]
fn tile_and_pad_match_cpu() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        let x = data(dt, &[2, 3, 4], k as u64);
        for m in [[1, 1, 1], [2, 1, 1], [1, 3, 2], [3, 2, 4], [0, 2, 1]] {
            compare(&dev, "Tile", &[x.clone(), i32v(&m)], &[1], &[]).unwrap();
        }
        compare(
            &dev,
            "Tile",
            &[data(dt, &[1, 0], 1), i64v(&[3, 2])],
            &[1],
            &[],
        )
        .unwrap();
        compare(&dev, "Tile", &[x.clone(), i32v(&[1, -1, 1])], &[1], &[]).unwrap_err();
        compare(&dev, "Tile", &[x.clone(), i32v(&[1, 1])], &[1], &[]).unwrap_err();

        let pads = |p: &[i32]| Tensor::from_slice([p.len() / 2, 2], p).unwrap();
        for p in [
            [0, 0, 0, 0, 0, 0],
            [1, 2, 0, 0, 0, 0],
            [0, 0, 3, 1, 0, 2],
            [1, 1, 1, 1, 1, 1],
        ] {
            compare(&dev, "Pad", &[x.clone(), pads(&p)], &[1], &[]).unwrap();
        }
        compare(
            &dev,
            "Pad",
            &[data(dt, &[0, 2], 1), pads(&[1, 1, 0, 1])],
            &[1],
            &[],
        )
        .unwrap();
        compare(
            &dev,
            "Pad",
            &[x.clone(), pads(&[0, 0, -1, 0, 0, 0])],
            &[1],
            &[],
        )
        .unwrap_err();
        compare(&dev, "Pad", &[x.clone(), pads(&[0, 0, 0, 0])], &[1], &[]).unwrap_err();
    }
}

/// As TensorFlow's GPU kernel, an index out of range gives zeros on the
/// GPU (its indices are in device memory and are not read back), where the
/// CPU kernel reports InvalidArgument.
#[test]
#[ignore = "needs a GPU"]
fn gather_out_of_range_indices_give_zeros_on_the_gpu() {
    let dev = gpu();
    let params = Tensor::from_slice([3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let indices = Tensor::from_slice([4], &[2i32, 3, -1, 0]).unwrap();
    let inputs = [params, indices, Tensor::scalar(0i32)];
    let node = node_for("GatherV2", &inputs, &[]);
    let cpu = run_cpu(&node, &inputs).unwrap_err().to_string();
    assert!(cpu.contains("indices[1] = 3 is not in [0, 3)"), "{cpu}");
    let gpu = compute_on_gpu(&node, upload(&dev, &inputs, &[2])).unwrap();
    assert_eq!(gpu[0].dims(), [4, 2]);
    assert_eq!(
        gpu[0].as_slice::<f32>().unwrap(),
        &[5.0, 6.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]
    );
}

#[test]
#[ignore = "needs a GPU"]
fn gather_and_one_hot_match_cpu() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        let p = data(dt, &[4, 5, 3], k as u64);
        let idx32 = Tensor::from_slice([2, 3], &[0i32, 4, 2, 2, 1, 3]).unwrap();
        // In range on every axis (the smallest has 3 entries): out-of-range
        // indices differ by design (see the next test).
        let idx64 = Tensor::from_slice([3], &[2i64, 0, 2]).unwrap();
        for axis in [0i32, 1, -1] {
            compare(
                &dev,
                "GatherV2",
                &[p.clone(), idx64.clone(), Tensor::scalar(axis)],
                &[2],
                &[],
            )
            .unwrap();
        }
        compare(
            &dev,
            "GatherV2",
            &[p.clone(), idx32.clone(), Tensor::scalar(1i64)],
            &[2],
            &[],
        )
        .unwrap();
        let bidx = Tensor::from_slice([4, 2], &[0i32, 4, 1, 1, 2, 0, 3, 3]).unwrap();
        compare(
            &dev,
            "GatherV2",
            &[p.clone(), bidx, Tensor::scalar(1i32)],
            &[2],
            &[("batch_dims", 1.into())],
        )
        .unwrap();
        let empty = Tensor::from_slice([0], &[] as &[i32]).unwrap();
        compare(
            &dev,
            "GatherV2",
            &[p.clone(), empty, Tensor::scalar(0i32)],
            &[2],
            &[],
        )
        .unwrap();
        compare(
            &dev,
            "GatherV2",
            &[p.clone(), idx32.clone(), Tensor::scalar(3i32)],
            &[2],
            &[],
        )
        .unwrap_err();

        let on = data(dt, &[], 1);
        let off = data(dt, &[], 2);
        let i8s = Tensor::from_slice([2, 3], &[0u8, 3, 1, 7, 2, 2]).unwrap();
        let i32s = Tensor::from_slice([2, 3], &[0i32, -1, 1, 3, 2, 2]).unwrap();
        let i64s = Tensor::from_slice([4], &[1i64, 0, 5, 2]).unwrap();
        for (idx, axis) in [
            (i8s, -1i64),
            (i32s.clone(), 0),
            (i32s.clone(), 1),
            (i64s, -1),
        ] {
            compare(
                &dev,
                "OneHot",
                &[idx, Tensor::scalar(4i32), on.clone(), off.clone()],
                &[1],
                &[("axis", axis.into())],
            )
            .unwrap();
        }
        compare(
            &dev,
            "OneHot",
            &[i32s.clone(), Tensor::scalar(0i32), on.clone(), off.clone()],
            &[1],
            &[],
        )
        .unwrap();
        compare(
            &dev,
            "OneHot",
            &[i32s, Tensor::scalar(-2i32), on, off],
            &[1],
            &[],
        )
        .unwrap_err();
    }
}

/// TF's GPU gather writes zeros for indices outside `[0, dim)` (the CPU
/// kernel reports them instead).
#[test]
#[ignore = "needs a GPU"]
fn gather_out_of_range_indices_give_zeros_on_gpu() {
    let dev = gpu();
    let p = Tensor::from_slice([3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let idx = Tensor::from_slice([3], &[2i32, 3, -1]).unwrap();
    let inputs = [p, idx, Tensor::scalar(0i32)];
    let node = node_for("GatherV2", &inputs, &[]);
    let out = compute_on_gpu(&node, upload(&dev, &inputs, &[2]))
        .unwrap()
        .remove(0);
    assert_eq!(
        out.as_slice::<f32>().unwrap(),
        &[5.0, 6.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert!(run_cpu(&node, &inputs).is_err());
}

/// `StopGradient`, `PreventGradient` and `IdentityN` on the GPU forward
/// their device inputs: the same buffers, no copies, the CPU's values.
#[test]
#[ignore = "needs a GPU"]
fn identities_forward_device_buffers() {
    let dev = gpu();
    let xs: Vec<Tensor> = TYPES
        .iter()
        .enumerate()
        .map(|(k, &dt)| data(dt, &[2, 3, 4], 30 + k as u64))
        .collect();
    let on_gpu = upload(&dev, &xs, &[]);
    let message = ("message", AttrValue::from("not differentiable"));
    for (x, d) in xs.iter().zip(&on_gpu) {
        for (op, attrs) in [
            ("StopGradient", vec![]),
            ("PreventGradient", vec![message.clone()]),
        ] {
            if op == "PreventGradient" && x.dtype() == DataType::DtInt32 {
                // TF registers no int32 PreventGradient on the GPU.
                continue;
            }
            compare(&dev, op, std::slice::from_ref(x), &[], &attrs).unwrap();
            let node = node_for(op, std::slice::from_ref(x), &attrs);
            let out = create_op_kernel("GPU", &node)
                .unwrap()
                .compute([d.clone()])
                .unwrap();
            assert!(out[0].shares_buffer_with(d), "{op} copied {:?}", x.dtype());
        }
    }
    let node = node_for("IdentityN", &xs, &[]);
    let out = create_op_kernel("GPU", &node)
        .unwrap()
        .compute(on_gpu.clone())
        .unwrap();
    assert_eq!(out.len(), xs.len());
    for ((o, d), x) in out.iter().zip(&on_gpu).zip(&xs) {
        assert!(o.shares_buffer_with(d), "IdentityN copied {:?}", x.dtype());
        assert_eq!(
            o.to_host().unwrap().as_bytes().unwrap(),
            x.as_bytes().unwrap()
        );
    }
}

#[test]
#[ignore = "needs a GPU"]
fn snapshot_forwards_or_copies_as_the_cpu() {
    let dev = gpu();
    for (k, &dt) in TYPES.iter().enumerate() {
        for shape in [&[2, 3, 4][..], &[], &[0, 3], &[1001]] {
            let x = data(dt, shape, 60 + k as u64);
            // A unique input is forwarded; the values are the CPU's.
            compare(&dev, "Snapshot", std::slice::from_ref(&x), &[], &[]).unwrap();
            // A shared input is copied: the output owns its bytes, and the
            // input keeps its values.
            let node = node_for("Snapshot", std::slice::from_ref(&x), &[]);
            let d = upload(&dev, std::slice::from_ref(&x), &[]).remove(0);
            let out = create_op_kernel("GPU", &node)
                .unwrap()
                .compute([d.clone()])
                .unwrap();
            assert!(
                !out[0].shares_buffer_with(&d) || x.num_elements() == 0,
                "Snapshot shared a held buffer of {dt:?}"
            );
            assert!(!out[0].is_on_host());
            assert_eq!(out[0].shape(), x.shape());
            let back = out[0].to_host().unwrap();
            assert_eq!(back.as_bytes().unwrap(), x.as_bytes().unwrap());
            let kept = d.to_host().unwrap();
            assert_eq!(kept.as_bytes().unwrap(), x.as_bytes().unwrap());
        }
    }
}
