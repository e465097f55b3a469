//! `AddN`'s input checks (TF's `AddNOp`, with its message) and its summation
//! order, shared by the CPU and GPU kernels: as TF's, the first input that
//! can be forwarded becomes the accumulator and is summed first, input 0
//! taking its place.
//!
//! ```
//! use opreg_op_logic::add_n::{check_inputs, summation_order};
//! use registry_core::kernel::{KernelCall, NodeInfo};
//! use registry_core::proto::DataType::DtFloat;
//! use registry_core::tensor::Tensor;
//!
//! let info = NodeInfo::new("sum", "AddN", "CPU", vec![DtFloat; 3], vec![DtFloat]);
//! let x = Tensor::from_vec([8], vec![1.0f32; 8]).unwrap();
//! let shared = x.clone(); // input 0 is shared: not forwardable
//! let inputs = [x, Tensor::from_vec([8], vec![2.0f32; 8]).unwrap(), shared.clone()];
//! let mut call = KernelCall::new(&info, inputs);
//! let mut ctx = call.context(&info);
//! let shape = check_inputs(&ctx, |_, _| Ok(())).unwrap();
//! let order = summation_order(&mut ctx, &shape).unwrap();
//! assert!(order.forwarded);
//! assert_eq!(order.summands, vec![0, 2]); // input 1 is the output
//! ```

use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{Tensor, TensorShape};

/// Checks every input of `ctx`, in order: first with `check` (the kernel's
/// own dtype or placement check, given the input's index), then that it has
/// input 0's shape (TF's message). Returns that shape.
pub fn check_inputs(
    ctx: &OpKernelContext<'_>,
    mut check: impl FnMut(usize, &Tensor) -> Result<(), KernelError>,
) -> Result<TensorShape, KernelError> {
    let shape = ctx.input(0)?.shape().clone();
    for i in 0..ctx.num_inputs() {
        let x = ctx.input(i)?;
        check(i, x)?;
        if x.shape() != &shape {
            return Err(KernelError::invalid_argument(format!(
                "Inputs to operation {} of type {} must have the same size and shape.  \
                 Input 0: {} != input {}: {}",
                ctx.node_name(),
                ctx.info().op(),
                shape,
                i,
                x.shape()
            )));
        }
    }
    Ok(shape)
}

/// The order of an `AddN`'s summation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummationOrder {
    /// An input was forwarded to output 0, which so holds the first summand.
    pub forwarded: bool,
    /// The inputs still to add, in order (the forwarded one left out).
    pub summands: Vec<usize>,
}

/// Forwards the first input that can be forwarded to output 0 with
/// `shape` (TF's order: that input first, input 0 in its place) and returns
/// the inputs left to add. For two or more inputs.
pub fn summation_order(
    ctx: &mut OpKernelContext<'_>,
    shape: &TensorShape,
) -> Result<SummationOrder, KernelError> {
    let n = ctx.num_inputs();
    let mut order: Vec<usize> = (0..n).collect();
    let mut forwarded = false;
    for i in 0..n {
        if ctx.forward_input_with_shape(i, 0, shape)? {
            order.swap(0, i);
            forwarded = true;
            break;
        }
    }
    order.drain(..usize::from(forwarded));
    Ok(SummationOrder {
        forwarded,
        summands: order,
    })
}

#[cfg(test)]
mod tests {
    use registry_core::kernel::{KernelCall, NodeInfo};
    use registry_core::proto::DataType::DtFloat;

    use super::*;

    /// A tensor over 16 bytes (so that it is shared by reference).
    fn big(shape: &[usize]) -> Tensor {
        let n = shape.iter().product();
        Tensor::from_vec(shape, vec![1.0f32; n]).unwrap()
    }

    fn info(n: usize) -> NodeInfo {
        NodeInfo::new("s", "AddN", "CPU", vec![DtFloat; n], vec![DtFloat])
    }

    #[test]
    fn inputs_must_have_one_shape() {
        let info = info(3);
        let mut call = KernelCall::new(&info, [big(&[2, 4]), big(&[2, 4]), big(&[4, 2])]);
        let ctx = call.context(&info);
        let mut seen = Vec::new();
        let e = check_inputs(&ctx, |i, _| {
            seen.push(i);
            Ok(())
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Inputs to operation s of type AddN must have the same size and shape.  Input 0: \
             [2,4] != input 2: [4,2]"
        );
        assert_eq!(seen, vec![0, 1, 2]);
        // The kernel's own check runs first, input by input.
        let e = check_inputs(&ctx, |i, _| {
            if i == 1 {
                Err(KernelError::internal("bad input 1"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "bad input 1");
    }

    #[test]
    fn the_first_forwardable_input_is_the_accumulator() {
        let info = info(3);
        let (a, b, c) = (big(&[8]), big(&[8]), big(&[8]));
        let (_keep_a, _keep_b) = (a.clone(), b.clone());
        let mut call = KernelCall::new(&info, [a, b, c]);
        let mut ctx = call.context(&info);
        let shape = check_inputs(&ctx, |_, _| Ok(())).unwrap();
        let order = summation_order(&mut ctx, &shape).unwrap();
        assert_eq!(
            order,
            SummationOrder {
                forwarded: true,
                summands: vec![1, 0]
            }
        );
        assert!(ctx.output_mut(0).is_ok());
    }

    #[test]
    fn nothing_forwardable_keeps_the_inputs_order() {
        let info = info(2);
        let (a, b) = (big(&[8]), big(&[8]));
        let _keep = (a.clone(), b.clone());
        let mut call = KernelCall::new(&info, [a, b]);
        let mut ctx = call.context(&info);
        let order = summation_order(&mut ctx, &TensorShape::new([8]).unwrap()).unwrap();
        assert_eq!(
            order,
            SummationOrder {
                forwarded: false,
                summands: vec![0, 1]
            }
        );
    }
}
