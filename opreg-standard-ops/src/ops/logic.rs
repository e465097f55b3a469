//! Comparison, logical and selection ops (TF's `math_ops.cc`): [`Equal`],
//! [`Greater`], [`LogicalAnd`], [`Select`], [`SelectV2`].

use registry_core::op;

/// Returns the truth value of (x == y) element-wise.
///
/// Supports broadcasting. When `incompatible_shape_error` is false and the
/// shapes of `x` and `y` cannot be broadcast, the result is a scalar false
/// instead of an error.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: bool",
    attr = "T: type",
    attr = "incompatible_shape_error: bool = true",
    commutative,
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Equal;

/// Returns the truth value of (x > y) element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: bool",
    attr = "T: realnumbertype",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Greater;

/// Returns the truth value of x AND y element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(input = "x: bool", input = "y: bool", output = "z: bool", commutative, shape_fn = registry_core::shape::common::broadcast_binary_op)]
pub struct LogicalAnd;

/// Selects elements from `t` or `e`, depending on `condition`.
///
/// `t` and `e` have the same shape. `condition` is either a scalar, a vector
/// whose length matches the first dimension of `t`, or a tensor of the shape
/// of `t`; where it is true the output takes the element of `t`, elsewhere
/// the element of `e`.
#[op(
    input = "condition: bool",
    input = "t: T",
    input = "e: T",
    output = "output: T",
    attr = "T: type",
    shape_fn = crate::shape::select
)]
pub struct Select;

/// Selects elements from `t` or `e`, depending on `condition`, with broadcasting.
///
/// Like `Select`, but `condition`, `t` and `e` are broadcast against each
/// other to a common shape, which is the shape of the output.
#[op(
    input = "condition: bool",
    input = "t: T",
    input = "e: T",
    output = "output: T",
    attr = "T: type",
    shape_fn = crate::shape::select_v2
)]
pub struct SelectV2;

/// Returns the truth value of (x >= y) element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: bool",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct GreaterEqual;

/// Returns the truth value of (x < y) element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: bool",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct Less;

/// Returns the truth value of (x <= y) element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: bool",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}",
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct LessEqual;

/// Returns the truth value of `NOT x` element-wise.
///
/// The output has the shape of `x`.
#[op(
    input = "x: bool",
    output = "y: bool",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct LogicalNot;

/// Returns the truth value of x OR y element-wise.
///
/// Supports broadcasting of `x` and `y` to a common shape.
#[op(
    input = "x: bool",
    input = "y: bool",
    output = "z: bool",
    commutative,
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct LogicalOr;

/// Returns the truth value of (x != y) element-wise.
///
/// Supports broadcasting. When `incompatible_shape_error` is false and the
/// shapes of `x` and `y` cannot be broadcast, the result is a scalar true
/// instead of an error.
#[op(
    input = "x: T",
    input = "y: T",
    output = "z: bool",
    attr = "T: type",
    attr = "incompatible_shape_error: bool = true",
    commutative,
    shape_fn = registry_core::shape::common::broadcast_binary_op
)]
pub struct NotEqual;
