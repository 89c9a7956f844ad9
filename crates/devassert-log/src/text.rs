//! Byte positions in text found from character searches, always on a
//! character's boundary (issue 41: `k + 1` after a multi-byte space cut it).

/// Where the last whitespace-separated token of `s` starts: after the last
/// whitespace character, whose width is its own (a non-breaking space
/// pasted from a browser is two bytes; `k + 1` would cut it in half).
pub fn last_token_start(s: &str) -> usize {
    s.char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(k, c)| k + c.len_utf8())
}

/// The first `n` characters of `s`, owned: `s.chars().take(n).collect()`,
/// copied at once when `s` is that short in bytes (a byte count at most `n`
/// is a character count at most `n`), as nearly every line is: collecting
/// char by char was the most of a traceback's cost.
pub fn clip(s: &str, n: usize) -> String {
    let mut out = String::new();
    clip_into(&mut out, s, n);
    out
}

/// `text`'s shape, into `out`: each run of ASCII digits one `0`. Lines
/// that differ only in their numbers share it, and a literal without a
/// digit is in a line exactly when it is in the line's shape.
///
/// The last text shaped on this thread is remembered with its shape: the
/// reader asks the shape of most lines it reads in full three times over
/// (the device markers, the host-error table, the catalog's sets), of the
/// same text unless a prefix or indentation was taken off, and the
/// exception line of every logged traceback is such a line.
pub fn shape_into(text: &[u8], out: &mut Vec<u8>) {
    /// Longer texts are shaped every time (the key is a copy).
    const MAX_KEY: usize = 512;
    thread_local! {
        /// The last text shaped, and its shape.
        static LAST: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = std::cell::RefCell::default();
    }
    if text.len() > MAX_KEY {
        shape_afresh(text, out);
        return;
    }
    LAST.with(|last| {
        let (key, shape) = &mut *last.borrow_mut();
        if key.as_slice() != text {
            shape_afresh(text, shape);
            key.clear();
            key.extend_from_slice(text);
        }
        out.clear();
        out.extend_from_slice(shape);
    });
}

/// [`shape_into`], not remembered (for a text asked once).
pub fn shape_afresh(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    // The text between runs of digits is copied at once: pushing byte by
    // byte was most of the cost of the three checks that key by shape.
    let mut rest = text;
    while let Some(d) = next_digit(rest) {
        out.extend_from_slice(&rest[..d]);
        out.push(b'0');
        let run = rest[d..].iter().take_while(|b| b.is_ascii_digit()).count();
        rest = &rest[d + run..];
    }
    out.extend_from_slice(rest);
}

/// The length of `text`'s shape (see [`shape_into`]), not made (a
/// prefix's: short, a byte at a time).
pub fn shape_len(text: &[u8]) -> usize {
    let mut digit = false;
    let mut len = 0;
    for b in text {
        let d = b.is_ascii_digit();
        len += usize::from(!(d && digit));
        digit = d;
    }
    len
}

/// Where the first ASCII digit of `b` is, eight bytes a step: a line's
/// shape is taken three times over and its digits looked for once more
/// (the catalog's digit grams), a byte at a time that was most of their cost.
pub fn next_digit(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut words = b.chunks_exact(8);
    for (i, w) in words.by_ref().enumerate() {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        // A digit's byte is 0..=9 once xored with `0`; adding 0x76 to the
        // low seven bits of any other sets its high bit (no carry leaves a
        // byte), as does a byte that had its high bit set already.
        let y = w ^ (ONES * b'0' as u64);
        let digits = !(((y & (ONES * 0x7f)) + ONES * 0x76) | y) & (ONES * 0x80);
        if digits != 0 {
            return Some(i * 8 + digits.trailing_zeros() as usize / 8);
        }
    }
    let done = b.len() - words.remainder().len();
    words
        .remainder()
        .iter()
        .position(u8::is_ascii_digit)
        .map(|p| done + p)
}

/// [`clip`] appended to `out` (a buffer reused instead of allocated).
pub fn clip_into(out: &mut String, s: &str, n: usize) {
    if s.len() <= n {
        out.push_str(s);
    } else {
        out.extend(s.chars().take(n));
    }
}

#[cfg(test)]
mod tests {
    use super::clip;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut keeps what collecting char by char keeps, at any
        /// bound, multi-byte characters across it included.
        #[test]
        fn clip_is_take_collect(s in "\\PC{0,40}", n in 0usize..50) {
            prop_assert_eq!(clip(&s, n), s.chars().take(n).collect::<String>());
        }
    }

    /// Each run of digits made one `0`, byte by byte: what `shape_into` keeps.
    fn shape_byte_by_byte(text: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut digits = false;
        for &b in text {
            let d = b.is_ascii_digit();
            if !(d && digits) {
                out.push(if d { b'0' } else { b });
            }
            digits = d;
        }
        out
    }

    proptest! {
        /// Copying the text between runs keeps what pushing byte by byte keeps.
        #[test]
        fn shape_is_each_run_of_digits_one_zero(
            text in proptest::collection::vec(proptest::sample::select(b"0159ab ( \xc3\xbc/:\x00\xff\x80\xb0\xb9\x7f".to_vec()), 0..80),
        ) {
            let mut out = vec![b'x'];
            super::shape_into(&text, &mut out);
            prop_assert_eq!(out, shape_byte_by_byte(&text));
        }

        /// A text shaped after others, the same or not, of the same
        /// length or not, gets its own shape (the last one is remembered).
        #[test]
        fn a_remembered_shape_is_the_texts_own(
            texts in proptest::collection::vec(proptest::sample::select(vec![
                "line 1 column 424 (char 686)", "line 1 column 425 (char 686)", "line 1 column 42x (char 686)",
                "line 9 column 424 (char 686)", "", "7", "x", "a1b", "a2b", "ab1",
            ]), 1..12),
        ) {
            let mut out = Vec::new();
            for text in texts {
                super::shape_into(text.as_bytes(), &mut out);
                prop_assert_eq!(&out, &shape_byte_by_byte(text.as_bytes()));
            }
        }

        /// Eight bytes a step, the first digit is the first digit.
        #[test]
        fn next_digit_is_the_first_digit(
            text in proptest::collection::vec(any::<u8>(), 0..80),
            digit in proptest::option::of((0usize..80, 0u8..10)),
        ) {
            let mut text = text;
            if let Some((at, d)) = digit {
                let at = at.min(text.len());
                text.insert(at, b'0' + d);
            }
            prop_assert_eq!(
                super::next_digit(&text),
                text.iter().position(u8::is_ascii_digit)
            );
        }
    }

    #[test]
    fn clip_cuts_at_characters_not_bytes() {
        assert_eq!(clip("héllo", 2), "hé");
        assert_eq!(clip("héllo", 6), "héllo");
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("", 0), "");
    }
}
