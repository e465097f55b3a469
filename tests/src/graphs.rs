//! The shared TensorFlow graphs (`shared/graphs/*`): their `io.json` feeds
//! and fetches as tensors, and the per-dtype comparison with TF's values.

use std::path::{Path, PathBuf};

use opreg_cli::io_json::read_list;
use opreg_proto::DataType;
use registry_core::tensor::Tensor;

/// One feed or fetch of an `io.json`.
#[derive(Debug, Clone)]
pub struct IoTensor {
    /// `node:port`.
    pub name: String,
    /// The tensor (TF's values).
    pub tensor: Tensor,
}

/// A shared graph: where it is, its feeds and TF's fetched values.
#[derive(Debug, Clone)]
pub struct SharedGraph {
    /// The graph's folder name (`mlp_f32`, ...).
    pub name: String,
    /// Its folder.
    pub dir: PathBuf,
    /// The feeds.
    pub feeds: Vec<IoTensor>,
    /// TF's fetched values.
    pub fetches: Vec<IoTensor>,
}

impl SharedGraph {
    /// The feeds as `Session::run` takes them: (name, tensor).
    pub fn feed_pairs(&self) -> Vec<(&str, Tensor)> {
        self.feeds
            .iter()
            .map(|f| (f.name.as_str(), f.tensor.clone()))
            .collect()
    }

    /// The fetches' names.
    pub fn fetch_names(&self) -> Vec<&str> {
        self.fetches.iter().map(|f| f.name.as_str()).collect()
    }
}

/// Every graph folder under `shared/graphs`, sorted by name.
pub fn shared_graphs() -> Vec<SharedGraph> {
    let root = crate::shared_dir().join("graphs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("reading {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("io.json").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| load(d).unwrap_or_else(|e| panic!("{}: {e}", d.display())))
        .collect()
}

/// Reads a graph folder's `io.json` (with `opreg_cli::io_json`, the reader
/// `opreg run --feeds` uses).
pub fn load(dir: &Path) -> Result<SharedGraph, String> {
    let text = std::fs::read_to_string(dir.join("io.json")).map_err(|e| e.to_string())?;
    let list = |key: &str| -> Result<Vec<IoTensor>, String> {
        Ok(read_list(&text, key)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|t| IoTensor {
                name: t.name,
                tensor: t.tensor,
            })
            .collect())
    };
    Ok(SharedGraph {
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        dir: dir.to_owned(),
        feeds: list("feeds")?,
        fetches: list("fetches")?,
    })
}

/// The tensor's values widened to f64 (integers, quantized integers and
/// bools too: [`Tensor::to_f64`]), or `None` for dtypes without a real
/// view (strings, complex numbers) and tensors not on the host.
pub fn as_f64(t: &Tensor) -> Option<Vec<f64>> {
    t.to_f64().ok()
}

/// The tolerance for comparing our floats with TF's, in units in the last
/// place of the dtype (relative) plus an absolute floor, per dtype:
/// integers and bools must match exactly.
///
/// - f32: 64 ulps (2^-17 relative) with an absolute floor of 1e-6. Our
///   transcendental functions (libm's `expf`, `tanhf`, ...) are not Eigen's
///   polynomial approximations, and MatMul/Conv2D/reductions sum in another
///   order (gemm's blocking vs Eigen's), which costs a few ulps per
///   accumulation over K terms; chains of such ops (MLP, CNN) compound it.
/// - f64: 64 ulps (2^-46), same reasoning.
/// - f16/bf16: 1 ulp of the type (TF computes in f32 and rounds; a
///   different f32 result may round the other way), plus the f32 error.
pub fn tolerance(dtype: DataType) -> (f64, f64) {
    match dtype {
        DataType::DtFloat => (2f64.powi(-17), 1e-6),
        DataType::DtDouble => (2f64.powi(-46), 1e-12),
        DataType::DtHalf => (2f64.powi(-10), 2f64.powi(-24)),
        DataType::DtBfloat16 => (2f64.powi(-7), 1e-6),
        _ => (0.0, 0.0),
    }
}

/// Compares `ours` with TF's `expected`: same dtype and shape, values equal
/// within [`tolerance`]. Returns the largest relative error seen.
pub fn compare(name: &str, ours: &Tensor, expected: &Tensor) -> Result<f64, String> {
    if ours.dtype() != expected.dtype() {
        return Err(format!(
            "{name}: dtype {:?}, TF has {:?}",
            ours.dtype(),
            expected.dtype()
        ));
    }
    if ours.dims() != expected.dims() {
        return Err(format!(
            "{name}: shape {:?}, TF has {:?}",
            ours.dims(),
            expected.dims()
        ));
    }
    let (Some(a), Some(b)) = (as_f64(ours), as_f64(expected)) else {
        return Err(format!(
            "{name}: dtype {:?} cannot be compared",
            ours.dtype()
        ));
    };
    let (rel, abs) = tolerance(ours.dtype());
    let mut worst: f64 = 0.0;
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        if x.is_nan() && y.is_nan() || x == y {
            continue;
        }
        let err = (x - y).abs();
        let allowed = abs.max(rel * y.abs());
        if err.is_nan() || err > allowed {
            return Err(format!(
                "{name}[{i}]: {x} vs TF's {y} (error {err:e} > {allowed:e})"
            ));
        }
        if y != 0.0 {
            worst = worst.max(err / y.abs());
        }
    }
    Ok(worst)
}

/// A model of `shared/models` (same layout as the graphs).
pub fn shared_model(name: &str) -> SharedGraph {
    let dir = crate::shared_dir().join("models").join(name);
    load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Compares a model's fetch with TF's by the models' rule
/// (`shared/models/README.md`): same dtype and shape; ints and bools
/// exactly; floats within `1e-4 * max(1, max|want|)` (a whole network sums
/// in other orders than TF's kernels). Returns the largest error relative
/// to that scale.
pub fn compare_model(name: &str, ours: &Tensor, expected: &Tensor) -> Result<f64, String> {
    if ours.dtype() != expected.dtype() || ours.dims() != expected.dims() {
        return Err(format!(
            "{name}: {:?}{:?}, TF has {:?}{:?}",
            ours.dtype(),
            ours.dims(),
            expected.dtype(),
            expected.dims()
        ));
    }
    let (Some(a), Some(b)) = (as_f64(ours), as_f64(expected)) else {
        return Err(format!(
            "{name}: dtype {:?} cannot be compared",
            ours.dtype()
        ));
    };
    let exact = tolerance(ours.dtype()) == (0.0, 0.0);
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let allowed = if exact { 0.0 } else { 1e-4 * scale };
    let mut worst: f64 = 0.0;
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        if x.is_nan() && y.is_nan() || x == y {
            continue;
        }
        let err = (x - y).abs();
        if err.is_nan() || err > allowed {
            return Err(format!(
                "{name}[{i}]: {x} vs TF's {y} (error {err:e} > {allowed:e})"
            ));
        }
        worst = worst.max(err / scale);
    }
    Ok(worst)
}
