//! `Cast`: one kernel for every (SrcT, DstT) pair, registered without a
//! type constraint as TF does. The conversion is chosen once, when the
//! kernel is built; unsupported pairs fail there with TF's
//! `Unimplemented` message (`Cast string to float is not supported`).
//! Equal types are the identity (the input buffer becomes the output);
//! quantized types convert as their stored integers. The element rules are
//! in [`cast_rules`](super::cast_rules).

use opreg_standard_ops::Cast;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

use crate::cast_rules::{CastDst, CastSrc, Truncate, truncation_bits};
use crate::elementwise::map_into;

/// Converts every element of the first tensor into the second (same shape).
type CastFn = fn(&Tensor, &mut Tensor) -> Result<(), KernelError>;

fn cast_typed<S: CastSrc, D: CastDst>(x: &Tensor, y: &mut Tensor) -> Result<(), KernelError> {
    map_into(x.as_slice::<S>()?, y.as_mut_slice::<D>()?, S::cast_to::<D>)
}

fn cast_truncated<S: Truncate, D: CastDst, const BITS: u32>(
    x: &Tensor,
    y: &mut Tensor,
) -> Result<(), KernelError> {
    map_into(x.as_slice::<S>()?, y.as_mut_slice::<D>()?, |v: S| {
        v.zero_low_bits(BITS).cast_to::<D>()
    })
}

/// The conversion for a pair of element types with Rust types.
fn typed_cast(src: DataType, dst: DataType) -> Option<CastFn> {
    use DataType::*;
    macro_rules! to {
        ($s:ty) => {
            match dst {
                DtBool => Some(cast_typed::<$s, bool> as CastFn),
                DtInt8 => Some(cast_typed::<$s, i8>),
                DtInt16 => Some(cast_typed::<$s, i16>),
                DtInt32 => Some(cast_typed::<$s, i32>),
                DtInt64 => Some(cast_typed::<$s, i64>),
                DtUint8 => Some(cast_typed::<$s, u8>),
                DtUint16 => Some(cast_typed::<$s, u16>),
                DtUint32 => Some(cast_typed::<$s, u32>),
                DtUint64 => Some(cast_typed::<$s, u64>),
                DtHalf => Some(cast_typed::<$s, f16>),
                DtBfloat16 => Some(cast_typed::<$s, bf16>),
                DtFloat => Some(cast_typed::<$s, f32>),
                DtDouble => Some(cast_typed::<$s, f64>),
                DtComplex64 => Some(cast_typed::<$s, Complex64>),
                DtComplex128 => Some(cast_typed::<$s, Complex128>),
                _ => None,
            }
        };
    }
    match src {
        DtBool => to!(bool),
        DtInt8 => to!(i8),
        DtInt16 => to!(i16),
        DtInt32 => to!(i32),
        DtInt64 => to!(i64),
        DtUint8 => to!(u8),
        DtUint16 => to!(u16),
        DtUint32 => to!(u32),
        DtUint64 => to!(u64),
        DtHalf => to!(f16),
        DtBfloat16 => to!(bf16),
        DtFloat => to!(f32),
        DtDouble => to!(f64),
        DtComplex64 => to!(Complex64),
        DtComplex128 => to!(Complex128),
        _ => None,
    }
}

/// The truncating conversion for the pairs TF truncates.
fn truncating_cast(src: DataType, dst: DataType) -> Option<CastFn> {
    use DataType::*;
    const D_F: u32 = 29;
    const D_H: u32 = 42;
    const F_H: u32 = 13;
    const F_B: u32 = 16;
    let f: CastFn = match (src, dst) {
        (DtDouble, DtFloat) => cast_truncated::<f64, f32, D_F>,
        (DtComplex128, DtFloat) => cast_truncated::<Complex128, f32, D_F>,
        (DtComplex128, DtComplex64) => cast_truncated::<Complex128, Complex64, D_F>,
        (DtDouble, DtComplex64) => cast_truncated::<f64, Complex64, D_F>,
        (DtDouble, DtHalf) => cast_truncated::<f64, f16, D_H>,
        (DtComplex128, DtHalf) => cast_truncated::<Complex128, f16, D_H>,
        (DtFloat, DtHalf) => cast_truncated::<f32, f16, F_H>,
        (DtComplex64, DtHalf) => cast_truncated::<Complex64, f16, F_H>,
        (DtFloat, DtBfloat16) => cast_truncated::<f32, bf16, F_B>,
        _ => return None,
    };
    debug_assert!(truncation_bits(src, dst).is_some());
    Some(f)
}

/// The integer type a quantized type is stored as (TF casts quantized
/// tensors as these).
fn storage_type(dtype: DataType) -> DataType {
    match dtype {
        DataType::DtQint8 => DataType::DtInt8,
        DataType::DtQuint8 => DataType::DtUint8,
        DataType::DtQint16 => DataType::DtInt16,
        DataType::DtQuint16 => DataType::DtUint16,
        DataType::DtQint32 => DataType::DtInt32,
        other => other,
    }
}

/// What a built `Cast` kernel does.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// `SrcT == DstT`: the input is the output.
    Identity,
    /// Convert through `work`, between the storage types `src`/`dst`
    /// (which differ from the tensors' dtypes for quantized types).
    Convert {
        work: CastFn,
        src: DataType,
        dst: DataType,
    },
}

/// `Cast` from `SrcT` to `DstT` (with `Truncate` for narrowing float casts).
#[kernel(op = Cast, device = CPU)]
#[derive(Debug)]
pub struct CastKernel {
    plan: Plan,
}

impl CastKernel {
    /// The kernel for a cast from `src` to `dst`; `Unimplemented` when TF
    /// has no CPU conversion for the pair.
    pub fn new(src: DataType, dst: DataType, truncate: bool) -> Result<Self, KernelError> {
        if src == dst {
            return Ok(Self {
                plan: Plan::Identity,
            });
        }
        let (s, d) = (storage_type(src), storage_type(dst));
        let truncating = if truncate {
            truncating_cast(s, d)
        } else {
            None
        };
        let work = truncating.or_else(|| typed_cast(s, d)).ok_or_else(|| {
            KernelError::unimplemented(format!(
                "Cast {} to {} is not supported",
                src.type_name(),
                dst.type_name()
            ))
        })?;
        Ok(Self {
            plan: Plan::Convert {
                work,
                src: s,
                dst: d,
            },
        })
    }
}

impl BuildKernel for CastKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Self::new(ctx.attr("SrcT")?, ctx.attr("DstT")?, ctx.attr("Truncate")?)
    }
}

/// A copy of `t`'s elements as dtype `as_dtype` (same element size).
fn reinterpret(t: &Tensor, as_dtype: DataType) -> Result<Tensor, KernelError> {
    let mut out = Tensor::zeros(as_dtype, t.shape().clone())?;
    let (src, dst) = (t.as_bytes()?, out.as_mut_bytes()?);
    if src.len() != dst.len() {
        return Err(KernelError::internal("Cast: storage sizes differ"));
    }
    dst.copy_from_slice(src);
    Ok(out)
}

impl OpKernel for CastKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (work, src, dst) = match self.plan {
            Plan::Identity => {
                let x = ctx.take_input(0)?;
                return ctx.set_output(0, x);
            }
            Plan::Convert { work, src, dst } => (work, src, dst),
        };
        let x = ctx.input(0)?.clone();
        let x = if x.dtype() == src {
            x
        } else {
            reinterpret(&x, src)?
        };
        let out_dtype = ctx.output_type(0)?;
        if out_dtype == dst {
            let out = ctx.allocate_output(0, x.shape().clone())?;
            return work(&x, out);
        }
        let mut tmp = Tensor::zeros(dst, x.shape().clone())?;
        work(&x, &mut tmp)?;
        let out = ctx.allocate_output(0, x.shape().clone())?;
        let (from, to) = (tmp.as_bytes()?, out.as_mut_bytes()?);
        if from.len() != to.len() {
            return Err(KernelError::internal("Cast: storage sizes differ"));
        }
        to.copy_from_slice(from);
        Ok(())
    }
}
