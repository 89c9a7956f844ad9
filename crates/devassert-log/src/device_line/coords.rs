//! The coordinates of a thread line: the numbers of its `block: [..]` and
//! `thread: [..]` (or XPU's `global id: [..]` and `local id: [..]`), parsed,
//! located as byte spans (for counting repeats) and blanked.

use super::finder::{searcher, Searcher};
use memchr::memmem;
use std::borrow::Cow;
use std::ops::Range;

/// The last `block: [..]` / `global id: [..]` and the `thread:`/`local id:` after it.
pub(super) fn coordinates(head: &str) -> (Option<usize>, Option<[u32; 3]>, Option<[u32; 3]>) {
    let (start, word) = match (
        rfind_bracketed(head, "block: ["),
        rfind_bracketed(head, "global id: ["),
    ) {
        (Some(a), Some(b)) if b > a => (b, "global id: ["),
        (Some(a), _) => (a, "block: ["),
        (None, Some(b)) => (b, "global id: ["),
        (None, None) => {
            // A torn line may keep only the thread.
            return match rfind_bracketed(head, "thread: [") {
                Some(t) => (Some(t), None, triple(&head[t + "thread: [".len()..])),
                None => (None, None, None),
            };
        }
    };
    let block = triple(&head[start + word.len()..]);
    let after = &head[start..];
    let thread = ["thread: [", "local id: ["]
        .iter()
        .filter_map(|w| rfind_bracketed(after, w).map(|i| (i, w.len())))
        .max_by_key(|&(i, _)| i)
        .and_then(|(i, l)| triple(&after[i + l..]));
    (Some(start), block, thread)
}

/// `head.rfind(word)` for a `word` whose only `[` ends it: a head holds
/// few brackets, and each is looked at instead of searching for the word
/// (a searcher built per search was a third of parsing a thread line).
fn rfind_bracketed(head: &str, word: &str) -> Option<usize> {
    let b = head.as_bytes();
    memchr::memrchr_iter(b'[', b).find_map(|i| {
        let start = (i + 1).checked_sub(word.len())?;
        (b.get(start..=i)? == word.as_bytes()).then_some(start)
    })
}

fn triple(s: &str) -> Option<[u32; 3]> {
    let close = s.find(']')?;
    numbers(&s[..close])
}

/// `x,y,z` (one to three numbers), the inside of a coordinate's brackets.
pub fn numbers(inner: &str) -> Option<[u32; 3]> {
    // Whitespace other than spaces around a number, or a sign, goes the slow way.
    let plain = |b: &u8| b.is_ascii_digit() || matches!(b, b',' | b' ');
    if inner.bytes().all(|b| plain(&b)) {
        return number_bytes(inner.as_bytes());
    }
    let mut v = [0u32; 3];
    let mut n = 0;
    for part in inner.split(',') {
        if n == 3 {
            return None;
        }
        v[n] = part.trim().parse().ok()?;
        n += 1;
    }
    (n > 0).then_some(v)
}

/// [`numbers`] of digits, commas and spaces alone (what [`numbers_span`]
/// spans), without building strings: thread lines are counted by it.
pub fn number_bytes(inner: &[u8]) -> Option<[u32; 3]> {
    let mut v = [0u32; 3];
    let mut n = 0;
    for part in inner.split(|&b| b == b',') {
        if n == 3 {
            return None;
        }
        let digits = part.trim_ascii();
        if digits.is_empty() {
            return None;
        }
        let mut x: u32 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            x = x.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
        }
        v[n] = x;
        n += 1;
    }
    (n > 0).then_some(v)
}

/// [`numbers_span`] at `at` and [`number_bytes`] of it, in one pass: where
/// the span ends (at its `]`) and its numbers; None when either says None.
/// Every piece of a glued line is counted by it (two passes and the
/// split's iterator were a tenth of such a line's time).
pub fn numbers_at(raw: &[u8], at: usize) -> Option<(usize, [u32; 3])> {
    // What printers write: one to three parts of one to nine digits (no
    // overflow to check), commas between them, no spaces. Anything else
    // is walked again from the start by the general walk.
    let b = raw.get(at..)?;
    let (mut v, mut n, mut i) = ([0u32; 3], 0usize, 0usize);
    loop {
        let start = i;
        let mut x = 0u32;
        while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit() && i - start < 9) {
            x = x * 10 + u32::from(d - b'0');
            i += 1;
        }
        match b.get(i) {
            _ if i == start => break,
            Some(b',') if n < 2 => {
                v[n] = x;
                n += 1;
                i += 1;
            }
            Some(b']') => {
                v[n] = x;
                return Some((at + i, v));
            }
            _ => break,
        }
    }
    numbers_at_walked(raw, at)
}

/// The numbers of the last span read by [`numbers_like`]: what followed its
/// first number's digits, to its `]`, and its numbers.
#[derive(Clone, Copy)]
pub struct LastSpan<'a> {
    rest: &'a [u8],
    /// `rest`'s bytes as a little-endian word, where it is at most 8 bytes,
    /// and the mask of them: compared in a few instructions, not a call.
    word: u64,
    mask: u64,
    numbers: [u32; 3],
}

impl LastSpan<'_> {
    /// Whether `hay` starts with `rest`.
    fn goes_on(&self, hay: &[u8]) -> bool {
        match hay.first_chunk::<8>() {
            Some(h) if self.rest.len() <= 8 => u64::from_le_bytes(*h) & self.mask == self.word,
            _ => hay.starts_with(self.rest),
        }
    }
}

/// [`numbers_at`], reading a span that differs from the last one only in
/// its first number's digits (the threads of a run: `38,0,0]` after
/// `37,0,0]`) by those digits and a compare of the rest; `last` is kept.
/// Both spans hold one to nine digits there, so the digits end where a
/// non-digit starts the same rest, which [`numbers_at`] reads alike.
pub fn numbers_like<'a>(
    raw: &'a [u8],
    at: usize,
    last: &mut Option<LastSpan<'a>>,
) -> Option<(usize, [u32; 3])> {
    let b = raw.get(at..)?;
    let (mut n, mut x) = (0, 0u32);
    while n < 9 && n < b.len() {
        let d = b[n].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        x = x * 10 + u32::from(d);
        n += 1;
    }
    if let Some(l) = last.as_ref() {
        if n > 0 && l.goes_on(&b[n..]) {
            let [_, y, z] = l.numbers;
            return Some((at + n + l.rest.len() - 1, [x, y, z]));
        }
    }
    let (end, numbers) = numbers_at(raw, at)?;
    let ends_digits = !b.get(n).is_some_and(u8::is_ascii_digit);
    *last = (n > 0 && ends_digits).then(|| {
        let rest = &raw[at + n..=end];
        let mut bytes = [0u8; 8];
        let short = rest.len().min(8);
        bytes[..short].copy_from_slice(&rest[..short]);
        let mask = u64::MAX >> (8 * (8 - short));
        LastSpan {
            rest,
            word: u64::from_le_bytes(bytes) & mask,
            mask,
            numbers,
        }
    });
    Some((end, numbers))
}

/// [`numbers_at`] byte by byte, whatever the span holds.
fn numbers_at_walked(raw: &[u8], at: usize) -> Option<(usize, [u32; 3])> {
    let mut v = [0u32; 3];
    // Parts done, the number of the current one, and where in it the
    // walk is: 0 before its digits, 1 in them, 2 in the spaces after.
    let (mut n, mut x, mut state) = (0usize, 0u32, 0u8);
    for (i, &b) in raw.get(at..)?.iter().enumerate() {
        match b {
            b'0'..=b'9' if state < 2 => {
                x = x.checked_mul(10)?.checked_add(u32::from(b - b'0'))?;
                state = 1;
            }
            // A digit after a number's spaces: the part is no number.
            b'0'..=b'9' => return None,
            b' ' if state == 1 => state = 2,
            b' ' => {}
            b',' => {
                // An empty part, or a fourth one after this comma.
                if state == 0 || n == 2 {
                    return None;
                }
                v[n] = x;
                (n, x, state) = (n + 1, 0, 0);
            }
            b']' if state != 0 => {
                v[n] = x;
                return Some((at + i, v));
            }
            _ => return None,
        }
    }
    None
}

const BLOCK: &[u8] = b"block: [";
const THREAD: &[u8] = b"thread: [";
static FIND_BLOCK: Searcher = searcher!(BLOCK);
static FIND_THREAD: Searcher = searcher!(THREAD);

/// The inside of `[..]` after `at`, when it is only numbers, commas and spaces.
pub fn numbers_span(raw: &[u8], at: usize) -> Option<Range<usize>> {
    let len = raw
        .get(at..)?
        .iter()
        .position(|&b| !(b.is_ascii_digit() || b == b',' || b == b' '))?;
    (raw.get(at + len) == Some(&b']')).then_some(at..at + len)
}

/// The numbers of a line's only `block: [..]` and the only `thread: [..]`
/// after it: the part in which thousands of thread lines of one failure differ.
pub fn coordinate_spans(raw: &[u8]) -> Option<(Range<usize>, Range<usize>)> {
    let mut blocks = FIND_BLOCK.find_iter(raw);
    let b = blocks.next()? + BLOCK.len();
    if blocks.next().is_some() {
        return None;
    }
    let mut threads = FIND_THREAD.find_iter(&raw[b..]);
    let t = b + threads.next()? + THREAD.len();
    if threads.next().is_some() || FIND_THREAD.find(&raw[..b]).is_some() {
        return None;
    }
    Some((numbers_span(raw, b)?, numbers_span(raw, t)?))
}

/// The line with its block and thread numbers blanked (`block: [], thread: []`),
/// for the catalog's log evidence: `thread: [255,0,0]` is not a label 255.
pub fn without_coordinates(line: &str) -> Cow<'_, str> {
    const WORDS: [&str; 4] = ["block: [", "thread: [", "global id: [", "local id: ["];
    // Every word ends in ": [": most lines are turned away by one search.
    static COLON: Searcher = searcher!(b": [");
    if COLON.find(line.as_bytes()).is_none() || !WORDS.iter().any(|w| line.contains(w)) {
        return Cow::Borrowed(line);
    }
    let raw = line.as_bytes();
    let mut spans: Vec<Range<usize>> = WORDS
        .iter()
        .flat_map(|w| memmem::find_iter(raw, w.as_bytes()).map(move |i| i + w.len()))
        .filter_map(|at| numbers_span(raw, at))
        .collect();
    spans.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(line.len());
    let mut from = 0;
    for r in spans {
        out.push_str(&line[from..r.start]);
        from = r.end;
    }
    out.push_str(&line[from..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::{numbers_at, numbers_like, rfind_bracketed};

    proptest::proptest! {
        /// The last occurrence of each coordinate word, as `str::rfind` finds it.
        #[test]
        fn rfind_bracketed_is_rfind(
            head in proptest::collection::vec(proptest::sample::select(vec![
                "block: [", "thread: [", "global id: [", "local id: [", "[", "k: [",
                "d: [", "block: ", "b", "ck: [", "1,2]", " ", "\u{e9}[",
            ]), 0..10),
        ) {
            let head = head.concat();
            for w in ["block: [", "thread: [", "global id: [", "local id: ["] {
                proptest::prop_assert_eq!(rfind_bracketed(&head, w), head.rfind(w), "{} in {:?}", w, head);
            }
        }

        /// A span read after another, knowing the other's numbers, reads
        /// as [`numbers_at`] reads it alone, whatever the two hold.
        #[test]
        fn numbers_like_is_numbers_at(
            spans in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(
                    b"0123456789999, ,]]x".to_vec()), 0..14),
                1..5),
        ) {
            let raw: Vec<u8> = spans.concat();
            let mut last = None;
            let mut at = 0;
            for s in &spans {
                let alone = numbers_at(&raw, at);
                proptest::prop_assert_eq!(numbers_like(&raw, at, &mut last), alone, "{:?} at {}", String::from_utf8_lossy(&raw), at);
                at += s.len();
            }
        }
    }
}
