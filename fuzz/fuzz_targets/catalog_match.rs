//! The normalisers and the matcher take text straight from user logs.
#![no_main]
use devassert_log::normalize::{normalize_assertion, normalize_kernel, normalize_path};
use devassert_core::{Catalog, DeviceAssert, LogHits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{1}');
    let (file, kernel, assertion) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let catalog = Catalog::builtin();
    let (f, k, a) = (normalize_path(file), normalize_kernel(kernel), normalize_assertion(assertion));
    let rule = catalog.match_assert(&DeviceAssert { file: &f, kernel: Some(&k), assertion: &a });
    let mut hits = LogHits::default();
    catalog.observe_log_line(&text, &mut hits);
    let _ = catalog.match_cpu_message(&text);
    let _ = catalog.rank(rule, &[&text], Some(&a), &hits);
});
