//! Arbitrary bytes, fed in two chunks split at an arbitrary point, through the
//! whole reader and diagnosis.
#![no_main]
use devassert_core::Catalog;
use devassert_log::LogAnalyzer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(0, |b| *b as usize % (data.len().max(1)));
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("fuzz.log");
    a.feed(&data[..split]);
    a.feed(&data[split..]);
    let _ = a.finish();
});
