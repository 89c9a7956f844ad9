//! The scan: expand the paths, read and check every file in parallel, and
//! assemble one report (`files`, `errors`, findings).

use crate::budget;
use crate::dtype::Dtype;
use crate::error::ScanError;
use crate::findings::{self, Check, PartFindings};
use crate::format::InputFormat;
use crate::formats;
use crate::formats::reader::Input;
use crate::kernel;
use crate::mapped::open;
use crate::options::{ScanOptions, Target};
use crate::values::{Data, Layout, Part};
use crate::walk;
use crate::width;
use devassert_core::{Command, DataLocation, Report, Scalar, ScanBound, ScanRun, ScanSection};
use devassert_core::{FileError, FileSummary};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Told how far a scan has got; the CLI draws a progress bar with it.
pub trait Progress: Sync {
    fn start(&self, _files: u64, _bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
}

pub struct NoProgress;
impl Progress for NoProgress {}

/// One file's share of the progress: bytes are reported as the kernel reads
/// them, never more than the file's size, and the rest when the file is done
/// (headers, decoded formats, a file that failed), so the bar ends at the
/// total whatever each reader reports.
struct FileProgress<'a> {
    progress: &'a dyn Progress,
    size: u64,
    done: AtomicU64,
}

impl<'a> FileProgress<'a> {
    fn new(progress: &'a dyn Progress, size: u64) -> Self {
        FileProgress {
            progress,
            size,
            done: AtomicU64::new(0),
        }
    }
    fn add(&self, bytes: u64) {
        let mut took = 0;
        let _ = self
            .done
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| {
                took = bytes.min(self.size.saturating_sub(d));
                Some(d + took)
            });
        if took > 0 {
            self.progress.advance(took);
        }
    }
    fn finish(&self) {
        self.add(self.size);
    }
}

/// Scan `paths` (files, directories, globs) and report what is out of range.
/// `exit_code`: 0 clean, 1 findings, 2 some file could not be read.
pub fn scan_paths(paths: &[PathBuf], opts: &ScanOptions) -> Report {
    scan_paths_with(paths, opts, &NoProgress)
}

pub fn scan_paths_with(paths: &[PathBuf], opts: &ScanOptions, progress: &dyn Progress) -> Report {
    match opts.threads.and_then(pool) {
        Some(pool) => pool.install(|| scan_inner(paths, opts, progress)),
        None => scan_inner(paths, opts, progress),
    }
}

/// One pool per thread count for the life of the process. A pool per call
/// leaked memory across calls (each one's worker threads and their
/// thread-locals; the fuzzer ran out of memory after ~1,200 scans), and
/// building one costs more than a small scan.
fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let threads = threads.max(1);
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(Arc::clone(p));
    }
    let built = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .ok()?,
    );
    pools.push((threads, Arc::clone(&built)));
    Some(built)
}

struct FileOutcome {
    summaries: Vec<FileSummary>,
    parts: Vec<PartFindings>,
}

fn scan_inner(paths: &[PathBuf], opts: &ScanOptions, progress: &dyn Progress) -> Report {
    let started = Instant::now();
    let (files, mut errors) = walk::expand(paths, opts.shard);
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .collect();
    progress.start(files.len() as u64, sizes.iter().sum());
    // Files read at once share the decode budget; one that needs more than
    // its share is read again below, alone, with all of it (crate::budget).
    let shared = ScanOptions {
        decode_budget: budget::share(opts.decode_budget, rayon::current_num_threads()),
        ..opts.clone()
    };
    let mut outcomes: Vec<Result<FileOutcome, ScanError>> = files
        .par_iter()
        .zip(sizes.par_iter())
        .map(|(f, &size)| {
            let fp = FileProgress::new(progress, size);
            let r = scan_contained(f, &shared, &fp);
            fp.finish();
            r
        })
        .collect();
    if shared.decode_budget < opts.decode_budget {
        let none = FileProgress::new(progress, 0);
        for (f, o) in files.iter().zip(outcomes.iter_mut()) {
            if matches!(o, Err(ScanError::Budget(_))) {
                *o = scan_contained(f, opts, &none);
            }
        }
    }
    let outcomes = files.iter().zip(outcomes).map(|(f, o)| {
        o.map_err(|e| FileError {
            file: f.display().to_string(),
            error: e.to_string(),
        })
    });
    progress.finish();

    let mut summaries = Vec::new();
    let mut parts = Vec::new();
    for o in outcomes {
        match o {
            Ok(o) => {
                summaries.extend(o.summaries);
                parts.extend(o.parts);
            }
            Err(e) => errors.push(e),
        }
    }
    let mut report = Report::new(Command::Scan);
    report.findings = findings::build(&parts, opts);
    report.exit_code = devassert_core::exit_code(&report.findings, !errors.is_empty());
    let bytes: u64 = sizes.iter().sum();
    let secs = started.elapsed().as_secs_f64();
    report.scan = Some(ScanSection {
        errors,
        files: summaries,
        scan: ScanRun {
            bound: ScanBound {
                high: opts.bounds.high,
                low: opts.bounds.low,
            },
            bytes,
            files: files.len() as u64,
            ignore: opts.ignore.clone(),
            merged: None,
            seconds: (secs * 1e6).round() / 1e6,
            shard: opts.shard.map(|s| format!("{}/{}", s.index, s.count)),
            target: match opts.target {
                Target::Tokens => "tokens",
                Target::Labels => "labels",
            }
            .to_string(),
        },
    });
    report
}

/// Scan one file; a panic is an error naming it (the other files are
/// still scanned, and the exit code is 2).
fn scan_contained(
    f: &Path,
    opts: &ScanOptions,
    progress: &FileProgress<'_>,
) -> Result<FileOutcome, ScanError> {
    devassert_core::contain::catch(|| scan_file(f, opts, progress))
        .unwrap_or_else(|p| Err(ScanError::Internal(p)))
}

/// The path as the user would type it: `./x` from walking `.` shown as `x`.
fn display(path: &Path) -> String {
    path.strip_prefix(".").unwrap_or(path).display().to_string()
}

fn scan_file(
    path: &Path,
    opts: &ScanOptions,
    progress: &FileProgress<'_>,
) -> Result<FileOutcome, ScanError> {
    let bytes = open(path)?;
    let len = bytes.as_slice().len() as u64;
    let head = &bytes.as_slice()[..bytes.as_slice().len().min(16)];
    let format = formats::detect(path, head, len, opts)?;
    let input = Input {
        path,
        bytes: bytes.clone(),
    };
    let parts = formats::read(&input, format, opts)?;
    let file = display(path);
    let mut out = FileOutcome {
        summaries: Vec::new(),
        parts: Vec::new(),
    };
    for part in parts {
        let (s, p) = scan_part(&file, part, opts, progress);
        out.summaries.push(s);
        out.parts.push(p);
    }
    Ok(out)
}

fn location(file: &str, layout: &Layout, storage: u64, value: i64) -> DataLocation {
    let place = layout.place(storage);
    DataLocation {
        file: Some(file.to_string()),
        index: place.index,
        document: place.document,
        row: place.row,
        offset: place.offset,
        position: place.position,
        value: Some(Scalar::Int(value)),
    }
}

fn scan_part(
    file: &str,
    part: Part,
    opts: &ScanOptions,
    progress: &FileProgress<'_>,
) -> (FileSummary, PartFindings) {
    let dtype = part.data.dtype();
    // Read as u16 only because no --dtype was given: say so when the bytes
    // look like wider integers (a Megatron .bin without its .idx).
    let wider = match &part.data {
        Data::Values(v)
            if part.format == InputFormat::Raw && opts.dtype.is_none() && dtype == Dtype::U16 =>
        {
            width::wider_than_u16(v.raw())
        }
        _ => None,
    };
    let wrapped_u16 = opts.target == Target::Tokens
        && dtype == Dtype::U16
        && opts.bounds.high > 65536
        && wider.is_none();
    let r = match part.data {
        Data::Values(v) => {
            // Pass one reads each chunk once: its mapped pages are dropped
            // behind it (pass two faults in the few chunks it reads again).
            kernel::scan_with_progress(&v, opts.bounds, &opts.ignore, opts.limit, &|c| {
                progress.add(c.len() as u64);
                v.bytes.drop_pages(c);
            })
        }
        Data::Scanned { result, .. } => result,
    };
    let check = match (opts.target, part.format) {
        (Target::Labels, InputFormat::Png) => Check::Mask,
        (Target::Labels, _) => Check::Labels,
        (Target::Tokens, _) => Check::Tokens,
    };
    let places: Vec<DataLocation> = r
        .first
        .iter()
        .map(|&(i, v)| location(file, &part.layout, i, v))
        .collect();

    let mut pf = PartFindings {
        file: file.to_string(),
        check,
        bad: r.bad,
        bad_values: r.bad_values,
        places,
        wrapped_u16,
        min: r.min,
        max: r.max,
        wider,
        too_long: 0,
        too_long_places: Vec::new(),
        too_short: 0,
        too_short_places: Vec::new(),
    };
    // (row, first storage index, length) of each row or sequence.
    type Spans<'a> = Box<dyn Iterator<Item = (u64, u64, u64)> + 'a>;
    let spans: Option<Spans> = match &part.layout {
        Layout::Rows { offsets } => Some(Box::new(
            offsets
                .windows(2)
                .enumerate()
                .map(|(r, w)| (r as u64, w[0], w[1] - w[0])),
        )),
        Layout::Sequences(ix) => Some(Box::new(
            (0..ix.sequences).map(|s| (s, ix.start(s), ix.length(s))),
        )),
        _ => None,
    };
    let document = |row: u64| match &part.layout {
        Layout::Sequences(ix) => ix.document_of(row),
        _ => None,
    };
    let (mut rows, mut longest) = (None, None);
    if let Some(spans) = spans {
        let (mut count, mut best) = (0, 0);
        for (row, start, n) in spans {
            count += 1;
            best = best.max(n);
            let loc = || DataLocation {
                file: Some(file.to_string()),
                index: start,
                document: document(row),
                row: Some(row),
                value: Some(Scalar::Int(n as i64)),
                ..DataLocation::default()
            };
            if opts.max_len.is_some_and(|m| n > m) {
                pf.too_long += 1;
                if pf.too_long_places.len() < opts.limit {
                    pf.too_long_places.push(loc());
                }
            }
            if opts.min_len.is_some_and(|m| n < m) {
                pf.too_short += 1;
                if pf.too_short_places.len() < opts.limit {
                    pf.too_short_places.push(loc());
                }
            }
        }
        rows = Some(count);
        longest = Some(best);
    } else if part.layout == Layout::Scalars {
        rows = Some(r.scanned);
    }
    let summary = FileSummary {
        file: file.to_string(),
        format: part.format.name().to_string(),
        part: part.name.clone(),
        dtype: part.dtype_label.clone(),
        shape: part.shape.clone(),
        values: r.scanned,
        min: r.min,
        max: r.max,
        out_of_range: r.bad,
        rows,
        max_len: longest,
        bad_lengths: pf.too_long + pf.too_short,
    };
    (summary, pf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every advance, in order.
    #[derive(Default)]
    struct Recorder {
        total: AtomicU64,
        steps: Mutex<Vec<u64>>,
    }

    impl Progress for Recorder {
        fn start(&self, _files: u64, bytes: u64) {
            self.total.store(bytes, Ordering::Relaxed);
        }
        fn advance(&self, bytes: u64) {
            self.steps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(bytes);
        }
    }

    #[test]
    fn progress_moves_inside_a_large_file_and_ends_at_its_size() {
        let d = tempfile::tempdir().expect("tempdir");
        // 8 MiB of u16 tokens: eight kernel chunks.
        let big = d.path().join("big.bin");
        let tokens: Vec<u16> = (0..4u32 << 20).map(|i| (i % 50000) as u16).collect();
        std::fs::write(&big, bytemuck::cast_slice::<u16, u8>(&tokens)).expect("write");
        // A file whose header the kernel never reads, and one that fails.
        let npy = d.path().join("small.npy");
        let mut npy_bytes = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
        let header = "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }";
        npy_bytes.extend(format!("{header:<117}\n").bytes());
        npy_bytes.extend([1i64, 2, 3].iter().flat_map(|v| v.to_le_bytes()));
        std::fs::write(&npy, &npy_bytes).expect("write");
        let broken = d.path().join("odd.bin");
        std::fs::write(&broken, [1u8, 2, 3]).expect("write");
        let opts = ScanOptions {
            bounds: crate::Bounds::new(0, 50257),
            threads: Some(2),
            ..ScanOptions::default()
        };
        let rec = Recorder::default();
        let report = scan_paths_with(&[d.path().to_path_buf()], &opts, &rec);
        assert_eq!(report.exit_code, 2, "odd.bin cannot be read");
        let steps = rec.steps.lock().expect("lock").clone();
        let total = (8u64 << 20) + npy_bytes.len() as u64 + 3;
        assert_eq!(rec.total.load(Ordering::Relaxed), total);
        assert_eq!(steps.iter().sum::<u64>(), total, "{steps:?}");
        let chunks = steps.iter().filter(|&&b| b == 1 << 20).count();
        assert!(
            chunks >= 8,
            "the big file reported once per chunk: {steps:?}"
        );
    }
}
