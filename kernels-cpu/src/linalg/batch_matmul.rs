//! `BatchMatMulV2` and `BatchMatMulV3`: a matrix product per batch entry,
//! batch dimensions broadcast (geometry and TF's checks in
//! [`opreg_op_logic::batch_matmul`]), each product on the tuned `gemm`
//! engine. Many small products run in parallel over the batch; a large one
//! is parallel inside `gemm`.

use std::borrow::Cow;
use std::marker::PhantomData;

use opreg_op_logic::batch_matmul::BatchMatMulGeometry;
use opreg_standard_ops::{BatchMatMulV2, BatchMatMulV3};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

use super::gemm::{GemmElement, MatMut, MatRef};
use crate::cast_rules::{CastDst, CastSrc};

/// Below this many multiply-adds per product, products run in parallel
/// over the batch (each on one thread) rather than one after the other.
const SMALL_PRODUCT: usize = 64 * 64 * 64;

/// An element of a batched product: a [`GemmElement`] with the conjugate
/// its adjoint takes (the identity for real numbers).
pub(crate) trait BatchElement: GemmElement {
    /// Whether `conj` is not the identity.
    const COMPLEX: bool = false;
    /// The complex conjugate.
    fn conj(self) -> Self {
        self
    }
}

macro_rules! real_batch_element {
    ($($t:ty),*) => {$(impl BatchElement for $t {})*};
}
real_batch_element!(f32, f64, f16, bf16, i16, i32, i64);

impl BatchElement for Complex64 {
    const COMPLEX: bool = true;
    fn conj(self) -> Self {
        Complex64::new(self.re, -self.im)
    }
}

impl BatchElement for Complex128 {
    const COMPLEX: bool = true;
    fn conj(self) -> Self {
        Complex128::new(self.re, -self.im)
    }
}

/// `out[b] = op(x[bx]) · op(y[by])` for every output matrix `b` (see
/// [`BatchMatMulGeometry`]), `op` the adjoint where asked. `out` holds
/// `g.batch * m * n` elements.
pub(crate) fn batch_matmul<T: BatchElement>(
    g: &BatchMatMulGeometry,
    x: &[T],
    y: &[T],
    adj_x: bool,
    adj_y: bool,
    out: &mut [T],
) -> Result<(), KernelError> {
    let (m, k, n) = (g.m, g.k, g.n);
    let out_len = m * n;
    if out_len == 0 || g.batch == 0 {
        return Ok(());
    }
    if k == 0 {
        out.fill(T::default());
        return Ok(());
    }
    // The adjoint of a complex matrix conjugates it: once, up front.
    let conj = |t: &[T], adj: bool| -> Option<Vec<T>> {
        (T::COMPLEX && adj).then(|| t.iter().map(|v| v.conj()).collect())
    };
    let (x_conj, y_conj) = (conj(x, adj_x), conj(y, adj_y));
    let x = x_conj.as_deref().unwrap_or(x);
    let y = y_conj.as_deref().unwrap_or(y);
    let x_len = m * k;
    let y_len = k * n;
    let product = |b: usize, dst: &mut [T]| -> Result<(), KernelError> {
        let xs = x
            .get(g.x_matrix(b) * x_len..)
            .and_then(|s| s.get(..x_len))
            .ok_or_else(|| KernelError::internal("batch matmul: x matrix out of range"))?;
        let ys = y
            .get(g.y_matrix(b) * y_len..)
            .and_then(|s| s.get(..y_len))
            .ok_or_else(|| KernelError::internal("batch matmul: y matrix out of range"))?;
        let a = if adj_x {
            MatRef::row_major(xs, k, m)?.t()
        } else {
            MatRef::row_major(xs, m, k)?
        };
        let b_view = if adj_y {
            MatRef::row_major(ys, n, k)?.t()
        } else {
            MatRef::row_major(ys, k, n)?
        };
        T::gemm(a, b_view, MatMut::row_major(dst, m, n)?)
    };
    let out = out
        .get_mut(..g.batch * out_len)
        .ok_or_else(|| KernelError::internal("batch matmul: output too small"))?;
    if g.batch > 1 && m * n * k < SMALL_PRODUCT {
        out.par_chunks_mut(out_len)
            .enumerate()
            .try_for_each(|(b, dst)| product(b, dst))
    } else {
        out.chunks_mut(out_len)
            .enumerate()
            .try_for_each(|(b, dst)| product(b, dst))
    }
}

/// Runs a batched product of inputs 0 and 1 of `ctx` into output 0, the
/// inputs' elements read by `x_of` and `y_of` (the slices themselves, or
/// converted copies for the mixed-type kernels).
fn compute_with<'a, T: BatchElement>(
    ctx: &mut OpKernelContext<'_>,
    adj_x: bool,
    adj_y: bool,
    x_of: impl FnOnce(&'a Tensor) -> Result<Cow<'a, [T]>, KernelError>,
    y_of: impl FnOnce(&'a Tensor) -> Result<Cow<'a, [T]>, KernelError>,
    inputs: &'a [Tensor; 2],
) -> Result<(), KernelError> {
    let [x, y] = inputs;
    let g = BatchMatMulGeometry::new(x.shape(), y.shape(), adj_x, adj_y)?;
    let (xs, ys) = (x_of(x)?, y_of(y)?);
    let out = ctx.allocate_output_to_overwrite(0, g.out_shape.clone())?;
    batch_matmul(&g, &xs, &ys, adj_x, adj_y, out.as_mut_slice::<T>()?)
}

/// Inputs 0 and 1 of `ctx`.
fn operands(ctx: &OpKernelContext<'_>) -> Result<[Tensor; 2], KernelError> {
    Ok([ctx.input(0)?.clone(), ctx.input(1)?.clone()])
}

/// Runs a batched product of inputs 0 and 1 of `ctx` (both of type `T`)
/// into output 0.
fn compute<T: BatchElement>(
    ctx: &mut OpKernelContext<'_>,
    adj_x: bool,
    adj_y: bool,
) -> Result<(), KernelError> {
    let inputs = operands(ctx)?;
    compute_with(ctx, adj_x, adj_y, borrowed::<T>, borrowed::<T>, &inputs)
}

/// The elements of `t`, in place.
fn borrowed<T: BatchElement>(t: &Tensor) -> Result<Cow<'_, [T]>, KernelError> {
    Ok(Cow::Borrowed(t.as_slice::<T>()?))
}

/// `BatchMatMulV2` on the CPU, for every type TF's CPU kernel has
/// (`grad_x`/`grad_y` are hints TF ignores on the CPU, as here).
#[kernel(
    op = BatchMatMulV2,
    device = CPU,
    T = [bfloat16, half, float, double, int16, int32, int64, complex64, complex128]
)]
#[derive(Debug)]
pub struct BatchMatMulKernel<T> {
    adj_x: bool,
    adj_y: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: BatchElement> BuildKernel for BatchMatMulKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            adj_x: ctx.attr("adj_x")?,
            adj_y: ctx.attr("adj_y")?,
            _t: PhantomData,
        })
    }
}

impl<T: BatchElement> OpKernel for BatchMatMulKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute::<T>(ctx, self.adj_x, self.adj_y)
    }
}

/// `BatchMatMulV3` on the CPU where `Ta`, `Tb` and `Tout` are one type
/// (the mixed combinations are [`BatchMatMulV3MixedKernel`]).
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [bfloat16], Tb = [bfloat16], Tout = [bfloat16])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [float], Tb = [float], Tout = [float])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [double], Tb = [double], Tout = [double])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [int16], Tb = [int16], Tout = [int16])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [int32], Tb = [int32], Tout = [int32])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [int64], Tb = [int64], Tout = [int64])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [complex64], Tb = [complex64], Tout = [complex64])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [complex128], Tb = [complex128], Tout = [complex128])]
#[derive(Debug)]
pub struct BatchMatMulV3Kernel<Tout> {
    adj_x: bool,
    adj_y: bool,
    _t: PhantomData<fn() -> Tout>,
}

impl<Tout: BatchElement> BuildKernel for BatchMatMulV3Kernel<Tout> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            adj_x: ctx.attr("adj_x")?,
            adj_y: ctx.attr("adj_y")?,
            _t: PhantomData,
        })
    }
}

impl<Tout: BatchElement> OpKernel for BatchMatMulV3Kernel<Tout> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute::<Tout>(ctx, self.adj_x, self.adj_y)
    }
}

/// `BatchMatMulV3` on the CPU for TF's mixed-type kernels: 8-bit integers
/// times 8-bit integers into `int32`, and 8-bit integers with `bfloat16`
/// into `bfloat16`. As TF's kernel, each input is converted to `Tout` (with
/// `Cast`'s rules) and multiplied in `Tout`.
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [uint8, int8], Tb = [uint8, int8], Tout = [int32])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [uint8, int8], Tb = [bfloat16], Tout = [bfloat16])]
#[kernel(op = BatchMatMulV3, device = CPU, Ta = [bfloat16], Tb = [uint8, int8], Tout = [bfloat16])]
#[derive(Debug)]
pub struct BatchMatMulV3MixedKernel<Ta, Tb, Tout> {
    adj_x: bool,
    adj_y: bool,
    _t: PhantomData<MixedTypes<Ta, Tb, Tout>>,
}

/// The element types of a mixed-type product (a marker: no values).
type MixedTypes<Ta, Tb, Tout> = fn() -> (Ta, Tb, Tout);

impl<Ta: CastSrc, Tb: CastSrc, Tout: BatchElement + CastDst> BuildKernel
    for BatchMatMulV3MixedKernel<Ta, Tb, Tout>
{
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            adj_x: ctx.attr("adj_x")?,
            adj_y: ctx.attr("adj_y")?,
            _t: PhantomData,
        })
    }
}

impl<Ta: CastSrc, Tb: CastSrc, Tout: BatchElement + CastDst> OpKernel
    for BatchMatMulV3MixedKernel<Ta, Tb, Tout>
{
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let inputs = operands(ctx)?;
        compute_with::<Tout>(
            ctx,
            self.adj_x,
            self.adj_y,
            |x| Ok(converted::<Ta, Tout>(x.as_slice()?).into()),
            |y| Ok(converted::<Tb, Tout>(y.as_slice()?).into()),
            &inputs,
        )
    }
}

/// `values` converted to `D` with `Cast`'s rules.
fn converted<S: CastSrc, D: CastDst>(values: &[S]) -> Vec<D> {
    values.iter().map(|&v| v.cast_to::<D>()).collect()
}
