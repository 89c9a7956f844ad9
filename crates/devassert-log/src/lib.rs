//! devassert-log: reads a crash log as a stream of bytes (any size, any
//! chunking, several files as one crash) and diagnoses it: the first device
//! assertion among thousands of repeated thread lines, the traceback that
//! noticed it, the fallout after it, and the catalog rule with its ranked
//! causes.
//!
//! ```no_run
//! let catalog = devassert_core::Catalog::builtin();
//! let mut a = devassert_log::LogAnalyzer::new(catalog);
//! a.begin_input("crash.log");
//! a.feed(b"RuntimeError: CUDA error: device-side assert triggered\n");
//! let report = a.finish();
//! assert_eq!(report.command, "explain");
//! ```

mod bigram_filter;
mod clean;
mod crash;
mod derived_literals;
mod device_line;
pub mod diagnose;
mod error;
mod errors;
mod folder;
pub mod inductor;
mod infer;
mod line_search;
mod literal_dfa;
mod literals;
pub mod normalize;
mod prefilter;
pub mod ranks;
pub mod reader;
mod spaces;
mod text;
mod traceback;
mod unwrap;
mod values;

use devassert_core::inside::Inside;
use devassert_core::{Catalog, Report};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The text the reader reads of a raw line (tests compare what it finds
/// with the catalog on that text).
pub use clean::readable;
pub use crash::InternalError;
pub use error::{LogError, Skipped};
pub use reader::{AssertGroup, Facts};

/// Streaming log analysis: feed bytes of one or more inputs, then finish.
pub struct LogAnalyzer {
    catalog: &'static Catalog,
    reader: reader::Reader,
    /// Inductor's generated code the log holds (`TORCH_LOGS=output_code`).
    code: inductor::LogCode,
    /// Generated code from elsewhere (`--inductor-dir`).
    extra: Option<inductor::Generated>,
    /// Unicode spaces made ASCII before anything reads the bytes.
    spaces: spaces::Spaces,
    /// A line is being read (a panic now happened at the reader's line).
    reading: bool,
}

impl LogAnalyzer {
    pub fn new(catalog: &'static Catalog) -> Self {
        LogAnalyzer {
            catalog,
            reader: reader::Reader::new(catalog),
            code: inductor::LogCode::default(),
            extra: None,
            spaces: spaces::Spaces::default(),
            reading: false,
        }
    }

    /// Generated code read from a folder, used with the log's own to trace
    /// Inductor asserts back to the user's op.
    pub fn add_generated(&mut self, code: inductor::Generated) {
        self.extra = Some(code);
    }

    /// A new input begins (a file of a multi-file crash); `name` is reported in evidence.
    pub fn begin_input(&mut self, name: &str) {
        self.end_spaces();
        self.reader.begin_input(name);
    }

    /// Feed raw bytes; chunk boundaries are arbitrary.
    pub fn feed(&mut self, bytes: &[u8]) {
        let (text, removed) = self.spaces.take(bytes);
        self.take(&text, removed, None);
    }

    /// Whole lines whose Unicode spaces [`normalize_in_place`] made ASCII
    /// (`removed` bytes fewer), already searched by `reader::search_with`.
    pub fn feed_searched(&mut self, bytes: &[u8], searched: reader::Searched, removed: usize) {
        self.take(bytes, removed, Some(searched));
    }

    fn take(&mut self, text: &[u8], removed: usize, searched: Option<reader::Searched>) {
        self.code.feed(text);
        self.reading = true;
        self.reader.feed_searched(text, searched);
        self.reading = false;
        self.reader.count_bytes(removed as u64);
    }

    /// The bytes of a Unicode space the input's last chunk cut: read at its end.
    fn end_spaces(&mut self) {
        let held = self.spaces.flush();
        if !held.is_empty() {
            self.take(&held, 0, None);
        }
    }

    /// [`LogAnalyzer::feed`], with a panic of the reader caught: an
    /// internal error naming the input and the line. The analyzer must not
    /// be fed again after one.
    pub fn feed_caught(&mut self, bytes: &[u8]) -> Result<(), InternalError> {
        devassert_core::contain::catch(|| self.feed(bytes)).map_err(|p| self.crashed(p))
    }

    fn crashed(&self, p: devassert_core::contain::Panic) -> InternalError {
        let (input, line) = self.reader.position();
        InternalError::new(input, self.reading.then_some(line), p)
    }

    /// What the reader kept, without diagnosing (for tools that want the raw facts).
    pub fn facts(mut self) -> Facts {
        self.end_spaces();
        self.reader.finish()
    }

    /// [`LogAnalyzer::finish`], with a panic caught: an internal error
    /// naming the inputs.
    pub fn finish_caught(self) -> Result<Report, InternalError> {
        let inputs = self.reader.input_names().join(", ");
        devassert_core::contain::catch(|| self.finish())
            .map_err(|p| InternalError::new(inputs, None, p))
    }

    /// Finish and diagnose: command "explain", exit_code 1 if a device-side failure was found, else 0 (the
    /// linters' convention, the same for every command).
    pub fn finish(mut self) -> Report {
        let catalog = self.catalog;
        self.end_spaces();
        let facts = self.reader.finish();
        let mut report = diagnose::diagnose(&facts, catalog);
        let mut code = self.code.finish();
        if let Some(extra) = self.extra {
            code.extend(extra);
        }
        inductor::annotate(&mut report, &code, catalog);
        report
    }
}

/// Read buffer size: large enough for throughput, small enough to keep memory
/// flat and to stay in a core's cache while it is searched and read (`pump`):
/// 256 KiB took 2–6 % off every shape's CPU time against 512 KiB, 2–7 %
/// against 1 MiB (shapes.md, 2026-12-07 21:15).
const CHUNK: usize = 256 << 10;

/// Read files / folders (recursively, sorted) / "-" (stdin) as one crash.
pub fn explain_paths(paths: &[PathBuf], catalog: &'static Catalog) -> Result<Report, LogError> {
    explain_paths_skipping(paths, catalog).map(|(report, _)| report)
}

/// [`explain_paths`], and the entries of the folders it skipped: a symlink
/// leading out of the folder, dangling or in a loop, an entry it cannot
/// read. They are skipped so the rest of the folder is still read; a file
/// named on the command line that cannot be read is an error.
pub fn explain_paths_skipping(
    paths: &[PathBuf],
    catalog: &'static Catalog,
) -> Result<(Report, Vec<Skipped>), LogError> {
    explain_paths_with(paths, catalog, None)
}

/// [`explain_paths_skipping`] with Inductor's generated code from a folder
/// (`--inductor-dir`), read with [`inductor::read_dir`].
pub fn explain_paths_with(
    paths: &[PathBuf],
    catalog: &'static Catalog,
    generated: Option<inductor::Generated>,
) -> Result<(Report, Vec<Skipped>), LogError> {
    let mut skipped = Vec::new();
    let files = expand(paths, &mut skipped)?;
    let mut a = LogAnalyzer::new(catalog);
    if let Some(g) = generated {
        a.add_generated(g);
    }
    for (path, named) in &files {
        if path.as_os_str() == "-" {
            a.begin_input("-");
            pump(&mut std::io::stdin(), &mut a).map_err(|e| match e {
                Stopped::Io(source) => LogError::Io {
                    path: path.clone(),
                    source,
                },
                Stopped::Internal(e) => LogError::Internal(e),
            })?;
            continue;
        }
        // A file the user named may be a pipe (`explain <(cmd)`); one found
        // in a folder must be a regular file, opened without blocking.
        let opened = if *named {
            std::fs::File::open(path)
        } else {
            devassert_core::regular::open(path)
        };
        let mut f = match opened {
            Ok(f) => f,
            Err(e) if !named => {
                skipped.push(Skipped {
                    path: path.clone(),
                    why: format!("cannot open it: {e}"),
                });
                continue;
            }
            Err(e) => return Err(LogError::from_io(path, e)),
        };
        a.begin_input(&path.to_string_lossy());
        pump(&mut f, &mut a).map_err(|e| e.at(path))?;
    }
    Ok((a.finish_caught()?, skipped))
}

/// Why an input was not read to its end.
enum Stopped {
    Io(std::io::Error),
    Internal(InternalError),
}

impl Stopped {
    fn at(self, path: &Path) -> LogError {
        match self {
            Stopped::Io(e) => LogError::from_io(path, e),
            Stopped::Internal(e) => LogError::Internal(e),
        }
    }
}

/// Read `r` to its end into `a`, in buffers of whole lines (but for a line
/// longer than a buffer, and the input's last line), each made ASCII,
/// searched and taken in by the reader while it is still in the core's
/// cache. All on the calling thread: a thread that read and searched ahead
/// cost more CPU time than it saved wall time (its buffers were handed
/// across the cores colder, the handoffs woke threads; rayon's spread of
/// the search spun besides), shapes.md, 2026-12-07 21:15. A panic of the
/// search or the reader stops the input with an internal error.
fn pump(r: &mut dyn Read, a: &mut LogAnalyzer) -> Result<(), Stopped> {
    use devassert_core::contain::catch;
    let catalog = a.catalog;
    let mut crashed = None;
    let read = read_lines(r, &mut |buf| {
        // Only whole lines are made ASCII and searched here; the reader
        // takes the rest itself. A reader reading every line searches what
        // it needs itself (`reader::searched`).
        let fed = catch(|| match buf.last() {
            Some(b'\n') => {
                let n = spaces::normalize_in_place(buf);
                let searched = match a.reader.every_line_hint() {
                    true => reader::Searched::later(n),
                    false => reader::search_with(catalog, a.reader.retired(), &buf[..n]),
                };
                a.feed_searched(&buf[..n], searched, buf.len() - n);
            }
            _ => a.feed(buf),
        });
        fed.map_err(|p| crashed = Some(a.crashed(p))).is_ok()
    });
    match crashed {
        Some(e) => Err(Stopped::Internal(e)),
        None => read.map_err(Stopped::Io),
    }
}

/// Read `r` into buffers that end at a line's end, each handed to `out`
/// (false: stop reading); the partial line after it starts the next buffer.
fn read_lines(r: &mut dyn Read, out: &mut dyn FnMut(&mut [u8]) -> bool) -> std::io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    let mut have = 0;
    loop {
        let n = match r.read(&mut buf[have..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        have += n;
        if n == 0 {
            if have > 0 {
                out(&mut buf[..have]);
            }
            return Ok(());
        }
        let cut = match memchr::memrchr(b'\n', &buf[..have]) {
            Some(i) => i + 1,
            None if have == buf.len() => have,
            None => continue,
        };
        if !out(&mut buf[..cut]) {
            return Ok(());
        }
        buf.copy_within(cut..have, 0);
        have -= cut;
    }
}

/// Files in the order they are read, each with whether the user named it:
/// arguments in order, folders expanded recursively and sorted (hidden
/// entries skipped; symlinks followed only inside the folder named).
fn expand(paths: &[PathBuf], skipped: &mut Vec<Skipped>) -> Result<Vec<(PathBuf, bool)>, LogError> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            out.push((p.clone(), true));
            continue;
        }
        let meta = std::fs::metadata(p).map_err(|e| LogError::from_io(p, e))?;
        if meta.is_dir() {
            let before = (out.len(), skipped.len());
            let inside = Inside::new(p).map_err(|e| LogError::from_io(p, e))?;
            let logs = folder::Walk {
                skip_hidden: true,
                max_depth: usize::MAX,
                max_entries: usize::MAX,
            };
            let mut keep = |f: &Path| {
                if is_binary(f) {
                    Err("a binary file, not a log".to_string())
                } else {
                    Ok(true)
                }
            };
            let found = logs.files(&inside, p, &mut keep, skipped);
            out.extend(found.files.into_iter().map(|f| (f, false)));
            if out.len() == before.0 {
                // Nothing to read is an error, not a clean log: say what was there.
                let skipped = skipped.drain(before.1..).map(|s| s.path).collect();
                return Err(LogError::EmptyDirectory {
                    path: p.clone(),
                    skipped,
                });
            }
        } else {
            out.push((p.clone(), true));
        }
    }
    Ok(out)
}

/// A file in a folder with a NUL byte in its first 8 KiB is a checkpoint,
/// an archive or an image, not a log: reading it would only make the folder
/// look like a clean log. (A file named on the command line is always read.)
fn is_binary(path: &Path) -> bool {
    let Ok(f) = devassert_core::regular::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(8192);
    if f.take(8192).read_to_end(&mut head).is_err() {
        return false;
    }
    memchr::memchr(0, &head).is_some()
}
