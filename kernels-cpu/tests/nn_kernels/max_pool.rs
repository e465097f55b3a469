//! MaxPool: hand-computed windows for every type, TF's SAME split, NaN and
//! `-inf` handling (TF starts from the lowest finite value and never lets
//! NaN win), explicit padding, depthwise pooling, a naive reference on a
//! large input, empty inputs and TF's errors. Max is exact: no tolerance.

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, NodeDef};

use super::support::*;

fn pool(t: DataType, ksize: &[i64], strides: &[i64], padding: &str) -> NodeDef {
    node(
        "MaxPool",
        &[t],
        &[
            ("ksize", ksize.into()),
            ("strides", strides.into()),
            ("padding", padding.into()),
        ],
    )
}

const TYPES: [DataType; 10] = [
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtInt32,
    DataType::DtInt64,
    DataType::DtUint8,
    DataType::DtInt16,
    DataType::DtInt8,
    DataType::DtUint16,
];

fn x16(t: DataType) -> registry_core::tensor::Tensor {
    let v: Vec<f64> = (1..=16).map(f64::from).collect();
    tensor(t, &[1, 4, 4, 1], &v)
}

#[test]
fn windows_by_hand_for_every_type() {
    for t in TYPES {
        let out = run(
            &pool(t, &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID"),
            vec![x16(t)],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[1, 2, 2, 1]);
        assert_eq!(values(&out[0]), [6.0, 8.0, 14.0, 16.0], "{t:?}");
        // SAME, 3x3 windows, stride 2: 2x2 output, total padding 1, after:
        // windows cover rows/cols [0,3) and [2,4).
        let out = run(&pool(t, &[1, 3, 3, 1], &[1, 2, 2, 1], "SAME"), vec![x16(t)]).unwrap();
        assert_eq!(values(&out[0]), [11.0, 12.0, 15.0, 16.0], "{t:?}");
        // Overlapping VALID windows, stride 1.
        let out = run(
            &pool(t, &[1, 3, 2, 1], &[1, 1, 1, 1], "VALID"),
            vec![x16(t)],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[1, 2, 3, 1]);
        assert_eq!(
            values(&out[0]),
            [10.0, 11.0, 12.0, 14.0, 15.0, 16.0],
            "{t:?}"
        );
    }
}

#[test]
fn channels_and_batches_pool_independently() {
    // [2, 2, 2, 2]: image b, channel c holds 10*b + c + position.
    let mut v = Vec::new();
    for b in 0..2 {
        for p in 0..4 {
            for c in 0..2 {
                v.push(f64::from(10 * b + c * 5 + p));
            }
        }
    }
    let out = run(
        &pool(DataType::DtFloat, &[1, 2, 2, 1], &[1, 1, 1, 1], "VALID"),
        vec![tensor(DataType::DtFloat, &[2, 2, 2, 2], &v)],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[2, 1, 1, 2]);
    assert_eq!(values(&out[0]), [3.0, 8.0, 13.0, 18.0]);
}

#[test]
fn nan_never_wins_and_minus_infinity_gives_lowest() {
    let t = DataType::DtFloat;
    let x = tensor(
        t,
        &[1, 1, 6, 1],
        &[
            f64::NAN,
            -1.0,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            2.0,
            f64::NAN,
        ],
    );
    let out = run(&pool(t, &[1, 1, 2, 1], &[1, 1, 2, 1], "VALID"), vec![x]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[-1.0, f32::MIN, 2.0]);
    let x = tensor(
        DataType::DtHalf,
        &[1, 1, 2, 1],
        &[f64::NEG_INFINITY, f64::NEG_INFINITY],
    );
    let out = run(
        &pool(DataType::DtHalf, &[1, 1, 2, 1], &[1, 1, 2, 1], "VALID"),
        vec![x],
    )
    .unwrap();
    assert_eq!(values(&out[0]), [-65504.0]);
}

#[test]
fn explicit_padding_windows() {
    let t = DataType::DtFloat;
    let mut k = pool(t, &[1, 2, 2, 1], &[1, 2, 2, 1], "EXPLICIT");
    k.attr
        .insert("explicit_paddings".into(), [0, 0, 1, 1, 0, 2, 0, 0].into());
    let out = run(&k, vec![x16(t)]).unwrap();
    // rows: (4+1+1-2+2)/2 = 3 windows at -1, 1, 3; cols: (4+0+2-2+2)/2 = 3
    // windows at 0, 2, 4 (the last all padding: lowest).
    assert_eq!(out[0].dims(), &[1, 3, 3, 1]);
    let lowest = f64::from(f32::MIN);
    assert_eq!(
        values(&out[0]),
        [2.0, 4.0, lowest, 10.0, 12.0, lowest, 14.0, 16.0, lowest]
    );
}

#[test]
fn depthwise_pooling() {
    let t = DataType::DtInt32;
    let x = tensor(
        t,
        &[1, 1, 2, 4],
        &[1.0, 5.0, -2.0, -3.0, 0.0, 0.0, 9.0, 8.0],
    );
    let out = run(
        &pool(t, &[1, 1, 1, 2], &[1, 1, 1, 2], "VALID"),
        vec![x.clone()],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[1, 1, 2, 2]);
    assert_eq!(values(&out[0]), [5.0, -2.0, 0.0, 9.0]);
    let msg = run_err(
        &pool(t, &[1, 1, 1, 3], &[1, 1, 1, 3], "VALID"),
        vec![x.clone()],
    );
    assert_eq!(
        msg,
        "Depthwise max pooling requires the depth window to evenly divide the input depth"
    );
    let msg = run_err(
        &pool(t, &[1, 1, 1, 2], &[1, 1, 1, 1], "VALID"),
        vec![x.clone()],
    );
    assert_eq!(
        msg,
        "Depthwise max pooling requires the depth window to equal the depth stride"
    );
    let msg = run_err(&pool(t, &[1, 2, 1, 2], &[1, 1, 1, 2], "VALID"), vec![x]);
    assert_eq!(
        msg,
        "MaxPooling supports exactly one of pooling across depth or pooling across width/height."
    );
}

/// A direct max over each window (padding positions skipped).
fn reference(
    x: &[f64],
    [n, h, w, c]: [usize; 4],
    k: (usize, usize),
    st: (usize, usize),
    pad: (usize, usize),
    out: (usize, usize),
) -> Vec<f64> {
    let mut res = Vec::new();
    for b in 0..n {
        for i in 0..out.0 {
            for j in 0..out.1 {
                for ch in 0..c {
                    let mut m = f64::NEG_INFINITY;
                    for di in 0..k.0 {
                        for dj in 0..k.1 {
                            let y = (i * st.0 + di) as i64 - pad.0 as i64;
                            let z = (j * st.1 + dj) as i64 - pad.1 as i64;
                            if y >= 0 && z >= 0 && (y as usize) < h && (z as usize) < w {
                                m = m.max(x[((b * h + y as usize) * w + z as usize) * c + ch]);
                            }
                        }
                    }
                    res.push(m);
                }
            }
        }
    }
    res
}

#[test]
fn large_input_matches_a_naive_reference() {
    let dims = [2, 64, 48, 8];
    let x = pseudo_random(dims.iter().product(), 7);
    let t = DataType::DtFloat;
    let xt = tensor(t, &dims, &x);
    let xs = values(&xt);
    let out = run(
        &pool(t, &[1, 3, 3, 1], &[1, 2, 2, 1], "SAME"),
        vec![xt.clone()],
    )
    .unwrap();
    // SAME: out 32x24, padding (31*2+3-64)=1 → 0 before; cols (23*2+3-48)=1 → 0.
    assert_eq!(out[0].dims(), &[2, 32, 24, 8]);
    assert_eq!(
        values(&out[0]),
        reference(&xs, dims, (3, 3), (2, 2), (0, 0), (32, 24))
    );
    let out = run(&pool(t, &[1, 2, 5, 1], &[1, 1, 3, 1], "VALID"), vec![xt]).unwrap();
    assert_eq!(out[0].dims(), &[2, 63, 15, 8]);
    assert_eq!(
        values(&out[0]),
        reference(&xs, dims, (2, 5), (1, 3), (0, 0), (63, 15))
    );
}

#[test]
fn empty_inputs() {
    let t = DataType::DtFloat;
    let k = pool(t, &[1, 2, 2, 1], &[1, 2, 2, 1], "SAME");
    let out = run(&k, vec![tensor(t, &[0, 4, 4, 3], &[])]).unwrap();
    assert_eq!(out[0].dims(), &[0, 2, 2, 3]);
    let out = run(&k, vec![tensor(t, &[1, 4, 4, 0], &[])]).unwrap();
    assert_eq!(out[0].dims(), &[1, 2, 2, 0]);
    let out = run(&k, vec![tensor(t, &[1, 0, 4, 1], &[])]).unwrap();
    assert_eq!(out[0].dims(), &[1, 0, 2, 1]);
}

#[test]
fn errors_use_tensorflow_messages() {
    let t = DataType::DtFloat;
    let err = |n: NodeDef| try_kernel(&n).unwrap_err().to_string();
    let mut nchw = pool(t, &[1, 1, 2, 2], &[1, 1, 2, 2], "VALID");
    nchw.attr.insert("data_format".into(), "NCHW".into());
    assert!(err(nchw).contains("Default MaxPoolingOp only supports NHWC on device type CPU"));
    assert!(
        err(pool(t, &[1, 0, 2, 1], &[1, 1, 1, 1], "VALID"))
            .contains("Sliding window ksize for dimension 1 was zero.")
    );
    assert!(
        err(pool(t, &[1, 2, 2, 1, 1], &[1, 1, 1, 1], "VALID"))
            .contains("Sliding window ksize field must specify 4 dimensions")
    );
    assert!(
        err(pool(t, &[1, 2, 2, 1], &[1, 1, 1, 1, 1], "VALID"))
            .contains("Sliding window stride field must specify 4 dimensions")
    );
    assert!(
        err(pool(t, &[2, 2, 2, 1], &[1, 1, 1, 1], "VALID"))
            .contains("Pooling is not yet supported on the batch dimension.")
    );
    let mut bad_pad = pool(t, &[1, 2, 2, 1], &[1, 1, 1, 1], "EXPLICIT");
    bad_pad
        .attr
        .insert("explicit_paddings".into(), [0, 0, 1, 1].into());
    assert!(err(bad_pad).contains("explicit_paddings attribute must contain 8 values, but got: 4"));

    let k = pool(t, &[1, 2, 2, 1], &[1, 1, 1, 1], "VALID");
    assert_eq!(
        run_err(&k, vec![tensor(t, &[4, 4, 1], &[0.0; 16])]),
        "tensor_in_shape must have 2 spatial dimensions. 3 0"
    );
    assert_eq!(
        run_err(
            &pool(t, &[1, 5, 1, 1], &[1, 1, 1, 1], "VALID"),
            vec![tensor(t, &[1, 2, 2, 1], &[0.0; 4])]
        ),
        "Computed output size would be negative: -2 [input_size: 2, effective_filter_size: 5, stride: 1]"
    );
    assert_eq!(
        run_err(
            &pool(t, &[1, 1, 1, 1], &[1, 0, 1, 1], "VALID"),
            vec![tensor(t, &[1, 2, 2, 1], &[0.0; 4])]
        ),
        "Stride must be > 0, but got 0"
    );
    assert!(matches!(
        run(
            &k,
            vec![tensor(DataType::DtDouble, &[1, 2, 2, 1], &[0.0; 4])]
        ),
        Err(KernelError::InputDtype { .. })
    ));
    // A huge window over a small input: one output, no huge loop.
    let out = run(
        &pool(t, &[1, 1 << 40, 1, 1], &[1, 1, 1, 1], "SAME"),
        vec![tensor(t, &[1, 2, 1, 1], &[3.0, 4.0])],
    )
    .unwrap();
    assert_eq!(values(&out[0]), [4.0, 4.0]);
}
