//! What the log tests share.

use devassert_core::Catalog;
use devassert_log::{Facts, LogAnalyzer};

/// The facts of `text` fed to one analyzer in pieces of `chunk` bytes (a
/// chunk of 1 feeds it a byte at a time; `usize::MAX` whole).
pub fn facts_in_chunks(text: &str, chunk: usize) -> Facts {
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("log");
    for c in text.as_bytes().chunks(chunk) {
        a.feed(c);
    }
    a.facts()
}
