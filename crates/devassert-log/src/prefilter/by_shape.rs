//! The catalog's answer for a line known by its shape (`reader::shape_rows`):
//! a line meets no requirement set exactly when its literals without a
//! digit meet none (the same for every line of its shape: such a literal
//! matches only between digits) and its literals with a digit, and those
//! that end it, meet none either (looked for in the line itself).

use super::Prefilter;
use crate::text::shape_afresh;

impl Prefilter {
    /// Whether `hay`'s literals without an ASCII digit meet a requirement
    /// set: the same answer for every line of `hay`'s shape.
    pub fn digit_free_sets_met(&self, hay: &[u8]) -> bool {
        let mut seen = vec![0u64; self.sets.div_ceil(64)];
        self.walk(&self.digit_free, hay, &mut seen)
    }

    /// Whether `hay`'s literals with a digit, or those that end it, meet a
    /// requirement set. With [`Prefilter::digit_free_sets_met`] false and no
    /// regex run on every line (`looks_at_everything`), false means
    /// `catalog_matches` finds nothing in `hay`: no set is met, so no regex
    /// is asked.
    pub fn digit_or_end_sets_met(&self, hay: &[u8], seen: &mut Vec<u64>) -> bool {
        seen.clear();
        seen.resize(self.sets.div_ceil(64), 0);
        (self.may_hold_digit_literal(hay) && self.walk(&self.digit_literals, hay, seen))
            | self.end_sets(hay, seen)
    }

    /// Whether a line of shape `shape` (`text::shape_into`) may hold a
    /// literal with a digit but for those of digits alone, or end with one
    /// of the literals that end a line: a literal in a line has its own
    /// shape in the line's (a run of digits in the literal lies in a run of
    /// the line's), so where none is and [`Prefilter::all_digit_literal_in`]
    /// finds none in a line of the shape, [`Prefilter::digit_or_end_sets_met`]
    /// is false for it.
    pub fn digit_or_end_may_be_in_shape(&self, shape: &[u8]) -> bool {
        let built = self.digit_literals.get(&self.literals);
        if built.iter().any(|c| c.ac.is_none()) {
            // Every literal of the kind counts as found (see `walk`).
            return true;
        }
        let same = |w: &[u8], s: &[u8], folded: bool| {
            if folded {
                w.eq_ignore_ascii_case(s)
            } else {
                w == s
            }
        };
        let end = shape.trim_ascii_end();
        let lits = &self.shape_literals;
        lits.with_digits
            .iter()
            .any(|(s, f)| shape.windows(s.len()).any(|w| same(w, s, *f)))
            || lits
                .ends
                .iter()
                .any(|(s, f)| end.len() >= s.len() && same(&end[end.len() - s.len()..], s, *f))
    }

    /// Whether one of the catalog's literals of digits alone (`255`) is in
    /// `hay` (where it is, it is in a run of digits).
    pub fn all_digit_literal_in(&self, hay: &[u8]) -> bool {
        // Short rows: each first digit found, then compared.
        self.shape_literals.all_digits.iter().any(|l| {
            let first = l.first().copied().unwrap_or(b'0');
            memchr::memchr_iter(first, hay).any(|i| hay[i..].starts_with(l))
        })
    }
}

/// The catalog's literals as the questions above ask for them, found once.
pub(super) struct ShapeLiterals {
    /// Those of digits alone.
    all_digits: Vec<Vec<u8>>,
    /// The shapes of the others with a digit, and of those that end a line
    /// (each with whether it is folded; none empty: an empty one is in
    /// every line, and `digit_literals` then holds the shape `0`).
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
        ShapeLiterals {
            all_digits: literals
                .iter()
                .map(|(l, _)| l)
                .filter(|l| all_digits(l))
                .cloned()
                .collect(),
            with_digits: literals
                .iter()
                .filter(|(l, _)| (digits(l) && !all_digits(l)) || l.is_empty())
                .map(|(l, f)| shaped(l, *f))
                .collect(),
            ends: ends.iter().map(|(l, f, _)| shaped(l, *f)).collect(),
        }
    }
}
