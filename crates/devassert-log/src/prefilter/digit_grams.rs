//! Where the catalog's literals that hold a digit may be: three bytes of
//! each that hold its first digit (from the byte before it where there is
//! room), in each casing they match, as bits of a table. A line that holds
//! none of them holds none of those literals, and is not walked for them:
//! the walk is as costly as the one for all the others, and most lines with
//! numbers in them (`line 1 column 345`) hold none (`-1`, `Target 255 …`).
//! A window whose bit is set is compared with the grams themselves: grams
//! share bits, and one line in seven of a log of handled JSON errors was
//! walked for a shared bit alone.

/// Windows whose bit is set but that are none of the grams, compared before
/// a line is taken to hold one.
const NEAR_MISSES: usize = 16;

/// The bits of the table: 8 KiB.
const GRAM_BITS: usize = 1 << 16;

pub(super) struct DigitGrams {
    bits: Box<[u64]>,
    /// The grams themselves, sorted.
    grams: Box<[[u8; 3]]>,
}

impl DigitGrams {
    /// The grams of `literals` (bytes, folded) that hold a digit; None when
    /// one of them is shorter than three bytes.
    pub(super) fn new(literals: &[(Vec<u8>, bool)]) -> Option<Self> {
        let mut bits = vec![0u64; GRAM_BITS / 64].into_boxed_slice();
        let mut grams = Vec::new();
        for (l, fold) in literals {
            let Some(i) = l.iter().position(u8::is_ascii_digit) else {
                continue;
            };
            let at = i.saturating_sub(1).min(l.len().saturating_sub(3));
            let &[a, b, c] = l.get(at..at + 3)? else {
                return None;
            };
            let cases = |c: u8| match fold {
                true => [c.to_ascii_lowercase(), c.to_ascii_uppercase()],
                false => [c; 2],
            };
            // Every casing of the three (one is a digit).
            for a in cases(a) {
                for b in cases(b) {
                    for c in cases(c) {
                        let i = gram_bit(&[a, b, c]);
                        bits[i / 64] |= 1 << (i % 64);
                        grams.push([a, b, c]);
                    }
                }
            }
        }
        grams.sort_unstable();
        grams.dedup();
        Some(DigitGrams {
            bits,
            grams: grams.into(),
        })
    }

    /// Whether `hay` holds one of the grams (or may), looked for around each
    /// digit of it: the bit first, then the grams, up to [`NEAR_MISSES`]
    /// windows whose bit is set for other grams; past them it may (a line
    /// of many numbers, a progress bar's thousands, is walked once rather
    /// than compared window by window to its end).
    pub(super) fn may_hold(&self, hay: &[u8]) -> bool {
        let mut near = 0;
        let mut set = |w: &[u8]| {
            let i = gram_bit(w);
            if self.bits[i / 64] >> (i % 64) & 1 == 0 {
                return false;
            }
            near += 1;
            near > NEAR_MISSES || self.grams.binary_search(&[w[0], w[1], w[2]]).is_ok()
        };
        let mut from = 0;
        while let Some(d) = crate::text::next_digit(&hay[from..]).map(|i| from + i) {
            if (d.saturating_sub(2)..=d).any(|s| hay.get(s..s + 3).is_some_and(&mut set)) {
                return true;
            }
            from = d + 1;
        }
        false
    }
}

/// A gram's bit: below `GRAM_BITS` (the third byte is folded into the first two).
fn gram_bit(w: &[u8]) -> usize {
    ((usize::from(w[0]) << 8) | usize::from(w[1])) ^ (usize::from(w[2]) << 5)
}
