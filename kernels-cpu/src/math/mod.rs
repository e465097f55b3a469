//! Element-wise math, casts, comparisons, logic, Select, AddN and MatMul.

mod unary;
