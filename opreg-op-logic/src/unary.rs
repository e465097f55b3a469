//! The element-wise unary functions of the standard ops, in one table for
//! every device: each entry is an op, what it computes on the CPU (a Rust
//! expression of `x`, written against `kernels-cpu`'s scalar traits), what
//! it computes on the GPU (a CUDA C expression of `x` per kind of element),
//! and the types each device registers. `kernels-cpu` and `kernels-cuda`
//! each expand the table into their kernels ([`unary_functions!`](crate::unary_functions)), so a
//! new element-wise unary op is one entry here (and its `#[op]`
//! declaration).
//!
//! The GPU kinds: `float` (`float`, and `half` and `bfloat16`, computed in
//! `float` and rounded once), `double`, `signed` and `unsigned` integers
//! (arithmetic that wraps goes through the prelude's `wrap_*` helpers).
//! In a GPU expression, `x` is the element in its compute type `C`, and
//! `T` is the element type.
//!
//! ```
//! // What an expansion sees: the op names, in table order.
//! macro_rules! names {
//!     ($($(#[$doc:meta])* $op:ident($x:ident) [$group:literal]:
//!         cpu <$t:ident: $bound:path> $cpu:expr, for [$($ct:ident),*];
//!         gpu {$($kind:ident: $gpu:literal),*} for [$($gt:ident),*];)*) => {
//!         [$(stringify!($op)),*]
//!     };
//! }
//! let names = opreg_op_logic::unary_functions!(names);
//! assert!(names.contains(&"Abs") && names.contains(&"Relu"));
//! ```

/// Calls `$callback!` with every element-wise unary function of the
/// standard ops (see the [module docs](self) for the entries' form):
///
/// ```text
/// /// doc
/// Op(x) ["cargo feature group"]:
///     cpu <T: Bound> expression of x, for [CPU types];
///     gpu {kind: "CUDA C expression of x", ...} for [GPU types];
/// ```
#[macro_export]
macro_rules! unary_functions {
    ($callback:ident) => {
        $callback! {
            /// `|x|` (wrapping for integers: `abs(MIN) = MIN`).
            Abs(x) ["math"]: cpu <T: AbsOp> x.tf_abs(), for [float, double, int8, int16, int32, int64, half, bfloat16];
                gpu {float: "fabsf(x)", double: "fabs(x)", signed: "wrap_abs(x)"} for [half, bfloat16, float, double, int32, int64];
            /// `-x` (wrapping for integers).
            Neg(x) ["math"]: cpu <T: NegOp> x.tf_neg(), for [float, double, int8, int16, int32, int64, half, bfloat16, complex64, complex128];
                gpu {float: "-x", double: "-x", signed: "wrap_neg(x)"} for [half, bfloat16, float, double, int32, int64];
            /// `x * x` (wrapping for integers).
            Square(x) ["math"]: cpu <T: Number> x.mul_wrap(x), for [realnumbertype, complex64, complex128];
                gpu {float: "x * x", double: "x * x", signed: "wrap_mul(x, x)", unsigned: "wrap_mul(x, x)"} for [half, bfloat16, float, double, int32, int64];
            /// The largest integer not greater than `x`.
            Floor(x) ["math"]: cpu <T: Float> num_traits::Float::floor(x), for [float, double, half, bfloat16];
                gpu {float: "floorf(x)", double: "floor(x)"} for [half, bfloat16, float, double];
            /// `e^x`.
            Exp(x) ["math"]: cpu <T: Transcendental> x.tf_exp(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "expf(x)", double: "exp(x)"} for [half, bfloat16, float, double];
            /// The natural logarithm.
            Log(x) ["math"]: cpu <T: Transcendental> x.tf_log(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "logf(x)", double: "log(x)"} for [half, bfloat16, float, double];
            /// The square root.
            Sqrt(x) ["math"]: cpu <T: Transcendental> x.tf_sqrt(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "sqrtf(x)", double: "sqrt(x)"} for [half, bfloat16, float, double];
            /// `1 / sqrt(x)`.
            Rsqrt(x) ["math"]: cpu <T: Transcendental> x.tf_rsqrt(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "rsqrtf(x)", double: "rsqrt(x)"} for [half, bfloat16, float, double];
            /// `1 / (1 + e^-x)`, as Eigen's logistic: `e / (1 + e)` with
            /// `e = exp(x)`, and 1 where `e` overflows.
            Sigmoid(x) ["math"]: cpu <T: Transcendental> x.tf_sigmoid(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "sigmoid_of<T>(x)", double: "sigmoid_of<T>(x)"} for [half, bfloat16, float, double];
            /// The hyperbolic tangent.
            Tanh(x) ["math"]: cpu <T: Transcendental> x.tf_tanh(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "tanhf(x)", double: "tanh(x)"} for [half, bfloat16, float, double];
            /// `min(max(x, 0), 6)`, keeping NaN (`-0` as in `Relu`).
            Relu6(x) ["nn"]: cpu <T: Relu6Op> x.tf_relu6(), for [realnumbertype];
                gpu {float: "relu6_of<T, C>(x)", double: "relu6_of<T, C>(x)"} for [half, bfloat16, float, double];
            /// `x < 0 ? exp(x) - 1 : x`.
            Elu(x) ["nn"]: cpu <T: SpecialFloat> x.tf_elu(), for [float, double, half, bfloat16];
                gpu {float: "elu_of<T, C>(x)", double: "elu_of<T, C>(x)"} for [half, bfloat16, float, double];
            /// `x < 0 ? scale * alpha * (exp(x) - 1) : scale * x`.
            Selu(x) ["nn"]: cpu <T: SpecialFloat> x.tf_selu(), for [float, double, half, bfloat16];
                gpu {float: "selu_of<T, C>(x)", double: "selu_of<T, C>(x)"} for [half, bfloat16, float, double];
            /// `log(exp(x) + 1)`, `x` and `exp(x)` beyond TF's thresholds.
            Softplus(x) ["nn"]: cpu <T: SpecialFloat> x.tf_softplus(), for [float, double, half, bfloat16];
                gpu {float: "softplus_of<T, C>(x)", double: "softplus_of<T, C>(x)"} for [half, bfloat16, float, double];
            /// `x / (|x| + 1)`.
            Softsign(x) ["nn"]: cpu <T: SpecialFloat> x.tf_softsign(), for [float, double, half, bfloat16];
                gpu {float: "softsign_of<T, C>(x)", double: "softsign_of<T, C>(x)"} for [half, bfloat16, float, double];
            /// The error function.
            Erf(x) ["math"]: cpu <T: SpecialFloat> x.tf_erf(), for [float, double, half, bfloat16];
                gpu {float: "erff(x)", double: "erf(x)"} for [half, bfloat16, float, double];
            /// The complementary error function.
            Erfc(x) ["math"]: cpu <T: SpecialFloat> x.tf_erfc(), for [float, double, half, bfloat16];
                gpu {float: "erfcf(x)", double: "erfc(x)"} for [half, bfloat16, float, double];
            /// `log(1 + x)`.
            Log1p(x) ["math"]: cpu <T: SpecialComplexible> x.tf_log1p(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "log1pf(x)", double: "log1p(x)"} for [half, bfloat16, float, double];
            /// `exp(x) - 1`.
            Expm1(x) ["math"]: cpu <T: SpecialComplexible> x.tf_expm1(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "expm1f(x)", double: "expm1(x)"} for [half, bfloat16, float, double];
            /// The sine.
            Sin(x) ["math"]: cpu <T: SpecialComplexible> x.tf_sin(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "sinf(x)", double: "sin(x)"} for [half, bfloat16, float, double];
            /// The cosine.
            Cos(x) ["math"]: cpu <T: SpecialComplexible> x.tf_cos(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "cosf(x)", double: "cos(x)"} for [half, bfloat16, float, double];
            /// `1 / x`.
            Reciprocal(x) ["math"]: cpu <T: SpecialComplexible> x.tf_reciprocal(), for [float, double, half, bfloat16, complex64, complex128];
                gpu {float: "1.0f / x", double: "1.0 / x"} for [half, bfloat16, float, double];
            /// The smallest integer not less than `x`.
            Ceil(x) ["math"]: cpu <T: SpecialFloat> x.tf_ceil(), for [float, double, half, bfloat16];
                gpu {float: "ceilf(x)", double: "ceil(x)"} for [half, bfloat16, float, double];
            /// Rounded half to even (the identity on integers).
            Round(x) ["math"]: cpu <T: RoundOp> x.tf_round(), for [float, double, half, bfloat16, int32, int64];
                gpu {float: "rintf(x)", double: "rint(x)", signed: "x"} for [half, bfloat16, float, double, int32, int64];
            /// -1, 0 or 1 (NaN for NaN; `x / |x|` for complex numbers).
            Sign(x) ["math"]: cpu <T: SignOp> x.tf_sign(), for [float, double, half, bfloat16, int8, int16, int32, int64, complex64, complex128];
                gpu {float: "sign_of(x)", double: "sign_of(x)", signed: "sign_of(x)"} for [half, bfloat16, float, double, int32, int64];
            /// `max(x, 0)`, keeping NaN; `-0` gives `0` for float and
            /// double and stays `-0` for half and bfloat16, as TF's CPU kernels.
            Relu(x) ["nn"]: cpu <T: ReluOp> x.tf_relu(), for [realnumbertype];
                gpu {float: "relu_of<T>(x)", double: "relu_of<T>(x)"} for [half, bfloat16, float, double];
        }
    };
}

/// True for the table's ops that TensorFlow computes with bit operations
/// (`Abs` clears the sign bit, `Neg` flips it), which keep denormal floats
/// even where TF's CPU kernels flush denormals to zero; the others flush
/// their denormal inputs and results there.
///
/// ```
/// assert!(opreg_op_logic::unary::keeps_denormals("Abs"));
/// assert!(!opreg_op_logic::unary::keeps_denormals("Log"));
/// ```
pub const fn keeps_denormals(op: &str) -> bool {
    matches!(op.as_bytes(), b"Abs" | b"Neg")
}
