//! Arbitrary file contents through every scan reader: the first byte picks the
//! format (and the file's extension), the rest is the file.
//! The body is devassert_fuzzing::scan_formats, shared with the bounded stable run
//! in CI (crates/devassert-fuzzing/tests/bounded.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| devassert_fuzzing::scan_formats(data));
