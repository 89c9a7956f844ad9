//! The fuzz targets' bodies: each takes arbitrary bytes into one parser
//! family the way a hostile input reaches it. `fuzz/` (cargo fuzz, nightly)
//! and the bounded run CI does on stable (`tests/bounded.rs`) call these same
//! functions; `seeds` gathers their starting inputs (the fuzzers' finds,
//! the test fixtures, decompression bombs and hostile files) and `mutate`
//! derives new inputs from them deterministically.

pub mod grow;
pub mod mutate;
pub mod seeds;

use devassert_core::{Catalog, DeviceAssert, LogHits};
use devassert_log::normalize::{normalize_assertion, normalize_kernel, normalize_path};
use devassert_log::LogAnalyzer;
use devassert_model::{check, ModelDir, MODEL_FILES};
use devassert_scan::error::INTERNAL;
use devassert_scan::format::FORMATS;
use devassert_scan::{scan_paths, Bounds, ScanOptions};
use std::path::PathBuf;

/// A fuzz target: its name (as in `fuzz/fuzz_targets/NAME.rs`) and body.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// It parses text: its inputs are mutated with [`mutate::mutate_text`].
    pub text: bool,
}

/// Every target, one per parser family.
pub const TARGETS: &[Target] = &[
    Target {
        name: "catalog_match",
        run: catalog_match,
        text: true,
    },
    Target {
        name: "log_reader",
        run: log_reader,
        text: true,
    },
    Target {
        name: "scan_formats",
        run: scan_formats,
        text: false,
    },
    Target {
        name: "model_dir",
        run: model_dir,
        text: false,
    },
];

/// The normalisers and the matcher take text straight from user logs: the
/// input is split at `\x01` into file, kernel and assertion.
pub fn catalog_match(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{1}');
    let mut next = || parts.next().unwrap_or("");
    let (file, kernel, assertion) = (next(), next(), next());
    let catalog = Catalog::builtin();
    let (f, k, a) = (
        normalize_path(file),
        normalize_kernel(kernel),
        normalize_assertion(assertion),
    );
    let rule = catalog.match_assert(&DeviceAssert {
        file: &f,
        kernel: Some(&k),
        assertion: &a,
    });
    let mut hits = LogHits::default();
    catalog.observe_log_line(&text, &mut hits);
    let _ = catalog.match_cpu_message(&text);
    let _ = catalog.rank(rule, &[&text], Some(&a), &hits);
}

/// Arbitrary bytes, fed in two chunks split where the first byte says,
/// through the whole reader and diagnosis.
pub fn log_reader(data: &[u8]) {
    let split = data.first().map_or(0, |b| *b as usize % data.len().max(1));
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("fuzz.log");
    a.feed(&data[..split]);
    a.feed(&data[split..]);
    let _ = a.finish();
}

/// The decode budget under fuzzing: small, so that a small seed can be a
/// bomb (refused) and a run stays far inside libFuzzer's memory limit.
pub const FUZZ_DECODE_BUDGET: u64 = 16 << 20;

/// A thread's scratch directory, removed when the thread ends, so that test
/// runs leave nothing in the temp dir.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

thread_local! {
    static SCRATCH: Scratch = {
        let thread = format!("{:?}", std::thread::current().id());
        let id: String = thread.chars().filter(char::is_ascii_digit).collect();
        Scratch(std::env::temp_dir().join(format!("devassert-fuzz-{}-{id}", std::process::id())))
    };
}

/// A scratch directory of this process and thread (targets may run on
/// several test threads at once).
fn scratch(what: &str) -> PathBuf {
    SCRATCH.with(|s| s.0.join(what))
}

/// Arbitrary file contents through every scan reader: the first byte picks
/// the format (and the file's extension), the rest is the file.
pub fn scan_formats(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let format = FORMATS[sel as usize % FORMATS.len()].format;
    let dir = scratch("scan");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("input.{}", format.extension()));
    if std::fs::write(&path, body).is_err() {
        return;
    }
    let opts = ScanOptions {
        bounds: Bounds { low: 0, high: 1000 },
        input_format: Some(format),
        limit: 5,
        threads: Some(1),
        decode_budget: FUZZ_DECODE_BUDGET,
        ..Default::default()
    };
    let report = scan_paths(&[path], &opts);
    // The scan turns a panic of its own into an error naming the file (the
    // CLI must not crash); here it is a find, as it was before.
    let errors = report.scan.iter().flat_map(|s| &s.errors);
    if let Some(e) = errors.into_iter().find(|e| e.error.starts_with(INTERNAL)) {
        panic!("{}", e.error);
    }
}

/// Arbitrary contents for one file of a model directory (the first byte
/// picks which) next to a valid config, through reading and checking.
pub fn model_dir(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let dir = scratch("model");
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let config = br#"{"model_type": "bert", "vocab_size": 100, "max_position_embeddings": 64, "type_vocab_size": 2, "pad_token_id": 0}"#;
    let _ = std::fs::write(dir.join("config.json"), config);
    let _ = std::fs::write(
        dir.join(MODEL_FILES[sel as usize % MODEL_FILES.len()]),
        body,
    );
    if let Ok(model) = ModelDir::read(&dir) {
        let _ = check(&model);
    }
}
