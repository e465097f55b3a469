//! `GatherNd`'s checks and geometry (TF's `DoGatherNd`, with its messages,
//! in its order), shared by the CPU and GPU kernels, and its
//! `bad_indices_policy` attr.
//!
//! `indices` is viewed as `[n, k]` (`k` the length of its last dimension),
//! `params` as `[params.shape[:k], slice]`; output row `i` is the slice of
//! `params` at the index vector `indices[i]`.
//!
//! ```
//! use opreg_op_logic::gather_nd::gather_nd_geometry;
//! use registry_core::proto::DataType;
//! use registry_core::tensor::TensorShape;
//!
//! let params = TensorShape::new([2, 3, 4]).unwrap();
//! let indices = TensorShape::new([5, 2]).unwrap();
//! let g = gather_nd_geometry(&params, &indices, DataType::DtInt32, i64::from(i32::MAX)).unwrap();
//! assert_eq!((g.n, g.k, g.slice), (5, 2, 4));
//! assert_eq!(g.out_shape.dims(), &[5, 4]);
//! assert_eq!(&g.strides[..], &[12, 4]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::TensorShape;

use super::index::{Dims, dim_i64, shape_of};

/// What `GatherNd` does with an index outside `params` (the
/// `bad_indices_policy` attr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadIndices {
    /// An error (`""`, `DEFAULT`, `ERROR`; what TF's CPU kernel does).
    Error,
    /// The output slice is left zero (`IGNORE`).
    Ignore,
}

impl BadIndices {
    /// Parses the attr; TF registers CPU kernels for `""`, `DEFAULT`,
    /// `ERROR` and `IGNORE` only.
    pub fn parse(value: &str) -> Result<Self, KernelError> {
        match value {
            "" | "DEFAULT" | "ERROR" => Ok(Self::Error),
            "IGNORE" => Ok(Self::Ignore),
            other => Err(KernelError::invalid_argument(format!(
                "bad_indices_policy '{other}' is not one of \"\", DEFAULT, ERROR, IGNORE (TF has \
                 no CPU kernel of GatherNd for it)"
            ))),
        }
    }
}

/// A checked `GatherNd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatherNdGeometry {
    /// The number of index vectors (output rows).
    pub n: usize,
    /// The length of each index vector.
    pub k: usize,
    /// The elements of one slice (an output row).
    pub slice: usize,
    /// The first `k` dimensions of `params`, which the index vectors index.
    pub limits: Dims,
    /// The element stride of each of those dimensions in `params`.
    pub strides: Dims,
    /// The output's shape: `indices.shape[:-1] + params.shape[k:]`.
    pub out_shape: TensorShape,
}

/// Checks the shapes of `params` and `indices` (of dtype `index_dtype`,
/// whose largest value is `index_max`) with TF's messages.
pub fn gather_nd_geometry(
    params: &TensorShape,
    indices: &TensorShape,
    index_dtype: DataType,
    index_max: i64,
) -> Result<GatherNdGeometry, KernelError> {
    registry_core::kernel_ensure!(params.rank() >= 1, "params must be at least a vector");
    registry_core::kernel_ensure!(indices.rank() >= 1, "indices must be at least a vector");
    let idims = indices.dims();
    let k = idims[idims.len() - 1];
    registry_core::kernel_ensure!(
        k <= params.rank(),
        "index innermost dimension length must be <= params rank; saw: {k} vs. {}",
        params.rank()
    );
    let n: usize = idims[..idims.len() - 1].iter().product();
    registry_core::kernel_ensure!(
        dim_i64(n) <= i64::from(i32::MAX),
        "indices has too many elements for int indexing: {n} > {}",
        i32::MAX
    );
    let elements = dim_i64(params.num_elements());
    registry_core::kernel_ensure!(
        elements <= index_max,
        "params.NumElements() too large for {} indexing: {elements} > {index_max}",
        index_dtype.type_name()
    );
    let pdims = params.dims();
    let slice: usize = pdims[k..].iter().product();
    registry_core::kernel_ensure!(
        dim_i64(slice) <= index_max,
        "slice size is too large for indexing: {slice} > {index_max}"
    );
    let mut out: Dims = idims[..idims.len() - 1].iter().copied().collect();
    out.extend_from_slice(&pdims[k..]);
    let out_shape = shape_of(&out)?;
    if n > 0 && params.num_elements() == 0 {
        return Err(KernelError::invalid_argument(format!(
            "Requested more than 0 entries, but params is empty.  Params shape: {params}"
        )));
    }
    registry_core::kernel_ensure!(
        k <= 7 || n == 0,
        "Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested rank: \
         {k}"
    );
    let limits: Dims = pdims[..k].iter().copied().collect();
    let mut strides: Dims = Dims::from_elem(slice, k);
    for i in (0..k.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(pdims[i + 1]);
    }
    Ok(GatherNdGeometry {
        n,
        k,
        slice,
        limits,
        strides,
        out_shape,
    })
}

/// TF's message for the bad index vector `index` at row `row` of indices
/// of shape `indices` (`indices[1,1] = [0, 3, 0] does not index into param
/// shape [2,3,4], node name: n`).
pub fn bad_index_message(
    indices: &TensorShape,
    row: usize,
    index: &[i64],
    params: &TensorShape,
    node: &str,
) -> String {
    let dims = indices.dims();
    let outer = &dims[..dims.len().saturating_sub(1)];
    let mut at = vec![0usize; outer.len()];
    let mut left = row;
    for (i, &d) in outer.iter().enumerate().rev() {
        let d = d.max(1);
        at[i] = left % d;
        left /= d;
    }
    let at: Vec<String> = at.iter().map(usize::to_string).collect();
    let position = if at.is_empty() {
        String::new()
    } else {
        format!("[{}]", at.join(","))
    };
    let index: Vec<String> = index.iter().map(i64::to_string).collect();
    format!(
        "indices{position} = [{}] does not index into param shape {params}, node name: {node}",
        index.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn err(p: &[usize], i: &[usize], dtype: DataType, max: i64) -> String {
        gather_nd_geometry(&shape(p), &shape(i), dtype, max)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn checks_as_tf_does() {
        let i32_max = i64::from(i32::MAX);
        // Messages from TF 2.21.
        assert_eq!(
            err(&[], &[1], DataType::DtInt32, i32_max),
            "params must be at least a vector"
        );
        assert_eq!(
            err(&[2, 3], &[], DataType::DtInt32, i32_max),
            "indices must be at least a vector"
        );
        assert_eq!(
            err(&[2, 3, 4], &[1, 4], DataType::DtInt32, i32_max),
            "index innermost dimension length must be <= params rank; saw: 4 vs. 3"
        );
        assert_eq!(
            err(&[0, 3], &[1, 1], DataType::DtInt32, i32_max),
            "Requested more than 0 entries, but params is empty.  Params shape: [0,3]"
        );
        assert_eq!(
            err(&[200, 200], &[1, 2], DataType::DtInt16, i64::from(i16::MAX)),
            "params.NumElements() too large for int16 indexing: 40000 > 32767"
        );
        assert_eq!(
            err(&[1; 8], &[1, 8], DataType::DtInt32, i32_max),
            "Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested \
             rank: 8"
        );
        // k = 0: every row is all of params; no rows from empty params.
        let g = gather_nd_geometry(&shape(&[2, 3]), &shape(&[2, 0]), DataType::DtInt32, i32_max)
            .unwrap();
        assert_eq!(
            (g.n, g.k, g.slice, g.out_shape.dims()),
            (2, 0, 6, &[2, 2, 3][..])
        );
        let g = gather_nd_geometry(
            &shape(&[0, 3]),
            &shape(&[0, 1]),
            DataType::DtInt64,
            i64::MAX,
        )
        .unwrap();
        assert_eq!(g.out_shape.dims(), &[0, 3]);
    }

    #[test]
    fn bad_index_messages_name_the_position() {
        let p = shape(&[2, 3, 4]);
        assert_eq!(
            bad_index_message(&shape(&[2, 2, 3]), 3, &[0, 3, 0], &p, "GatherNd"),
            "indices[1,1] = [0, 3, 0] does not index into param shape [2,3,4], node name: GatherNd"
        );
        assert_eq!(
            bad_index_message(&shape(&[1, 2]), 0, &[-1, 2], &p, "g"),
            "indices[0] = [-1, 2] does not index into param shape [2,3,4], node name: g"
        );
    }

    #[test]
    fn policies() {
        assert_eq!(BadIndices::parse("").unwrap(), BadIndices::Error);
        assert_eq!(BadIndices::parse("ERROR").unwrap(), BadIndices::Error);
        assert_eq!(BadIndices::parse("IGNORE").unwrap(), BadIndices::Ignore);
        assert!(BadIndices::parse("BOGUS").is_err());
    }
}
