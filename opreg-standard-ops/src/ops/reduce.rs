//! Reductions (TF's `math_ops.cc`): [`AddN`], [`ArgMax`], [`Max`], [`Mean`],
//! [`Sum`].

use registry_core::op;

/// Add all input tensors element wise.
///
/// All `N` inputs must have the same shape and type; the output is their
/// sum, of that shape and type.
#[op(
    input = "inputs: N * T",
    output = "sum: T",
    attr = "N: int >= 1",
    attr = "T: {numbertype, variant}",
    commutative,
    aggregate,
    shape_fn = registry_core::shape::common::merge_inputs
)]
pub struct AddN;

/// Returns the index with the largest value across dimensions of a tensor.
///
/// The reduced dimension is given by the scalar `dimension`. For ties the
/// smallest index is returned. The output has the rank of `input` minus one.
#[op(
    input = "input: T",
    input = "dimension: Tidx",
    output = "output: output_type",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8, quint8, qint32, qint16, quint16, bool}",
    attr = "Tidx: {int16, int32, int64} = DT_INT32",
    attr = "output_type: {int16, uint16, int32, int64} = DT_INT64",
    shape_fn = crate::shape::arg_max
)]
pub struct ArgMax;

/// Computes the maximum of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`. Unless
/// `keep_dims` is true, the rank of the tensor is reduced by 1 for each entry
/// in `reduction_indices`; otherwise the reduced dimensions are kept with
/// length 1.
#[op(
    input = "input: T",
    input = "reduction_indices: Tidx",
    output = "output: T",
    attr = "keep_dims: bool = false",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8, quint8, qint32, qint16, quint16}",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct Max;

/// Computes the mean of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`. Unless
/// `keep_dims` is true, the rank of the tensor is reduced by 1 for each entry
/// in `reduction_indices`; otherwise the reduced dimensions are kept with
/// length 1.
#[op(
    input = "input: T",
    input = "reduction_indices: Tidx",
    output = "output: T",
    attr = "keep_dims: bool = false",
    attr = "T: numbertype",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct Mean;

/// Computes the sum of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`. Unless
/// `keep_dims` is true, the rank of the tensor is reduced by 1 for each entry
/// in `reduction_indices`; otherwise the reduced dimensions are kept with
/// length 1.
#[op(
    input = "input: T",
    input = "reduction_indices: Tidx",
    output = "output: T",
    attr = "keep_dims: bool = false",
    attr = "T: numbertype",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct Sum;

/// Computes the "logical and" of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`; unless
/// `keep_dims` is true, the rank shrinks by one for each of them.
#[op(
    input = "input: bool",
    input = "reduction_indices: Tidx",
    output = "output: bool",
    attr = "keep_dims: bool = false",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct All;

/// Computes the "logical or" of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`; unless
/// `keep_dims` is true, the rank shrinks by one for each of them.
#[op(
    input = "input: bool",
    input = "reduction_indices: Tidx",
    output = "output: bool",
    attr = "keep_dims: bool = false",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct Any;

/// Returns the index with the smallest value across dimensions of a tensor.
///
/// Of equal smallest values the first index is returned; the output has the
/// shape of `input` without dimension `dimension`.
#[op(
    input = "input: T",
    input = "dimension: Tidx",
    output = "output: output_type",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8, quint8, qint32, qint16, quint16, bool}",
    attr = "Tidx: {int32, int64} = DT_INT32",
    attr = "output_type: {int32, int64} = DT_INT64",
    shape_fn = crate::shape::arg_max
)]
pub struct ArgMin;

/// Computes the minimum of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`; unless
/// `keep_dims` is true, the rank shrinks by one for each of them.
#[op(
    input = "input: T",
    input = "reduction_indices: Tidx",
    output = "output: T",
    attr = "keep_dims: bool = false",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8, quint8, qint32, qint16, quint16}",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct Min;

/// Computes the product of elements across dimensions of a tensor.
///
/// Reduces `input` along the dimensions given in `reduction_indices`; unless
/// `keep_dims` is true, the rank shrinks by one for each of them.
#[op(
    input = "input: T",
    input = "reduction_indices: Tidx",
    output = "output: T",
    attr = "keep_dims: bool = false",
    attr = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}",
    attr = "Tidx: {int32, int64} = DT_INT32",
    shape_fn = crate::shape::reduction
)]
pub struct Prod;
