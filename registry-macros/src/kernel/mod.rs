//! `#[kernel]`: TensorFlow's `REGISTER_KERNEL_BUILDER`, checked against the
//! op's `const` signature at compile time.

mod args;
pub(crate) mod check;
mod dtypes;
mod expand;

pub(crate) use expand::expand;
