//! A short buffer (a log of a few lines) searched without the DFA and
//! filters of `Automata`: building those was a third of explaining a short
//! log (an Aho-Corasick NFA, tried, still cost 7 M instructions to build).
//! Here each place is compared with the literals that start with its two
//! bytes, found by a table sorted once: every literal's ends, in any case, as the DFA
//! reports them, so that `keep_lines` keeps the lines it keeps for the DFA
//! over every byte (`search_with(None, …)`, which the other searches match).

use super::searcher::{newlines, Kept, Line, LineSearch, SmallSearch};

/// Buckets of literals, by their first two bytes (folded), hashed.
const BUCKETS: usize = 1 << 12;

/// The bucket of the two bytes at a literal's start or at a place in the text.
fn bucket(a: u8, b: u8) -> usize {
    let pair = (usize::from(a.to_ascii_lowercase()) << 8) | usize::from(b.to_ascii_lowercase());
    (pair.wrapping_mul(0x9E37_79B1) >> 16) % BUCKETS
}

impl SmallSearch {
    /// The literals (none empty: `LiteralDfa::fits` said so) by bucket;
    /// those of one byte apart, tried at every byte.
    pub(super) fn new(literals: &[Vec<u8>]) -> Self {
        let mut starts = vec![0u32; BUCKETS + 1];
        let of = |l: &Vec<u8>| (l.len() >= 2).then(|| bucket(l[0], l[1]));
        literals
            .iter()
            .filter_map(of)
            .for_each(|k| starts[k + 1] += 1);
        for k in 0..BUCKETS {
            starts[k + 1] += starts[k];
        }
        let mut ids = vec![0u32; starts[BUCKETS] as usize];
        let mut next = starts.clone();
        let mut single = Vec::new();
        for (id, l) in (0u32..).zip(literals) {
            match of(l) {
                Some(k) => {
                    ids[next[k] as usize] = id;
                    next[k] += 1;
                }
                None => single.push(id),
            }
        }
        // The single bytes last in `ids`, as their own run.
        let singles = ids.len() as u32..(ids.len() + single.len()) as u32;
        ids.extend(single);
        SmallSearch {
            starts,
            ids,
            singles,
        }
    }
}

impl LineSearch {
    /// The lines of `hay` that `lines` keeps, found by the compares.
    pub fn search_small<M>(
        &self,
        hay: &[u8],
        max_line: usize,
        retired: &[u64],
        matters: &M,
    ) -> (Vec<Line>, u64)
    where
        M: Fn(&[u8]) -> bool,
    {
        let small = self.small.get_or_init(|| SmallSearch::new(&self.literals));
        // (end, where the literal is in `small.ids`), in order of their ends.
        let mut hits: Vec<(usize, u32)> = Vec::new();
        let mut found = |i: usize, run: std::ops::Range<u32>| {
            for at in run {
                let l = &self.literals[small.ids[at as usize] as usize];
                if hay[i..].len() >= l.len() && hay[i..i + l.len()].eq_ignore_ascii_case(l) {
                    hits.push((i + l.len(), at));
                }
            }
        };
        for i in 0..hay.len() {
            if let Some(&b) = hay.get(i + 1) {
                let k = bucket(hay[i], b);
                found(i, small.starts[k]..small.starts[k + 1]);
            }
            found(i, small.singles.clone());
        }
        hits.sort_by_key(|&(end, _)| end);
        let at = |at: u32| &small.ids[at as usize..][..1];
        let mut kept = Kept::default();
        self.keep_lines(hay, &hits, &at, max_line, retired, matters, &mut kept);
        let total = kept.before + newlines(&hay[kept.counted..]);
        (kept.lines, total)
    }
}
