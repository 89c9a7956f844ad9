//! The distinct (rank, block, thread) triples of an assertion group, kept
//! up to a cap: as 64-bit masks of 64 consecutive thread x coordinates, so
//! that a run of threads of one block (thread 37, 38, 39, … of block 12, as
//! a failing kernel prints them) is counted with one or two table updates,
//! not one hash insert per thread. It holds exactly the triples a set of
//! triples filled in the same order would hold, and its length is theirs.

use std::collections::HashMap;

/// Distinct (rank, block, thread) triples remembered per group.
pub const MAX_TRIPLES: usize = 1 << 16;

/// Hashes the (rank, block, thread) coordinates counted for every thread
/// line: aHash, keyed per process so that a log cannot aim its coordinates
/// at one bucket (std's SipHash was a tenth of the time spent counting
/// thread lines).
pub type CoordState = ahash::RandomState;

/// Thread x coordinates one mask holds.
const SPAN: u32 = 64;

/// A mask's place: every coordinate of its triples but x's low six bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Chunk {
    rank: i64,
    block: [u32; 3],
    /// Thread x / 64, y, z.
    thread: [u32; 3],
}

/// Distinct triples, at most `cap` of them: once full, those that come later
/// are not kept, and [`ThreadSet::capped`] says that some did.
#[derive(Debug, Clone)]
pub struct ThreadSet {
    masks: HashMap<Chunk, u64, CoordState>,
    len: usize,
    cap: usize,
    capped: bool,
}

impl Default for ThreadSet {
    /// Up to [`MAX_TRIPLES`].
    fn default() -> Self {
        ThreadSet::with_cap(MAX_TRIPLES)
    }
}

impl ThreadSet {
    pub fn with_cap(cap: usize) -> Self {
        ThreadSet {
            masks: HashMap::default(),
            len: 0,
            cap,
            capped: false,
        }
    }

    /// Distinct triples held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a triple came that was not held and did not fit.
    pub fn capped(&self) -> bool {
        self.capped
    }

    pub fn insert(&mut self, rank: i64, block: [u32; 3], thread: [u32; 3]) {
        self.insert_run(rank, block, thread, 1);
    }

    /// Inserts the `n` threads from `first` on along x (x, x + 1, … as far
    /// as a u32 goes), in that order: when the cap is reached midway, the
    /// first of them that fit are held, as `n` single inserts would hold.
    pub fn insert_run(&mut self, rank: i64, block: [u32; 3], first: [u32; 3], n: u32) {
        let [x, y, z] = first;
        let last = x.saturating_add(n.saturating_sub(1));
        let mut lo = x;
        while n > 0 && lo <= last {
            // Whatever cannot be held is not looked at once the cap was passed.
            if self.capped {
                return;
            }
            let hi = (lo | (SPAN - 1)).min(last);
            let key = Chunk {
                rank,
                block,
                thread: [lo / SPAN, y, z],
            };
            let bits = mask(lo % SPAN, hi % SPAN);
            self.add(key, bits);
            match hi.checked_add(1) {
                Some(next) => lo = next,
                None => return,
            }
        }
    }

    /// Adds the threads `bits` of chunk `key`, lowest first while they fit.
    fn add(&mut self, key: Chunk, bits: u64) {
        let room = self.cap - self.len;
        // One look-up where the chunk is held (most threads of a run).
        match self.masks.get_mut(&key) {
            Some(held) => {
                let new = fitting(bits & !*held, room, &mut self.capped);
                *held |= new;
                self.len += new.count_ones() as usize;
            }
            None => {
                let new = fitting(bits, room, &mut self.capped);
                if new != 0 {
                    self.masks.insert(key, new);
                    self.len += new.count_ones() as usize;
                }
            }
        }
    }

    pub fn contains(&self, rank: i64, block: [u32; 3], thread: [u32; 3]) -> bool {
        let [x, y, z] = thread;
        let key = Chunk {
            rank,
            block,
            thread: [x / SPAN, y, z],
        };
        self.masks
            .get(&key)
            .is_some_and(|m| m & (1 << (x % SPAN)) != 0)
    }

    /// Every triple held, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, [u32; 3], [u32; 3])> + '_ {
        self.masks.iter().flat_map(|(k, &m)| {
            (0..SPAN).filter(move |i| m & (1 << i) != 0).map(move |i| {
                let [hi, y, z] = k.thread;
                (k.rank, k.block, [hi * SPAN + i, y, z])
            })
        })
    }
}

/// Bits `lo..=hi` (both below 64).
fn mask(lo: u32, hi: u32) -> u64 {
    (u64::MAX >> (SPAN - 1 - hi)) & (u64::MAX << lo)
}

/// The lowest bits of `new` that `room` more triples hold; `capped` set
/// where that is not all of them.
fn fitting(new: u64, room: usize, capped: &mut bool) -> u64 {
    if new.count_ones() as usize <= room {
        return new;
    }
    *capped = true;
    lowest(new, room)
}

/// The `n` lowest set bits of `bits`.
fn lowest(mut bits: u64, n: usize) -> u64 {
    let mut kept = 0;
    for _ in 0..n.min(SPAN as usize) {
        let low = bits & bits.wrapping_neg();
        kept |= low;
        bits ^= low;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::ThreadSet;
    use proptest::prelude::*;
    use std::collections::HashSet;

    type Triple = (i64, [u32; 3], [u32; 3]);

    /// What the reader counted before runs: one insert per triple into a
    /// set while it held fewer than `cap`, capped by the first that did not
    /// fit and was not held.
    fn single_inserts(triples: &[Triple], cap: usize) -> (HashSet<Triple>, bool) {
        let (mut set, mut capped) = (HashSet::new(), false);
        for &t in triples {
            if set.len() < cap {
                set.insert(t);
            } else if !set.contains(&t) {
                capped = true;
            }
        }
        (set, capped)
    }

    /// Runs of threads along x near chunk edges and u32's end, in a few
    /// ranks, blocks and (y, z).
    fn runs() -> impl Strategy<Value = Vec<(i64, [u32; 3], [u32; 3], u32)>> {
        let x = prop_oneof![0u32..200, (u32::MAX - 70)..=u32::MAX];
        let run = (
            -1i64..2,
            (0u32..3).prop_map(|b| [b, 0, 0]),
            (x, 0u32..2).prop_map(|(x, y)| [x, y, 0]),
            0u32..140,
        );
        proptest::collection::vec(run, 0..12)
    }

    proptest! {
        /// Runs hold and count what one insert per thread held and
        /// counted, caps reached midway included.
        #[test]
        fn runs_count_as_single_inserts(runs in runs(), cap in prop_oneof![1usize..40, Just(1 << 16)]) {
            let mut set = ThreadSet::with_cap(cap);
            let mut each = Vec::new();
            for &(rank, block, [x, y, z], n) in &runs {
                set.insert_run(rank, block, [x, y, z], n);
                each.extend((0..n).map_while(|i| x.checked_add(i)).map(|x| (rank, block, [x, y, z])));
            }
            let (want, capped) = single_inserts(&each, cap);
            let held: HashSet<Triple> = set.iter().collect();
            prop_assert_eq!(set.len(), want.len());
            prop_assert_eq!(held.len(), want.len());
            prop_assert_eq!(&held, &want);
            prop_assert_eq!(set.capped(), capped);
            for t in &each {
                prop_assert_eq!(set.contains(t.0, t.1, t.2), want.contains(t));
            }
        }
    }
}
