//! devassert-scan: finds every out-of-range token id or class label in
//! training data files before the GPU does.
//!
//! Reading (one [`formats::Reader`] per format), checking (the
//! [`kernel`]: min/max per chunk, then positions only where needed) and
//! deciding (findings with the catalog's rule ids) are separate modules.

mod causes;
pub mod error;
mod findings;
pub mod formats;
pub mod kernel;
pub mod merge;
pub mod options;
pub mod range;
pub mod safetensors_header;
mod scan;
pub mod values;
pub mod walk;
mod width;

/// The per-file sections of a scan report, typed in devassert-core.
pub use devassert_core::{FileError, FileSummary};
pub use error::ScanError;
pub use merge::{merge_reports, MergeError};
pub use options::{Bounds, Dtype, InputFormat, ScanOptions, Target};
pub use scan::{scan_paths, scan_paths_with, NoProgress, Progress};
pub use walk::Shard;
