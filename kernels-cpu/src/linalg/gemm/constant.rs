//! [`ConstantRhs`]: a kernel's constant right-hand operand (MatMul's `b`, a
//! convolution's filter), packed once when the session offers it (see
//! `OpKernel::prepare_constant_input`) instead of in every product.

use std::sync::OnceLock;

use registry_core::kernel::KernelError;
use registry_core::tensor::Tensor;

use super::{GemmElement, MatRef, PackedRhs};

/// The packed form of the constant a kernel was offered for one input,
/// with that tensor, so that a run given another value (a feed that
/// replaces the constant) is told apart and multiplies what it is given.
///
/// The first offer is kept; later ones (a second plan of the same session
/// offers the same tensor) are ignored.
#[derive(Debug, Default)]
pub(crate) struct ConstantRhs {
    packed: OnceLock<Option<(Tensor, PackedRhs)>>,
}

impl ConstantRhs {
    /// Packs `value` as the matrix `view` makes of its elements, when `T`
    /// has a packed form here; nothing when it has none, the view fails
    /// (a shape the kernel will reject when it runs) or memory is short.
    pub(crate) fn offer<T: GemmElement>(
        &self,
        value: &Tensor,
        view: impl for<'v> FnOnce(&Tensor, &'v [T]) -> Result<MatRef<'v, T>, KernelError>,
    ) {
        self.packed.get_or_init(|| {
            let elements = value.as_slice::<T>().ok()?;
            let packed = T::pack_rhs(view(value, elements).ok()?)?;
            Some((value.clone(), packed))
        });
    }

    /// The packed form of `input`, when `input` is the tensor that was
    /// offered (the same buffer, which the kept clone keeps from being
    /// reused, and the same dims).
    pub(crate) fn packed_for(&self, input: &Tensor) -> Option<&PackedRhs> {
        let (source, packed) = self.packed.get()?.as_ref()?;
        (source.shares_buffer_with(input) && source.dims() == input.dims()).then_some(packed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix<'v>(t: &Tensor, elements: &'v [f32]) -> Result<MatRef<'v, f32>, KernelError> {
        let _ = t;
        MatRef::row_major(elements, 32, 24)
    }

    #[test]
    fn only_the_offered_tensor_gets_its_packed_form() {
        let weights = Tensor::from_vec([32, 24], vec![0.5f32; 32 * 24]).unwrap();
        let constant = ConstantRhs::default();
        assert!(
            constant.packed_for(&weights).is_none(),
            "nothing offered yet"
        );
        constant.offer::<f32>(&weights, matrix);
        let expected = f32::pack_rhs(MatRef::row_major(&[0.0; 32 * 24], 32, 24).unwrap());
        match constant.packed_for(&weights) {
            Some(packed) => assert_eq!(packed.0.dims(), (32, 24)),
            // Machines without the packed product pack nothing.
            None => assert!(expected.is_none()),
        }
        // A clone shares the buffer; an equal tensor with its own buffer
        // (a fed value) and a reshape of the same buffer do not qualify.
        assert_eq!(
            constant.packed_for(&weights.clone()).is_some(),
            expected.is_some()
        );
        let equal = Tensor::from_vec([32, 24], vec![0.5f32; 32 * 24]).unwrap();
        assert!(constant.packed_for(&equal).is_none());
        assert!(
            constant
                .packed_for(&weights.reshape([24, 32]).unwrap())
                .is_none()
        );
        // A second offer does not replace the first.
        constant.offer::<f32>(&equal, matrix);
        assert!(constant.packed_for(&equal).is_none());
    }

    #[test]
    fn types_without_a_packed_form_and_bad_views_pack_nothing() {
        let weights = Tensor::from_vec([4, 4], vec![1.0f64; 16]).unwrap();
        let constant = ConstantRhs::default();
        constant.offer::<f64>(&weights, |_, e| MatRef::row_major(e, 4, 4));
        assert!(constant.packed_for(&weights).is_none());
        let floats = Tensor::from_vec([4, 4], vec![1.0f32; 16]).unwrap();
        let constant = ConstantRhs::default();
        constant.offer::<f32>(&floats, |_, e| MatRef::row_major(e, 5, 5));
        assert!(constant.packed_for(&floats).is_none());
    }
}
