//! The fuzz targets on stable, for a bounded time, as CI runs them (cargo
//! fuzz needs nightly): every seed of every parser family replayed, then
//! inputs mutated from them by a seeded mutator until the family's share of
//! the time is spent. Each input must return (a panic that escapes
//! `devassert_core::contain` fails), within `DEVASSERT_FUZZ_INPUT_SECONDS`,
//! and the process's peak memory must stay under `MAX_RSS`. A failing input
//! is saved under the target's tmp dir and named in the failure.
//!
//! `DEVASSERT_FUZZ_SECONDS` (default 60) is the time for all families;
//! `DEVASSERT_FUZZ_SEED` (default 1) picks the mutations.

use devassert_fuzzing::mutate::{mutate, Rng};
use devassert_fuzzing::seeds::{seeds, Seed};
use devassert_fuzzing::TARGETS;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Peak resident memory the whole run may reach: far above what any seed
/// needs under the 16 MiB fuzz decode budget, far below what the bombs of
/// issue 27 took (1.8 to 7 GB).
const MAX_RSS: u64 = 1 << 30;

/// Each family's share of the time (scan has the most formats).
const SHARES: &[(&str, f64)] = &[
    ("catalog_match", 0.15),
    ("log_reader", 0.3),
    ("scan_formats", 0.35),
    ("model_dir", 0.2),
];

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
    tx: Sender<(usize, Vec<u8>)>,
    rx: Receiver<Result<(), String>>,
}

impl Worker {
    fn start() -> Self {
        let (tx, inputs) = channel::<(usize, Vec<u8>)>();
        let (done, rx) = channel();
        std::thread::spawn(move || {
            for (t, data) in inputs {
                let r = std::panic::catch_unwind(|| (TARGETS[t].run)(&data)).map_err(|p| {
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
        Worker { tx, rx }
    }
}

/// Save a failing input and fail with its name.
fn failed(target: &str, what: &str, data: &[u8], why: &str) -> ! {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = dir.join(format!("{target}-{hash:016x}"));
    let _ = std::fs::write(&path, data);
    panic!(
        "{target}: {why} on {what} ({} bytes, saved as {}; replay it with `cargo fuzz run {target} {}` or add it to fuzz/regressions)",
        data.len(),
        path.display(),
        path.display()
    );
}

fn run(w: &Worker, t: usize, what: &str, data: &[u8], limit: Duration) {
    let name = TARGETS[t].name;
    w.tx.send((t, data.to_vec())).expect("worker alive");
    match w.rx.recv_timeout(limit) {
        Ok(Ok(())) => {}
        Ok(Err(msg)) => failed(name, what, data, &format!("a panic escaped ({msg})")),
        Err(RecvTimeoutError::Timeout) => {
            failed(name, what, data, &format!("no answer within {limit:?}"))
        }
        Err(RecvTimeoutError::Disconnected) => failed(name, what, data, "the worker died"),
    }
    let peak = peak_rss();
    if peak > MAX_RSS {
        failed(
            name,
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

#[test]
fn every_parser_family_survives_its_seeds_and_their_mutations() {
    let total = env_num("DEVASSERT_FUZZ_SECONDS", 60.0);
    let limit = Duration::from_secs_f64(env_num("DEVASSERT_FUZZ_INPUT_SECONDS", 20.0));
    let seed = env_num("DEVASSERT_FUZZ_SEED", 1.0) as u64;
    let worker = Worker::start();
    let started = Instant::now();
    for (t, target) in TARGETS.iter().enumerate() {
        let share = SHARES
            .iter()
            .find(|(n, _)| *n == target.name)
            .map(|(_, s)| *s)
            .unwrap_or_else(|| panic!("no time share for target {}: add one", target.name));
        let family = Instant::now();
        let deadline = family + Duration::from_secs_f64(total * share);
        let seeds: Vec<Seed> = seeds(target.name, &repo());
        assert!(!seeds.is_empty(), "{}: no seeds", target.name);
        for s in &seeds {
            run(&worker, t, &s.name, &s.data, limit);
        }
        let replayed = family.elapsed();
        let mut rng = Rng::new(seed ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut mutated = 0u64;
        while Instant::now() < deadline {
            let a = &seeds[rng.below(seeds.len())];
            let b = &seeds[rng.below(seeds.len())];
            let input = mutate(&mut rng, &a.data, &b.data);
            run(
                &worker,
                t,
                &format!("a mutation of {}", a.name),
                &input,
                limit,
            );
            mutated += 1;
        }
        eprintln!(
            "{}: {} seeds replayed in {:.1}s, {mutated} mutations in {:.1}s; peak memory {} MiB",
            target.name,
            seeds.len(),
            replayed.as_secs_f64(),
            (family.elapsed() - replayed).as_secs_f64(),
            peak_rss() >> 20
        );
    }
    eprintln!("all families: {:.1}s", started.elapsed().as_secs_f64());
}
