//! The cheap test that decides whether a line is looked at at all. Almost
//! every line of a long training log is progress output; one multi-literal
//! search over the whole buffer finds the few lines that can matter: our own
//! trigger words, plus literals every catalog `log` / `cpu_messages` pattern
//! must contain (extracted from the regexes, so a catalog edit needs no code
//! change here).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use devassert_core::Catalog;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// Words without which a line cannot hold anything the reader uses.
const TRIGGERS: &[&str] = &[
    "Assertion",
    "assertion",
    "assert",
    "Assert",
    "rror",
    "Traceback",
    "File \"",
    "CUDA",
    "HIP",
    "NCCL",
    "CUBLAS",
    "cuDNN",
    "CUDNN",
    "Fatal",
    "terminate",
    "atchdog",
    "ChildFailed",
    "synchronize",
    ".cu",
    "block: [",
    "global id: [",
    "containing",
    "Name of kernel",
    "illegal memory",
    "launch failure",
    "HSA_STATUS",
    "During handling",
    "above exception",
    "AMD_SERIALIZE",
    "xception",
    "\\n",
    "out of bounds",
    "out of range",
];

pub struct Prefilter {
    /// Triggers and catalog literals: does the line matter at all?
    any: AhoCorasick,
    /// Catalog literals only: is it worth running the catalog's regexes?
    catalog: Option<AhoCorasick>,
    /// Some catalog pattern has no literal every match contains: run the
    /// catalog's regexes on every line looked at, and look at every line.
    catalog_unfiltered: bool,
}

/// Literals of which every match of `pattern` contains one, or `None` when
/// no such finite set exists (a pattern like `\d+ > \d+`).
fn required_literals(pattern: &str) -> Option<Vec<String>> {
    let hir = regex_syntax::parse(pattern).ok()?;
    for kind in [ExtractKind::Prefix, ExtractKind::Suffix] {
        let seq = Extractor::new().kind(kind).extract(&hir);
        let Some(lits) = seq.literals() else { continue };
        if lits.is_empty() || lits.iter().any(|l| l.as_bytes().len() < 3) {
            continue;
        }
        let v: Option<Vec<String>> = lits
            .iter()
            .map(|l| String::from_utf8(l.as_bytes().to_vec()).ok())
            .collect();
        if let Some(v) = v {
            return Some(v);
        }
    }
    None
}

fn build(pats: &[String]) -> Option<AhoCorasick> {
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .build(pats)
        .ok()
}

impl Prefilter {
    pub fn new(catalog: &Catalog) -> Self {
        let mut lits: Vec<String> = Vec::new();
        let mut unfiltered = false;
        for rule in catalog.rules() {
            let patterns = rule.cpu_messages.iter().chain(
                rule.causes
                    .iter()
                    .flat_map(|c| c.evidence.iter().filter_map(|e| e.log.as_ref())),
            );
            for p in patterns {
                match required_literals(p) {
                    Some(v) => lits.extend(v),
                    None => unfiltered = true,
                }
            }
        }
        lits.sort();
        lits.dedup();
        let mut all: Vec<String> = TRIGGERS.iter().map(|s| s.to_string()).collect();
        all.extend(lits.iter().cloned());
        all.sort();
        all.dedup();
        // Building from a few hundred short literals does not fail; if it
        // ever did, looking at every line is slow but still correct.
        let any = build(&all).or_else(|| build(&["".to_string()]));
        let catalog_ac = if lits.is_empty() { None } else { build(&lits) };
        let catalog_unfiltered = unfiltered || (!lits.is_empty() && catalog_ac.is_none());
        Prefilter {
            any: any.unwrap_or_else(|| unreachable!("an empty-literal automaton always builds")),
            catalog: catalog_ac,
            catalog_unfiltered,
        }
    }

    /// Every line must be looked at (a catalog pattern without a literal).
    pub fn looks_at_everything(&self) -> bool {
        self.catalog_unfiltered
    }

    /// Where in `hay` the next line that matters has its trigger.
    pub fn find(&self, hay: &[u8]) -> Option<(usize, usize)> {
        self.any.find(hay).map(|m| (m.start(), m.end()))
    }

    pub fn is_match(&self, hay: &[u8]) -> bool {
        self.catalog_unfiltered || self.any.is_match(hay)
    }

    /// Whether the catalog's regexes can match `line`.
    pub fn catalog_may_match(&self, line: &str) -> bool {
        self.catalog_unfiltered || self.catalog.as_ref().is_some_and(|ac| ac.is_match(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_of_patterns() {
        let v = required_literals(
            r"Token indices sequence length is longer than the specified maximum sequence length .*\((?P<value>\d+) > (?P<high>\d+)\)",
        );
        assert!(v.is_some_and(|v| v.iter().all(|l| l.starts_with("Token indices"))));
        assert_eq!(required_literals(r"\d+ > \d+"), None);
        let v = required_literals(r"Target -?\d+ is out of bounds").unwrap_or_default();
        assert!(!v.is_empty());
    }
}
