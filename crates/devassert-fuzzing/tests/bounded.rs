//! The fuzz targets on stable, for a bounded time, as CI runs them (cargo
//! fuzz needs nightly): one test per parser family, each with its own slice
//! of the time (the families run one after another, so a slow one cannot
//! eat another's slice): every seed replayed, then inputs mutated from them
//! by a seeded mutator (text families with [`mutate_text`]) until the slice
//! is spent. Each input must return (a panic that escapes
//! `devassert_core::contain` fails), within `DEVASSERT_FUZZ_INPUT_SECONDS`,
//! and the process's peak memory must stay under `MAX_RSS`. A failing input
//! is saved under the target's tmp dir and named in the failure.
//!
//! - `DEVASSERT_FUZZ_SECONDS` (default 60): the time for all families,
//!   shared as [`SLICES`] says;
//! - `DEVASSERT_FUZZ_FAMILY_SECONDS`: instead, this many seconds for each;
//! - `DEVASSERT_FUZZ_SEED` (default 1) picks the mutations;
//! - `DEVASSERT_FUZZ_KEEP_GOING=1`: a failure is saved and counted, and the
//!   run goes on (the bench, `bench/fuzz/run.sh`); the test fails at the
//!   end if there was any.

use devassert_fuzzing::mutate::{mutate, mutate_text, Rng};
use devassert_fuzzing::seeds::{seeds, Seed};
use devassert_fuzzing::TARGETS;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Peak resident memory the whole run may reach: far above what any seed
/// needs under the 16 MiB fuzz decode budget, far below what the bombs of
/// issue 27 took (1.8 to 7 GB).
const MAX_RSS: u64 = 1 << 30;

/// Each family's slice of `DEVASSERT_FUZZ_SECONDS` (scan has the most
/// formats; the log reader the most text).
const SLICES: &[(&str, f64)] = &[
    ("catalog_match", 0.15),
    ("log_reader", 0.3),
    ("scan_formats", 0.35),
    ("model_dir", 0.2),
];

/// One family at a time: the slices are wall-clock time on a shared machine.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn env_num(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The peak resident memory of this process so far, in bytes.
fn peak_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
    usage.ru_maxrss as u64 * unit
}

/// Runs inputs on its own thread, so that one that never returns fails the
/// test instead of hanging it.
struct Worker {
    tx: Option<Sender<Vec<u8>>>,
    rx: Receiver<Result<(), String>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    fn start(run: fn(&[u8])) -> Self {
        let (tx, inputs) = channel::<Vec<u8>>();
        let (done, rx) = channel();
        let thread = std::thread::spawn(move || {
            for data in inputs {
                let r = std::panic::catch_unwind(|| run(&data)).map_err(|p| {
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a panic".into())
                });
                if done.send(r).is_err() {
                    return;
                }
            }
        });
        Worker {
            tx: Some(tx),
            rx,
            thread: Some(thread),
        }
    }

    fn send(&self, data: Vec<u8>) {
        if let Some(tx) = &self.tx {
            tx.send(data).expect("worker alive");
        }
    }
}

impl Drop for Worker {
    /// Lets the thread end and waits a little for it: its scratch directory
    /// goes when the thread ends, which a process exiting first would skip.
    /// A thread stuck on a hanging input is left behind.
    fn drop(&mut self) {
        drop(self.tx.take());
        let Some(thread) = self.thread.take() else {
            return;
        };
        let start = Instant::now();
        while !thread.is_finished() && start.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
        }
        if thread.is_finished() {
            let _ = thread.join();
        }
    }
}

/// One family's run: its worker, its limits, what it found.
struct Family {
    t: usize,
    worker: Worker,
    limit: Duration,
    keep_going: bool,
    executions: u64,
    /// Each failure's kind and message (with the saved input's path).
    failures: Vec<(String, String)>,
}

impl Family {
    fn name(&self) -> &'static str {
        TARGETS[self.t].name
    }

    /// Save a failing input; fail with its name, or count it and go on.
    fn failed(&mut self, what: &str, data: &[u8], why: &str) {
        let target = self.name();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
        let _ = std::fs::create_dir_all(&dir);
        let hash = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        });
        let path = dir.join(format!("{target}-{hash:016x}"));
        let _ = std::fs::write(&path, data);
        let msg = format!(
            "{target}: {why} on {what} ({} bytes, saved as {}; replay it with `cargo fuzz run {target} {}` or add it to fuzz/regressions)",
            data.len(),
            path.display(),
            path.display()
        );
        if !self.keep_going {
            panic!("{msg}");
        }
        eprintln!("{msg}");
        self.failures.push((why.to_string(), msg));
    }

    fn run(&mut self, what: &str, data: &[u8]) {
        self.executions += 1;
        self.worker.send(data.to_vec());
        match self.worker.rx.recv_timeout(self.limit) {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => self.failed(what, data, &format!("a panic escaped ({msg})")),
            Err(RecvTimeoutError::Timeout) => {
                let why = format!("no answer within {:?}", self.limit);
                self.failed(what, data, &why);
                // The old worker is still busy with it: a new one goes on.
                self.worker = Worker::start(TARGETS[self.t].run);
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.failed(what, data, "the worker died");
                self.worker = Worker::start(TARGETS[self.t].run);
            }
        }
        let peak = peak_rss();
        if peak > MAX_RSS {
            // Memory is the process's: nothing after this would be measured.
            self.keep_going = false;
            self.failed(
                what,
                data,
                &format!(
                    "peak memory reached {} MiB (limit {} MiB)",
                    peak >> 20,
                    MAX_RSS >> 20
                ),
            );
        }
    }
}

/// Replay the family's seeds, then mutate them until its slice is spent.
fn fuzz(name: &str) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = TARGETS
        .iter()
        .position(|t| t.name == name)
        .unwrap_or_else(|| panic!("no target {name}"));
    let slice = SLICES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no time slice for target {name}: add one"));
    let seconds = match std::env::var("DEVASSERT_FUZZ_FAMILY_SECONDS") {
        Ok(_) => env_num("DEVASSERT_FUZZ_FAMILY_SECONDS", 0.0),
        Err(_) => env_num("DEVASSERT_FUZZ_SECONDS", 60.0) * slice,
    };
    let mut family = Family {
        t,
        worker: Worker::start(TARGETS[t].run),
        limit: Duration::from_secs_f64(env_num("DEVASSERT_FUZZ_INPUT_SECONDS", 20.0)),
        keep_going: std::env::var("DEVASSERT_FUZZ_KEEP_GOING").is_ok_and(|v| v == "1"),
        executions: 0,
        failures: Vec::new(),
    };
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let seeds: Vec<Seed> = seeds(name, &repo());
    assert!(!seeds.is_empty(), "{name}: no seeds");
    for s in &seeds {
        family.run(&s.name, &s.data);
    }
    let replayed = started.elapsed();
    let seed = env_num("DEVASSERT_FUZZ_SEED", 1.0) as u64;
    let mut rng = Rng::new(seed ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mutator = if TARGETS[t].text { mutate_text } else { mutate };
    while Instant::now() < deadline {
        let a = &seeds[rng.below(seeds.len())];
        let b = &seeds[rng.below(seeds.len())];
        let input = mutator(&mut rng, &a.data, &b.data);
        family.run(&format!("a mutation of {}", a.name), &input);
    }
    let mut kinds: Vec<&str> = family.failures.iter().map(|(k, _)| k.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    eprintln!(
        "{name}: {} executions ({} seeds replayed in {:.1}s, {} mutations in {:.1}s), {} failures ({} distinct); peak memory {} MiB",
        family.executions,
        seeds.len(),
        replayed.as_secs_f64(),
        family.executions - seeds.len() as u64,
        (started.elapsed() - replayed).as_secs_f64(),
        family.failures.len(),
        kinds.len(),
        peak_rss() >> 20
    );
    assert!(
        family.failures.is_empty(),
        "{name}: {} failures:\n{}",
        family.failures.len(),
        kinds.join("\n")
    );
}

#[test]
fn catalog_match() {
    fuzz("catalog_match");
}

#[test]
fn log_reader() {
    fuzz("log_reader");
}

#[test]
fn scan_formats() {
    fuzz("scan_formats");
}

#[test]
fn model_dir() {
    fuzz("model_dir");
}

/// A new target gets a slice and a test of its own (above).
#[test]
fn every_target_has_a_slice() {
    let mut targets: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    let mut slices: Vec<&str> = SLICES.iter().map(|(n, _)| *n).collect();
    targets.sort_unstable();
    slices.sort_unstable();
    assert_eq!(targets, slices);
    let total: f64 = SLICES.iter().map(|(_, s)| s).sum();
    assert!((total - 1.0).abs() < 1e-9, "the slices add up to {total}");
}
