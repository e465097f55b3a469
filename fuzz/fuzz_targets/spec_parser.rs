//! `cargo fuzz run spec_parser`: see opreg_tests::fuzz::spec_parser.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opreg_tests::fuzz::spec_parser(data));
