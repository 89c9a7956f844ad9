//! The per-file sections of a scan report (`files`, `errors` in the JSON):
//! typed in devassert-core, since every renderer reads them.

pub use devassert_core::{FileError, FileSummary};
