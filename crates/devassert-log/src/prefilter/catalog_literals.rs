//! The literals of the per-line check (`Prefilter::walk`) by kind, each
//! kind's automata built the first time a line asks for them; and how the
//! prefilter builds its automata.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use std::sync::OnceLock;

/// A contiguous NFA, or the default automaton when that does not build.
/// Not a DFA: its search is about twice as fast, but building the DFAs
/// of a kind's literals took a third of the instructions of explaining a
/// two-line log (47 M of 148 M), more than the faster search saves on
/// 128 MiB of tracebacks (the shape that walks most lines: +22 M
/// instructions of search per 32 MiB against 82 M of building).
/// Standard matching: the per-line check finds every literal, overlapping
/// ones too. `folded`: ASCII letters match in either case.
pub(super) fn build<S: AsRef<[u8]>>(pats: &[S], folded: bool) -> Option<AhoCorasick> {
    let with = |automaton| {
        AhoCorasickBuilder::new()
            .kind(automaton)
            .match_kind(MatchKind::Standard)
            .ascii_case_insensitive(folded)
            .build(pats)
            .ok()
    };
    with(Some(AhoCorasickKind::ContiguousNFA)).or_else(|| with(None))
}

/// The literals of one kind (exact or folded) of the per-line check, and
/// their ids among all the catalog's literals. Their automaton is None
/// where it did not build (a few hundred short literals always do): every
/// literal of the kind then counts as found, so a line is checked against
/// more regexes, slower, and none is missed.
pub(super) struct CatalogLiterals {
    pub(super) ac: Option<AhoCorasick>,
    pub(super) ids: Vec<usize>,
}

/// One kind of the per-line check's literals (holding a digit or not, or
/// either: None), its automata built the first time a line asks for them.
pub(super) struct LazyKind {
    digits: Option<bool>,
    built: OnceLock<Vec<CatalogLiterals>>,
}

impl LazyKind {
    pub(super) const fn new(digits: Option<bool>) -> Self {
        LazyKind {
            digits,
            built: OnceLock::new(),
        }
    }

    /// The kind's automata (exact, then folded) over `literals`, the same
    /// list at every call.
    pub(super) fn get(&self, literals: &[(Vec<u8>, bool)]) -> &[CatalogLiterals] {
        self.built
            .get_or_init(|| CatalogLiterals::both(literals, self.digits))
    }

    /// Whether a line has asked for them yet.
    #[cfg(test)]
    pub(super) fn is_built(&self) -> bool {
        self.built.get().is_some()
    }
}

impl CatalogLiterals {
    /// The automata of the literals of one kind: exact, then folded
    /// (holding a digit or not, or either: None), those there are.
    fn both(literals: &[(Vec<u8>, bool)], digits: Option<bool>) -> Vec<Self> {
        [false, true]
            .into_iter()
            .filter_map(|folded| CatalogLiterals::new(literals, folded, digits))
            .collect()
    }

    /// None when there are none of the kind (folded or not, holding a
    /// digit or not, or either: None).
    fn new(literals: &[(Vec<u8>, bool)], folded: bool, digits: Option<bool>) -> Option<Self> {
        let (ids, pats): (Vec<usize>, Vec<&[u8]>) = literals
            .iter()
            .enumerate()
            .filter(|(_, (l, fold))| {
                *fold == folded && digits.is_none_or(|d| l.iter().any(u8::is_ascii_digit) == d)
            })
            .map(|(i, (l, _))| (i, l.as_slice()))
            .unzip();
        if pats.is_empty() {
            return None;
        }
        let ac = build(&pats, folded);
        Some(CatalogLiterals { ac, ids })
    }
}
