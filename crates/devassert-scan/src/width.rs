//! Whether a raw file read as u16 (the default `--dtype`) holds wider
//! integers. A little-endian int32 token id below 2^24 is a low u16 that
//! varies and a high u16 that is 0 (or 0xffff for a negative sentinel), so
//! read as u16 every other value is almost always 0: twice the tokens, and a
//! range check that passes on the wrong numbers. Real u16 token data has ids
//! above 255 at odd positions too.

use crate::dtype::Dtype;

/// u16 values looked at: the start of the file is enough to tell.
const SAMPLE: usize = 1 << 22;
/// Fewer groups than this say nothing either way.
const MIN_GROUPS: usize = 32;

/// A high half of a small integer: 0..=255, or all ones for a negative one.
fn small(h: u16) -> bool {
    h <= 0xff || h == 0xffff
}

/// Whether `words` (u16 values) fit integers `group` u16s wide: lane 0 (the
/// low half) varies and is mostly non-zero, the other lanes are small, mostly
/// 0, and past lane 1 only 0 or all ones.
fn fits(words: &[u16], group: usize) -> bool {
    let groups = words.len() / group;
    if groups < MIN_GROUPS || words.len() % group != 0 {
        return false;
    }
    let (mut low_zero, mut low_wide, mut high_zero) = (0usize, false, 0usize);
    for g in words.chunks_exact(group) {
        low_zero += usize::from(g[0] == 0);
        low_wide |= g[0] > 0xff;
        for (lane, &h) in g.iter().enumerate().skip(1) {
            if !small(h) || (lane >= 2 && h != 0 && h != 0xffff) {
                return false;
            }
            high_zero += usize::from(h == 0);
        }
    }
    let highs = groups * (group - 1);
    low_wide && low_zero * 2 <= groups && high_zero * 2 >= highs
}

/// The wider type a u16 file of `raw` bytes really holds, if it looks like one.
pub fn wider_than_u16(raw: &[u8]) -> Option<Dtype> {
    let n = (raw.len() / 2).min(SAMPLE);
    // A whole number of int64s from the start: the sample must not cut one.
    let n = n - n % 4;
    let words: Vec<u16> = raw[..2 * n]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let whole = |size: usize| raw.len() % size == 0;
    if whole(8) && fits(&words, 4) {
        Some(Dtype::I64)
    } else if whole(4) && fits(&words, 2) {
        Some(Dtype::I32)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
        bytemuck::cast_slice(v).to_vec()
    }

    /// Ids shaped like text: mostly small, some up to `top`.
    fn ids(n: usize, top: i64) -> Vec<i64> {
        let mut x = 12345u64;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (x >> 33) as i64;
                if r % 5 == 0 {
                    r % top
                } else {
                    r % 5000 + 1
                }
            })
            .collect()
    }

    #[test]
    fn int32_and_int64_tokens_are_told_from_u16_ones() {
        let v = ids(4096, 128256);
        let i32s: Vec<i32> = v.iter().map(|&x| x as i32).collect();
        assert_eq!(wider_than_u16(&bytes(&i32s)), Some(Dtype::I32));
        // GPT-2 ids stored as int32: every high half is 0.
        let small: Vec<i32> = ids(4096, 50257).iter().map(|&x| x as i32).collect();
        assert_eq!(wider_than_u16(&bytes(&small)), Some(Dtype::I32));
        // A -100 sentinel has an all-ones high half.
        let mut with_sentinel = i32s.clone();
        with_sentinel[10] = -100;
        assert_eq!(wider_than_u16(&bytes(&with_sentinel)), Some(Dtype::I32));
        assert_eq!(wider_than_u16(&bytes(&v)), Some(Dtype::I64));
        let u16s: Vec<u16> = ids(4096, 50257).iter().map(|&x| x as u16).collect();
        assert_eq!(wider_than_u16(&bytes(&u16s)), None);
    }

    #[test]
    fn tiny_or_sparse_u16_data_is_left_alone() {
        // A tiny vocabulary, a file of zeros with one large id, too few values.
        let tiny: Vec<u16> = (0..4096).map(|i| (i * 7 % 250) as u16).collect();
        assert_eq!(wider_than_u16(&bytes(&tiny)), None);
        let mut one_big = vec![0u16; 100];
        one_big[0] = 50257;
        assert_eq!(wider_than_u16(&bytes(&one_big)), None);
        assert_eq!(wider_than_u16(&bytes(&[300i32, 400, 500])), None);
        assert_eq!(wider_than_u16(&[]), None);
        assert_eq!(wider_than_u16(&[1]), None);
    }
}
