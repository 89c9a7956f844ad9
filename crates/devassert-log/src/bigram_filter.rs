//! A filter that tells, several bytes per cycle, where none of a few hundred
//! literals can end, so that the exact automaton (`literal_dfa`) walks only
//! the few lines that may hold one. It is a bucketed shift-or over bigrams,
//! the idea of Hyperscan's FDR matcher:
//!
//! - Each literal is cut to a window of at most nine bytes (its rarest, see
//!   `window`) and put in one of eight buckets.
//! - A table indexed by the two bytes at a position says, per bucket, and
//!   per distance 0..8 from the window's end, whether some window of the
//!   bucket has that bigram there (a 0 bit: may; a 1 bit: no).
//! - OR-ing the entries of the last few positions, each shifted by its
//!   distance, leaves a 0 bit exactly where some bucket has all its bigrams
//!   in place: a candidate. Collisions only let more lines through; a line
//!   that holds a literal always has a candidate.
//!
//! Why: the DFA must walk every byte and each step waits on the one before
//! (about 0.9 GB/s here); this walks eight positions with independent
//! loads (about 3 GB/s), and a training log's lines are mostly progress
//! output that holds no literal.

/// Distances 0..LANES from a window's end that the table records; a window
/// spans LANES + 1 bytes.
const LANES: usize = 8;
const BUCKETS: usize = 8;
const WINDOW: usize = LANES + 1;

/// One literal as the bytes each of its positions may hold.
pub type Pattern = Vec<Vec<u8>>;

pub struct BigramFilter {
    /// Indexed by the little-endian u16 of (byte before, byte): bit
    /// `8 * distance + bucket` clear when some window of the bucket has
    /// that bigram ending `distance` bytes before its end.
    table: Vec<u64>,
}

impl BigramFilter {
    /// None when a pattern has fewer than two positions (a single byte is no
    /// bigram; such a literal filters nothing anyway).
    pub fn new(patterns: &[Pattern]) -> Option<Self> {
        if patterns.iter().any(|p| p.len() < 2) || patterns.is_empty() {
            return None;
        }
        let windows: Vec<&[Vec<u8>]> = patterns.iter().map(|p| window(p)).collect();
        let mut table = vec![u64::MAX; 1 << 16];
        // Bits that accept any bigram: a window shorter than the table's reach.
        let mut anything = 0u64;
        for (bucket, members) in buckets(&windows).iter().enumerate() {
            for w in members {
                let n = w.len();
                for d in 0..LANES {
                    let bit = 1u64 << (8 * d + bucket);
                    if d + 1 >= n {
                        anything |= bit;
                        continue;
                    }
                    for &a in &w[n - 2 - d] {
                        for &b in &w[n - 1 - d] {
                            table[usize::from(u16::from_le_bytes([a, b]))] &= !bit;
                        }
                    }
                }
            }
        }
        table.iter_mut().for_each(|t| *t &= !anything);
        Some(BigramFilter { table })
    }

    /// The first place after `from` (a line's start) where a window may end,
    /// looking at `hay[from..]` only. Every literal of the patterns that
    /// lies wholly in `hay[from..]` has its window's end at or after the
    /// place returned.
    pub fn next_candidate(&self, hay: &[u8], from: usize) -> Option<usize> {
        // Bits for the positions from p on, from bigrams already seen (none yet: all may).
        #[cfg(target_arch = "x86_64")]
        let (mut p, mut pending) = match self.blocks(hay, from + 1) {
            (Some(found), ..) => return Some(found),
            (None, next, carry) => (next, carry),
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (mut p, mut pending) = (from + 1, 0u64);
        let t = self.table.as_slice();
        while p < hay.len() {
            let w = u16::from_le_bytes([hay[p - 1], hay[p]]);
            pending |= t[usize::from(w)];
            if pending & 0xFF != 0xFF {
                return Some(p);
            }
            pending >>= 8;
            p += 1;
        }
        None
    }

    /// Eight positions a step with SSE2 (x86_64's baseline): the entries of
    /// positions `base + i` are shifted `i` bytes and OR-ed into one vector
    /// whose low eight bytes are then final. Returns the candidate, or
    /// where it stopped with the bits pending for the positions after.
    #[cfg(target_arch = "x86_64")]
    fn blocks(&self, hay: &[u8], mut base: usize) -> (Option<usize>, usize, u64) {
        use std::arch::x86_64::*;
        let t = self.table.as_slice();
        // SAFETY: SSE2 is part of x86_64. Each step reads hay[base - 1 ..
        // base + 11], in bounds by the loop's condition; the table has
        // 2^16 entries, so every u16 index is in bounds.
        unsafe {
            let mut carry = _mm_setzero_si128();
            while base >= 1 && base + 11 <= hay.len() {
                let at = hay.as_ptr().add(base - 1);
                let x = std::ptr::read_unaligned(at as *const u64);
                let y = std::ptr::read_unaligned(at.add(4) as *const u64);
                macro_rules! entry {
                    ($i:literal) => {{
                        let w = if $i < 4 {
                            x >> (8 * $i)
                        } else {
                            y >> (8 * ($i - 4))
                        };
                        let e = *t.get_unchecked((w & 0xFFFF) as usize);
                        _mm_slli_si128::<$i>(_mm_cvtsi64_si128(e as i64))
                    }};
                }
                // Two chains of ORs, so that they overlap.
                let a = _mm_or_si128(_mm_or_si128(carry, entry!(0)), entry!(2));
                let b = _mm_or_si128(entry!(1), entry!(3));
                let a = _mm_or_si128(_mm_or_si128(a, entry!(4)), entry!(6));
                let b = _mm_or_si128(_mm_or_si128(b, entry!(5)), entry!(7));
                let acc = _mm_or_si128(a, b);
                let done = _mm_cvtsi128_si64(acc) as u64;
                if done != u64::MAX {
                    let q = (!done).trailing_zeros() as usize / 8;
                    return (Some(base + q), base, 0);
                }
                carry = _mm_srli_si128::<8>(acc);
                base += 8;
            }
            // Bits for base..base + 7 in the scalar loop's layout.
            (None, base, _mm_cvtsi128_si64(carry) as u64)
        }
    }
}

/// The part of a literal the table records: all of a short one, else the
/// nine bytes least likely in a training log (capitals, digits, `_` and
/// punctuation over lower-case letters and spaces; the earliest of equals),
/// so that `embed_tokens` is looked for as `embed_tok`, not in every `tokens/s`.
fn window(p: &[Vec<u8>]) -> &[Vec<u8>] {
    if p.len() <= WINDOW {
        return p;
    }
    let rarity = |allowed: &Vec<u8>| -> u32 {
        match allowed.as_slice() {
            [b' '] => 0,
            [c] if b"qxzjkvwy".contains(c) => 2,
            [c] if c.is_ascii_lowercase() || c.is_ascii_digit() => 1,
            [_] => 3,
            // A letter in either case (a case-insensitive word) as a letter.
            [a, b] if a.eq_ignore_ascii_case(b) && a.is_ascii_alphabetic() => {
                1 + u32::from(b"qxzjkvwy".contains(&a.to_ascii_lowercase()))
            }
            // A class (a word boundary's neighbours) filters little.
            _ => 0,
        }
    };
    let best = (0..=p.len() - WINDOW)
        .max_by_key(|&s| {
            let score: u32 = p[s..s + WINDOW].iter().map(rarity).sum();
            (score, std::cmp::Reverse(s))
        })
        .unwrap_or(0);
    &p[best..best + WINDOW]
}

/// Windows of one length share buckets: a bucket filters only as far as
/// its shortest window reaches. Short windows, which let more text through,
/// get more buckets each; similar windows (casings of one word) stay together.
fn buckets<'a>(windows: &[&'a [Vec<u8>]]) -> Vec<Vec<&'a [Vec<u8>]>> {
    let mut groups: Vec<Vec<&[Vec<u8>]>> = vec![Vec::new(); WINDOW + 1];
    for w in windows {
        groups[w.len()].push(w);
    }
    let folded =
        |w: &&[Vec<u8>]| -> Vec<Vec<u8>> { w.iter().map(|s| s.to_ascii_lowercase()).collect() };
    groups.iter_mut().for_each(|g| g.sort_by_cached_key(folded));
    let used: Vec<usize> = (0..groups.len())
        .filter(|&n| !groups[n].is_empty())
        .collect();
    let mut shares: Vec<usize> = vec![0; groups.len()];
    for &n in &used {
        shares[n] = 1;
    }
    // Hand out the rest one at a time to the group most crowded, weighed
    // by how little its windows filter (shorter: less).
    for _ in used.len()..BUCKETS {
        let need = |n: usize| groups[n].len() << (WINDOW - n);
        if let Some(&n) = used
            .iter()
            .filter(|&&n| shares[n] < groups[n].len())
            .max_by_key(|&&n| (need(n) / shares[n], std::cmp::Reverse(n)))
        {
            shares[n] += 1;
        }
    }
    let mut out: Vec<Vec<&[Vec<u8>]>> = Vec::new();
    for &n in &used {
        let g = &groups[n];
        let k = shares[n];
        for c in 0..k {
            out.push(g[c * g.len() / k..(c + 1) * g.len() / k].to_vec());
        }
    }
    // More lengths than buckets cannot happen (WINDOW - 1 lengths, 8 buckets).
    debug_assert!(out.len() <= BUCKETS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn literal(s: &[u8]) -> Pattern {
        s.iter().map(|&b| vec![b]).collect()
    }

    /// Every place a literal's window can end in `hay[from..]` is at or after the candidate.
    fn first_end(pats: &[Pattern], hay: &[u8], from: usize) -> Option<usize> {
        (from..hay.len()).find(|&e| {
            pats.iter().any(|p| {
                let w = window(p);
                let n = w.len();
                e + 1 >= from + n
                    && w.iter()
                        .enumerate()
                        .all(|(i, allowed)| allowed.contains(&hay[e + 1 - n + i]))
            })
        })
    }

    #[test]
    fn finds_what_is_there_and_passes_what_is_not() {
        let pats: Vec<Pattern> = [&b"Assertion"[..], b"inf", b"-1,", b"\\n", b".cu"]
            .iter()
            .map(|l| literal(l))
            .collect();
        let f = BigramFilter::new(&pats).expect("patterns");
        let quiet =
            b"{'loss': 2.5149, 'grad_norm': 1.9528, 'learning_rate': 5.000e-05}\n".repeat(40);
        assert_eq!(f.next_candidate(&quiet, 0), None);
        let mut hay = quiet.clone();
        hay.extend_from_slice(b"x/Indexing.cu:1422: Assertion `srcIndex` failed.\n");
        let at = f.next_candidate(&hay, 0).expect("a candidate");
        assert!(at >= quiet.len() && at <= quiet.len() + 12, "{at}");
        // A literal in the last few bytes (the scalar tail) is found too.
        let mut tail = quiet.clone();
        tail.extend_from_slice(b"inf");
        assert_eq!(f.next_candidate(&tail, 0), Some(tail.len() - 1));
        assert!(BigramFilter::new(&[literal(b"x")]).is_none());
    }

    proptest! {
        /// Never a literal before the candidate: on random text over a small
        /// alphabet with literals planted, from any line start.
        #[test]
        fn no_literal_is_passed_over(
            lits in prop::collection::vec(prop::collection::vec(b'a'..=b'h', 2..12), 1..40),
            noise in prop::collection::vec(prop::sample::select(b"abcdefgh \n,-".to_vec()), 0..600),
            plant in prop::collection::vec((0usize..600, 0usize..40), 0..4),
            from in 0usize..64,
        ) {
            let pats: Vec<Pattern> = lits.iter().map(|l| literal(l)).collect();
            let f = BigramFilter::new(&pats).expect("patterns");
            let mut hay = noise.clone();
            for (at, which) in plant {
                let l = &lits[which % lits.len()];
                let at = at.min(hay.len());
                hay.splice(at..at, l.iter().copied());
            }
            let from = from.min(hay.len());
            let want = first_end(&pats, &hay, from);
            let got = f.next_candidate(&hay, from);
            match (want, got) {
                (Some(w), Some(g)) => prop_assert!(g <= w, "candidate {} after an end at {}", g, w),
                (Some(w), None) => prop_assert!(false, "no candidate, an end at {}", w),
                _ => {}
            }
        }
    }
}
