//! Arbitrary contents for one file of a model directory (the first byte picks
//! which) next to a valid config, through reading and checking.
//! The body is devassert_fuzzing::model_dir, shared with the bounded stable run
//! in CI (crates/devassert-fuzzing/tests/bounded.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| devassert_fuzzing::model_dir(data));
