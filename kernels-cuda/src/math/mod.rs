//! Element-wise GPU kernels: unary math, binary arithmetic with TF's
//! broadcasting, comparisons, `LogicalAnd`, `Select`/`SelectV2`, `Cast`
//! and `AddN`.
//!
//! - unary ([`unary`]): `Abs`, `Neg`, `Exp`, `Log`, `Floor`, `Rsqrt`,
//!   `Sqrt`, `Square`, `Sigmoid`, `Tanh`;
//! - binary ([`binary`]): `AddV2`, `Sub`, `Mul`, `RealDiv`, `FloorDiv`,
//!   `FloorMod`, `Maximum`, `Minimum`, `Pow`, `SquaredDifference`, `Equal`,
//!   `Greater`, `LogicalAnd`;
//! - [`select`]: `Select`, `SelectV2`; [`cast`]: `Cast`; [`add_n`]: `AddN`.
//!
//! Each (op, dtype) has its own CUDA source ([`source`]), compiled with
//! NVRTC when a kernel is built for a node (once per process: the device
//! caches it by key, e.g. `"binary/AddV2/float"`). Broadcasting is planned
//! on the host ([`broadcast`]). Inputs are updated in place when they can
//! be forwarded to the output. The scalar semantics, and the defined values
//! the GPU gives where the CPU kernels report errors (integer division by
//! zero, negative integer powers), are listed in [`source`].

pub mod add_n;
pub mod binary;
pub mod broadcast;
pub mod cast;
mod io;
pub mod select;
pub mod source;
pub mod unary;

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};

use opreg_cuda::KernelSource;
use source::{BinaryFn, UnaryFn};

/// The ops this module has GPU kernels for.
pub const OPS: &[&str] = &[
    "Abs",
    "Neg",
    "Exp",
    "Log",
    "Floor",
    "Rsqrt",
    "Sqrt",
    "Square",
    "Sigmoid",
    "Tanh",
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
    "Equal",
    "Greater",
    "LogicalAnd",
    "Select",
    "SelectV2",
    "Cast",
    "AddN",
];

/// The CUDA sources a kernel of `op` builds for a node whose type attrs
/// are `types` (`("T", dtype)`, or `("SrcT", ..)` and `("DstT", ..)` for
/// `Cast`, where both `Truncate` variants are returned; none for an
/// identity cast). For checking every registered source compiles.
///
/// ```
/// use kernels_cuda::math::sources_for;
/// use registry_core::proto::DataType;
///
/// let s = sources_for("AddV2", &[("T", DataType::DtHalf)]).unwrap();
/// assert_eq!(s[0].key(), "binary/AddV2/half");
/// let s = sources_for("Cast", &[("SrcT", DataType::DtFloat), ("DstT", DataType::DtHalf)]).unwrap();
/// assert_eq!(s.len(), 2);
/// assert!(sources_for("MatMul", &[("T", DataType::DtFloat)]).is_err());
/// ```
pub fn sources_for(op: &str, types: &[(&str, DataType)]) -> Result<Vec<KernelSource>, KernelError> {
    let attr = |name: &str| {
        types
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, t)| t)
            .ok_or_else(|| KernelError::internal(format!("{op}: no type given for attr {name}")))
    };
    if let Some(f) = UnaryFn::ALL.into_iter().find(|f| f.op_name() == op) {
        return Ok(vec![source::unary_source(f, attr("T")?)?]);
    }
    if op == "LogicalAnd" {
        return Ok(vec![source::binary_source(
            BinaryFn::LogicalAnd,
            DataType::DtBool,
        )?]);
    }
    if let Some(f) = BinaryFn::ALL.into_iter().find(|f| f.op_name() == op) {
        return Ok(vec![source::binary_source(f, attr("T")?)?]);
    }
    match op {
        "Select" | "SelectV2" => Ok(vec![source::select_source(attr("T")?)?]),
        "AddN" => Ok(vec![source::add_n_source(attr("T")?)?]),
        "Cast" => {
            let (src, dst) = (attr("SrcT")?, attr("DstT")?);
            if src == dst {
                return Ok(Vec::new());
            }
            let plain = source::cast_source(src, dst, false)?;
            let truncated = source::cast_source(src, dst, true)?;
            Ok(if plain.key() == truncated.key() {
                vec![plain]
            } else {
                vec![plain, truncated]
            })
        }
        _ => Err(KernelError::unimplemented(format!(
            "{op} has no element-wise GPU kernel (types {})",
            types
                .iter()
                .map(|(n, t)| format!("{n}={}", t.type_name()))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
