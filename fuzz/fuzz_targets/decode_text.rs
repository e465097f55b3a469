//! `cargo fuzz run decode_text`: see opreg_tests::fuzz::decode_text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opreg_tests::fuzz::decode_text(data));
