//! The element-wise GPU kernels against the CPU kernels: every registered
//! dtype of every op, same shapes, scalars, broadcasting, empty tensors,
//! special values, in place (inputs forwarded) and not (inputs shared, and
//! left unchanged); TF's shape errors; the GPU's defined values where the
//! CPU reports errors (integer division by zero, negative integer powers)
//! or follows x86 (float-to-integer casts of NaN and out-of-range values).
//! Ignored without `--ignored` (they need a GPU). (Bandwidth is measured by the `gpu`
//! benchmark, not here.)
#![cfg(all(feature = "cuda", feature = "math"))]

use crate::common;

use common::{compute_on_gpu, gpu, node, run_cpu, tensor, uniform, upload};
use opreg_cuda::GpuDevice;
use registry_core::KernelRegistry;
use registry_core::device::DEVICE_GPU;
use registry_core::kernel::constraint_types;
use registry_core::proto::{DataType, DataTypeExt, NodeDef};
use registry_core::tensor::{Tensor, TensorElement, bf16, f16};

use DataType::*;

/// The dtypes the GPU kernels of `op` are registered for (attr `T`).
fn gpu_types(op: &str) -> Vec<DataType> {
    kernels_cuda::link();
    let mut types: Vec<DataType> = KernelRegistry::global()
        .kernels_for_op(op)
        .into_iter()
        .filter(|r| r.device == DEVICE_GPU)
        .filter_map(|r| constraint_types(r, "T"))
        .flat_map(|t| t.iter().copied())
        .collect();
    types.sort_by_key(|t| *t as i32);
    types.dedup();
    assert!(!types.is_empty(), "{op} has no GPU kernel");
    types
}

/// Values in [lo, hi).
fn range(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    uniform(n, seed)
        .into_iter()
        .map(|u| lo + u * (hi - lo))
        .collect()
}

/// Integers in [lo, hi].
fn ints(n: usize, seed: u64, lo: i64, hi: i64) -> Vec<f64> {
    uniform(n, seed)
        .into_iter()
        .map(|u| (lo as f64 + (u * (hi - lo + 1) as f64).floor()).min(hi as f64))
        .collect()
}

fn is_float(t: DataType) -> bool {
    matches!(t, DtHalf | DtBfloat16 | DtFloat | DtDouble)
}

fn is_unsigned(t: DataType) -> bool {
    matches!(t, DtUint8 | DtUint16 | DtUint32 | DtUint64)
}

/// The range of an integer dtype (as f64; the 64-bit ends round).
fn int_range(t: DataType) -> (f64, f64) {
    match t {
        DtInt8 => (i8::MIN as f64, i8::MAX as f64),
        DtInt16 => (i16::MIN as f64, i16::MAX as f64),
        DtInt32 => (i32::MIN as f64, i32::MAX as f64),
        DtInt64 => (i64::MIN as f64, i64::MAX as f64),
        DtUint8 => (0.0, u8::MAX as f64),
        DtUint16 => (0.0, u16::MAX as f64),
        DtUint32 => (0.0, u32::MAX as f64),
        DtUint64 => (0.0, u64::MAX as f64),
        DtBool => (0.0, 1.0),
        _ => (f64::MIN, f64::MAX),
    }
}

/// Float elements as ordered integer keys (adjacent floats differ by 1;
/// `None` for NaN).
fn float_keys(t: &Tensor) -> Option<Vec<Option<i128>>> {
    fn key(bits: u64, sign: u64) -> i128 {
        if bits & sign != 0 {
            -((bits & !sign) as i128)
        } else {
            bits as i128
        }
    }
    Some(match t.dtype() {
        DtFloat => t
            .as_slice::<f32>()
            .ok()?
            .iter()
            .map(|v| (!v.is_nan()).then(|| key(u64::from(v.to_bits()), 1 << 31)))
            .collect(),
        DtDouble => t
            .as_slice::<f64>()
            .ok()?
            .iter()
            .map(|v| (!v.is_nan()).then(|| key(v.to_bits(), 1 << 63)))
            .collect(),
        DtHalf => t
            .as_slice::<f16>()
            .ok()?
            .iter()
            .map(|v| (!v.is_nan()).then(|| key(u64::from(v.to_bits()), 1 << 15)))
            .collect(),
        DtBfloat16 => t
            .as_slice::<bf16>()
            .ok()?
            .iter()
            .map(|v| (!v.is_nan()).then(|| key(u64::from(v.to_bits()), 1 << 15)))
            .collect(),
        _ => return None,
    })
}

/// Asserts the GPU output matches the CPU's: same dtype and shape, floats
/// within `ulps` or within `abs` of each other (NaN where the CPU has NaN),
/// other types exactly.
#[track_caller]
fn assert_matches(gpu: &Tensor, cpu: &Tensor, ulps: u64, abs: f64, what: &str) {
    assert_eq!(gpu.dtype(), cpu.dtype(), "{what}: dtype");
    assert_eq!(gpu.dims(), cpu.dims(), "{what}: shape");
    if let (Some(g), Some(c)) = (float_keys(gpu), float_keys(cpu)) {
        // The values, only where an absolute difference is allowed.
        let values = (abs > 0.0).then(|| (gpu.to_f64().unwrap(), cpu.to_f64().unwrap()));
        let within_abs = |i: usize| {
            values
                .as_ref()
                .is_some_and(|(g, c)| (g[i] - c[i]).abs() <= abs)
        };
        for (i, (g, c)) in g.iter().zip(&c).enumerate() {
            let ok = match (g, c) {
                (None, None) => true,
                (Some(g), Some(c)) => g.abs_diff(*c) <= u128::from(ulps) || within_abs(i),
                _ => false,
            };
            assert!(
                ok,
                "{what}[{i}]: GPU {} vs CPU {}",
                show(gpu, i),
                show(cpu, i)
            );
        }
    } else {
        let (g, c) = (gpu.as_bytes().unwrap(), cpu.as_bytes().unwrap());
        if g != c {
            let size = g.len() / gpu.num_elements().max(1);
            let i = g.iter().zip(c).position(|(a, b)| a != b).unwrap_or(0) / size.max(1);
            panic!("{what}[{i}]: GPU {} vs CPU {}", show(gpu, i), show(cpu, i));
        }
    }
}

/// Element `i` of a host tensor, for messages.
fn show(t: &Tensor, i: usize) -> String {
    fn at<T: TensorElement>(t: &Tensor, i: usize) -> String {
        format!("{:?}", t.as_slice::<T>().unwrap()[i])
    }
    match t.dtype() {
        DtFloat => at::<f32>(t, i),
        DtDouble => at::<f64>(t, i),
        DtHalf => at::<f16>(t, i),
        DtBfloat16 => at::<bf16>(t, i),
        DtInt8 => at::<i8>(t, i),
        DtInt16 => at::<i16>(t, i),
        DtInt32 => at::<i32>(t, i),
        DtInt64 => at::<i64>(t, i),
        DtUint8 => at::<u8>(t, i),
        DtUint16 => at::<u16>(t, i),
        DtUint32 => at::<u32>(t, i),
        DtUint64 => at::<u64>(t, i),
        DtBool => at::<bool>(t, i),
        other => format!("<{other:?}>"),
    }
}

/// Runs `node` on the GPU. With `shared`, the uploaded inputs stay shared
/// with the test (so none can be forwarded), and are checked unchanged.
fn run_gpu(
    dev: &GpuDevice,
    node: &NodeDef,
    inputs: &[Tensor],
    shared: bool,
) -> Result<Vec<Tensor>, String> {
    run_gpu_placed(dev, node, inputs, &[], shared)
}

/// [`run_gpu`], the inputs at the indices in `host` left in host memory
/// (host-memory args).
fn run_gpu_placed(
    dev: &GpuDevice,
    node: &NodeDef,
    inputs: &[Tensor],
    host: &[usize],
    shared: bool,
) -> Result<Vec<Tensor>, String> {
    let on_gpu = upload(dev, inputs, host);
    let kept = if shared { on_gpu.clone() } else { Vec::new() };
    let out = compute_on_gpu(node, on_gpu).map_err(|e| e.to_string())?;
    for (i, (k, original)) in kept.iter().zip(inputs).enumerate() {
        let back = k.to_host().expect("read back input");
        assert_eq!(
            back.as_bytes().unwrap(),
            original.as_bytes().unwrap(),
            "{}: shared input {i} was changed",
            node.op
        );
    }
    Ok(out)
}

/// Runs `node` on the CPU and on the GPU (in place and not) and compares:
/// equal outputs (within `ulps`), or the same error message.
#[track_caller]
fn check(dev: &GpuDevice, node: &NodeDef, inputs: &[Tensor], ulps: u64) {
    check_within(dev, node, inputs, ulps, 0.0);
}

/// [`check`], floats also matching within `abs` of each other.
#[track_caller]
fn check_within(dev: &GpuDevice, node: &NodeDef, inputs: &[Tensor], ulps: u64, abs: f64) {
    check_placed(dev, node, inputs, &[], ulps, abs);
}

/// [`check_within`], the inputs at the indices in `host` left in host
/// memory for the GPU kernel.
#[track_caller]
fn check_placed(
    dev: &GpuDevice,
    node: &NodeDef,
    inputs: &[Tensor],
    host: &[usize],
    ulps: u64,
    abs: f64,
) {
    let shapes: Vec<String> = inputs.iter().map(|t| t.shape().to_string()).collect();
    let types: Vec<&str> = inputs.iter().map(|t| t.dtype().type_name()).collect();
    let what = format!("{} {:?} {:?}", node.op, types, shapes);
    let cpu = run_cpu(node, inputs).map_err(|e| e.to_string());
    for shared in [false, true] {
        let gpu = run_gpu_placed(dev, node, inputs, host, shared);
        match (&gpu, &cpu) {
            (Ok(g), Ok(c)) => {
                assert_eq!(g.len(), c.len(), "{what}: outputs");
                for (g, c) in g.iter().zip(c) {
                    assert_matches(g, c, ulps, abs, &what);
                }
            }
            (Err(g), Err(c)) => assert_eq!(g, c, "{what}: errors differ"),
            _ => panic!("{what} (shared inputs: {shared}): GPU {gpu:?} vs CPU {cpu:?}"),
        }
    }
}

/// Float special values (for the special-value cases).
const SPECIALS: [f64; 10] = [
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1e-30,
    -1e30,
    0.5,
    -2.5,
    3.0,
];

/// Ulps allowed for `op` on `t` (CUDA's transcendental functions are
/// within 2 ulps; the others are correctly rounded, as on the CPU).
fn ulps(op: &str, t: DataType) -> u64 {
    let transcendental = matches!(op, "Exp" | "Log" | "Rsqrt" | "Sigmoid" | "Tanh" | "Pow");
    match (transcendental, t) {
        (false, _) => 0,
        (true, DtHalf | DtBfloat16) => 2,
        (true, _) => 4,
    }
}

/// Inputs for unary `op` on `t`: values in the op's domain.
fn unary_values(op: &str, t: DataType, n: usize, seed: u64) -> Vec<f64> {
    if !is_float(t) {
        let mut v = ints(n, seed, -1000, 1000);
        if n >= 2 {
            let (lo, hi) = int_range(t);
            v[0] = lo;
            v[1] = hi;
        }
        return v;
    }
    match op {
        "Log" | "Sqrt" | "Rsqrt" => range(n, seed, 0.01, 100.0),
        "Exp" => range(n, seed, -10.0, 10.0),
        _ => range(n, seed, -6.0, 6.0),
    }
}

const UNARY: [&str; 10] = [
    "Abs", "Neg", "Exp", "Log", "Floor", "Rsqrt", "Sqrt", "Square", "Sigmoid", "Tanh",
];

#[test]
#[ignore = "needs a GPU"]
fn unary_ops_match_cpu() {
    let dev = gpu();
    for op in UNARY {
        for t in gpu_types(op) {
            let tol = ulps(op, t);
            for (s, shape) in [
                vec![],
                vec![1],
                vec![1001],
                vec![17, 33],
                vec![0],
                vec![4, 0, 2],
            ]
            .iter()
            .enumerate()
            {
                let n = shape.iter().product();
                let x = tensor(t, shape, &unary_values(op, t, n, s as u64 + 1));
                check(&dev, &node(op, &[t], &[]), &[x], tol);
            }
            if is_float(t) {
                let x = tensor(t, &[SPECIALS.len()], &SPECIALS);
                check(&dev, &node(op, &[t], &[]), &[x], tol);
            }
        }
    }
}

const BINARY: [&str; 10] = [
    "AddV2",
    "Sub",
    "Mul",
    "RealDiv",
    "FloorDiv",
    "FloorMod",
    "Maximum",
    "Minimum",
    "Pow",
    "SquaredDifference",
];

/// Inputs `(x, y)` of binary `op` on `t` (no zero integer divisors, no
/// negative integer exponents: the CPU rejects those).
fn binary_values(op: &str, t: DataType, nx: usize, ny: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let float = is_float(t);
    let (lo, hi) = int_range(t);
    let wide = |n: usize, s: u64| {
        if float {
            range(n, s, -100.0, 100.0)
        } else {
            let mut v = ints(n, s, lo.max(-1e15) as i64, hi.min(1e15) as i64);
            if n >= 2 {
                v[0] = lo;
                v[1] = hi;
            }
            v
        }
    };
    let nonzero = |n: usize, s: u64| -> Vec<f64> {
        let v = if float {
            range(n, s, 0.25, 10.0)
        } else {
            ints(n, s, 1, 50)
        };
        // Both signs; -1 and MIN (for integers) appear among them.
        let mut v: Vec<f64> = v
            .iter()
            .zip(uniform(n, s + 100))
            .map(|(&x, u)| if u < 0.5 && !is_unsigned(t) { -x } else { x })
            .collect();
        if !float && n >= 1 {
            v[0] = -1.0;
        }
        v
    };
    match op {
        "RealDiv" | "FloorDiv" | "FloorMod" => {
            let mut x = wide(nx, seed);
            if !float && nx >= 3 {
                x[2] = lo;
            }
            (x, nonzero(ny, seed + 1))
        }
        "Pow" if float => (range(nx, seed, 0.1, 4.0), range(ny, seed + 1, -3.0, 3.0)),
        "Pow" => (ints(nx, seed, -4, 4), ints(ny, seed + 1, 0, 12)),
        _ => (wide(nx, seed), wide(ny, seed + 1)),
    }
}

/// Pairs of shapes: same, scalars, broadcasting, empty, and one pair
/// whose element counts match but shapes differ.
const BINARY_SHAPES: &[(&[usize], &[usize])] = &[
    (&[3, 5, 7], &[3, 5, 7]),
    (&[1000, 37], &[1000, 37]),
    (&[], &[]),
    (&[], &[4, 5]),
    (&[4, 5], &[]),
    (&[1], &[9]),
    (&[5, 1], &[1, 1]),
    (&[4, 1, 3], &[3]),
    (&[2, 3, 4], &[2, 1, 4]),
    (&[5, 1], &[1, 6]),
    (&[1000, 37], &[37]),
    (&[37], &[1000, 37]),
    (&[7, 1, 5, 1], &[1, 6, 1, 4]),
    (&[1, 3], &[3]),
    (&[0, 3], &[1, 3]),
    (&[0], &[]),
    (&[2, 3], &[4]),
];

#[test]
#[ignore = "needs a GPU"]
fn binary_ops_match_cpu() {
    let dev = gpu();
    for op in BINARY {
        for t in gpu_types(op) {
            let tol = ulps(op, t);
            for (s, (xs, ys)) in BINARY_SHAPES.iter().enumerate() {
                let (nx, ny) = (xs.iter().product(), ys.iter().product());
                let (xv, yv) = binary_values(op, t, nx, ny, 10 * s as u64 + 1);
                let (x, y) = (tensor(t, xs, &xv), tensor(t, ys, &yv));
                check(&dev, &node(op, &[t, t], &[]), &[x, y], tol);
            }
            if is_float(t) {
                // Every pair of special values (NaN propagation of
                // Maximum/Minimum, infinities, signed zeros).
                let n = SPECIALS.len();
                let xv: Vec<f64> = (0..n * n).map(|i| SPECIALS[i / n]).collect();
                let yv: Vec<f64> = (0..n * n).map(|i| SPECIALS[i % n]).collect();
                let (x, y) = (tensor(t, &[n, n], &xv), tensor(t, &[n, n], &yv));
                check(&dev, &node(op, &[t, t], &[]), &[x, y], tol);
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn comparisons_and_logic_match_cpu() {
    let dev = gpu();
    for op in [
        "Equal",
        "NotEqual",
        "Greater",
        "GreaterEqual",
        "Less",
        "LessEqual",
    ] {
        for t in gpu_types(op) {
            for (s, (xs, ys)) in BINARY_SHAPES.iter().enumerate() {
                let (nx, ny) = (xs.iter().product(), ys.iter().product());
                // Few distinct values, so that equal pairs occur.
                let values = |n: usize, seed: u64| {
                    let mut v = ints(n, seed, -3, 3);
                    if is_float(t) {
                        v.iter_mut().for_each(|x| *x *= 0.5);
                        if n > 3 {
                            v[3] = f64::NAN;
                        }
                    } else if t == DtBool || is_unsigned(t) {
                        v.iter_mut().for_each(|x| *x = x.abs());
                    }
                    v
                };
                let x = tensor(t, xs, &values(nx, 3 * s as u64 + 1));
                let y = tensor(t, ys, &values(ny, 3 * s as u64 + 2));
                check(&dev, &node(op, &[t, t], &[]), &[x, y], 0);
            }
        }
    }
    // Equal with incompatible_shape_error = false: a scalar false.
    let x = tensor(DtFloat, &[2, 3], &[1.0; 6]);
    let y = tensor(DtFloat, &[4], &[1.0; 4]);
    let equal = node(
        "Equal",
        &[DtFloat; 2],
        &[("incompatible_shape_error", false.into())],
    );
    check(&dev, &equal, &[x.clone(), y.clone()], 0);
    // NotEqual with incompatible_shape_error = false: a scalar true.
    let not_equal = node(
        "NotEqual",
        &[DtFloat; 2],
        &[("incompatible_shape_error", false.into())],
    );
    check(&dev, &not_equal, &[x.clone(), y.clone()], 0);
    let out = run_gpu(&dev, &not_equal, &[x, y], false).unwrap();
    assert_eq!(out[0].dims(), &[] as &[usize]);
    assert_eq!(out[0].as_slice::<bool>().unwrap(), &[true]);
    // LogicalAnd, LogicalOr.
    for op in ["LogicalAnd", "LogicalOr"] {
        for (s, (xs, ys)) in BINARY_SHAPES.iter().enumerate() {
            let (nx, ny) = (xs.iter().product(), ys.iter().product());
            let x = tensor(DtBool, xs, &ints(nx, 7 * s as u64 + 1, 0, 1));
            let y = tensor(DtBool, ys, &ints(ny, 7 * s as u64 + 2, 0, 1));
            check(&dev, &node(op, &[DtBool; 2], &[]), &[x, y], 0);
        }
    }
    // LogicalNot.
    for (s, shape) in [vec![], vec![1], vec![1001], vec![17, 33], vec![0]]
        .iter()
        .enumerate()
    {
        let n = shape.iter().product();
        let x = tensor(DtBool, shape, &ints(n, 11 * s as u64 + 1, 0, 1));
        check(&dev, &node("LogicalNot", &[DtBool], &[]), &[x], 0);
    }
}

/// The activations and special functions of the unary table.
const SPECIAL_UNARY: [&str; 15] = [
    "Relu6",
    "Elu",
    "Selu",
    "Softplus",
    "Softsign",
    "Erf",
    "Erfc",
    "Log1p",
    "Expm1",
    "Sin",
    "Cos",
    "Ceil",
    "Round",
    "Sign",
    "Reciprocal",
];

/// Ulps allowed for the special unary `op` on `t`: CUDA's and the CPU's
/// approximations of the special functions may each be a few ulps off;
/// the others round once, as on the CPU.
fn special_ulps(op: &str, t: DataType) -> u64 {
    let approximate = matches!(
        op,
        "Elu" | "Selu" | "Softplus" | "Erf" | "Erfc" | "Log1p" | "Expm1" | "Sin" | "Cos"
    );
    match (approximate, t) {
        (false, DtHalf | DtBfloat16 | DtFloat | DtDouble) if op == "Softsign" => 1,
        (false, _) => 0,
        (true, DtHalf | DtBfloat16) => 2,
        (true, _) => 16,
    }
}

#[test]
#[ignore = "needs a GPU"]
fn special_unary_ops_match_cpu() {
    let dev = gpu();
    // Every op is checked, its first mismatch reported, before the test
    // fails (a GPU run is scarce: one run should show every failure).
    let mut failures = Vec::new();
    for op in SPECIAL_UNARY {
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_special_unary(&dev, op)
        }));
        if let Err(panic) = checked {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{op}: {message}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// [`special_unary_ops_match_cpu`] for one op, every GPU type.
fn check_special_unary(dev: &GpuDevice, op: &str) {
    for t in gpu_types(op) {
        let tol = special_ulps(op, t);
        let abs = special_abs(op, t);
        for (s, shape) in [vec![], vec![1001], vec![17, 33], vec![0]]
            .iter()
            .enumerate()
        {
            let n = shape.iter().product();
            let values = if !is_float(t) {
                unary_values(op, t, n, s as u64 + 1)
            } else if op == "Log1p" {
                range(n, s as u64 + 1, -0.9, 10.0)
            } else if op == "Round" {
                // Halves too: rounded to even.
                ints(n, s as u64 + 1, -20, 20)
                    .into_iter()
                    .map(|v| v * 0.25)
                    .collect()
            } else {
                range(n, s as u64 + 1, -6.0, 6.0)
            };
            let x = tensor(t, shape, &values);
            check_within(dev, &node(op, &[t], &[]), &[x], tol, abs);
        }
        if is_float(t) {
            let x = tensor(t, &[SPECIALS.len()], &SPECIALS);
            check_within(dev, &node(op, &[t], &[]), &[x], tol, abs);
        }
    }
}

/// The absolute difference allowed for the special unary `op` on `t`
/// besides its ulps: `Elu` and `Selu` compute `exp(x) - 1` as TF does, so
/// for `x` near 0 one ulp of difference between CUDA's `exp` and the CPU's
/// (of values just below one) is many ulps of the small result; allowed
/// are 4 ulps of `exp`'s result (times Selu's scale), none for the other
/// ops.
fn special_abs(op: &str, t: DataType) -> f64 {
    let epsilon = match t {
        DtHalf => f64::from(f16::EPSILON),
        DtBfloat16 => f64::from(bf16::EPSILON),
        DtFloat => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    };
    // An ulp of a value in [0.5, 1) is half of epsilon.
    match op {
        "Elu" => 2.0 * epsilon,
        "Selu" => 2.0 * 1.7580993408473768 * epsilon,
        _ => 0.0,
    }
}

#[test]
#[ignore = "needs a GPU"]
fn broadcasting_beyond_eight_merged_dims_is_refused() {
    let dev = gpu();
    let xs = [2, 1, 2, 1, 2, 1, 2, 1, 2, 1];
    let ys = [1, 2, 1, 2, 1, 2, 1, 2, 1, 2];
    let x = tensor(DtFloat, &xs, &range(32, 1, -1.0, 1.0));
    let y = tensor(DtFloat, &ys, &range(32, 2, -1.0, 1.0));
    let err = run_gpu(&dev, &node("AddV2", &[DtFloat; 2], &[]), &[x, y], false).unwrap_err();
    assert!(
        err.contains("is not supported yet") && err.contains("at most 8"),
        "{err}"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_defined_values_where_the_cpu_errors() {
    let dev = gpu();
    for t in [DtInt32, DtInt64] {
        let min = int_range(t).0;
        // Division by zero: x / 0 = -1 and x % 0 = x; MIN / -1 = MIN.
        let x = tensor(t, &[4], &[7.0, -7.0, 0.0, min]);
        let y = tensor(t, &[4], &[0.0, 0.0, 0.0, -1.0]);
        let q = run_gpu(
            &dev,
            &node("FloorDiv", &[t, t], &[]),
            &[x.clone(), y.clone()],
            true,
        )
        .unwrap();
        assert_matches(
            &q[0],
            &tensor(t, &[4], &[-1.0, -1.0, -1.0, min]),
            0,
            0.0,
            "FloorDiv by 0",
        );
        let r = run_gpu(&dev, &node("FloorMod", &[t, t], &[]), &[x, y], true).unwrap();
        assert_matches(
            &r[0],
            &tensor(t, &[4], &[7.0, -7.0, 0.0, 0.0]),
            0,
            0.0,
            "FloorMod by 0",
        );
        // Negative exponents: trunc(1 / x^-y).
        let x = tensor(t, &[6], &[1.0, -1.0, -1.0, 2.0, 0.0, -3.0]);
        let y = tensor(t, &[6], &[-3.0, -3.0, -2.0, -1.0, -1.0, -2.0]);
        let p = run_gpu(&dev, &node("Pow", &[t, t], &[]), &[x, y], true).unwrap();
        assert_matches(
            &p[0],
            &tensor(t, &[6], &[1.0, -1.0, 1.0, 0.0, 0.0, 0.0]),
            0,
            0.0,
            "Pow < 0",
        );
    }
    // Float to integer: out-of-range values saturate to the 32- or 64-bit
    // range, narrower types keep the low bits; NaN is 0 through 32 bits.
    let cast = |src: DataType, dst: DataType, v: &[f64]| {
        let node = node(
            "Cast",
            &[src],
            &[("DstT", dst.into()), ("Truncate", false.into())],
        );
        run_gpu(&dev, &node, &[tensor(src, &[v.len()], v)], true)
            .unwrap()
            .remove(0)
    };
    let special = [f64::NAN, 3e9, -3e9, 300.7, -1.5, 1e20, -1e20];
    let out = cast(DtFloat, DtInt32, &special);
    assert_eq!(
        out.as_slice::<i32>().unwrap(),
        &[0, i32::MAX, i32::MIN, 300, -1, i32::MAX, i32::MIN]
    );
    // NaN to 64 bits: cvt.rzi.s64 answers i64::MIN (seen on an H200), as
    // TF's nvcc-built Cast does with the same instruction.
    let out = cast(DtDouble, DtInt64, &special);
    assert_eq!(
        out.as_slice::<i64>().unwrap(),
        &[
            i64::MIN,
            3_000_000_000,
            -3_000_000_000,
            300,
            -1,
            i64::MAX,
            i64::MIN
        ]
    );
    let out = cast(DtFloat, DtUint8, &special);
    // 3e9 saturates nothing in 32 bits (3000000000 = 0xb2d05e00): low byte 0.
    assert_eq!(out.as_slice::<u8>().unwrap(), &[0, 0, 0, 44, 0, 255, 0]);
    let out = cast(DtFloat, DtInt8, &special);
    assert_eq!(out.as_slice::<i8>().unwrap(), &[0, -1, 0, 44, -1, -1, 0]);
    // NaN to uint64: cvt.rzi.u64 answers 2^63 (seen on an H200).
    let out = cast(DtDouble, DtUint64, &special);
    assert_eq!(
        out.as_slice::<u64>().unwrap(),
        &[1 << 63, 3_000_000_000, 0, 300, 0, u64::MAX, 0]
    );
    let out = cast(DtFloat, DtBool, &special);
    assert_eq!(out.as_slice::<bool>().unwrap(), &[true; 7]);
}

const CAST_TYPES: [DataType; 13] = [
    DtBool, DtInt8, DtInt16, DtInt32, DtInt64, DtUint8, DtUint16, DtUint32, DtUint64, DtHalf,
    DtBfloat16, DtFloat, DtDouble,
];

#[test]
#[ignore = "needs a GPU"]
fn casts_match_cpu() {
    let dev = gpu();
    for src in CAST_TYPES {
        for dst in CAST_TYPES {
            // Values both sides convert alike: in range of the source, and
            // (from floats) of the destination.
            let values = |n: usize, seed: u64| -> Vec<f64> {
                if src == DtBool {
                    return ints(n, seed, 0, 1);
                }
                if is_float(src) {
                    let (lo, hi) = if is_unsigned(dst) {
                        (0.0, 250.0)
                    } else if dst == DtInt8 {
                        (-120.0, 120.0)
                    } else {
                        (-1000.0, 1000.0)
                    };
                    let mut v = range(n, seed, lo, hi);
                    if n > 2 {
                        v[1] = 0.0;
                        v[2] = lo + 0.75;
                    }
                    return v;
                }
                let (lo, hi) = int_range(src);
                let mut v = ints(n, seed, lo.max(-1e12) as i64, hi.min(1e12) as i64);
                if n > 2 {
                    v[1] = 0.0;
                    v[2] = lo;
                }
                v
            };
            for truncate in [false, true] {
                let node = node(
                    "Cast",
                    &[src],
                    &[("DstT", dst.into()), ("Truncate", truncate.into())],
                );
                for (s, shape) in [vec![], vec![1001], vec![8, 9], vec![0]].iter().enumerate() {
                    let n = shape.iter().product();
                    let x = tensor(src, shape, &values(n, s as u64 + 1));
                    check(&dev, &node, &[x], 0);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn selects_match_cpu() {
    let dev = gpu();
    for t in gpu_types("SelectV2") {
        let cases: &[(&[usize], &[usize], &[usize])] = &[
            (&[3, 4, 5], &[3, 4, 5], &[3, 4, 5]),
            (&[1001], &[1001], &[1001]),
            (&[], &[3, 4], &[3, 4]),
            (&[4, 1], &[1, 5], &[4, 5]),
            (&[3, 1, 5], &[], &[3, 4, 5]),
            (&[0, 2], &[1, 2], &[]),
            (&[2, 3], &[3, 2], &[2, 3]),
        ];
        for (s, (cs, ts, es)) in cases.iter().enumerate() {
            let s = s as u64 * 5;
            let c = tensor(DtBool, cs, &ints(cs.iter().product(), s + 1, 0, 1));
            let tv = tensor(t, ts, &ints(ts.iter().product(), s + 2, 0, 100));
            let ev = tensor(t, es, &ints(es.iter().product(), s + 3, 0, 100));
            check(
                &dev,
                &node("SelectV2", &[DtBool, t, t], &[]),
                &[c, tv, ev],
                0,
            );
        }
    }
    for t in gpu_types("Select") {
        let cases: &[(&[usize], &[usize], &[usize])] = &[
            (&[], &[3, 4], &[3, 4]),
            (&[3], &[3, 4, 5], &[3, 4, 5]),
            (&[5], &[5], &[5]),
            (&[3, 4], &[3, 4], &[3, 4]),
            (&[1001], &[1001], &[1001]),
            (&[0], &[0, 3], &[0, 3]),
            // TF's errors.
            (&[], &[2], &[3]),
            (&[2], &[], &[]),
            (&[2], &[3, 4], &[3, 4]),
            (&[2, 3], &[2, 3], &[3, 2]),
        ];
        for (s, (cs, ts, es)) in cases.iter().enumerate() {
            let s = s as u64 * 5;
            let c = tensor(DtBool, cs, &ints(cs.iter().product(), s + 1, 0, 1));
            let tv = tensor(t, ts, &ints(ts.iter().product(), s + 2, 0, 100));
            let ev = tensor(t, es, &ints(es.iter().product(), s + 3, 0, 100));
            check(&dev, &node("Select", &[DtBool, t, t], &[]), &[c, tv, ev], 0);
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn add_n_matches_cpu() {
    let dev = gpu();
    for t in gpu_types("AddN") {
        for count in [1usize, 2, 3, 9, 17] {
            for (s, shape) in [vec![], vec![1001], vec![6, 7], vec![0]].iter().enumerate() {
                let n: usize = shape.iter().product();
                let inputs: Vec<Tensor> = (0..count)
                    .map(|i| {
                        let v = if is_float(t) {
                            range(n, (s * 100 + i) as u64, -50.0, 50.0)
                        } else {
                            ints(n, (s * 100 + i) as u64, -1000, 1000)
                        };
                        tensor(t, shape, &v)
                    })
                    .collect();
                let node = node("AddN", &vec![t; count], &[]);
                check(&dev, &node, &inputs, 0);
            }
        }
        // Shapes must agree.
        let a = tensor(t, &[2], &[1.0, 2.0]);
        let b = tensor(t, &[3], &[1.0, 2.0, 3.0]);
        let node = node("AddN", &[t; 2], &[]);
        check(&dev, &node, &[a, b], 0);
    }
    // Half rounds after each addition, in input order.
    let h = |v: f64| tensor(DtHalf, &[1], &[v]);
    let node = node("AddN", &[DtHalf; 3], &[]);
    check(&dev, &node, &[h(2048.0), h(1.0), h(1.0)], 0);
    check(&dev, &node, &[h(1.0), h(1.0), h(2048.0)], 0);
}

/// Values for `ClipByValue` on `t`: floats in `[-r, r)`, integers in
/// `[-r, r]` (`[0, 2r]` unsigned).
fn clip_values(t: DataType, n: usize, seed: u64, r: f64) -> Vec<f64> {
    if is_float(t) {
        range(n, seed, -r, r)
    } else if is_unsigned(t) {
        ints(n, seed, 0, 2 * r as i64)
    } else {
        ints(n, seed, -r as i64, r as i64)
    }
}

#[test]
#[ignore = "needs a GPU"]
fn clip_by_value_matches_cpu() {
    let dev = gpu();
    for t in gpu_types("ClipByValue") {
        let node = node("ClipByValue", &[t; 3], &[]);
        let cases: &[(&[usize], &[usize], &[usize])] = &[
            (&[3, 4, 5], &[], &[]),
            (&[1001], &[1001], &[1001]),
            (&[6, 7], &[], &[6, 7]),
            (&[6, 7], &[6, 7], &[]),
            (&[], &[], &[]),
            (&[0, 3], &[], &[]),
            (&[0, 3], &[0, 3], &[0, 3]),
            // TF's shape errors.
            (&[2, 3], &[3], &[]),
            (&[2, 3], &[], &[2, 1]),
            (&[], &[1], &[]),
        ];
        for (s, (ts, ls, hs)) in cases.iter().enumerate() {
            let s = s as u64 * 7;
            let n = |d: &[usize]| d.iter().product::<usize>();
            // Bounds that overlap the values, and sometimes cross (lo > hi).
            let x = tensor(t, ts, &clip_values(t, n(ts), s + 1, 100.0));
            let lo = tensor(t, ls, &clip_values(t, n(ls), s + 2, 60.0));
            let hi = tensor(t, hs, &clip_values(t, n(hs), s + 3, 60.0));
            check(&dev, &node, &[x, lo, hi], 0);
        }
        if is_float(t) {
            // NaN in t stays, a NaN bound is ignored, -0 and 0 are kept as
            // chosen, infinities clip.
            let n = SPECIALS.len();
            let x = tensor(t, &[n], &SPECIALS);
            let mut reversed = SPECIALS;
            reversed.reverse();
            let bounds = tensor(t, &[n], &reversed);
            let scalar = |v: f64| tensor(t, &[], &[v]);
            for (lo, hi) in [
                (bounds.clone(), scalar(1.0)),
                (scalar(-1.0), bounds.clone()),
                (scalar(f64::NAN), scalar(0.0)),
                (scalar(0.0), scalar(-0.0)),
            ] {
                check(&dev, &node, &[x.clone(), lo, hi], 0);
            }
        } else {
            // The type's extremes.
            let (lo, hi) = int_range(t);
            let x = tensor(t, &[4], &[lo, hi, 0.0, 1.0]);
            let scalar = |v: f64| tensor(t, &[], &[v]);
            check(&dev, &node, &[x, scalar(lo + 1.0), scalar(hi - 1.0)], 0);
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn cumsum_matches_cpu() {
    let dev = gpu();
    for t in gpu_types("Cumsum") {
        for tidx in [DtInt32, DtInt64] {
            let cases: &[(&[usize], i64)] = &[
                (&[7], 0),
                (&[3, 4, 5], 0),
                (&[3, 4, 5], 1),
                (&[3, 4, 5], 2),
                (&[3, 4, 5], -1),
                (&[3, 4, 5], -3),
                (&[1000], 0),
                (&[4, 300], 1),
                (&[300, 4], 0),
                (&[2, 0, 3], 1),
                (&[2, 0, 3], 2),
                (&[0], 0),
                // TF's axis errors.
                (&[2, 3], 2),
                (&[2, 3], -3),
                (&[], 0),
            ];
            for (s, &(shape, axis)) in cases.iter().enumerate() {
                let n = shape.iter().product();
                let v = if is_float(t) {
                    range(n, s as u64, -1.0, 1.0)
                } else {
                    // Large enough for the sums to wrap.
                    let (lo, hi) = int_range(t);
                    range(n, s as u64, lo / 4.0, hi / 4.0)
                        .into_iter()
                        .map(f64::trunc)
                        .collect()
                };
                let x = tensor(t, shape, &v);
                let axis = tensor(tidx, &[], &[axis as f64]);
                for (exclusive, reverse) in
                    [(false, false), (true, false), (false, true), (true, true)]
                {
                    let attrs = [("exclusive", exclusive.into()), ("reverse", reverse.into())];
                    let node = node("Cumsum", &[t, tidx], &attrs);
                    check_placed(&dev, &node, &[x.clone(), axis.clone()], &[1], 0, 0.0);
                }
            }
        }
        // The axis must be a scalar.
        let plain = node("Cumsum", &[t, DtInt32], &[]);
        let x = tensor(t, &[2, 3], &[1.0; 6]);
        let axis = tensor(DtInt32, &[1], &[0.0]);
        check_placed(&dev, &plain, &[x, axis], &[1], 0, 0.0);
        // Half rounds after each addition, in scan order.
        if t == DtHalf {
            let x = tensor(t, &[3], &[2048.0, 1.0, 1.0]);
            let axis = tensor(DtInt32, &[], &[0.0]);
            for reverse in [false, true] {
                let reversed = node("Cumsum", &[t, DtInt32], &[("reverse", reverse.into())]);
                check_placed(&dev, &reversed, &[x.clone(), axis.clone()], &[1], 0, 0.0);
            }
        }
    }
}
