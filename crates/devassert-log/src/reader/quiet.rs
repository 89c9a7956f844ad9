//! Lines known to say nothing to the checks that cost the most per line
//! (the host-error table, the catalog's evidence): a log repeats its lines
//! (the frames of a traceback it logged and went on from, thousands of
//! times), and those checks are functions of the line's text whose "nothing
//! found" stays so (the evidence a line could add only shrinks as hits are
//! kept). A repeat is looked up instead of searched again. The same set
//! keeps the rows known to hold no device marker. A text is kept when it
//! is said the second time (the first time, its hash is noted): most lines
//! that never repeat then cost a hash, not a copy into a set that they
//! would only churn. Checks that look only for literals without a digit
//! keep their texts by shape ([`QuietShapes`]): an exception's message
//! that repeats with new numbers is then looked up too.

use std::collections::HashSet;

/// Texts kept at most, each at most [`MAX_TEXT`] bytes: about 0.5 MiB.
const MAX_LINES: usize = 1024;
const MAX_TEXT: usize = 512;
/// Texts said once, by hash, before they are kept.
const MAX_ONCE: usize = 8192;

#[derive(Default)]
pub(super) struct QuietLines {
    seen: HashSet<Box<str>, ahash::RandomState>,
    once: HashSet<u64, ahash::RandomState>,
}

impl QuietLines {
    pub(super) fn contains(&self, text: &str) -> bool {
        !self.seen.is_empty() && text.len() <= MAX_TEXT && self.seen.contains(text)
    }

    /// `text` said nothing to those checks. Full, the set starts again:
    /// lines that repeat come back into it at once.
    pub(super) fn insert(&mut self, text: &str) {
        if text.len() > MAX_TEXT {
            return;
        }
        let h = self.once.hasher().hash_one(text);
        if self.once.len() >= MAX_ONCE {
            self.once.clear();
        }
        if self.once.insert(h) {
            return;
        }
        if self.seen.len() >= MAX_LINES {
            self.seen.clear();
        }
        self.seen.insert(text.into());
    }
}

/// [`QuietLines`] for checks that look only for literals without an ASCII
/// digit (the device markers, the trigger words, the host-error table but
/// for the codes it reads): such a literal matches only between digits, so
/// a text and the same text with other numbers get the same answer. Texts
/// are kept by their shape: each run of digits one `0`.
#[derive(Default)]
pub(super) struct QuietShapes {
    shapes: QuietLines,
    /// The shape last made (kept to reuse its allocation).
    shape: Vec<u8>,
}

impl QuietShapes {
    pub(super) fn contains(&mut self, text: &str) -> bool {
        !self.shapes.seen.is_empty()
            && shape_of(text, &mut self.shape).is_some_and(|s| self.shapes.contains(s))
    }

    pub(super) fn insert(&mut self, text: &str) {
        if let Some(s) = shape_of(text, &mut self.shape) {
            self.shapes.insert(s);
        }
    }
}

/// `text`'s shape (`text::shape_into`; digits replaced by a digit, so
/// still text) in `buf`, or None past the length kept.
fn shape_of<'a>(text: &str, buf: &'a mut Vec<u8>) -> Option<&'a str> {
    if text.len() > MAX_TEXT {
        return None;
    }
    crate::text::shape_into(text.as_bytes(), buf);
    std::str::from_utf8(buf).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_is_known_whatever_its_numbers() {
        let mut q = QuietShapes::default();
        let first = "JSONDecodeError: Extra data: line 1 column 345 (char 678)";
        // Kept on its second sight, as lines are.
        q.insert(first);
        q.insert("JSONDecodeError: Extra data: line 1 column 9 (char 1)");
        assert!(q.contains("JSONDecodeError: Extra data: line 7 column 12 (char 99)"));
        assert!(!q.contains("JSONDecodeError: Extra data: line 1 column 345 (char x)"));
        assert!(!q.contains("JSONDecodeError: Extra data: line 1, column 345 (char 678)"));
        let mut s = Vec::new();
        crate::text::shape_into("a12b3 ü 4500".as_bytes(), &mut s);
        assert_eq!(s, "a0b0 ü 0".as_bytes());
    }
}
