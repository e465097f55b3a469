//! Sum, Mean, Max and ArgMax on CPU, through `create_op_kernel`: values
//! from TensorFlow's golden runs (`/work/shared/graphs`) and computed by
//! hand, every attr variant, empty tensors, the parallel paths and errors.

use registry_core::create_op_kernel;
use registry_core::kernel::{KernelError, KernelInstance};
use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{DataType, NodeDef};
use registry_core::tensor::{Complex64, Complex128, Tensor, TensorElement, bf16, f16};

// ---------------------------------------------------------------- helpers

/// A reduction node (`Sum`, `Mean`, `Max`).
fn reduction(op: &str, t: DataType, tidx: DataType, keep_dims: bool) -> KernelInstance {
    let node = NodeDefBuilder::new("r", op)
        .fake_inputs(&[t, tidx])
        .attr("keep_dims", keep_dims)
        .finalize()
        .unwrap_or_else(|e| panic!("{e}"));
    create_op_kernel("CPU", &node).unwrap_or_else(|e| panic!("{op} {t:?}: {e}"))
}

/// An ArgMax node.
fn arg_max_node(t: DataType, tidx: DataType, output_type: DataType) -> NodeDef {
    NodeDefBuilder::new("am", "ArgMax")
        .fake_inputs(&[t, tidx])
        .attr("output_type", output_type)
        .finalize()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn arg_max(t: DataType, tidx: DataType, output_type: DataType) -> KernelInstance {
    create_op_kernel("CPU", &arg_max_node(t, tidx, output_type)).unwrap()
}

fn t<T: TensorElement>(shape: &[usize], v: Vec<T>) -> Tensor {
    Tensor::from_vec(shape, v).unwrap()
}

fn axes(v: &[i32]) -> Tensor {
    t(&[v.len()], v.to_vec())
}

/// Runs a float reduction over `ax` (int32 axes).
fn run_f32(op: &str, x: &Tensor, ax: &[i32], keep: bool) -> Tensor {
    let k = reduction(op, DataType::DtFloat, DataType::DtInt32, keep);
    let mut out = k.compute([x.clone(), axes(ax)]).unwrap();
    out.remove(0)
}

fn run<T: TensorElement>(
    op: &str,
    x: &Tensor,
    ax: Tensor,
    keep: bool,
) -> Result<Tensor, KernelError> {
    let tidx = ax.dtype();
    let k = reduction(op, T::DTYPE, tidx, keep);
    Ok(k.compute([x.clone(), ax])?.remove(0))
}

fn assert_close(actual: &[f32], expected: &[f64], rel: f64) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let tol = rel * e.abs().max(1.0);
        assert!(
            (f64::from(a) - e).abs() <= tol,
            "element {i}: {a} vs {e} (tolerance {tol})"
        );
    }
}

fn golden(graph: &str) -> serde_json::Value {
    let path = format!("/work/shared/graphs/{graph}/io.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// The fetch or feed `name` of an io.json: (shape, values as f64).
fn golden_tensor(io: &serde_json::Value, name: &str) -> (Vec<usize>, Vec<f64>) {
    let all = io["feeds"]
        .as_array()
        .unwrap()
        .iter()
        .chain(io["fetches"].as_array().unwrap());
    let entry = all
        .into_iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"));
    let shape = entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let values = entry["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    (shape, values)
}

fn f32_tensor(shape: &[usize], values: &[f64]) -> Tensor {
    t(shape, values.iter().map(|&v| v as f32).collect())
}

// ------------------------------------------------- TensorFlow golden values

/// Sum, Mean and Max of `addn_reduce` (f32 [4, 6]): each within 2 ulp-ish
/// relative error (6 or 4 terms summed in another order than Eigen), Max
/// exactly.
#[test]
fn addn_reduce_golden_values() {
    kernels_cpu::link();
    let io = golden("addn_reduce");
    let (shape, addn) = golden_tensor(&io, "addn:0");
    let x = f32_tensor(&shape, &addn);

    let cases: [(&str, &str, &[i32], bool); 5] = [
        ("sum_axis1:0", "Sum", &[1], false),
        ("mean_axis0:0", "Mean", &[0], false),
        ("max_axis1_keep:0", "Max", &[1], true),
        ("max_all:0", "Max", &[0, 1], false),
        ("sum_axis_neg1:0", "Sum", &[-1], false),
    ];
    for (fetch, op, ax, keep) in cases {
        let (want_shape, want) = golden_tensor(&io, fetch);
        let out = run_f32(op, &x, ax, keep);
        assert_eq!(out.dims(), &want_shape[..], "{fetch}");
        let tol = if op == "Max" {
            0.0
        } else {
            4.0 * f64::from(f32::EPSILON)
        };
        assert_close(out.as_slice::<f32>().unwrap(), &want, tol);
    }
    // The scalar axis form of sum_axis_neg1.
    let k = reduction("Sum", DataType::DtFloat, DataType::DtInt32, false);
    let out = k.compute([x, Tensor::scalar(-1i32)]).unwrap();
    let (_, want) = golden_tensor(&io, "sum_axis_neg1:0");
    assert_close(
        out[0].as_slice::<f32>().unwrap(),
        &want,
        4.0 * f64::from(f32::EPSILON),
    );
}

/// ArgMax of `mlp_f32`'s softmax output (f32 [8, 10], axis 1) is TF's
/// `classes` (int64).
#[test]
fn mlp_arg_max_golden_values() {
    kernels_cpu::link();
    let io = golden("mlp_f32");
    let (shape, probs) = golden_tensor(&io, "Identity_2:0");
    let (_, classes) = golden_tensor(&io, "Identity:0");
    let k = arg_max(DataType::DtFloat, DataType::DtInt32, DataType::DtInt64);
    let out = k
        .compute([f32_tensor(&shape, &probs), Tensor::scalar(1i32)])
        .unwrap();
    let want: Vec<i64> = classes.iter().map(|&c| c as i64).collect();
    assert_eq!(out[0].dims(), &[8]);
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &want[..]);
}

// ------------------------------------------------------------ Sum, Mean, Max

#[test]
fn sum_over_axes_variants() {
    kernels_cpu::link();
    // [2, 3]: [[1, 2, 3], [4, 5, 6]]
    let x = t(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]);
    type Case<'a> = (&'a [i32], bool, &'a [usize], &'a [i32]);
    let cases: [Case; 7] = [
        (&[0], false, &[3], &[5, 7, 9]),
        (&[1], false, &[2], &[6, 15]),
        (&[1], true, &[2, 1], &[6, 15]),
        (&[0, 1], false, &[], &[21]),
        (&[0, 1], true, &[1, 1], &[21]),
        (&[-1, -2], false, &[], &[21]),
        (&[], false, &[2, 3], &[1, 2, 3, 4, 5, 6]),
    ];
    for (ax, keep, shape, want) in cases {
        let out = run::<i32>("Sum", &x, axes(ax), keep).unwrap();
        assert_eq!(out.dims(), shape, "axes {ax:?} keep {keep}");
        assert_eq!(
            out.as_slice::<i32>().unwrap(),
            want,
            "axes {ax:?} keep {keep}"
        );
    }
    // An axis named twice is TF 2.21's error, as -1 naming axis 1 again.
    for ax in [&[1, 1][..], &[1, -1]] {
        let e = run::<i32>("Sum", &x, axes(ax), false).unwrap_err();
        assert!(
            e.to_string()
                .contains("Invalid reduction arguments: Axes contains duplicate dimension: 1"),
            "{e}"
        );
    }
    // int64 axes, scalar and vector.
    let out = run::<i32>("Sum", &x, Tensor::scalar(0i64), false).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), &[5, 7, 9]);
    let out = run::<i32>("Sum", &x, t(&[2], vec![1i64, 0]), true).unwrap();
    assert_eq!(out.dims(), &[1, 1]);
    assert_eq!(out.as_slice::<i32>().unwrap(), &[21]);
}

#[test]
fn empty_reduction_set_shares_the_input() {
    kernels_cpu::link();
    // Over 16 bytes (smaller tensors are held by value, never shared).
    let x = t(&[2, 3], vec![1.5f32, -2.0, 3.0, 4.0, 5.0, 6.0]);
    for op in ["Sum", "Mean", "Max"] {
        let out = run_f32(op, &x, &[], false);
        assert_eq!(
            out.as_slice::<f32>().unwrap(),
            &[1.5, -2.0, 3.0, 4.0, 5.0, 6.0]
        );
        assert!(out.shares_buffer_with(&x), "{op}");
    }
    // Reducing only size-1 dims reduces nothing either (keep_dims keeps them).
    let x = t(&[2, 1], vec![1.5f32, -2.0]);
    let out = run_f32("Mean", &x, &[1], true);
    assert_eq!(out.dims(), &[2, 1]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1.5, -2.0]);
    let out = run_f32("Sum", &x, &[1], false);
    assert_eq!(out.dims(), &[2]);
    // A scalar input with no axes is itself.
    let out = run_f32("Max", &Tensor::scalar(7.0f32), &[], false);
    assert_eq!(out.dims(), &[] as &[usize]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[7.0]);
}

/// [2, 3, 4] reduced over every subset of axes, against a direct sum.
#[test]
fn every_axis_subset_of_a_rank_3_tensor() {
    kernels_cpu::link();
    let dims = [2usize, 3, 4];
    let values: Vec<i64> = (0..24).map(|v| v * v - 7 * v).collect();
    let x = t(&dims, values.clone());
    for mask in 0u32..8 {
        let ax: Vec<i32> = (0..3).filter(|a| mask & (1 << a) != 0).collect();
        for keep in [false, true] {
            let out = run::<i64>("Sum", &x, axes(&ax), keep).unwrap();
            // Reference: accumulate every element into its output slot.
            let out_dims: Vec<usize> = (0..3)
                .filter_map(|a| {
                    if mask & (1 << a) == 0 {
                        Some(dims[a])
                    } else if keep {
                        Some(1)
                    } else {
                        None
                    }
                })
                .collect();
            let kept: Vec<usize> = (0..3).filter(|a| mask & (1 << a) == 0).collect();
            let n_out: usize = kept.iter().map(|&a| dims[a]).product();
            let mut want = vec![0i64; n_out];
            for (flat, &v) in values.iter().enumerate() {
                let idx = [flat / 12, (flat / 4) % 3, flat % 4];
                let mut o = 0;
                for &a in &kept {
                    o = o * dims[a] + idx[a];
                }
                want[o] += v;
            }
            assert_eq!(out.dims(), &out_dims[..], "axes {ax:?}");
            assert_eq!(out.as_slice::<i64>().unwrap(), &want[..], "axes {ax:?}");
        }
    }
}

/// The general (alternating) layout: [2, 3, 4, 5] over axes 0 and 2, and
/// [2, 3, 4, 5] over 1 and 3, by hand-checkable integer sums.
#[test]
fn alternating_axes() {
    kernels_cpu::link();
    let x = t(&[2, 3, 4, 5], (0..120).collect::<Vec<i32>>());
    let out = run::<i32>("Max", &x, axes(&[0, 2]), false).unwrap();
    assert_eq!(out.dims(), &[3, 5]);
    // max over i0, i2 of 60 i0 + 20 i1 + 5 i2 + i3 = 60 + 15 + 20 i1 + i3.
    let want: Vec<i32> = (0..3)
        .flat_map(|i1| (0..5).map(move |i3| 75 + 20 * i1 + i3))
        .collect();
    assert_eq!(out.as_slice::<i32>().unwrap(), &want[..]);
    let out = run::<i32>("Sum", &x, axes(&[1, 3]), true).unwrap();
    assert_eq!(out.dims(), &[2, 1, 4, 1]);
    // sum over i1 (3), i3 (5): 15 (60 i0 + 5 i2) + 5 * 20 * 3 + 3 * 10.
    let want: Vec<i32> = (0..2)
        .flat_map(|i0| (0..4).map(move |i2| 15 * (60 * i0 + 5 * i2) + 300 + 30))
        .collect();
    assert_eq!(out.as_slice::<i32>().unwrap(), &want[..]);
}

#[test]
fn mean_uses_integer_division_and_wide_accumulators() {
    kernels_cpu::link();
    let x = t(&[2, 2], vec![1i32, 2, -1, -2]);
    let out = run::<i32>("Mean", &x, axes(&[1]), false).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), &[1, -1]); // 3/2, -3/2 truncate
    // int8 values whose sum overflows int8: TF accumulates the mean in int64.
    let x = t(&[3], vec![100i8, 100, 100]);
    let out = run::<i8>("Mean", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<i8>().unwrap(), &[100]);
    let x = t(&[3], vec![250u8, 251, 255]);
    let out = run::<u8>("Mean", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<u8>().unwrap(), &[252]);
    let x = t(&[2], vec![i64::MAX, 1]);
    // int64 wraps in its own type: (MAX + 1) / 2 = MIN / 2.
    let out = run::<i64>("Mean", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), &[i64::MIN / 2]);
    let x = t(&[2, 2], vec![1.0f64, 2.0, 4.0, 8.0]);
    let out = run::<f64>("Mean", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<f64>().unwrap(), &[2.5, 5.0]);
}

#[test]
fn integer_sums_wrap() {
    kernels_cpu::link();
    let out = run::<i8>("Sum", &t(&[2], vec![100i8, 100]), axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<i8>().unwrap(), &[-56]);
    let out = run::<u8>("Sum", &t(&[2], vec![200u8, 100]), axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<u8>().unwrap(), &[44]);
    let x = t(&[3], vec![i64::MAX, 1, 1]);
    let out = run::<i64>("Sum", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), &[i64::MIN + 1]);
    let x = t(&[2], vec![u32::MAX, 2]);
    let out = run::<u32>("Sum", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<u32>().unwrap(), &[1]);
}

#[test]
fn half_and_bfloat16_accumulate_in_f32() {
    kernels_cpu::link();
    // In half, 2048 + 1 rounds back to 2048; an f32 accumulator reaches 4096.
    let x = t(&[4096], vec![f16::from_f32(1.0); 4096]);
    let out = run::<f16>("Sum", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<f16>().unwrap(), &[f16::from_f32(4096.0)]);
    let out = run::<f16>("Mean", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<f16>().unwrap(), &[f16::from_f32(1.0)]);
    // bfloat16: 256 + 1 rounds back to 256.
    let x = t(&[2, 1000], vec![bf16::from_f32(1.0); 2000]);
    let out = run::<bf16>("Sum", &x, axes(&[1]), false).unwrap();
    assert_eq!(
        out.as_slice::<bf16>().unwrap(),
        &[bf16::from_f32(1000.0); 2]
    );
    let vals = [0.5f32, -1.25, 3.0, 2.0];
    let x = t(&[2, 2], vals.map(f16::from_f32).to_vec());
    let out = run::<f16>("Max", &x, axes(&[0]), false).unwrap();
    assert_eq!(
        out.as_slice::<f16>().unwrap(),
        &[f16::from_f32(3.0), f16::from_f32(2.0)]
    );
    let x = t(&[2, 2], vals.map(bf16::from_f32).to_vec());
    let out = run::<bf16>("Mean", &x, axes(&[1]), false).unwrap();
    assert_eq!(
        out.as_slice::<bf16>().unwrap(),
        &[bf16::from_f32(-0.375), bf16::from_f32(2.5)]
    );
}

/// `half`/`bfloat16` rows and columns longer than the conversion block,
/// against the same reduction of exactly widened values in f64 (the inputs
/// are small integers, so every sum is exact).
#[test]
fn half_types_rows_and_columns() {
    kernels_cpu::link();
    for dims in [[700usize, 5], [5, 700], [3, 1300]] {
        let n = dims[0] * dims[1];
        let v: Vec<f32> = (0..n).map(|i| ((i * 37) % 19) as f32 - 9.0).collect();
        for axis in 0..2 {
            let other = dims[1 - axis];
            let at = |o: usize, k: usize| {
                if axis == 0 {
                    v[k * dims[1] + o]
                } else {
                    v[o * dims[1] + k]
                }
            };
            let sums: Vec<f32> = (0..other)
                .map(|o| (0..dims[axis]).map(|k| at(o, k)).sum())
                .collect();
            let maxs: Vec<f32> = (0..other)
                .map(|o| {
                    (0..dims[axis])
                        .map(|k| at(o, k))
                        .fold(f32::NEG_INFINITY, f32::max)
                })
                .collect();
            let x = t(&dims, v.iter().map(|&f| f16::from_f32(f)).collect());
            let out = run::<f16>("Sum", &x, axes(&[axis as i32]), false).unwrap();
            let got: Vec<f32> = out
                .as_slice::<f16>()
                .unwrap()
                .iter()
                .map(|h| h.to_f32())
                .collect();
            assert_eq!(got, sums, "half Sum {dims:?} axis {axis}");
            let out = run::<f16>("Max", &x, axes(&[axis as i32]), false).unwrap();
            let got: Vec<f32> = out
                .as_slice::<f16>()
                .unwrap()
                .iter()
                .map(|h| h.to_f32())
                .collect();
            assert_eq!(got, maxs, "half Max {dims:?} axis {axis}");
            let x = t(&dims, v.iter().map(|&f| bf16::from_f32(f)).collect());
            let out = run::<bf16>("Mean", &x, axes(&[axis as i32]), false).unwrap();
            let got: Vec<bf16> = out.as_slice::<bf16>().unwrap().to_vec();
            let want: Vec<bf16> = sums
                .iter()
                .map(|s| bf16::from_f32(s / dims[axis] as f32))
                .collect();
            assert_eq!(got, want, "bfloat16 Mean {dims:?} axis {axis}");
        }
    }
}

#[test]
fn complex_sum_and_mean() {
    kernels_cpu::link();
    let x = t(
        &[2, 2],
        vec![
            Complex64::new(1.0, 2.0),
            Complex64::new(3.0, -4.0),
            Complex64::new(-1.0, 0.5),
            Complex64::new(0.0, 1.0),
        ],
    );
    let out = run::<Complex64>("Sum", &x, axes(&[0]), false).unwrap();
    assert_eq!(
        out.as_slice::<Complex64>().unwrap(),
        &[Complex64::new(0.0, 2.5), Complex64::new(3.0, -3.0)]
    );
    let out = run::<Complex64>("Mean", &x, axes(&[1]), false).unwrap();
    assert_eq!(
        out.as_slice::<Complex64>().unwrap(),
        &[Complex64::new(2.0, -1.0), Complex64::new(-0.5, 0.75)]
    );
    let x = t(&[3], vec![Complex128::new(1.0, 1.0); 3]);
    let out = run::<Complex128>("Mean", &x, Tensor::scalar(0i64), false).unwrap();
    assert_eq!(
        out.as_slice::<Complex128>().unwrap(),
        &[Complex128::new(1.0, 1.0)]
    );
}

#[test]
fn max_propagates_nan_and_handles_infinities() {
    kernels_cpu::link();
    let x = t(
        &[3, 3],
        vec![
            1.0f32,
            f32::NAN,
            3.0,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
            -5.0,
            f32::NAN,
        ],
    );
    let out = run_f32("Max", &x, &[1], false);
    let v = out.as_slice::<f32>().unwrap();
    assert!(v[0].is_nan());
    assert_eq!(v[1], f32::NEG_INFINITY);
    assert!(v[2].is_nan());
    let out = run_f32("Max", &x, &[0], false);
    let v = out.as_slice::<f32>().unwrap();
    assert_eq!(v[0], f32::INFINITY);
    assert!(v[1].is_nan() && v[2].is_nan());
    let x = t(&[4], vec![-3i16, -1, i16::MIN, -2]);
    let out = run::<i16>("Max", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<i16>().unwrap(), &[-1]);
    let x = t(&[2, 2], vec![7u64, u64::MAX, 9, 0]);
    let out = run::<u64>("Max", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<u64>().unwrap(), &[9, u64::MAX]);
}

#[test]
fn empty_inputs_give_identities() {
    kernels_cpu::link();
    let x = t::<f32>(&[0, 3], vec![]);
    let sum = run_f32("Sum", &x, &[0], false);
    assert_eq!(sum.dims(), &[3]);
    assert_eq!(sum.as_slice::<f32>().unwrap(), &[0.0; 3]);
    let mean = run_f32("Mean", &x, &[0], true);
    assert_eq!(mean.dims(), &[1, 3]);
    assert!(mean.as_slice::<f32>().unwrap().iter().all(|v| v.is_nan()));
    let max = run_f32("Max", &x, &[0], false);
    assert_eq!(max.as_slice::<f32>().unwrap(), &[f32::NEG_INFINITY; 3]);
    // The output is empty: nothing to compute.
    let none = run_f32("Sum", &x, &[1], false);
    assert_eq!(none.dims(), &[0]);
    let x = t::<i32>(&[2, 0], vec![]);
    let out = run::<i32>("Max", &x, axes(&[1]), false).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), &[i32::MIN; 2]);
    let out = run::<i32>("Mean", &x, axes(&[1]), false).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), &[0; 2]);
    let out = run::<f16>("Max", &t::<f16>(&[0], vec![]), axes(&[0]), false).unwrap();
    assert_eq!(out.as_slice::<f16>().unwrap(), &[f16::NEG_INFINITY]);
    let out = run::<f64>("Mean", &t::<f64>(&[0], vec![]), axes(&[0]), false).unwrap();
    assert!(out.as_slice::<f64>().unwrap()[0].is_nan());
    let out = run::<Complex64>("Mean", &t::<Complex64>(&[0], vec![]), axes(&[0]), false).unwrap();
    assert_eq!(
        out.as_slice::<Complex64>().unwrap(),
        &[Complex64::new(0.0, 0.0)]
    );
}

/// Large inputs take the parallel paths (rows, columns, column tiles, split
/// rows, split columns, the general layout); integer-valued f64 data makes
/// every sum exact, so they must equal a direct computation.
#[test]
fn large_inputs_match_direct_computation() {
    kernels_cpu::link();
    let shapes_axes: [(&[usize], &[i32]); 9] = [
        (&[1 << 20], &[0]),         // one long row, split
        (&[4, 1 << 18], &[1]),      // few long rows
        (&[4096, 300], &[1]),       // many rows
        (&[4096, 300], &[0]),       // narrow columns
        (&[300, 4096], &[0]),       // wide columns, tiled
        (&[1 << 19, 3], &[0]),      // narrow columns, split rows
        (&[16, 64, 130], &[1]),     // [outer, reduced, inner]
        (&[64, 16, 8, 9], &[0, 2]), // general, first run reduced
        (&[64, 16, 8, 9], &[1, 3]), // general, first run kept (parallel)
    ];
    for (dims, ax) in shapes_axes {
        let n: usize = dims.iter().product();
        let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1009) as f64 - 500.0).collect();
        let x = t(dims, values.clone());
        let rank = dims.len();
        let reduced: Vec<bool> = (0..rank).map(|a| ax.contains(&(a as i32))).collect();
        let out_n: usize = (0..rank)
            .filter(|&a| !reduced[a])
            .map(|a| dims[a])
            .product();
        let mut sum = vec![0.0f64; out_n];
        let mut max = vec![f64::NEG_INFINITY; out_n];
        let mut index = vec![0usize; rank];
        for &v in &values {
            let mut o = 0;
            for a in 0..rank {
                if !reduced[a] {
                    o = o * dims[a] + index[a];
                }
            }
            sum[o] += v;
            max[o] = max[o].max(v);
            for a in (0..rank).rev() {
                index[a] += 1;
                if index[a] < dims[a] {
                    break;
                }
                index[a] = 0;
            }
        }
        let count = (n / out_n) as f64;
        let got = run::<f64>("Sum", &x, axes(ax), false).unwrap();
        assert_eq!(
            got.as_slice::<f64>().unwrap(),
            &sum[..],
            "Sum {dims:?} {ax:?}"
        );
        let got = run::<f64>("Max", &x, axes(ax), false).unwrap();
        assert_eq!(
            got.as_slice::<f64>().unwrap(),
            &max[..],
            "Max {dims:?} {ax:?}"
        );
        let got = run::<f64>("Mean", &x, axes(ax), false).unwrap();
        let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
        assert_eq!(
            got.as_slice::<f64>().unwrap(),
            &mean[..],
            "Mean {dims:?} {ax:?}"
        );
        // The same through i32 (wrapping cannot happen at these sizes).
        let xi = t(dims, values.iter().map(|&v| v as i32).collect());
        let got = run::<i32>("Sum", &xi, axes(ax), false).unwrap();
        let want: Vec<i32> = sum.iter().map(|&s| s as i32).collect();
        assert_eq!(
            got.as_slice::<i32>().unwrap(),
            &want[..],
            "i32 Sum {dims:?} {ax:?}"
        );
    }
}

#[test]
fn reduction_errors() {
    kernels_cpu::link();
    let x = t(&[2, 3], vec![0.0f32; 6]);
    let err = run::<f32>("Sum", &x, axes(&[2]), false).unwrap_err();
    assert!(matches!(err, KernelError::InvalidArgument(_)));
    assert_eq!(
        err.to_string(),
        "Invalid reduction dimension (2 for input with 2 dimension(s)"
    );
    let err = run::<f32>("Max", &x, t(&[1], vec![-3i64]), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid reduction dimension (-3 for input with 2 dimension(s)"
    );
    let err = run::<f32>("Mean", &Tensor::scalar(1.0f32), axes(&[0]), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid reduction dimension (0 for input with 0 dimension(s)"
    );
    let err = run::<f32>("Sum", &x, t(&[1, 1], vec![0i32]), false).unwrap_err();
    assert!(
        err.to_string()
            .contains("Expected reduction_indices to be a scalar or vector, but got shape: [1,1]"),
        "{err}"
    );
    // Wrong input dtypes are caught before the kernel runs.
    let k = reduction("Sum", DataType::DtFloat, DataType::DtInt32, false);
    let err = k.compute([t(&[2], vec![1i32, 2]), axes(&[0])]).unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 0, .. }),
        "{err}"
    );
    let err = k.compute([x.clone(), t(&[1], vec![0i64])]).unwrap_err();
    assert!(
        matches!(err, KernelError::InputDtype { index: 1, .. }),
        "{err}"
    );
    let err = k.compute([x]).unwrap_err();
    assert!(
        matches!(
            err,
            KernelError::InputCount {
                expected: 2,
                actual: 1
            }
        ),
        "{err}"
    );
    // A node asking for a type TF has no CPU kernel for.
    let node = NodeDefBuilder::new("m", "Max")
        .fake_inputs(&[DataType::DtQint8, DataType::DtInt32])
        .finalize()
        .unwrap();
    let err = create_op_kernel("CPU", &node).unwrap_err().to_string();
    assert!(
        err.contains("No registered 'Max' OpKernel for 'CPU' devices"),
        "{err}"
    );
}

/// A huge output of an empty input: the allocation fails with an error.
#[test]
fn huge_empty_input_errors_instead_of_aborting() {
    kernels_cpu::link();
    let x = Tensor::zeros(DataType::DtFloat, [1usize << 61, 0]).unwrap();
    let err = run::<f32>("Sum", &x, axes(&[1]), false).unwrap_err();
    assert!(matches!(err, KernelError::Tensor(_)), "{err}");
    // Reducing the huge dim instead leaves an empty output.
    let out = run::<f32>("Max", &x, axes(&[0]), false).unwrap();
    assert_eq!(out.dims(), &[0]);
}

// ------------------------------------------------------------------- ArgMax

#[test]
fn arg_max_rows_columns_and_middle_axes() {
    kernels_cpu::link();
    let x = t(&[2, 3], vec![1.0f32, 5.0, 5.0, 7.0, -1.0, 7.0]);
    let k = arg_max(DataType::DtFloat, DataType::DtInt32, DataType::DtInt64);
    let out = k.compute([x.clone(), Tensor::scalar(1i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[1, 0]); // ties: first index
    let out = k.compute([x.clone(), Tensor::scalar(0i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[1, 0, 1]);
    let out = k.compute([x.clone(), Tensor::scalar(-2i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[1, 0, 1]);
    // Middle axis of [2, 3, 2].
    let x = t(&[2, 3, 2], vec![0i32, 9, 4, 1, 4, 9, 3, 3, 2, 8, 3, 8]);
    let k = arg_max(DataType::DtInt32, DataType::DtInt64, DataType::DtInt32);
    let out = k.compute([x, Tensor::scalar(1i64)]).unwrap();
    assert_eq!(out[0].dims(), &[2, 2]);
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[1, 0, 0, 1]);
}

#[test]
fn arg_max_output_and_index_types() {
    kernels_cpu::link();
    let x = t(&[4], vec![3u8, 200, 7, 200]);
    for (tidx, dim) in [
        (DataType::DtInt16, Tensor::scalar(0i16)),
        (DataType::DtInt32, Tensor::scalar(0i32)),
        (DataType::DtInt64, Tensor::scalar(-1i64)),
    ] {
        let out = arg_max(DataType::DtUint8, tidx, DataType::DtInt16)
            .compute([x.clone(), dim.clone()])
            .unwrap();
        assert_eq!(out[0].as_slice::<i16>().unwrap(), &[1]);
        let out = arg_max(DataType::DtUint8, tidx, DataType::DtUint16)
            .compute([x.clone(), dim])
            .unwrap();
        assert_eq!(out[0].as_slice::<u16>().unwrap(), &[1]);
    }
    // The default output_type is int64 (added from the OpDef).
    let mut node = arg_max_node(DataType::DtBool, DataType::DtInt32, DataType::DtInt64);
    node.attr.remove("output_type");
    let k = create_op_kernel("CPU", &node).unwrap();
    let b = t(&[2, 3], vec![false, false, true, false, false, false]);
    let out = k.compute([b, Tensor::scalar(1i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[2, 0]);
}

/// Eigen's scan: NaN never wins; a row of NaN or of the lowest values gives 0.
#[test]
fn arg_max_nan_and_lowest_values() {
    kernels_cpu::link();
    let k = arg_max(DataType::DtDouble, DataType::DtInt32, DataType::DtInt64);
    let x = t(
        &[4, 3],
        vec![
            f64::NAN,
            1.0,
            2.0,
            3.0,
            f64::NAN,
            -1.0,
            f64::NAN,
            f64::NAN,
            f64::NAN,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
        ],
    );
    let out = k.compute([x, Tensor::scalar(1i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[2, 0, 0, 2]);
    let k = arg_max(DataType::DtHalf, DataType::DtInt32, DataType::DtInt32);
    let x = t(
        &[3],
        vec![f16::NEG_INFINITY, f16::from_f32(-60000.0), f16::NAN],
    );
    let out = k.compute([x, Tensor::scalar(0i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[1]);
    let k = arg_max(DataType::DtInt64, DataType::DtInt32, DataType::DtInt32);
    let x = t(&[3], vec![i64::MIN, i64::MIN, i64::MIN]);
    let out = k.compute([x, Tensor::scalar(0i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[0]);
}

#[test]
fn arg_max_large_inputs() {
    kernels_cpu::link();
    let k = arg_max(DataType::DtFloat, DataType::DtInt32, DataType::DtInt64);
    let (rows, cols) = (300usize, 700usize);
    let v: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 7919) % 10007) as f32)
        .collect();
    let x = t(&[rows, cols], v.clone());
    let first_max = |it: &mut dyn Iterator<Item = f32>| {
        let mut best = (0usize, f32::MIN);
        for (i, x) in it.enumerate() {
            if x > best.1 {
                best = (i, x);
            }
        }
        best.0 as i64
    };
    let want_rows: Vec<i64> = (0..rows)
        .map(|r| first_max(&mut v[r * cols..(r + 1) * cols].iter().copied()))
        .collect();
    let want_cols: Vec<i64> = (0..cols)
        .map(|c| first_max(&mut (0..rows).map(|r| v[r * cols + c])))
        .collect();
    let out = k.compute([x.clone(), Tensor::scalar(1i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &want_rows[..]);
    let out = k.compute([x, Tensor::scalar(0i32)]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &want_cols[..]);
}

#[test]
fn arg_max_errors_and_empty_outputs() {
    kernels_cpu::link();
    let k = arg_max(DataType::DtFloat, DataType::DtInt32, DataType::DtInt64);
    let err = k
        .compute([t::<f32>(&[0, 3], vec![]), Tensor::scalar(0i32)])
        .unwrap_err();
    assert_eq!(err.to_string(), "Reduction axis 0 is empty in shape [0,3]");
    let err = k
        .compute([t(&[2, 3], vec![0.0f32; 6]), Tensor::scalar(2i32)])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Expected dimension in the range [-2, 2), but got 2"
    );
    let err = k
        .compute([Tensor::scalar(1.0f32), Tensor::scalar(0i32)])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Expected dimension in the range [0, 0), but got 0"
    );
    let err = k
        .compute([t(&[2], vec![0.0f32; 2]), t(&[1], vec![0i32])])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "dim must be a scalar, but received tensor of shape: [1]"
    );
    let err = k
        .compute([t(&[2], vec![0i32; 2]), Tensor::scalar(0i32)])
        .unwrap_err();
    assert!(matches!(err, KernelError::InputDtype { index: 0, .. }));
    // [0, 3] over axis 1: the axis has 3 entries, the output [0] is empty.
    let out = k
        .compute([t::<f32>(&[0, 3], vec![]), Tensor::scalar(1i32)])
        .unwrap();
    assert_eq!(out[0].dims(), &[0]);
    // A huge but empty input: the reduced axis is empty.
    let x = Tensor::zeros(DataType::DtFloat, [1usize << 61, 0]).unwrap();
    let err = k.compute([x, Tensor::scalar(1i32)]).unwrap_err();
    assert!(err.to_string().contains("is empty in shape"), "{err}");
}

// ---------------------------------------------------------- type coverage

/// Every CPU kernel TF 2.21 registers for these ops (tf_cpu_kernels.md,
/// minus variant/resource/float8) exists here.
#[test]
fn every_tf_cpu_type_has_a_kernel() {
    kernels_cpu::link();
    use DataType::*;
    let numeric = [
        DtBfloat16,
        DtComplex128,
        DtComplex64,
        DtDouble,
        DtFloat,
        DtHalf,
        DtInt16,
        DtInt32,
        DtInt64,
        DtInt8,
        DtUint16,
        DtUint32,
        DtUint64,
        DtUint8,
    ];
    let real: Vec<DataType> = numeric
        .iter()
        .copied()
        .filter(|t| !matches!(t, DtComplex64 | DtComplex128))
        .collect();
    let mut count = 0;
    for (op, types) in [
        ("Sum", &numeric[..]),
        ("Mean", &numeric[..]),
        ("Max", &real[..]),
    ] {
        for &ty in types {
            for tidx in [DtInt32, DtInt64] {
                reduction(op, ty, tidx, false);
                count += 1;
            }
        }
    }
    assert_eq!(count, 28 + 28 + 24);
    let mut arg_types = real.clone();
    arg_types.push(DtBool);
    for &ty in &arg_types {
        for out in [DtInt16, DtInt32, DtInt64, DtUint16] {
            let k = arg_max(ty, DtInt32, out);
            assert_eq!(k.registration().host_memory, &["dimension"]);
            count += 1;
        }
    }
    assert_eq!(count, 80 + 52);
}
