//! The catalog regexes a reader wants no more, by their index in the
//! prefilter's `patterns`. The reader keeps only the first match of a `log`
//! pattern (its captures included) and asks no more of it after that
//! (`Reader::evidence`), so a regex that stands for `log` patterns alone is
//! retired once each of them is recorded: a line that meets only retired
//! regexes' literal sets is not passed on. transformers' warnings, each
//! naming a path inside the library (the `hf` fact), were read in full one
//! by one, for a flag their first line had already set.
//!
//! The reader sets the bits (`own`) and mirrors them where the search
//! thread reads them (`shared`); the search takes one snapshot per buffer
//! and hands it back with what it found. A bit it sees was set by a line
//! before the buffer, so it passes on every line the reader's own bits
//! would; the reader drops the rest (`Prefilter::kept_only_by_retired`),
//! and what it reads does not depend on how far ahead the search ran.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One reader's retired regexes (see the module).
pub struct Retired {
    own: Vec<u64>,
    shared: Arc<[AtomicU64]>,
}

/// The search thread's view of a reader's [`Retired`].
#[derive(Clone)]
pub struct RetiredView(Arc<[AtomicU64]>);

impl Retired {
    /// Room for `regexes` bits, none set.
    pub fn new(regexes: usize) -> Self {
        let words = regexes.div_ceil(64);
        Retired {
            own: vec![0; words],
            shared: (0..words).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The bits as the reader has them now.
    pub fn bits(&self) -> &[u64] {
        &self.own
    }

    pub fn view(&self) -> RetiredView {
        RetiredView(Arc::clone(&self.shared))
    }

    pub(super) fn set(&mut self, regex: usize) {
        let (word, bit) = (regex / 64, 1u64 << (regex % 64));
        if let Some(w) = self.own.get_mut(regex / 64) {
            *w |= bit;
            // Only when the search sees it matters, not in which order.
            self.shared[word].fetch_or(bit, Ordering::Relaxed);
        }
    }
}

impl RetiredView {
    /// The bits set so far.
    pub fn snapshot(&self) -> Vec<u64> {
        self.0.iter().map(|w| w.load(Ordering::Relaxed)).collect()
    }
}

/// Whether `regex` is retired in `bits` (an empty slice: none is).
pub(super) fn is_retired(bits: &[u64], regex: usize) -> bool {
    bits.get(regex / 64)
        .is_some_and(|w| w & (1 << (regex % 64)) != 0)
}
