//! DepthwiseConv2dNative: the naive f64 reference of `conv2d` (a grouped
//! convolution with one input channel per group) over strides,
//! paddings, multipliers and channel counts that exercise the vectorised
//! kernel (whole vectors of 16 or 8 channels, two at a time, four for the
//! short runs of edge pixels, and the
//! masked rest; a row's interior, and its edge pixels with the column taps
//! their windows keep, none among them) and the portable one, for every
//! type.
//!
//! Tolerances as `conv2d`'s.

use registry_core::proto::{AttrValue, DataType};

use super::conv2d::{Case, Pad, reference};
use super::support::*;

fn check(case: Case, multiplier: usize, t: DataType, abs: f64, rel: f64, seed: u64) {
    let case = Case {
        fc: 1,
        oc: case.c * multiplier,
        ..case
    };
    let x = tensor(
        t,
        &[case.n, case.h, case.w, case.c],
        &pseudo_random(case.n * case.h * case.w * case.c, seed),
    );
    let f = tensor(
        t,
        &[case.fh, case.fw, case.c, multiplier],
        &pseudo_random(case.fh * case.fw * case.oc, seed + 1),
    );
    let (shape, expected) = reference(&case, &values(&x), &values(&f));
    let mut attrs = vec![
        ("strides", [1, case.stride.0, case.stride.1, 1].into()),
        ("dilations", [1, case.dilation.0, case.dilation.1, 1].into()),
    ];
    match case.padding {
        Pad::Same => attrs.push(("padding", "SAME".into())),
        Pad::Valid => attrs.push(("padding", "VALID".into())),
        Pad::Explicit(p) => {
            attrs.push(("padding", "EXPLICIT".into()));
            attrs.push((
                "explicit_paddings",
                AttrValue::from([0, 0, p[0], p[1], p[2], p[3], 0, 0]),
            ));
        }
    }
    let node = node("DepthwiseConv2dNative", &[t, t], &attrs);
    let out = run(&node, vec![x, f]).unwrap_or_else(|e| panic!("{case:?} {t:?}: {e}"));
    assert_eq!(out[0].dims(), shape.as_slice(), "{case:?}");
    assert_close(&values(&out[0]), &expected, abs, rel);
}

#[test]
fn matches_a_naive_reference_over_attrs_channels_and_types() {
    let base = Case {
        n: 2,
        h: 6,
        w: 19,
        c: 16,
        fh: 3,
        fw: 3,
        fc: 1,
        oc: 16,
        stride: (1, 1),
        dilation: (1, 1),
        padding: Pad::Same,
    };
    let cases = [
        // One vector of 16 (AVX-512) or two of 8 (AVX2); rows of 19
        // pixels: interior blocks of 8, 4, 2 and 1 between the edges.
        (base, 1),
        // 8 channels (AVX2's vectors), 40 (8 is left after 2 vectors of
        // 16), 48 (three of 16), 37 and 3 (masked loads and stores).
        (Case { c: 8, ..base }, 1),
        (Case { c: 40, ..base }, 1),
        (
            Case {
                c: 48,
                w: 11,
                ..base
            },
            1,
        ),
        (
            Case {
                c: 37,
                w: 9,
                ..base
            },
            1,
        ),
        (Case { c: 3, ..base }, 1),
        // Rows of 5 pixels: an interior of 3 (a short run, as each edge
        // pixel), whose 72 channels go 4 vectors at a time (then 8 left).
        (
            Case {
                c: 72,
                w: 5,
                ..base
            },
            1,
        ),
        (
            Case {
                padding: Pad::Valid,
                ..base
            },
            1,
        ),
        // Keras' stride-2 block, and a stride of 3 (TF takes only equal
        // strides for the rows and columns).
        (
            Case {
                h: 8,
                w: 18,
                c: 24,
                stride: (2, 2),
                ..base
            },
            1,
        ),
        (
            Case {
                stride: (3, 3),
                ..base
            },
            1,
        ),
        // (TF's CPU kernel takes no dilation.)
        (
            Case {
                padding: Pad::Explicit([2, 1, 3, 0]),
                ..base
            },
            1,
        ),
        (
            Case {
                fh: 5,
                fw: 2,
                padding: Pad::Explicit([0, 1, 1, 0]),
                ..base
            },
            1,
        ),
        // No interior: the window is wider than the padded row's middle.
        (
            Case {
                w: 4,
                fw: 5,
                ..base
            },
            1,
        ),
        // Filters of no columns or no rows: every sum is empty.
        (Case { fw: 0, ..base }, 1),
        (Case { fh: 0, ..base }, 1),
        // Multipliers above 1 (the portable kernel throughout).
        (Case { c: 5, ..base }, 2),
        (
            Case {
                c: 4,
                stride: (2, 2),
                ..base
            },
            3,
        ),
    ];
    let types = [
        (DataType::DtFloat, 1e-4, 1e-4),
        (DataType::DtDouble, 1e-11, 1e-11),
        (DataType::DtHalf, 1e-2, 4e-3),
        (DataType::DtBfloat16, 6e-2, 1.6e-2),
    ];
    for (i, (case, multiplier)) in cases.into_iter().enumerate() {
        for (t, abs, rel) in types {
            check(case, multiplier, t, abs, rel, 40 + i as u64);
        }
    }
}
