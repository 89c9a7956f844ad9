//! Size scaling: each format family grown by [`devassert_fuzzing::grow`] to
//! `DEVASSERT_SCALE_MB` (default 24: what CI affords; `bench/fuzz/scale.sh`
//! runs several hundred) and to a quarter of it, read by devassert in this
//! process. Its anonymous memory (the heap: mapped file pages are the page
//! cache's, shared and reclaimable) must stay within the 256 MiB budget,
//! and its CPU time grow linearly: the large input may take at most
//! [`SLACK`] times four times the small one's. A test binary of its own, so
//! the memory is the readers' alone.

use devassert_core::Catalog;
use devassert_fuzzing::grow::{Grown, Reader, FAMILIES, VOCAB};
use devassert_scan::{scan_paths, Bounds, ScanOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// devassert's budget: heap memory at the default settings.
const BUDGET: u64 = 256 << 20;

/// How much worse than linear the time may look on a loaded machine.
const SLACK: f64 = 2.5;

/// CPU time below which a run is too short to compare.
const NOISE: f64 = 0.5;

fn scale_bytes() -> u64 {
    let mb: u64 = std::env::var("DEVASSERT_SCALE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    mb << 20
}

/// This process's CPU seconds so far (every thread).
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// A field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// Run `f`, sampling the process's anonymous memory: (its peak, CPU seconds).
fn measured(f: impl FnOnce()) -> (u64, f64) {
    let peak = AtomicU64::new(status_bytes("RssAnon:"));
    let done = AtomicBool::new(false);
    let before = cpu_seconds();
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(status_bytes("RssAnon:"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        f();
        done.store(true, Ordering::Relaxed);
    });
    peak.fetch_max(status_bytes("RssAnon:"), Ordering::Relaxed);
    (peak.load(Ordering::Relaxed), cpu_seconds() - before)
}

/// Read the input as the CLI would, and check devassert found the plant.
fn read(g: &Grown) {
    match g.reader {
        Reader::Scan => {
            let opts = ScanOptions {
                bounds: Bounds::new(0, VOCAB),
                ..ScanOptions::default()
            };
            let r = scan_paths(std::slice::from_ref(&g.path), &opts);
            let errors = r
                .scan
                .as_ref()
                .map(|s| s.errors.clone())
                .unwrap_or_default();
            assert_eq!(r.exit_code, 1, "{}: {errors:?}", g.path.display());
        }
        Reader::Check => {
            let model = devassert_model::ModelDir::read(&g.path)
                .unwrap_or_else(|e| panic!("{}: {e}", g.path.display()));
            let _ = devassert_model::check(&model);
        }
        Reader::Explain => {
            let r = devassert_log::explain_paths(std::slice::from_ref(&g.path), Catalog::builtin())
                .unwrap_or_else(|e| panic!("{}: {e}", g.path.display()));
            assert_eq!(r.exit_code, 1, "{}", g.path.display());
        }
    }
}

#[test]
fn every_family_reads_in_budget_and_linear_time() {
    let big = scale_bytes();
    let mut failures = Vec::new();
    for (name, generate) in FAMILIES {
        let mut runs = Vec::new();
        for bytes in [big / 4, big] {
            let dir = tempfile::tempdir().expect("tempdir");
            let g = generate(dir.path(), bytes).expect("generate");
            // Once to warm the page cache and the catalog, then measured.
            read(&g);
            let (heap, cpu) = measured(|| read(&g));
            eprintln!(
                "{name}: {} MiB in: heap peak {} MiB, {cpu:.2} s CPU",
                bytes >> 20,
                heap >> 20
            );
            if heap > BUDGET {
                failures.push(format!(
                    "{name} at {} MiB: heap {} MiB",
                    bytes >> 20,
                    heap >> 20
                ));
            }
            runs.push(cpu);
        }
        let (small, large) = (runs[0], runs[1]);
        if large > NOISE && large > 4.0 * small.max(NOISE / 4.0) * SLACK {
            failures.push(format!(
                "{name}: {large:.2} s for 4x the input that took {small:.2} s"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
