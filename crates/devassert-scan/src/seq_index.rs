//! A Megatron-LM `.idx`: where each sequence and document of the `.bin`
//! beside it starts, kept mapped so that places are looked up only for the
//! values a finding lists.
//!
//! The `.idx` (megatron/core/datasets/indexed_dataset.py, `_IndexWriter`),
//! all little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 9 | magic `MMIDIDX\0\0` |
//! | 8 | version, u64 = 1 |
//! | 1 | dtype code: 1 u8, 2 i8, 3 i16, 4 i32, 5 i64, 6 f64, 7 f32, 8 u16 |
//! | 8 | sequence count S, u64 |
//! | 8 | document count D, u64 (document boundaries: D = documents + 1) |
//! | 4·S | sequence lengths in tokens, i32 |
//! | 8·S | sequence start in bytes of the `.bin`, i64 |
//! | 8·D | document boundaries as sequence indices, i64: `[0, …, S]` |
//! | S | multimodal datasets only: a mode per sequence, i8 |
//!
//! Every field is checked against the others and against the `.bin` before
//! a token is read, so a hostile index can neither point past the data nor
//! make a place lookup wrong; nothing is allocated by what it says.

use crate::dtype::Dtype;
use crate::mapped::Bytes;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub const MAGIC: &[u8; 9] = b"MMIDIDX\x00\x00";
const HEADER: usize = 9 + 8 + 1 + 8 + 8;

/// The dtype a Megatron dtype code names, or why it cannot be scanned.
fn dtype_of(code: u8) -> std::result::Result<Dtype, String> {
    Ok(match code {
        1 => Dtype::U8,
        2 => Dtype::I8,
        3 => Dtype::I16,
        4 => Dtype::I32,
        5 => Dtype::I64,
        8 => Dtype::U16,
        6 | 7 => {
            return Err(format!(
                "dtype code {code} ({}): floating-point values, not token ids",
                if code == 6 { "float64" } else { "float32" }
            ))
        }
        c => return Err(format!("dtype code {c} is unknown (1-8)")),
    })
}

/// A validated `.idx`, kept mapped: places are looked up in it only for the
/// values a finding lists.
pub struct SeqIndex {
    map: Arc<Bytes>,
    pub sequences: u64,
    pub documents: u64,
    item: u64,
}

impl fmt::Debug for SeqIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeqIndex")
            .field("sequences", &self.sequences)
            .field("documents", &self.documents)
            .finish()
    }
}

impl PartialEq for SeqIndex {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.map, &other.map)
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// How many of the `n` ascending values `at(0)..at(n-1)` are <= `x` (a
/// binary search over the index file, which is never read whole).
fn at_or_below(n: u64, at: impl Fn(u64) -> u64, x: u64) -> u64 {
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if at(mid) <= x {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl SeqIndex {
    fn lengths_at(&self) -> usize {
        HEADER
    }
    fn pointers_at(&self) -> usize {
        HEADER + 4 * self.sequences as usize
    }
    fn docs_at(&self) -> usize {
        self.pointers_at() + 8 * self.sequences as usize
    }
    /// Tokens in sequence `s` (validated non-negative).
    pub fn length(&self, s: u64) -> u64 {
        let b = self.map.as_slice();
        let at = self.lengths_at() + 4 * s as usize;
        i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]).max(0) as u64
    }
    /// The token index where sequence `s` starts (validated: the running sum).
    pub fn start(&self, s: u64) -> u64 {
        u64_at(self.map.as_slice(), self.pointers_at() + 8 * s as usize) / self.item
    }
    /// Document boundary `d`, a sequence index (validated: ascending, <= S).
    fn boundary(&self, d: u64) -> u64 {
        u64_at(self.map.as_slice(), self.docs_at() + 8 * d as usize)
    }

    /// (document, sequence, token in the sequence) of token `index`.
    pub fn place(&self, index: u64) -> (Option<u64>, u64, u64) {
        // The last sequence starting at or before `index` (empty sequences
        // share their start with the next one, which comes later).
        let seq = at_or_below(self.sequences, |s| self.start(s), index).saturating_sub(1);
        let token = index.saturating_sub(self.start(seq));
        (self.document_of(seq), seq, token)
    }

    /// The document holding sequence `seq`: the last boundary at or before it.
    pub fn document_of(&self, seq: u64) -> Option<u64> {
        if self.documents == 0 {
            return None;
        }
        Some(at_or_below(self.documents, |d| self.boundary(d), seq).saturating_sub(1))
    }

    /// Read and check `idx` against a `.bin` of `bin_len` bytes; returns the
    /// index, its dtype and the token count.
    pub(crate) fn open(
        idx: &Path,
        bin_len: u64,
    ) -> std::result::Result<(SeqIndex, Dtype, u64), String> {
        let map = crate::mapped::open(idx).map_err(|e| format!("cannot read it: {e}"))?;
        let len = map.as_slice().len() as u64;
        if len < HEADER as u64 {
            return Err(format!(
                "{len} bytes, shorter than the {HEADER}-byte header"
            ));
        }
        let b: &[u8] = map.as_slice();
        if &b[..9] != MAGIC {
            return Err("not a Megatron index (no MMIDIDX magic)".into());
        }
        let version = u64_at(b, 9);
        if version != 1 {
            return Err(format!("version {version} is unknown (1 expected)"));
        }
        let dtype = dtype_of(b[17])?;
        let (seqs, docs) = (u64_at(b, 18), u64_at(b, 26));
        let need = (HEADER as u64)
            .checked_add(seqs.checked_mul(12).ok_or("sequence count overflows")?)
            .and_then(|n| n.checked_add(docs.checked_mul(8)?))
            .ok_or("sequence or document count overflows")?;
        // A multimodal index adds one mode byte per sequence.
        if len != need && Some(len) != need.checked_add(seqs) {
            return Err(format!(
                "{len} bytes, but its header ({seqs} sequences, {docs} document boundaries) needs {need}: truncated or not this format"
            ));
        }
        let index = SeqIndex {
            map,
            sequences: seqs,
            documents: docs,
            item: dtype.size() as u64,
        };
        let mut at = 0u64;
        for s in 0..seqs {
            let b = index.map.as_slice();
            let l = index.lengths_at() + 4 * s as usize;
            let n = i32::from_le_bytes([b[l], b[l + 1], b[l + 2], b[l + 3]]);
            if n < 0 {
                return Err(format!("sequence {s} has a negative length ({n})"));
            }
            let ptr = u64_at(b, index.pointers_at() + 8 * s as usize);
            if ptr != at * index.item {
                return Err(format!(
                    "sequence {s} starts at byte {} but the sequences before it end at byte {}",
                    ptr as i64,
                    at * index.item
                ));
            }
            at += n as u64;
            if at.checked_mul(index.item).is_none_or(|b| b > bin_len) {
                return Err(format!(
                    "sequences 0..={s} need more than the .bin's {bin_len} bytes: the .bin is truncated, or not this index's"
                ));
            }
        }
        if at * index.item != bin_len {
            return Err(format!(
                "its sequences hold {at} {} tokens ({} bytes), the .bin holds {bin_len} bytes",
                dtype.numpy_name(),
                at * index.item
            ));
        }
        let mut prev = 0;
        for d in 0..docs {
            let s = index.boundary(d);
            if s < prev || s > seqs {
                return Err(format!(
                    "document boundary {d} is sequence {} (after {prev}, of {seqs}): not ascending within the sequences",
                    s as i64
                ));
            }
            prev = s;
        }
        Ok((index, dtype, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An index as `_IndexWriter` writes it.
    fn index(code: u8, lengths: &[i32], docs: &[i64]) -> Vec<u8> {
        let item = dtype_of(code).map_or(8, |d| d.size() as i64);
        let mut b = MAGIC.to_vec();
        b.extend(1u64.to_le_bytes());
        b.push(code);
        b.extend((lengths.len() as u64).to_le_bytes());
        b.extend((docs.len() as u64).to_le_bytes());
        lengths.iter().for_each(|l| b.extend(l.to_le_bytes()));
        let mut at = 0i64;
        for l in lengths {
            b.extend(at.to_le_bytes());
            at += i64::from(*l) * item;
        }
        docs.iter().for_each(|d| b.extend(d.to_le_bytes()));
        b
    }

    fn open(idx: &[u8], bin_len: u64) -> std::result::Result<(SeqIndex, Dtype, u64), String> {
        let d = tempfile::tempdir().map_err(|e| e.to_string())?;
        let p = d.path().join("x.idx");
        std::fs::write(&p, idx).map_err(|e| e.to_string())?;
        SeqIndex::open(&p, bin_len)
    }

    #[test]
    fn places_name_the_document_sequence_and_token() {
        // Documents [seq 0, 1], [seq 2 (empty), 3], [seq 4]; int32 tokens.
        let (ix, dtype, tokens) = open(&index(4, &[3, 2, 0, 4, 1], &[0, 2, 4, 5]), 40).unwrap();
        assert_eq!((dtype, tokens), (Dtype::I32, 10));
        assert_eq!(ix.place(0), (Some(0), 0, 0));
        assert_eq!(ix.place(4), (Some(0), 1, 1));
        // The empty sequence 2 holds no token: token 5 is sequence 3's first.
        assert_eq!(ix.place(5), (Some(1), 3, 0));
        assert_eq!(ix.place(9), (Some(2), 4, 0));
        assert_eq!(ix.document_of(2), Some(1));
    }

    #[test]
    fn an_index_that_disagrees_with_itself_or_the_data_says_how() {
        let good = index(8, &[2, 3], &[0, 1, 2]);
        assert!(open(&good, 10).is_ok());
        let cases: Vec<(Vec<u8>, u64, &str)> = vec![
            (good[..good.len() - 1].to_vec(), 10, "truncated"),
            (good.clone(), 12, "the .bin holds 12 bytes"),
            (good.clone(), 8, "need more than the .bin's 8 bytes"),
            (index(6, &[2], &[0, 1]), 16, "float64"),
            (index(9, &[2], &[0, 1]), 16, "dtype code 9"),
            (index(8, &[-2, 3], &[0, 2]), 2, "negative length"),
            (index(8, &[2, 3], &[0, 2, 1]), 10, "not ascending"),
            (index(8, &[2, 3], &[0, 3]), 10, "not ascending"),
            (
                {
                    let mut b = good.clone();
                    b[9] = 2;
                    b
                },
                10,
                "version 2",
            ),
            (
                {
                    // Sequence 1 said to start inside sequence 0.
                    let mut b = good.clone();
                    b[HEADER + 8 + 8] = 1;
                    b
                },
                10,
                "sequence 1 starts at byte 1",
            ),
            (
                {
                    let mut b = good.clone();
                    b[18..26].copy_from_slice(&u64::MAX.to_le_bytes());
                    b
                },
                10,
                "overflows",
            ),
        ];
        for (bytes, bin_len, want) in cases {
            let e = open(&bytes, bin_len).err().unwrap_or_default();
            assert!(e.contains(want), "want {want:?}, got {e:?}");
        }
    }

    proptest! {
        #[test]
        fn any_index_bytes_are_an_answer_not_a_panic(
            flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..6),
            cut in 0usize..200,
            bin_len in 0u64..64,
        ) {
            let mut b = index(4, &[2, 0, 5, 1], &[0, 2, 4]);
            for (at, v) in flips {
                if let Some(x) = b.get_mut(at) {
                    *x = v;
                }
            }
            b.truncate(cut.max(b.len() / 2));
            if let Ok((ix, _, tokens)) = open(&b, bin_len) {
                for t in 0..tokens {
                    let (_, s, tok) = ix.place(t);
                    prop_assert!(s < ix.sequences && tok < tokens);
                }
            }
        }
    }
}
