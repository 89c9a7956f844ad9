//! Turning the user's paths into a sorted list of files: directories are
//! walked recursively (data files only), globs are expanded, and a shard
//! keeps every N-th file.

use crate::format::{by_extension, InputFormat};
use crate::formats::{megatron, sniff};
use crate::shard::Shard;
use devassert_core::inside::Inside;
use devassert_core::FileError;
use std::path::{Path, PathBuf};

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Files under a directory worth scanning: a known data extension or magic bytes.
fn is_data_file(path: &Path) -> bool {
    if by_extension(path).is_some_and(|f| f != InputFormat::Jsonl) {
        return true;
    }
    if path
        .extension()
        .is_some_and(|e| e == "jsonl" || e == "ndjson")
    {
        return true;
    }
    let mut head = [0u8; 16];
    let Ok(mut f) = devassert_core::regular::open(path) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let n = std::io::Read::read(&mut f, &mut head).unwrap_or(0);
    sniff(&head[..n], len).is_some()
}

/// Walk a folder the user named: symlinks are followed only to files inside
/// it (see [`Inside`]); one that leads out, dangles or loops is reported and
/// skipped, and the walk goes on. A folder that holds no data file at all is
/// an error naming what was skipped: a clean result for it would say the data
/// is fine when none was read.
fn walk_named(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<FileError>) {
    let inside = match Inside::new(dir) {
        Ok(inside) => inside,
        Err(e) => {
            errors.push(FileError {
                file: dir.display().to_string(),
                error: format!("cannot read directory: {e}"),
            });
            return;
        }
    };
    let before = files.len();
    let mut skipped = Vec::new();
    walk_dir(&inside, dir, files, errors, &mut skipped);
    skipped.sort();
    if files.len() == before {
        errors.push(FileError {
            file: dir.display().to_string(),
            error: nothing_to_scan(dir, &skipped),
        });
    }
}

/// Why a folder gave no file: empty, or the files it skipped (a few named).
fn nothing_to_scan(dir: &Path, skipped: &[PathBuf]) -> String {
    const NAMED: usize = 5;
    if skipped.is_empty() {
        return "no data file in this folder (it holds no file at all)".into();
    }
    let names: Vec<String> = skipped
        .iter()
        .take(NAMED)
        .map(|p| p.strip_prefix(dir).unwrap_or(p).display().to_string())
        .collect();
    let more = match skipped.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    format!(
        "no data file in this folder: skipped {} file{} of no format devassert reads ({}{more}); name a file with --input-format to read it anyway",
        skipped.len(),
        if skipped.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

fn walk_dir(
    inside: &Inside,
    dir: &Path,
    files: &mut Vec<PathBuf>,
    errors: &mut Vec<FileError>,
    skipped: &mut Vec<PathBuf>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push(FileError {
                file: dir.display().to_string(),
                error: format!("cannot read directory: {e}"),
            });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                errors.push(FileError {
                    file: dir.display().to_string(),
                    error: format!("cannot read an entry: {e}"),
                });
                continue;
            }
        };
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk_dir(inside, &path, files, errors, skipped),
            Ok(t) if t.is_file() => {
                if is_data_file(&path) {
                    files.push(path);
                } else {
                    skipped.push(path);
                }
            }
            Ok(t) if t.is_symlink() => match inside.check(&path) {
                // A folder inside is walked where it really is; never twice, never in a loop.
                Ok(()) if path.is_file() && is_data_file(&path) => files.push(path),
                Ok(()) if path.is_file() => skipped.push(path),
                Ok(()) => match std::fs::metadata(&path) {
                    Ok(m) if !m.is_dir() => errors.push(not_regular(&path, &m.file_type())),
                    _ => {}
                },
                Err(why) => errors.push(FileError {
                    file: path.display().to_string(),
                    error: why,
                }),
            },
            // A FIFO, socket or device: never opened, and said.
            Ok(t) => errors.push(not_regular(&path, &t)),
            Err(e) => errors.push(FileError {
                file: path.display().to_string(),
                error: format!("cannot read it: {e}"),
            }),
        }
    }
}

fn not_regular(path: &Path, t: &std::fs::FileType) -> FileError {
    FileError {
        file: path.display().to_string(),
        error: devassert_core::regular::not_regular(t).to_string(),
    }
}

/// A Megatron index named on the command line stands for its dataset: the
/// `.bin` beside it, which the scan reads with it.
fn megatron_data(path: &Path) -> Option<PathBuf> {
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("idx"))
    {
        return None;
    }
    let bin = path.with_extension("bin");
    megatron::companion(&bin).map(|_| bin)
}

/// A Megatron dataset named by its prefix, as `--data-path` takes it:
/// `corpus_text_document` for `corpus_text_document.{bin,idx}`.
fn megatron_prefix(prefix: &Path) -> Option<PathBuf> {
    let mut bin = prefix.as_os_str().to_os_string();
    bin.push(".bin");
    let bin = PathBuf::from(bin);
    (bin.is_file() && megatron::companion(&bin).is_some()).then_some(bin)
}

/// Expand, sort, dedupe, then shard.
pub fn expand(inputs: &[PathBuf], shard: Option<Shard>) -> (Vec<PathBuf>, Vec<FileError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in inputs {
        let text = p.to_string_lossy();
        if p.is_dir() {
            walk_named(p, &mut files, &mut errors);
        } else if p.exists() {
            files.push(megatron_data(p).unwrap_or_else(|| p.clone()));
        } else if let Some(bin) = megatron_prefix(p) {
            files.push(bin);
        } else if has_glob(&text) {
            match glob::glob(&text) {
                Ok(paths) => {
                    let mut n = 0;
                    for m in paths.flatten() {
                        n += 1;
                        if m.is_dir() {
                            walk_named(&m, &mut files, &mut errors);
                        } else {
                            files.push(m);
                        }
                    }
                    if n == 0 {
                        errors.push(FileError {
                            file: text.to_string(),
                            error: "the pattern matches no file".into(),
                        });
                    }
                }
                Err(e) => errors.push(FileError {
                    file: text.to_string(),
                    error: format!("bad glob pattern: {e}"),
                }),
            }
        } else {
            errors.push(FileError {
                file: text.to_string(),
                error: "no such file or directory".into(),
            });
        }
    }
    files.sort();
    files.dedup();
    if let Some(s) = shard {
        files = files
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i as u64 % s.count as u64 == s.index as u64)
            .map(|(_, f)| f)
            .collect();
    }
    (files, errors)
}
