//! The crate's ops, declared with [`#[op]`](macro@registry_core::op) from
//! TensorFlow spec strings (checked at compile time). Each struct's doc
//! comment is the op's TensorFlow Doc text.

use registry_core::op;

/// Zeros all but the first element of a tensor.
///
/// TensorFlow's custom-op tutorial op ("Create an op"): the output has the
/// shape of the input, its first element is the input's first element (in
/// row-major order) and every other element is 0. An empty input gives an
/// empty output.
///
/// to_zero: The tensor to zero out, of any shape.
/// zeroed: A tensor of the shape of `to_zero`, zero but for its first element.
#[op(
    input = "to_zero: int32",
    output = "zeroed: int32",
    shape_fn = crate::shapes::zero_out
)]
pub struct ZeroOut;

/// Sums `N` tensors of one shape, each multiplied by its weight.
///
/// The output is `weights[0] * values[0] + ... + weights[N-1] * values[N-1]`,
/// element-wise, computed in `T` (integers wrap around on overflow, as in
/// TensorFlow's integer kernels). With `normalize` set, the sum is then
/// divided by the sum of the weights, which must not be zero (an `int32`
/// quotient is rounded toward zero).
///
/// values: The `N` tensors to sum, all of one shape.
/// weights: A vector of `N` weights, one for each tensor of `values`.
/// sum: The weighted sum, of the shape of `values`.
/// normalize: Whether to divide the sum by the sum of the weights (a weighted mean).
#[op(
    input = "values: N * T",
    input = "weights: T",
    output = "sum: T",
    attr = "N: int >= 1",
    attr = "T: {float, double, int32}",
    attr = "normalize: bool = false",
    shape_fn = crate::shapes::weighted_sum
)]
pub struct WeightedSum;
