//! Unicode spaces read as ASCII spaces, before anything else looks at the
//! bytes: a log pasted from a browser, GitHub or a chat carries non-breaking
//! spaces (U+00A0, U+202F), ideographic ones (U+3000) or a NEL (U+0085)
//! where the program printed a space, and every pattern, literal and parser
//! downstream means an ASCII space. Each multi-byte whitespace character
//! (what `char::is_whitespace` accepts above ASCII) becomes one `b' '`.

use std::borrow::Cow;

/// The length of the multi-byte whitespace character `b` starts with.
fn space_len(b: &[u8]) -> Option<usize> {
    match b {
        [0xC2, 0x85 | 0xA0, ..] => Some(2),
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..] => Some(3),
        _ => None,
    }
}

/// How many bytes at the end of `b` may begin a space the next chunk ends.
fn cut_tail(b: &[u8]) -> usize {
    match b {
        [.., 0xC2 | 0xE1 | 0xE2 | 0xE3] => 1,
        [.., 0xE1, 0x9A] | [.., 0xE2, 0x80 | 0x81] | [.., 0xE3, 0x80] => 2,
        _ => 0,
    }
}

/// `b[..len]` with every Unicode space made one ASCII space, in place;
/// returns the new length.
pub fn normalize_in_place(b: &mut [u8]) -> usize {
    let len = b.len();
    if b.is_ascii() {
        return len;
    }
    let mut w = 0;
    let mut r = 0;
    // U+1680's lead byte, searched again only once passed (a progress bar
    // of `█` has a lead byte every three bytes and no U+1680).
    let mut e1 = memchr::memchr(0xE1, b);
    loop {
        if e1.is_some_and(|i| i < r) {
            e1 = memchr::memchr(0xE1, &b[r..]).map(|i| r + i);
        }
        let next = memchr::memchr3(0xC2, 0xE2, 0xE3, &b[r..]).map(|i| r + i);
        let Some(i) = next.into_iter().chain(e1).min() else {
            break;
        };
        let Some(n) = space_len(&b[i..]) else {
            b.copy_within(r..i + 1, w);
            w += i + 1 - r;
            r = i + 1;
            continue;
        };
        b.copy_within(r..i, w);
        w += i - r;
        b[w] = b' ';
        w += 1;
        r = i + n;
    }
    b.copy_within(r..len, w);
    w + len - r
}

/// Chunks of one input with their Unicode spaces made ASCII; a space cut
/// by a chunk's end is held until the next chunk completes it.
#[derive(Default)]
pub struct Spaces {
    held: Vec<u8>,
}

impl Spaces {
    /// `bytes` (after what was held) normalised, and how many input bytes
    /// the normalisation removed (the input's size counts them).
    pub fn take<'a>(&mut self, bytes: &'a [u8]) -> (Cow<'a, [u8]>, usize) {
        if self.held.is_empty() && bytes.is_ascii() {
            return (Cow::Borrowed(bytes), 0);
        }
        let mut v = std::mem::take(&mut self.held);
        v.extend_from_slice(bytes);
        let keep = v.len() - cut_tail(&v);
        self.held = v[keep..].to_vec();
        v.truncate(keep);
        let n = normalize_in_place(&mut v);
        let removed = v.len() - n;
        v.truncate(n);
        (Cow::Owned(v), removed)
    }

    /// What is held at an input's end (a character its last chunk cut, or
    /// not a space after all).
    pub fn flush(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(s: &[u8]) -> Vec<u8> {
        let mut v = s.to_vec();
        let n = normalize_in_place(&mut v);
        v.truncate(n);
        v
    }

    #[test]
    fn exactly_the_multi_byte_whitespace_becomes_a_space() {
        for c in (0x80..=0x10ffff).filter_map(char::from_u32) {
            let mut buf = [0u8; 4];
            let e = c.encode_utf8(&mut buf).as_bytes();
            let want = c.is_whitespace().then_some(e.len());
            assert_eq!(space_len(e), want, "{c:?}");
            let line = [b"a", e, b"b"].concat();
            let want_line = if c.is_whitespace() {
                b"a b".to_vec()
            } else {
                line.clone()
            };
            assert_eq!(normalized(&line), want_line, "{c:?}");
        }
    }

    #[test]
    fn invalid_and_cut_sequences_are_left_alone() {
        for b in [
            &b"\xc2"[..],
            b"x\xe2\x80",
            b"\xe3\x80\xe3\x80\x80",
            b"\xff\xc2\xa0\xe1",
            b"\xe2\x81\x9f\xe2\x81",
        ] {
            let n = normalized(b);
            assert_eq!(
                String::from_utf8_lossy(&n),
                String::from_utf8_lossy(b).replace(|c: char| c.is_whitespace(), " "),
                "{b:?}"
            );
        }
    }

    /// A space cut between two chunks is read whole, wherever the cut.
    #[test]
    fn a_space_cut_by_a_chunk_end() {
        let text =
            "[rank0]:\u{a0}/x.cu:1: k\u{3000}Assertion\u{202f}`a` failed.\u{85}\n".as_bytes();
        let want = normalized(text);
        for cut in 0..=text.len() {
            let mut s = Spaces::default();
            let (a, ra) = s.take(&text[..cut]);
            let (b, rb) = s.take(&text[cut..]);
            let mut got = [a.as_ref(), b.as_ref()].concat();
            got.extend(s.flush());
            assert_eq!(got, want, "cut at {cut}");
            assert_eq!(ra + rb, text.len() - want.len());
        }
    }
}
