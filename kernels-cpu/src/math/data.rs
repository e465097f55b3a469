//! [`TensorData`]: typed views of a tensor's elements for every element
//! type a data-movement or comparison kernel handles, byte strings
//! (`DT_STRING`) included.

use registry_core::kernel::KernelError;
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

/// An element type with typed (shared and mutable) views of a tensor:
/// every fixed-size element type, and `Vec<u8>` for `DT_STRING`.
pub trait TensorData: Clone + PartialEq + Send + Sync + 'static {
    /// The elements; errors when the tensor has another dtype.
    fn view(t: &Tensor) -> Result<&[Self], KernelError>;
    /// The elements for writing; errors on another dtype or a shared buffer.
    fn view_mut(t: &mut Tensor) -> Result<&mut [Self], KernelError>;
}

macro_rules! fixed {
    ($($t:ty),*) => {$(
        impl TensorData for $t {
            #[inline]
            fn view(t: &Tensor) -> Result<&[Self], KernelError> {
                Ok(t.as_slice::<$t>()?)
            }
            #[inline]
            fn view_mut(t: &mut Tensor) -> Result<&mut [Self], KernelError> {
                Ok(t.as_mut_slice::<$t>()?)
            }
        }
    )*};
}
fixed!(
    f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64, bool, Complex64, Complex128
);

impl TensorData for Vec<u8> {
    #[inline]
    fn view(t: &Tensor) -> Result<&[Self], KernelError> {
        Ok(t.as_strings()?)
    }
    #[inline]
    fn view_mut(t: &mut Tensor) -> Result<&mut [Self], KernelError> {
        Ok(t.as_mut_strings()?)
    }
}
