//! `cargo fuzz run graph_validation`: see opreg_tests::fuzz::graph_validation.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opreg_tests::fuzz::graph_validation(data));
