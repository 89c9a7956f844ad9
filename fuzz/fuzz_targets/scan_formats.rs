//! Arbitrary file contents through every scan reader: the first byte picks the
//! format (and the file's extension), the rest is the file.
#![no_main]
use devassert_scan::formats::FORMATS;
use devassert_scan::{scan_paths, Bounds, ScanOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else { return };
    let format = FORMATS[sel as usize % FORMATS.len()].format;
    let dir = std::env::temp_dir().join(format!("devassert-fuzz-scan-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("input.{}", format.extension()));
    if std::fs::write(&path, body).is_err() {
        return;
    }
    let opts = ScanOptions { bounds: Bounds { low: 0, high: 1000 }, input_format: Some(format), limit: 5, threads: Some(1), ..Default::default() };
    let _ = scan_paths(&[path], &opts);
});
