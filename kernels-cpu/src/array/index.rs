//! Index element types (`Tindices`, `TI`) of the gather-like kernels. The
//! integer host inputs and shape helpers are in [`opreg_op_logic::index`].

use registry_core::tensor::TensorElement;

/// An integer element type that indexes (`Tindices`, `TI`): read as `i64`.
pub(crate) trait IndexElement: TensorElement {
    /// The largest value of the type, as `i64`.
    const MAX: i64;
    /// The value as `i64` (exact).
    fn to_i64(self) -> i64;
}

macro_rules! index_element {
    ($($t:ty),*) => {$(
        impl IndexElement for $t {
            const MAX: i64 = <$t>::MAX as i64;
            #[inline]
            fn to_i64(self) -> i64 {
                i64::from(self)
            }
        }
    )*};
}

index_element!(i8, u8, i16, i32, i64);
