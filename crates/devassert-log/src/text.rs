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
