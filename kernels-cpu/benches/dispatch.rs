//! Benchmark (being written).
fn main() {}
