//! The library side of the `opreg` command: the io.json tensor format that
//! `opreg run` reads and writes (also used by the end-to-end tests), and the
//! kernel coverage report of `opreg coverage` (its model, table, JSON and SVG).

pub mod coverage;
pub mod io_json;

pub use coverage::svg as coverage_svg;
