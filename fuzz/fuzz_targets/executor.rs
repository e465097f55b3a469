//! `cargo fuzz run executor`: see opreg_tests::fuzz::executor.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opreg_tests::fuzz::executor(data));
