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

mod clean;
mod device_line;
pub mod diagnose;
mod errors;
mod prefilter;
pub mod reader;
mod traceback;
mod values;

use devassert_core::{Catalog, Report};
use std::io::Read;
use std::path::{Path, PathBuf};

pub use reader::{AssertGroup, Facts};

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{}: no such file or directory", .path.display())]
    Missing { path: PathBuf },
    #[error("{}: permission denied", .path.display())]
    Permission { path: PathBuf },
    #[error("{}: a directory with no log files in it", .path.display())]
    EmptyDirectory { path: PathBuf },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl LogError {
    fn from_io(path: &Path, e: std::io::Error) -> Self {
        let path = path.to_path_buf();
        match e.kind() {
            std::io::ErrorKind::NotFound => LogError::Missing { path },
            std::io::ErrorKind::PermissionDenied => LogError::Permission { path },
            _ => LogError::Io { path, source: e },
        }
    }
}

/// Streaming log analysis: feed bytes of one or more inputs, then finish.
pub struct LogAnalyzer {
    catalog: &'static Catalog,
    reader: reader::Reader,
}

impl LogAnalyzer {
    pub fn new(catalog: &'static Catalog) -> Self {
        LogAnalyzer {
            catalog,
            reader: reader::Reader::new(catalog),
        }
    }

    /// A new input begins (a file of a multi-file crash); `name` is reported in evidence.
    pub fn begin_input(&mut self, name: &str) {
        self.reader.begin_input(name);
    }

    /// Feed raw bytes; chunk boundaries are arbitrary.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.reader.feed(bytes);
    }

    /// What the reader kept, without diagnosing (for tools that want the raw facts).
    pub fn facts(self) -> Facts {
        self.reader.finish()
    }

    /// Finish and diagnose: command "explain", exit_code 0 if a device-side failure was found, else 1.
    pub fn finish(self) -> Report {
        let catalog = self.catalog;
        let facts = self.reader.finish();
        diagnose::diagnose(&facts, catalog)
    }
}

/// Read buffer size: large enough for throughput, small enough to keep memory flat.
const CHUNK: usize = 4 << 20;

/// Read files / folders (recursively, sorted) / "-" (stdin) as one crash.
pub fn explain_paths(paths: &[PathBuf], catalog: &'static Catalog) -> Result<Report, LogError> {
    let files = expand(paths)?;
    let mut a = LogAnalyzer::new(catalog);
    let mut buf = vec![0u8; CHUNK];
    for path in &files {
        let name = path.to_string_lossy();
        a.begin_input(&name);
        if path.as_os_str() == "-" {
            let stdin = std::io::stdin();
            let mut lock = stdin.lock();
            pump(&mut lock, &mut a, &mut buf).map_err(|e| LogError::Io {
                path: path.clone(),
                source: e,
            })?;
        } else {
            let mut f = std::fs::File::open(path).map_err(|e| LogError::from_io(path, e))?;
            pump(&mut f, &mut a, &mut buf).map_err(|e| LogError::from_io(path, e))?;
        }
    }
    Ok(a.finish())
}

fn pump(r: &mut dyn Read, a: &mut LogAnalyzer, buf: &mut [u8]) -> std::io::Result<()> {
    loop {
        match r.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => a.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Files in the order they are read: arguments in order, folders expanded
/// recursively and sorted (hidden entries skipped).
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LogError> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            out.push(p.clone());
            continue;
        }
        let meta = std::fs::metadata(p).map_err(|e| LogError::from_io(p, e))?;
        if meta.is_dir() {
            let before = out.len();
            walk(p, &mut out)?;
            if out.len() == before {
                return Err(LogError::EmptyDirectory { path: p.clone() });
            }
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LogError> {
    let rd = std::fs::read_dir(dir).map_err(|e| LogError::from_io(dir, e))?;
    let mut entries: Vec<PathBuf> = Vec::new();
    for e in rd {
        let e = e.map_err(|e| LogError::from_io(dir, e))?;
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        entries.push(e.path());
    }
    entries.sort();
    for p in entries {
        let meta = std::fs::metadata(&p).map_err(|e| LogError::from_io(&p, e))?;
        if meta.is_dir() {
            walk(&p, out)?;
        } else if meta.is_file() {
            out.push(p);
        }
    }
    Ok(())
}
