//! The op declarations, one module per TensorFlow op family
//! (`array_ops.cc`, `math_ops.cc`, `nn_ops.cc`, ...).

pub mod array;
pub mod control;
pub mod lists;
pub mod logic;
pub mod math;
pub mod nn;
pub mod reduce;
