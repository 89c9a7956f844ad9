//! devassert-scan: finds every out-of-range token id or class label in
//! training data files before the GPU does.
//!
//! Reading (one [`formats::reader::Reader`] per format), checking (the
//! [`kernel`]: min/max per chunk, then positions only where needed) and
//! deciding (findings with the catalog's rule ids) are separate modules.
//! The types they share are leaves that import nothing of the crate's
//! upper layers: [`format`] (input formats by name), [`dtype`],
//! [`mapped`] (the bytes of an input), [`seq_index`] (a Megatron `.idx`),
//! [`shard`], [`range`], [`error`], then [`options`] and [`values`] on
//! them; `scripts/check-layout` keeps it so.

pub mod budget;
mod causes;
pub mod dtype;
pub mod error;
mod findings;
pub mod format;
pub mod formats;
pub mod kernel;
pub mod mapped;
pub mod merge;
pub mod options;
pub mod range;
pub mod safetensors_header;
mod scan;
pub mod seq_index;
pub mod shard;
pub mod values;
pub mod walk;
mod width;

/// The per-file sections of a scan report, typed in devassert-core.
pub use devassert_core::{FileError, FileSummary};
pub use dtype::Dtype;
pub use error::ScanError;
pub use format::InputFormat;
pub use merge::{merge_reports, MergeError};
pub use options::{Bounds, ScanOptions, Target};
pub use scan::{scan_paths, scan_paths_with, NoProgress, Progress};
pub use shard::Shard;
