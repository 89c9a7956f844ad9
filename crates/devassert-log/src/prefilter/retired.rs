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

use super::{sets_memo, Prefilter, Target};
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

/// The prefilter's side: which regex a recorded pattern retires, and
/// which searched lines were passed for retired regexes alone.
impl Prefilter {
    /// No regex is retired yet: bits for a reader of this prefilter.
    pub fn retired(&self) -> Retired {
        Retired::new(self.patterns.len())
    }

    /// The reader has recorded `log` pattern `i` (`recorded`: whether it
    /// has recorded a pattern): its regex is retired when it stands for
    /// recorded `log` patterns alone (a host message is counted at every
    /// line: a regex with one is never retired).
    pub fn retire(&self, i: usize, recorded: impl Fn(usize) -> bool, retired: &mut Retired) {
        let Some(&r) = self.log_regex.get(&i) else {
            return;
        };
        let done = self.patterns[r].1.targets.iter().all(|t| match *t {
            Target::Log(j) => recorded(j),
            Target::Cpu(_) => false,
        });
        if done {
            retired.set(r);
        }
    }

    /// Whether a line searched with the regexes `then` retired mattered
    /// only by the sets of regexes retired since (by `now`): it holds no
    /// trigger, met a regex's sets with `then` and meets none with `now`.
    pub fn kept_only_by_retired(&self, line: &[u8], then: &[u64], now: &[u64]) -> bool {
        !self.unfiltered
            && !self.triggers.is_match(line)
            && sets_memo::with_thread_memo(self.id, |memo| self.sets_seen_memo(line, memo))
                .is_some_and(|seen| {
                    self.required(&seen, then).next().is_some()
                        && self.required(&seen, now).next().is_none()
                })
    }
}
