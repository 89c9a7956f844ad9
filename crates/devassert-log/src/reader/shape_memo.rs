//! What the reader keeps of traceback rows known by their shape (the
//! reading is in `shape_rows`).

use std::collections::{HashMap, HashSet};

/// Shapes kept at most, each at most `memo_rows::MAX_ROW` bytes: about
/// 0.5 MiB.
const MAX_SHAPES: usize = 1024;
/// Shapes seen once, by hash, before they are looked at.
const MAX_SEEN: usize = 8192;

/// What rows of a known shape are read by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ByShape {
    /// The length of their prefixes' shape.
    pub(super) prefixes: usize,
    /// Whether they may hold one of the catalog's literals with a digit
    /// (but for those of digits alone, looked for in each row) or one that
    /// ends a line (else none of them does: see
    /// `Prefilter::digit_or_end_may_be_in_shape`).
    pub(super) digit_literals: bool,
    /// Whether they may hold a notebook place (`notebook::may_hold_place`:
    /// else none of them does).
    pub(super) notebook: bool,
}

#[derive(Default)]
pub(super) struct ShapeRows {
    /// Shapes looked at: how rows of each are read by shape, where they are.
    pub(super) known: HashMap<Box<[u8]>, Option<ByShape>, ahash::RandomState>,
    seen: HashSet<u64, ahash::RandomState>,
    /// The shape last made (kept to reuse its allocation).
    shape: Vec<u8>,
    /// The catalog's sets a row met (kept to reuse its allocation).
    pub(super) sets: Vec<u64>,
    /// No row is read by shape: the full path, for the tests to compare.
    #[cfg(test)]
    pub(super) off: bool,
}

/// What is kept of a row's shape.
pub(super) enum Look {
    /// Rows of its shape are read by it.
    Known(ByShape),
    /// They are not, or its shape was not seen before (now it has been).
    Not,
    /// Its shape is seen the second time: to be looked at (see `keep`).
    Second,
}

impl ShapeRows {
    /// What is kept of `raw`'s shape, made here (afresh: a row read by
    /// shape is shaped once).
    pub(super) fn look(&mut self, raw: &[u8]) -> Look {
        crate::text::shape_afresh(raw, &mut self.shape);
        match self.known.get(self.shape.as_slice()) {
            Some(&Some(by)) => Look::Known(by),
            Some(None) => Look::Not,
            None => {
                let h = self.seen.hasher().hash_one(&self.shape);
                if self.seen.insert(h) {
                    if self.seen.len() > MAX_SEEN {
                        self.seen.clear();
                    }
                    return Look::Not;
                }
                Look::Second
            }
        }
    }

    /// The shape last looked up.
    pub(super) fn shape(&self) -> &[u8] {
        &self.shape
    }

    /// How rows of the shape last looked up (`Look::Second`) are read.
    pub(super) fn keep(&mut self, by: Option<ByShape>) {
        if self.known.len() >= MAX_SHAPES {
            self.known.clear();
        }
        self.known.insert(self.shape.as_slice().into(), by);
    }
}
