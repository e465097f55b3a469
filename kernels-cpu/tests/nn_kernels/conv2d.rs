//! Conv2D: hand-computed windows (TF's SAME split: the extra padding goes
//! after), a naive f64 reference over strides, dilations, paddings and
//! groups for every type, the pointwise path, empty inputs and TF's errors.
//!
//! Tolerances (summation order differs): f32 `1e-4` abs + rel, f64 `1e-11`,
//! half `abs 1e-2 + rel 4e-3` and bfloat16 `abs 6e-2 + rel 1.6e-2` (sums in
//! f32, one final rounding, values up to ~10); int32 exact.

use registry_core::kernel::KernelError;
use registry_core::proto::{AttrValue, DataType, NodeDef};

use super::support::*;

fn conv(t: DataType, strides: &[i64], padding: &str, extra: &[(&str, AttrValue)]) -> NodeDef {
    let mut attrs = vec![("strides", strides.into()), ("padding", padding.into())];
    attrs.extend(extra.iter().cloned());
    node("Conv2D", &[t, t], &attrs)
}

const X3: [f64; 9] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];

#[test]
fn three_by_three_by_hand() {
    for t in [
        DataType::DtFloat,
        DataType::DtDouble,
        DataType::DtHalf,
        DataType::DtBfloat16,
        DataType::DtInt32,
    ] {
        let x = tensor(t, &[1, 3, 3, 1], &X3);
        let ones = tensor(t, &[3, 3, 1, 1], &[1.0; 9]);
        // SAME, 3x3 of ones: total padding 2, one on each side: sums of
        // each 3x3 neighbourhood.
        let out = run(
            &conv(t, &[1, 1, 1, 1], "SAME", &[]),
            vec![x.clone(), ones.clone()],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[1, 3, 3, 1]);
        assert_eq!(
            values(&out[0]),
            [12.0, 21.0, 16.0, 27.0, 45.0, 33.0, 24.0, 39.0, 28.0],
            "{t:?}"
        );
        // VALID: only the centre window.
        let out = run(&conv(t, &[1, 1, 1, 1], "VALID", &[]), vec![x.clone(), ones]).unwrap();
        assert_eq!(values(&out[0]), [45.0], "{t:?}");
        // 2x2 filter [[1,2],[3,4]], SAME: total padding 1, all of it after
        // (TF: pad_before = total / 2 = 0).
        let f = tensor(t, &[2, 2, 1, 1], &[1.0, 2.0, 3.0, 4.0]);
        let out = run(
            &conv(t, &[1, 1, 1, 1], "SAME", &[]),
            vec![x.clone(), f.clone()],
        )
        .unwrap();
        assert_eq!(
            values(&out[0]),
            [37.0, 47.0, 21.0, 67.0, 77.0, 33.0, 23.0, 26.0, 9.0],
            "{t:?}"
        );
        // Stride 2, SAME: ceil(3/2) = 2, padding (2-1)*2+2-3 = 1, after.
        let out = run(
            &conv(t, &[1, 2, 2, 1], "SAME", &[]),
            vec![x.clone(), f.clone()],
        )
        .unwrap();
        assert_eq!(out[0].dims(), &[1, 2, 2, 1]);
        assert_eq!(values(&out[0]), [37.0, 21.0, 23.0, 9.0], "{t:?}");
        // VALID: (3 - 2 + 1) = 2.
        let out = run(&conv(t, &[1, 1, 1, 1], "VALID", &[]), vec![x, f]).unwrap();
        assert_eq!(values(&out[0]), [37.0, 47.0, 67.0, 77.0], "{t:?}");
    }
}

#[test]
fn explicit_padding_and_dilation_by_hand() {
    let t = DataType::DtFloat;
    let x = tensor(t, &[1, 3, 3, 1], &X3);
    let f = tensor(t, &[2, 2, 1, 1], &[1.0, 2.0, 3.0, 4.0]);
    // One row of padding on top only: rows (-1,0),(0,1),(1,2); cols VALID.
    let paddings = AttrValue::from([0, 0, 1, 0, 0, 0, 0, 0]);
    let out = run(
        &conv(
            t,
            &[1, 1, 1, 1],
            "EXPLICIT",
            &[("explicit_paddings", paddings)],
        ),
        vec![x.clone(), f.clone()],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[1, 3, 2, 1]);
    // top row: only the filter's second row sees data: 3*x + 4*x'.
    assert_eq!(values(&out[0]), [11.0, 18.0, 37.0, 47.0, 67.0, 77.0]);
    // Dilation 2: the 2x2 filter spans 3x3, taps at the corners.
    let out = run(
        &conv(
            t,
            &[1, 1, 1, 1],
            "VALID",
            &[("dilations", [1, 2, 2, 1].into())],
        ),
        vec![x, f],
    )
    .unwrap();
    assert_eq!(values(&out[0]), [1.0 + 2.0 * 3.0 + 3.0 * 7.0 + 4.0 * 9.0]);
}

/// The convolution being checked: NHWC input, HWIO filter.
#[derive(Clone, Copy, Debug)]
pub(super) struct Case {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
    pub fh: usize,
    pub fw: usize,
    pub fc: usize,
    pub oc: usize,
    pub stride: (i64, i64),
    pub dilation: (i64, i64),
    /// (top, bottom, left, right) or SAME/VALID.
    pub padding: Pad,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Pad {
    Same,
    Valid,
    Explicit([i64; 4]),
}

/// A direct f64 convolution with TF's padding rules (independent of the
/// kernel's im2col). A depthwise convolution is the grouped one with one
/// input channel per group (its `[rows, cols, channels, multiplier]`
/// filter has the same layout as that HWIO filter).
pub(super) fn reference(case: &Case, x: &[f64], f: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let eff = |k: usize, d: i64| (k as i64 - 1) * d + 1;
    let dim = |input: usize, k: usize, d: i64, s: i64, before: i64, after: i64, same: bool| {
        if same {
            let out = (input as i64 + s - 1) / s;
            let need = ((out - 1) * s + eff(k, d) - input as i64).max(0);
            (out, need / 2)
        } else {
            ((input as i64 + before + after - eff(k, d) + s) / s, before)
        }
    };
    let (pads, same) = match case.padding {
        Pad::Same => ([0; 4], true),
        Pad::Valid => ([0; 4], false),
        Pad::Explicit(p) => (p, false),
    };
    let (oh, pt) = dim(
        case.h,
        case.fh,
        case.dilation.0,
        case.stride.0,
        pads[0],
        pads[1],
        same,
    );
    let (ow, pl) = dim(
        case.w,
        case.fw,
        case.dilation.1,
        case.stride.1,
        pads[2],
        pads[3],
        same,
    );
    let (oh, ow) = (oh as usize, ow as usize);
    let groups = case.c / case.fc;
    let ocg = case.oc / groups;
    let mut out = vec![0.0; case.n * oh * ow * case.oc];
    for b in 0..case.n {
        for i in 0..oh {
            for j in 0..ow {
                for o in 0..case.oc {
                    let g = o / ocg;
                    let mut acc = 0.0;
                    for di in 0..case.fh {
                        for dj in 0..case.fw {
                            let y = i as i64 * case.stride.0 + di as i64 * case.dilation.0 - pt;
                            let z = j as i64 * case.stride.1 + dj as i64 * case.dilation.1 - pl;
                            if y < 0 || z < 0 || y >= case.h as i64 || z >= case.w as i64 {
                                continue;
                            }
                            for ci in 0..case.fc {
                                let xv = x[((b * case.h + y as usize) * case.w + z as usize)
                                    * case.c
                                    + g * case.fc
                                    + ci];
                                let fv = f[((di * case.fw + dj) * case.fc + ci) * case.oc + o];
                                acc += xv * fv;
                            }
                        }
                    }
                    out[((b * oh + i) * ow + j) * case.oc + o] = acc;
                }
            }
        }
    }
    (vec![case.n, oh, ow, case.oc], out)
}

fn check_case(case: Case, t: DataType, abs: f64, rel: f64, seed: u64) {
    let int = t == DataType::DtInt32;
    let values_for = |n: usize, seed: u64| -> Vec<f64> {
        pseudo_random(n, seed)
            .iter()
            .map(|v| if int { (v * 10.0).round() } else { *v })
            .collect()
    };
    let x = tensor(
        t,
        &[case.n, case.h, case.w, case.c],
        &values_for(case.n * case.h * case.w * case.c, seed),
    );
    let f = tensor(
        t,
        &[case.fh, case.fw, case.fc, case.oc],
        &values_for(case.fh * case.fw * case.fc * case.oc, seed + 1),
    );
    let (shape, expected) = reference(&case, &values(&x), &values(&f));
    let (padding, extra) = match case.padding {
        Pad::Same => ("SAME", vec![]),
        Pad::Valid => ("VALID", vec![]),
        Pad::Explicit(p) => (
            "EXPLICIT",
            vec![(
                "explicit_paddings",
                AttrValue::from([0, 0, p[0], p[1], p[2], p[3], 0, 0]),
            )],
        ),
    };
    let mut extra = extra;
    extra.push(("dilations", [1, case.dilation.0, case.dilation.1, 1].into()));
    let node = conv(t, &[1, case.stride.0, case.stride.1, 1], padding, &extra);
    let out = run(&node, vec![x, f]).unwrap_or_else(|e| panic!("{case:?} {t:?}: {e}"));
    assert_eq!(out[0].dims(), shape.as_slice(), "{case:?}");
    if int {
        assert_eq!(values(&out[0]), expected, "{case:?}");
    } else {
        assert_close(&values(&out[0]), &expected, abs, rel);
    }
}

const TYPES: [(DataType, f64, f64); 5] = [
    (DataType::DtFloat, 1e-4, 1e-4),
    (DataType::DtDouble, 1e-11, 1e-11),
    (DataType::DtHalf, 1e-2, 4e-3),
    (DataType::DtBfloat16, 6e-2, 1.6e-2),
    (DataType::DtInt32, 0.0, 0.0),
];

#[test]
fn matches_a_naive_reference_over_attrs_and_types() {
    let base = Case {
        n: 2,
        h: 7,
        w: 6,
        c: 4,
        fh: 3,
        fw: 2,
        fc: 4,
        oc: 6,
        stride: (1, 1),
        dilation: (1, 1),
        padding: Pad::Same,
    };
    let cases = [
        base,
        Case {
            padding: Pad::Valid,
            ..base
        },
        Case {
            stride: (2, 3),
            ..base
        },
        Case {
            stride: (2, 1),
            padding: Pad::Valid,
            ..base
        },
        Case {
            dilation: (2, 2),
            ..base
        },
        Case {
            dilation: (1, 3),
            stride: (2, 2),
            padding: Pad::Valid,
            ..base
        },
        Case {
            padding: Pad::Explicit([1, 2, 0, 3]),
            ..base
        },
        Case {
            padding: Pad::Explicit([4, 0, 2, 2]),
            stride: (3, 2),
            dilation: (2, 1),
            ..base
        },
        // Grouped: 4 input channels, 2 per group, 6 outputs (3 per group).
        Case { fc: 2, ..base },
        Case {
            fc: 1,
            oc: 8,
            stride: (2, 2),
            ..base
        },
        // Pointwise (1x1, stride 1), also grouped.
        Case {
            fh: 1,
            fw: 1,
            ..base
        },
        Case {
            fh: 1,
            fw: 1,
            fc: 2,
            padding: Pad::Valid,
            ..base
        },
        // Rows of 19 pixels: the direct kernel's blocks of 8 (or 6), 4, 2
        // and 1 pixels, with one vector of output channels (8 or fewer)
        // and two (9 to 16).
        Case {
            w: 19,
            oc: 8,
            ..base
        },
        Case {
            w: 19,
            oc: 13,
            stride: (1, 2),
            ..base
        },
        Case {
            w: 19,
            oc: 16,
            dilation: (2, 3),
            padding: Pad::Explicit([2, 1, 3, 0]),
            ..base
        },
        Case {
            w: 19,
            fh: 1,
            fw: 1,
            oc: 1,
            padding: Pad::Valid,
            ..base
        },
        // Filter as large as the input, VALID: one output pixel per image.
        Case {
            fh: 7,
            fw: 6,
            padding: Pad::Valid,
            ..base
        },
    ];
    for (i, case) in cases.into_iter().enumerate() {
        for (t, abs, rel) in TYPES {
            check_case(case, t, abs, rel, 10 + i as u64);
        }
    }
}

#[test]
fn large_convolution_uses_chunks_and_threads() {
    // f64 patches of 3*3*64 = 576 elements: the 8 MiB budget holds 1820
    // rows, so 2*32*32 = 2048 output pixels need two chunks.
    let case = Case {
        n: 2,
        h: 32,
        w: 32,
        c: 64,
        fh: 3,
        fw: 3,
        fc: 64,
        oc: 8,
        stride: (1, 1),
        dilation: (1, 1),
        padding: Pad::Same,
    };
    check_case(case, DataType::DtDouble, 1e-11, 1e-11, 99);
    check_case(
        Case {
            c: 16,
            fc: 16,
            oc: 32,
            ..case
        },
        DataType::DtFloat,
        1e-4,
        1e-4,
        98,
    );
    // Few output channels (the direct kernel), in parallel row blocks.
    check_case(
        Case {
            c: 16,
            fc: 16,
            oc: 8,
            ..case
        },
        DataType::DtFloat,
        1e-4,
        1e-4,
        97,
    );
    // MobileNet's first layer, smaller: 3 channels, stride 2, SAME (the
    // padding after the input only), 16 outputs (the direct kernel's two
    // vectors on AVX2), in parallel row blocks.
    check_case(
        Case {
            h: 70,
            w: 70,
            c: 3,
            fc: 3,
            oc: 16,
            stride: (2, 2),
            ..case
        },
        DataType::DtFloat,
        1e-4,
        1e-4,
        96,
    );
}

#[test]
fn empty_inputs() {
    let t = DataType::DtFloat;
    let f = tensor(t, &[2, 2, 1, 3], &[1.0; 12]);
    // No images.
    let out = run(
        &conv(t, &[1, 1, 1, 1], "SAME", &[]),
        vec![tensor(t, &[0, 3, 3, 1], &[]), f.clone()],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[0, 3, 3, 3]);
    // No rows: SAME keeps 0 rows.
    let out = run(
        &conv(t, &[1, 1, 1, 1], "SAME", &[]),
        vec![tensor(t, &[1, 0, 3, 1], &[]), f.clone()],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[1, 0, 3, 3]);
    // Empty input, explicit padding: the output is only padding, zeros.
    let paddings = AttrValue::from([0, 0, 1, 1, 1, 1, 0, 0]);
    let out = run(
        &conv(
            t,
            &[1, 1, 1, 1],
            "EXPLICIT",
            &[("explicit_paddings", paddings)],
        ),
        vec![tensor(t, &[1, 0, 0, 1], &[]), f],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[1, 1, 1, 3]);
    assert_eq!(values(&out[0]), [0.0; 3]);
    // No output channels.
    let out = run(
        &conv(t, &[1, 1, 1, 1], "VALID", &[]),
        vec![tensor(t, &[1, 3, 3, 1], &X3), tensor(t, &[2, 2, 1, 0], &[])],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[1, 2, 2, 0]);
}

#[test]
fn nchw_is_unimplemented_on_the_cpu_as_in_tensorflow() {
    let t = DataType::DtFloat;
    let node = conv(t, &[1, 1, 1, 1], "VALID", &[("data_format", "NCHW".into())]);
    let err = run(
        &node,
        vec![
            tensor(t, &[1, 1, 3, 3], &X3),
            tensor(t, &[2, 2, 1, 1], &[1.0; 4]),
        ],
    )
    .unwrap_err();
    assert!(matches!(err, KernelError::Unimplemented(_)));
    assert_eq!(
        err.to_string(),
        "The Conv2D op currently only supports the NHWC tensor format on the CPU. The op was given the format: NCHW"
    );
    // With nothing to compute TF returns the empty output first.
    let out = run(
        &node,
        vec![
            tensor(t, &[0, 1, 3, 3], &[]),
            tensor(t, &[2, 2, 1, 1], &[1.0; 4]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].dims(), &[0, 1, 2, 2]);
}

#[test]
fn construction_errors() {
    let t = DataType::DtFloat;
    let err = |node: NodeDef| try_kernel(&node).unwrap_err().to_string();
    assert!(
        err(conv(t, &[1, 1, 1], "SAME", &[]))
            .contains("Sliding window strides field must specify 4 dimensions")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "SAME",
            &[("dilations", [1, 1].into())]
        ))
        .contains("Sliding window dilations field must specify 4 dimensions")
    );
    assert!(err(conv(t, &[2, 1, 1, 1], "SAME", &[])).contains(
        "Current implementation does not yet support strides in the batch and depth dimensions."
    ));
    assert!(
        err(conv(t, &[1, 0, 1, 1], "SAME", &[]))
            .contains("Row and column strides should be larger than 0.")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "SAME",
            &[("dilations", [1, 1, 1, 2].into())]
        ))
        .contains("does not yet support dilations in the batch and depth dimensions.")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "SAME",
            &[("dilations", [1, 0, 1, 1].into())]
        ))
        .contains("Dilated rates should be larger than 0.")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "EXPLICIT",
            &[("explicit_paddings", [0, 0, 1, 1].into())]
        ))
        .contains("explicit_paddings attribute must contain 8 values, but got: 4")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "EXPLICIT",
            &[("explicit_paddings", [0, 0, -1, 1, 0, 0, 0, 0].into())]
        ))
        .contains("All elements of explicit_paddings must be nonnegative")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "EXPLICIT",
            &[("explicit_paddings", [1, 0, 0, 0, 0, 0, 0, 0].into())]
        ))
        .contains("Nonzero explicit padding in the batch or depth dimensions is not supported")
    );
    assert!(
        err(conv(
            t,
            &[1, 1, 1, 1],
            "SAME",
            &[("explicit_paddings", [0; 8].into())]
        ))
        .contains(
            "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"
        )
    );
}

#[test]
fn compute_errors() {
    let t = DataType::DtFloat;
    let k = conv(t, &[1, 1, 1, 1], "VALID", &[]);
    let x = |shape: &[usize]| tensor(t, shape, &vec![1.0; shape.iter().product()]);
    assert_eq!(
        run_err(&k, vec![x(&[3, 3, 1]), x(&[2, 2, 1, 1])]),
        "convolution input must be 4-dimensional: [3,3,1]"
    );
    assert_eq!(
        run_err(&k, vec![x(&[1, 3, 3, 1]), x(&[2, 2, 1])]),
        "convolution filter must be 4-dimensional: [2,2,1]"
    );
    assert_eq!(
        run_err(&k, vec![x(&[1, 3, 3, 5]), x(&[2, 2, 2, 1])]),
        "input depth must be evenly divisible by filter depth: 5 vs 2"
    );
    assert_eq!(
        run_err(&k, vec![x(&[1, 3, 3, 2]), x(&[2, 2, 0, 1])]),
        "filter depth must be stricly positive, got 0"
    );
    assert_eq!(
        run_err(&k, vec![x(&[1, 3, 3, 4]), x(&[2, 2, 2, 3])]),
        "output depth must be evenly divisible by number of groups: 3 vs 2"
    );
    assert_eq!(
        run_err(&k, vec![x(&[1, 2, 2, 1]), x(&[5, 1, 1, 1])]),
        "Computed output size would be negative: -2 [input_size: 2, effective_filter_size: 5, stride: 1]"
    );
    assert_eq!(
        run_err(&k, vec![x(&[1, 3, 3, 1]), x(&[0, 2, 1, 1])]),
        "filter must not have zero elements (i.e. all dimensions must be non-zero)"
    );
    assert!(matches!(
        run(
            &k,
            vec![
                x(&[1, 3, 3, 1]),
                tensor(DataType::DtDouble, &[2, 2, 1, 1], &[1.0; 4])
            ]
        ),
        Err(KernelError::InputDtype { index: 1, .. })
    ));
    // Dimensions past TF's int limit are refused before any work.
    let huge = tensor(t, &[1usize << 31, 1, 1, 0], &[]);
    assert_eq!(
        run_err(&k, vec![x(&[1, 3, 3, 1]), huge]),
        "filter too large"
    );
    let wide = tensor(t, &[1, 1usize << 32, 0, 1], &[]);
    assert_eq!(
        run_err(&k, vec![wide, x(&[1, 1, 1, 1])]),
        "Input rows too large"
    );
}
