//! The catalog's literals as a line known by its shape (`reader::shape_rows`)
//! asks about them. A line meets no requirement set, so matches no catalog
//! regex (where none runs on every line), exactly when its literals
//! without a digit meet none (the same for every line of its shape: such a
//! literal matches only between digits) and its literals with a digit, and
//! those that end it, meet none either. A literal in a line has its own
//! shape in the line's shape (a run of digits in the literal lies in a run
//! of the line's): where no literal with a digit has, no line of the shape
//! holds one, but for the literals of digits alone (`255`), whose shape
//! `0` is in every shape with a number: those are looked for in the line.

use super::catalog_literals::CatalogLiterals;
use crate::text::shape_afresh;

/// Whether every automaton of a kind of literals built (one that did not
/// finds every literal of its kind in every line: see `Prefilter::walk`).
pub(super) fn all_built(kind: &[CatalogLiterals]) -> bool {
    kind.iter().all(|c| c.ac.is_some())
}

/// The catalog's literals as the questions above ask for them, found once.
pub struct ShapeLiterals {
    /// Those of digits alone, and the digits they start with.
    all_digits: Vec<Vec<u8>>,
    firsts: Vec<u8>,
    /// The shapes of the others with a digit, and of those that end a line
    /// (each with whether it is folded; an empty literal, in every line,
    /// has the shape `0`).
    with_digits: Vec<(Vec<u8>, bool)>,
    ends: Vec<(Vec<u8>, bool)>,
}

impl ShapeLiterals {
    pub(super) fn new(literals: &[(Vec<u8>, bool)], ends: &[(Vec<u8>, bool, usize)]) -> Self {
        let shaped = |l: &[u8], f: bool| {
            let mut s = Vec::new();
            shape_afresh(l, &mut s);
            if s.is_empty() {
                s.push(b'0');
            }
            (s, f)
        };
        let digits = |l: &[u8]| l.iter().any(u8::is_ascii_digit);
        let all_digits = |l: &[u8]| !l.is_empty() && l.iter().all(u8::is_ascii_digit);
        let all: Vec<Vec<u8>> = literals
            .iter()
            .map(|(l, _)| l)
            .filter(|l| all_digits(l))
            .cloned()
            .collect();
        let mut firsts: Vec<u8> = all.iter().filter_map(|l| l.first().copied()).collect();
        firsts.sort_unstable();
        firsts.dedup();
        ShapeLiterals {
            all_digits: all,
            firsts,
            with_digits: literals
                .iter()
                .filter(|(l, _)| (digits(l) && !all_digits(l)) || l.is_empty())
                .map(|(l, f)| shaped(l, *f))
                .collect(),
            ends: ends.iter().map(|(l, f, _)| shaped(l, *f)).collect(),
        }
    }

    /// Whether a line of shape `shape` (`text::shape_into`) may hold a
    /// literal with a digit but for those of digits alone, or end with one
    /// of the literals that end a line (see the module).
    pub fn may_be_in_shape(&self, shape: &[u8]) -> bool {
        let same = |w: &[u8], s: &[u8], folded: bool| {
            if folded {
                w.eq_ignore_ascii_case(s)
            } else {
                w == s
            }
        };
        let end = shape.trim_ascii_end();
        self.with_digits
            .iter()
            .any(|(s, f)| shape.windows(s.len()).any(|w| same(w, s, *f)))
            || self
                .ends
                .iter()
                .any(|(s, f)| end.len() >= s.len() && same(&end[end.len() - s.len()..], s, *f))
    }

    /// Whether one of the literals of digits alone (`255`) is in `hay`
    /// (where it is, it is in a run of digits).
    pub fn all_digits_in(&self, hay: &[u8]) -> bool {
        // Short rows: each first digit of a literal found (once for the
        // literals it starts), then the literals compared.
        self.firsts.iter().any(|&first| {
            let starts = |l: &&Vec<u8>| l.first() == Some(&first);
            memchr::memchr_iter(first, hay).any(|i| {
                self.all_digits
                    .iter()
                    .filter(starts)
                    .any(|l| hay[i..].starts_with(l))
            })
        })
    }
}
