//! A small seeded mutator for the bounded run on stable: the same seed
//! gives the same inputs in the same order, so a failure in CI replays
//! anywhere. It does what libFuzzer's default mutations do that matter for
//! parsers of lengths and headers: flip bits, plant boundary integers
//! (lengths, offsets, counts) at any offset, insert, erase and repeat
//! ranges, splice two inputs, cut the tail. For the parsers of text it
//! also does what a paste from a browser or a chat does to a log: at the
//! token boundaries of the real lines it starts from, it puts multi-byte
//! spaces, combining marks, bidi controls, zero-width characters and
//! invalid UTF-8 ([`mutate_text`]).

/// xorshift64*: enough for choosing mutations, and the same on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Integers that sit on the edges parsers get wrong: zero, one, sign
/// boundaries, all ones, powers of two around allocation sizes.
const EDGES: &[u64] = &[
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    1 << 20,
    1 << 30,
    1 << 32,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

/// Inputs are kept below this, so one input stays fast to run.
pub const MAX_LEN: usize = 1 << 20;

/// `input` changed by one to four mutations; `other` is a second input to splice from.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        // One in ten a character a paste makes: data files hold text too.
        if rng.below(10) == 0 {
            text(rng, &mut v);
        } else {
            one(rng, &mut v, other);
        }
    }
    v.truncate(MAX_LEN);
    v
}

/// [`mutate`] for a parser of text (logs, the catalog's lines): half of
/// the mutations put a character a paste makes at a token boundary.
pub fn mutate_text(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        if rng.below(2) == 0 {
            text(rng, &mut v);
        } else {
            one(rng, &mut v, other);
        }
    }
    v.truncate(MAX_LEN);
    v
}

/// Characters that are not what they look like, or not characters at all.
const PASTED: &[&[u8]] = &[
    // Whitespace of more than one byte: NEL, no-break, Ogham, en quad to
    // hair space, line and paragraph separators, narrow no-break,
    // medium mathematical, ideographic.
    "\u{85}".as_bytes(),
    "\u{a0}".as_bytes(),
    "\u{1680}".as_bytes(),
    "\u{2000}".as_bytes(),
    "\u{2007}".as_bytes(),
    "\u{2009}".as_bytes(),
    "\u{200a}".as_bytes(),
    "\u{2028}".as_bytes(),
    "\u{2029}".as_bytes(),
    "\u{202f}".as_bytes(),
    "\u{205f}".as_bytes(),
    "\u{3000}".as_bytes(),
    // Combining marks (they attach to the character before).
    "\u{301}".as_bytes(),
    "\u{308}".as_bytes(),
    "\u{20dd}".as_bytes(),
    "\u{fe0f}".as_bytes(),
    // Bidi controls.
    "\u{200e}".as_bytes(),
    "\u{200f}".as_bytes(),
    "\u{202a}".as_bytes(),
    "\u{202e}".as_bytes(),
    "\u{2066}".as_bytes(),
    "\u{2069}".as_bytes(),
    "\u{61c}".as_bytes(),
    // Zero-width and invisible.
    "\u{200b}".as_bytes(),
    "\u{200c}".as_bytes(),
    "\u{200d}".as_bytes(),
    "\u{2060}".as_bytes(),
    "\u{feff}".as_bytes(),
    "\u{ad}".as_bytes(),
    // Wide, and outside the BMP.
    "\u{ff1a}".as_bytes(),
    "\u{1f525}".as_bytes(),
    // Invalid UTF-8: a lone continuation, cut sequences, an overlong
    // slash, a surrogate, bytes never valid.
    b"\x80",
    b"\xc2",
    b"\xe2\x80",
    b"\xf0\x9f\x94",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xf5",
    b"\xff",
];

/// Whether a byte separates tokens of a log line: what the parsers split at.
fn separator(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b':'
            | b'['
            | b']'
            | b'('
            | b')'
            | b','
            | b'/'
            | b'\\'
            | b'`'
            | b'\''
            | b'"'
            | b'='
            | b'.'
            | b'<'
            | b'>'
    )
}

/// A pasted character at a token boundary: replacing a space or a tab
/// (what a browser does), or inserted before or after a separator.
fn text(rng: &mut Rng, v: &mut Vec<u8>) {
    let c = PASTED[rng.below(PASTED.len())];
    // A boundary near a random place: the next separator at or after it.
    let from = rng.below(v.len() + 1);
    let at = v[from..]
        .iter()
        .position(|&b| separator(b))
        .map_or(v.len(), |i| from + i);
    match (v.get(at), rng.below(3)) {
        (Some(b' ' | b'\t'), 0 | 1) => {
            v.splice(at..at + 1, c.iter().copied());
        }
        (Some(_), 2) => {
            v.splice(at + 1..at + 1, c.iter().copied());
        }
        _ => {
            v.splice(at..at, c.iter().copied());
        }
    }
}

fn one(rng: &mut Rng, v: &mut Vec<u8>, other: &[u8]) {
    let len = v.len();
    match rng.below(9) {
        0 if len > 0 => {
            let i = rng.below(len);
            v[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            v[i] = EDGES[rng.below(EDGES.len())] as u8;
        }
        2 | 3 if len > 0 => {
            // A boundary integer of 1, 2, 4 or 8 bytes, either endianness.
            let width = 1 << rng.below(4);
            let at = rng.below(len);
            let e = EDGES[rng.below(EDGES.len())];
            let bytes = if rng.below(2) == 0 {
                e.to_le_bytes()
            } else {
                e.to_be_bytes()
            };
            let bytes = if rng.below(2) == 0 {
                &bytes[..width]
            } else {
                &bytes[8 - width..]
            };
            for (k, b) in bytes.iter().enumerate() {
                if let Some(slot) = v.get_mut(at + k) {
                    *slot = *b;
                }
            }
        }
        4 => {
            let at = rng.below(len + 1);
            let n = 1 + rng.below(16);
            let fill: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            v.splice(at..at, fill);
        }
        5 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(256));
            v.drain(at..at + n);
        }
        6 if len > 0 => {
            // Repeat a range: counts and lengths now disagree with the data.
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(4096));
            let piece = v[at..at + n].to_vec();
            let times = 1 + rng.below(8);
            let to = rng.below(len + 1);
            v.splice(to..to, piece.repeat(times));
        }
        7 if !other.is_empty() => {
            let from = rng.below(other.len());
            let n = 1 + rng.below((other.len() - from).min(4096));
            let at = rng.below(len + 1);
            let end = (at + n).min(len);
            v.splice(at..end, other[from..from + n].iter().copied());
        }
        _ if len > 1 => v.truncate(rng.below(len)),
        _ => v.push(rng.next_u64() as u8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..200)
                .map(|_| mutate(&mut rng, b"ARROW1 header 1234", b"other"))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().all(|v| v.len() <= MAX_LEN));
    }

    #[test]
    fn text_mutations_put_pasted_characters_at_token_boundaries() {
        let line = b"[rank0]: /pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: k: Assertion `a < b` failed.";
        let mut rng = Rng::new(3);
        let mut replaced = 0;
        for _ in 0..2000 {
            let mut v = line.to_vec();
            text(&mut rng, &mut v);
            assert_ne!(v, line.to_vec());
            // The line is the original with one pasted character in it,
            // or with one space or tab replaced by it.
            let c = PASTED
                .iter()
                .find(|c| {
                    v.windows(c.len()).any(|w| w == **c) && v.len() >= line.len() + c.len() - 1
                })
                .expect("a pasted character");
            if v.len() == line.len() + c.len() - 1 {
                replaced += 1;
            }
        }
        assert!(replaced > 100, "spaces replaced {replaced} times");
    }
}
