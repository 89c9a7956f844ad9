//! What the log tests share. Each test file includes the module and uses
//! what it needs, so a helper one of them leaves unused is no warning.
#![allow(dead_code)]

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

/// What a reading kept, in an order that does not depend on hashing.
pub fn summary(f: &Facts) -> String {
    let groups: Vec<_> = f
        .groups
        .iter()
        .map(|g| {
            let mut triples: Vec<_> = g.triples.iter().collect();
            triples.sort();
            let mut blocks: Vec<_> = g.blocks.iter().collect();
            blocks.sort();
            let ranks = format!("{:?}", g.ranks);
            (
                &g.kernel,
                &g.assertion,
                &g.file,
                g.line,
                g.lines,
                triples,
                blocks,
                g.last_block,
                g.first,
                ranks,
            )
        })
        .collect();
    format!(
        "{:?}\n{:?}\n{}\n{:?}\n{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}\n{:?}\n{:?}\n{:?}",
        groups,
        f.groups_dropped,
        f.tracebacks.len(),
        f.tracebacks,
        f.tracebacks_dropped,
        f.device_error,
        f.host,
        f.cpu,
        f.dsa,
        f.stated,
        f.launch_blocking,
        f.notebook,
        f.inputs,
        f.code_above,
    )
}
