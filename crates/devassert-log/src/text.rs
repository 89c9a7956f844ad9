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
pub fn shape_into(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    // The text between runs of digits is copied at once: pushing byte by
    // byte was most of the cost of the three checks that key by shape.
    let mut rest = text;
    while let Some(d) = rest.iter().position(u8::is_ascii_digit) {
        out.extend_from_slice(&rest[..d]);
        out.push(b'0');
        let run = rest[d..].iter().take_while(|b| b.is_ascii_digit()).count();
        rest = &rest[d + run..];
    }
    out.extend_from_slice(rest);
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
            text in proptest::collection::vec(proptest::sample::select(b"0159ab ( \xc3\xbc".to_vec()), 0..40),
        ) {
            let mut out = vec![b'x'];
            super::shape_into(&text, &mut out);
            prop_assert_eq!(out, shape_byte_by_byte(&text));
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
