//! Turning one physical log line into the text a person would read: escape
//! sequences, carriage-return progress bars and markdown debris removed, and
//! the launcher prefixes (`[rank3]:`, `[1,0]<stderr>:`, `(RayTrainWorker
//! pid=…)`, glog, server loggers' `ERROR 05-14 10:22:33 [file.py:671]` and
//! logging timestamps) taken off, remembering the rank and
//! the time they give.

use std::borrow::Cow;

mod prefix;

pub use prefix::{parse_prefixes, strip_prefixes, Prefix, Stamp};

// Looked for in every line read: searchers built once (`str::contains`
// builds one per call).
static CARET_M: crate::device_line::Searcher = crate::device_line::searcher!(b"^M");
static ESC_TEXT: crate::device_line::Searcher = crate::device_line::searcher!(b"ESC[");

/// `raw` as text, as `String::from_utf8_lossy` gives it, checked with the
/// faster validation first (lossy's own walk was 7 % of reading glued lines).
pub fn lossy(raw: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(raw) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

/// The segments a raw line shows: split at carriage returns (real ones and the
/// pasted `^M` caret form), each with escapes and markdown debris removed.
/// Empty segments are dropped. (The reader takes them one by one: [`each_readable`].)
#[cfg(test)]
pub fn segments(raw: &str) -> Vec<Cow<'_, str>> {
    let mut out = Vec::new();
    each_segment(raw, |s| out.push(s));
    out
}

/// [`segments`], each handed to `f` in turn (a line of one segment, the
/// most common, borrowed where `tidy` changes nothing).
fn each_segment<'a>(raw: &'a str, mut f: impl FnMut(Cow<'a, str>)) {
    // One scan for both ends of a segment: `^M` needs a `^`.
    let one = memchr::memchr2(b'\r', b'^', raw.as_bytes()).is_none();
    let has_caret = !one && CARET_M.find(raw.as_bytes()).is_some();
    if one || (!raw.contains('\r') && !has_caret) {
        let s = tidy(raw);
        if !s.trim().is_empty() {
            f(s);
        }
        return;
    }
    let owned: Cow<'_, str> = if has_caret {
        Cow::Owned(raw.replace("^M", "\r"))
    } else {
        Cow::Borrowed(raw)
    };
    for seg in owned.split('\r') {
        let s = tidy(seg);
        if !s.trim().is_empty() {
            f(Cow::Owned(s.into_owned()));
        }
    }
}

/// What a reader reads of one raw line: each of its segments with the
/// launcher and logging prefixes off, and what those said.
pub fn readable(raw: &str) -> Vec<(String, Prefix)> {
    let mut out = Vec::new();
    each_readable(raw, |body, prefix| out.push((body.to_string(), prefix)));
    out
}

/// [`readable`], each segment's body and prefix handed to `f` in turn,
/// without its copies (two allocations a line read whole).
pub fn each_readable(raw: &str, mut f: impl FnMut(&str, Prefix)) {
    each_segment(raw, |seg| {
        let (body, prefix) = strip_prefixes(&seg);
        f(body, prefix);
    });
}

/// Escapes and markdown debris off one segment (no carriage returns in it).
fn tidy(seg: &str) -> Cow<'_, str> {
    let s = strip_escapes(seg);
    let trimmed_end = s.trim_end();
    let t = trimmed_end.trim_start();
    let mut body = trimmed_end;
    // A code fence (```` ``` ```` or ```` ```python ````) carries nothing; text
    // glued to it (```` ```RuntimeError: …``` ````, a one-line code block) is
    // the line.
    if let Some(rest) = t.strip_prefix("```") {
        let inner = rest.trim_start_matches('`').trim_end_matches('`').trim();
        let tag = |c: char| c.is_alphanumeric() || "+-_.#".contains(c);
        if inner.is_empty() || inner.chars().all(tag) {
            return Cow::Borrowed("");
        }
        body = inner;
    }
    // Quote markers of a pasted reply (`> ` possibly nested).
    loop {
        let lead = body.len() - body.trim_start().len();
        let rest = &body[lead..];
        if let Some(r) = rest.strip_prefix("> ") {
            body = r;
        } else if rest == ">" {
            // An empty slice *of the line*, not a literal "": the offsets below
            // are computed from the pointers.
            body = &rest[1..];
        } else {
            break;
        }
    }
    // A stray opening backtick of an inline code span (odd count on the line).
    let lead = body.len() - body.trim_start().len();
    if body[lead..].starts_with('`')
        && !body[lead..].starts_with("``")
        && body.bytes().filter(|&b| b == b'`').count() % 2 == 1
    {
        body = &body[lead + 1..];
    }
    match s {
        Cow::Borrowed(_) if body.len() == seg.len() => Cow::Borrowed(seg),
        Cow::Borrowed(_) => {
            let start = body.as_ptr() as usize - seg.as_ptr() as usize;
            Cow::Borrowed(&seg[start..start + body.len()])
        }
        Cow::Owned(ref o) => {
            let start = body.as_ptr() as usize - o.as_ptr() as usize;
            Cow::Owned(o[start..start + body.len()].to_string())
        }
    }
}

/// ANSI escape sequences removed: CSI (`ESC[…m`, cursor moves), OSC
/// (`ESC]…BEL`), two-byte escapes, and the `ESC[A` text that pasting a
/// terminal capture leaves.
pub fn strip_escapes(s: &str) -> Cow<'_, str> {
    if !s.contains('\x1b') && ESC_TEXT.find(s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let (esc_len, body) = if b[i] == 0x1b {
            (1, i + 1)
        } else if b[i..].starts_with(b"ESC[") {
            (4, i + 4)
        } else {
            i += 1;
            continue;
        };
        out.push_str(&s[copied..i]);
        let mut j = body;
        if esc_len == 4 || (j < b.len() && b[j] == b'[') {
            if esc_len == 1 {
                j += 1;
            }
            while j < b.len() && (0x30..=0x3f).contains(&b[j]) {
                j += 1;
            }
            while j < b.len() && (0x20..=0x2f).contains(&b[j]) {
                j += 1;
            }
            if j < b.len() && (0x40..=0x7e).contains(&b[j]) {
                j += 1;
            }
        } else if j < b.len() && b[j] == b']' {
            while j < b.len() && b[j] != 0x07 && !(b[j] == 0x1b && b.get(j + 1) == Some(&b'\\')) {
                j += 1;
            }
            j = (j + if b.get(j) == Some(&0x07) { 1 } else { 2 }).min(b.len());
        } else if j < b.len() && b[j].is_ascii() {
            j += 1;
        }
        i = j;
        copied = j;
    }
    out.push_str(&s[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
