//! Arbitrary bytes, fed in two chunks split at an arbitrary point, through the
//! whole reader and diagnosis.
//! The body is devassert_fuzzing::log_reader, shared with the bounded stable run
//! in CI (crates/devassert-fuzzing/tests/bounded.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| devassert_fuzzing::log_reader(data));
