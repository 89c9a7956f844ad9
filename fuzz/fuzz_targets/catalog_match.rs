//! The normalisers and the matcher take text straight from user logs.
//! The body is devassert_fuzzing::catalog_match, shared with the bounded stable run
//! in CI (crates/devassert-fuzzing/tests/bounded.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| devassert_fuzzing::catalog_match(data));
