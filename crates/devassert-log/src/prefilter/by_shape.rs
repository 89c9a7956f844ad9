//! The catalog's answer for a line known by its shape (`reader::shape_rows`):
//! a line meets no requirement set exactly when its literals without a
//! digit meet none (the same for every line of its shape: such a literal
//! matches only between digits) and its literals with a digit, and those
//! that end it, meet none either (looked for in the line itself).

use super::Prefilter;

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
}
