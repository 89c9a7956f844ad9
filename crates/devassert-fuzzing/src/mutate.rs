//! A small seeded mutator for the bounded run on stable: the same seed
//! gives the same inputs in the same order, so a failure in CI replays
//! anywhere. It does what libFuzzer's default mutations do that matter for
//! parsers of lengths and headers: flip bits, plant boundary integers
//! (lengths, offsets, counts) at any offset, insert, erase and repeat
//! ranges, splice two inputs, cut the tail.

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
        one(rng, &mut v, other);
    }
    v.truncate(MAX_LEN);
    v
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
}
