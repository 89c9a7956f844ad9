//! The embedded `catalog/causes.toml`, read by the engine's table and by
//! `log`'s rows: a leaf, so that neither depends on the other for it.

use crate::catalog::{FACT_CAUSES_FILE, FACT_CAUSES_FILE_JSON};

/// The text of `catalog/causes.toml` (for the generated Python module).
pub fn source() -> &'static str {
    FACT_CAUSES_FILE.1
}

/// The same document in JSON (`build.rs`), which reads faster.
pub fn json() -> &'static str {
    FACT_CAUSES_FILE_JSON.1
}
