//! Why an input, or an entry of a folder, was not read.

use crate::crash::InternalError;
use std::path::{Path, PathBuf};

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{}: no such file or directory", .path.display())]
    Missing { path: PathBuf },
    #[error("{}: permission denied", .path.display())]
    Permission { path: PathBuf },
    #[error("{}: a directory with no log files in it{}", .path.display(), skipped_names(.skipped))]
    EmptyDirectory {
        path: PathBuf,
        skipped: Vec<PathBuf>,
    },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Internal(#[from] InternalError),
}

/// ` (skipped: a.pt, b.bin, and 3 more)`: what a folder held instead of logs.
fn skipped_names(skipped: &[PathBuf]) -> String {
    const NAMED: usize = 5;
    if skipped.is_empty() {
        return String::new();
    }
    let names: Vec<String> = skipped
        .iter()
        .take(NAMED)
        .map(|p| p.display().to_string())
        .collect();
    let more = match skipped.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    format!(" (skipped: {}{more})", names.join(", "))
}

impl LogError {
    pub(crate) fn from_io(path: &Path, e: std::io::Error) -> Self {
        let path = path.to_path_buf();
        match e.kind() {
            std::io::ErrorKind::NotFound => LogError::Missing { path },
            std::io::ErrorKind::PermissionDenied => LogError::Permission { path },
            _ => LogError::Io { path, source: e },
        }
    }
}

/// An entry of a folder that was not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}
