//! The library side of the `opreg` command: the io.json tensor format that
//! `opreg run` reads and writes (also used by the end-to-end tests).

pub mod io_json;
