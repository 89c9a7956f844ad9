//! The catalog regexes a reader wants no more, by their index in the
//! prefilter's `patterns`. The reader keeps only the first match of a `log`
//! pattern (its captures included) and asks no more of it after that
//! (`Reader::evidence`), so a regex that stands for `log` patterns alone is
//! retired once each of them is recorded: a line that meets only retired
//! regexes' literal sets is not passed on. transformers' warnings, each
//! naming a path inside the library (the `hf` fact), were read in full one
//! by one, for a flag their first line had already set.
//!
//! The search of a buffer, made before the reader takes the buffer in,
//! hands back the bits it ran with. A bit set since was set by a line
//! earlier in the buffer, so the search passed on every line the reader's
//! bits would; the reader drops the rest
//! (`Prefilter::kept_only_by_retired`), and what it reads does not depend
//! on whether a stretch was searched ahead.

/// One reader's retired regexes (see the module).
pub struct Retired {
    bits: Vec<u64>,
}

impl Retired {
    /// Room for `regexes` bits, none set.
    pub fn new(regexes: usize) -> Self {
        Retired {
            bits: vec![0; regexes.div_ceil(64)],
        }
    }

    /// The bits as the reader has them now.
    pub fn bits(&self) -> &[u64] {
        &self.bits
    }

    pub(super) fn set(&mut self, regex: usize) {
        if let Some(w) = self.bits.get_mut(regex / 64) {
            *w |= 1u64 << (regex % 64);
        }
    }
}

/// Whether `regex` is retired in `bits` (an empty slice: none is).
pub(super) fn is_retired(bits: &[u64], regex: usize) -> bool {
    bits.get(regex / 64)
        .is_some_and(|w| w & (1 << (regex % 64)) != 0)
}
