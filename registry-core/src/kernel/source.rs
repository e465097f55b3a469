//! [`KernelSource`]: the device code a kernel compiles when it is built
//! (CUDA C for the GPU), attached to its registration so that tools and
//! tests can reach every source through the kernel registry.

use super::{KernelError, KernelRegistration};

/// A source of device code with its cache key and its entry points: what a
/// device kernel compiles (once per device and key) when it is built for a
/// node.
///
/// ```
/// use registry_core::kernel::KernelSource;
/// let s = KernelSource::new("unary/Abs/float", "extern \"C\" __global__ void unary() {}", ["unary"]);
/// assert_eq!(s.key(), "unary/Abs/float");
/// assert_eq!(s.entries().collect::<Vec<_>>(), ["unary"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSource {
    key: String,
    code: String,
    entries: Vec<String>,
}

impl KernelSource {
    /// A source: `key` names it uniquely (a family, op and dtype, such as
    /// `"unary/Abs/float"`), `code` is the device code, and `entries` are
    /// its kernels' names.
    pub fn new(
        key: impl Into<String>,
        code: impl Into<String>,
        entries: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            key: key.into(),
            code: code.into(),
            entries: entries.into_iter().map(Into::into).collect(),
        }
    }

    /// The cache key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The entry points.
    pub fn entries(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(String::as_str)
    }
}

/// The sources a registration's kernel compiles, for every node it can be
/// built for (`#[kernel(sources = path)]`): given the registration (its op
/// and type constraints), the sources its kernel may compile.
pub type KernelSourcesFn = fn(&KernelRegistration) -> Result<Vec<KernelSource>, KernelError>;
