//! The `opreg` command's tests, one binary: `cli` runs each command, and
//! `coverage` checks `opreg coverage` on the standard ops.

// Shared by the modules below.
mod common;

#[path = "cli.rs"]
mod cli;

#[path = "coverage.rs"]
mod coverage;
