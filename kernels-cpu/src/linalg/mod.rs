//! MatMul.
