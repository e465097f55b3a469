//! `cargo fuzz run decode_binary`: see opreg_tests::fuzz::decode_binary.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opreg_tests::fuzz::decode_binary(data));
