//! `Select`'s condition rules (TF's `SelectOp`, v1) and `SelectV2`'s
//! broadcasting error, with TF's messages, shared by the CPU and GPU
//! kernels.
//!
//! ```
//! use opreg_op_logic::select::{SelectV1, v1_mode};
//! use registry_core::tensor::TensorShape;
//!
//! let s = |d: &[usize]| TensorShape::new(d).unwrap();
//! let mode = v1_mode(&s(&[2]), &s(&[2, 3]), &s(&[2, 3]), "sel", "Select").unwrap();
//! assert_eq!(mode, SelectV1::Rows);
//! ```

use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::TensorShape;

use super::broadcast::BroadcastError;

/// How `Select` applies its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectV1 {
    /// A scalar condition picks `t` or `e` whole.
    Scalar,
    /// A vector condition picks rows (first dimension) of `t` or `e`.
    Rows,
    /// A condition of the shape of `t` and `e` picks elements.
    Elements,
}

fn same_size_error(t: &TensorShape, e: &TensorShape) -> KernelError {
    KernelError::invalid_argument(format!(
        "'then' and 'else' must have the same size.  but received: {t} vs. {e}"
    ))
}

/// Checks `Select`'s condition of shape `cond` against `t` and `e` (TF's
/// rules and messages; `node` and `op` name the node in them). The output
/// has `t`'s shape.
pub fn v1_mode(
    cond: &TensorShape,
    t: &TensorShape,
    e: &TensorShape,
    node: &str,
    op: &str,
) -> Result<SelectV1, KernelError> {
    if cond.rank() == 0 {
        if t != e {
            return Err(same_size_error(t, e));
        }
        return Ok(SelectV1::Scalar);
    }
    if cond.rank() == 1 && t.rank() != 1 {
        registry_core::kernel_ensure!(
            t.rank() >= 1,
            "'then' must be at least a vector, but saw shape: {t}"
        );
        registry_core::kernel_ensure!(
            t.dims()[0] == cond.dims()[0],
            "Number of batches of 'then' must match size of 'cond', but saw: {} vs. {}",
            t.dims()[0],
            cond.dims()[0]
        );
        if t != e {
            return Err(same_size_error(t, e));
        }
        return Ok(SelectV1::Rows);
    }
    for (i, other) in [(1, t), (2, e)] {
        registry_core::kernel_ensure!(
            cond == other,
            "Inputs to operation {node} of type {op} must have the same size and shape.  \
             Input 0: {cond} != input {i}: {other}"
        );
    }
    Ok(SelectV1::Elements)
}

/// [`v1_mode`] of a `Select` call's inputs (`condition`, `t`, `e`), named
/// by its node in the messages.
pub fn v1_mode_of(ctx: &OpKernelContext<'_>) -> Result<SelectV1, KernelError> {
    let (cond, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    v1_mode(
        cond.shape(),
        t.shape(),
        e.shape(),
        ctx.node_name(),
        ctx.info().op(),
    )
}

/// `SelectV2`'s error (TF's message) for a condition, `t` and `e` of shapes
/// `cond`, `t` and `e` that do not broadcast together.
pub fn broadcast_error(
    err: BroadcastError,
    cond: &TensorShape,
    t: &TensorShape,
    e: &TensorShape,
) -> KernelError {
    match err {
        BroadcastError::Incompatible => KernelError::invalid_argument(format!(
            "condition {cond}, then {t}, and else {e} must be broadcastable"
        )),
        BroadcastError::TooLarge(too_large) => too_large.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::broadcast::Broadcast;
    use super::*;

    fn s(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn v1(c: &[usize], t: &[usize], e: &[usize]) -> Result<SelectV1, String> {
        v1_mode(&s(c), &s(t), &s(e), "n", "Select").map_err(|e| e.to_string())
    }

    #[test]
    fn v1_modes() {
        assert_eq!(v1(&[], &[2, 3], &[2, 3]), Ok(SelectV1::Scalar));
        assert_eq!(v1(&[2], &[2, 3, 4], &[2, 3, 4]), Ok(SelectV1::Rows));
        assert_eq!(v1(&[3], &[3], &[3]), Ok(SelectV1::Elements));
        assert_eq!(v1(&[2, 3], &[2, 3], &[2, 3]), Ok(SelectV1::Elements));
    }

    #[test]
    fn v1_errors_have_tf_messages() {
        assert_eq!(
            v1(&[], &[2], &[3]).unwrap_err(),
            "'then' and 'else' must have the same size.  but received: [2] vs. [3]"
        );
        assert_eq!(
            v1(&[2], &[], &[]).unwrap_err(),
            "'then' must be at least a vector, but saw shape: []"
        );
        assert_eq!(
            v1(&[2], &[3, 4], &[3, 4]).unwrap_err(),
            "Number of batches of 'then' must match size of 'cond', but saw: 3 vs. 2"
        );
        assert_eq!(
            v1(&[2], &[2, 4], &[2, 5]).unwrap_err(),
            "'then' and 'else' must have the same size.  but received: [2,4] vs. [2,5]"
        );
        assert_eq!(
            v1(&[2, 3], &[2, 3], &[3, 2]).unwrap_err(),
            "Inputs to operation n of type Select must have the same size and shape.  Input 0: \
             [2,3] != input 2: [3,2]"
        );
        assert_eq!(
            v1(&[2], &[3], &[3]).unwrap_err(),
            "Inputs to operation n of type Select must have the same size and shape.  Input 0: \
             [2] != input 1: [3]"
        );
    }

    #[test]
    fn v1_mode_of_a_call_names_its_node() {
        use registry_core::kernel::{KernelCall, NodeInfo};
        use registry_core::proto::DataType::{DtBool, DtFloat};
        use registry_core::tensor::Tensor;

        let info = NodeInfo::new(
            "pick",
            "Select",
            "CPU",
            vec![DtBool, DtFloat, DtFloat],
            vec![DtFloat],
        );
        let inputs = [
            Tensor::from_vec([2], vec![true, false]).unwrap(),
            Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap(),
            Tensor::from_vec([1, 2], vec![3.0f32, 4.0]).unwrap(),
        ];
        let mut call = KernelCall::new(&info, inputs);
        assert_eq!(
            v1_mode_of(&call.context(&info)).unwrap_err().to_string(),
            "Inputs to operation pick of type Select must have the same size and shape.  Input \
             0: [2] != input 2: [1,2]"
        );
    }

    #[test]
    fn v2_broadcast_error() {
        let (c, t, e) = (s(&[2]), s(&[3]), s(&[1]));
        let err = Broadcast::<3>::new([c.dims(), t.dims(), e.dims()]).unwrap_err();
        assert_eq!(
            broadcast_error(err, &c, &t, &e).to_string(),
            "condition [2], then [3], and else [1] must be broadcastable"
        );
    }
}
