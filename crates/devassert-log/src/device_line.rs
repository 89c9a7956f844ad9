//! Parsing the device-side assertion lines, in every shape they are printed:
//!
//! - CUDA: ``FILE:LINE: FUNC: block: [x,y,z], thread: [x,y,z] Assertion `EXPR` failed.``
//! - Windows (no function): ``FILE:LINE: block: […], thread: […] Assertion `EXPR` failed.``
//! - ROCm: ``FILE:LINE: FUNC: Device-side assertion `EXPR' failed.``
//! - 2.10+ printf form: ``[CUDA_KERNEL_ASSERT] FILE:LINE: FUNC: block: […], thread: […]: Assertion failed: `COND`: MSG``
//! - Inductor: ``unknown:0: unknown: block: …``; XPU: `global id: […], local id: […]`
//!
//! Several may be glued on one physical line, backticks may be eaten by
//! markdown, and the message itself may contain backticks (so the closing
//! anchor is the trailing `` ` failed``).

mod coords;
mod dangling;
mod finder;

use crate::text::last_token_start;
use coords::coordinates;
use memchr::memmem::Finder;

pub use coords::{coordinate_spans, numbers_at, numbers_like, without_coordinates};
#[cfg(test)]
use coords::{number_bytes, numbers_span};
pub use dangling::{continues_path, dangling_path};
pub(crate) use finder::{gated, searcher, Gated, GatedSearcher, Searcher};

/// One assertion occurrence, borrowed from the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceLine<'a> {
    /// The printed path (raw; the caller normalises it).
    pub file: Option<&'a str>,
    pub line: Option<u64>,
    /// The printed function (raw); `None` on Windows builds and fragments.
    pub function: Option<&'a str>,
    pub block: Option<[u32; 3]>,
    pub thread: Option<[u32; 3]>,
    /// The assertion text, debris (`**`) trimmed but not whitespace-normalised.
    pub assertion: &'a str,
    /// A launcher prefix found glued right before the path (`[1,0]<stderr>:`).
    pub rank: Option<i64>,
    /// ROCm's `Device-side assertion` form.
    pub rocm: bool,
    /// The `[CUDA_KERNEL_ASSERT]` explanatory line (its message follows the condition).
    pub printf_message: Option<&'a str>,
}

const ASSERTION: &[u8] = b"Assertion ";
const ROCM: &[u8] = b"Device-side assertion ";
static FIND_ASSERTION: Searcher = searcher!(ASSERTION);
static FIND_ROCM: Searcher = searcher!(ROCM);
static FIND_FAILED: Searcher = searcher!(b" failed");

/// Every assertion occurrence in a cleaned line, in order.
pub fn parse_all(line: &str) -> Vec<DeviceLine<'_>> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut from = 0;
    let mut head_start = 0;
    // The next occurrence of each marker, searched again only once passed:
    // a line of many glued assertions is read once, not once per assertion.
    let mut next_a = Next::default();
    let mut next_r = Next::default();
    while from < b.len() {
        let a = next_a.find(b, from, &FIND_ASSERTION);
        let r = next_r.find(b, from, &FIND_ROCM);
        // `Device-side assertion` contains no `Assertion ` (lower case a), so the two never overlap.
        let (at, rocm) = match (a, r) {
            (Some(a), Some(r)) if r < a => (r, true),
            (Some(a), _) => (a, false),
            (None, Some(r)) => (r, true),
            (None, None) => break,
        };
        let expr_start = at + if rocm { ROCM.len() } else { ASSERTION.len() };
        let Some((assertion, printf_message, end)) = expression(line, expr_start, rocm) else {
            from = expr_start;
            continue;
        };
        let head = &line[head_start..at];
        if let Some(mut d) = parse_head(head, assertion, rocm, printf_message) {
            if d.file.is_none() && d.block.is_none() {
                // THNN's host-side form and XPU's bare one name the place after it:
                // ``Assertion `…' failed.  at …/SpatialClassNLLCriterion.c:111``.
                if let Some((file, l)) = trailing_place(&line[end..]) {
                    (d.file, d.line) = (Some(file), Some(l));
                }
            }
            out.push(d);
        }
        from = end.max(expr_start);
        head_start = from;
    }
    out
}

/// Where the assertion occurrences of a line end, one after another, as
/// [`parse_all`] reads them, without parsing their heads: a line of glued
/// assertions is cut into pieces once (each marker searched once per line).
#[derive(Default)]
pub struct Ends {
    next_a: Next,
    next_r: Next,
}

impl Ends {
    /// The ends of a line known to hold ROCm's marker or not ([`has_rocm`]):
    /// a line read several ways (the terminal-cut check, then its pieces)
    /// is searched for it once, not once per walk.
    pub fn knowing(rocm: bool) -> Self {
        let next_r = if rocm {
            Next::default()
        } else {
            Next { at: Some(None) }
        };
        Ends {
            next_a: Next::default(),
            next_r,
        }
    }

    /// The end of the first occurrence at or after `from`; `None` when no
    /// further occurrence closes.
    pub fn next(&mut self, line: &str, mut from: usize) -> Option<usize> {
        let b = line.as_bytes();
        loop {
            let a = self.next_a.find(b, from, &FIND_ASSERTION);
            let r = self.next_r.find(b, from, &FIND_ROCM);
            let (at, rocm) = match (a, r) {
                (Some(a), Some(r)) if r < a => (r, true),
                (Some(a), _) => (a, false),
                (None, Some(r)) => (r, true),
                (None, None) => return None,
            };
            let expr_start = at + if rocm { ROCM.len() } else { ASSERTION.len() };
            match expression(line, expr_start, rocm) {
                Some((_, _, end)) => return Some(end.max(expr_start)),
                None => from = expr_start,
            }
        }
    }
}

/// The last assertion occurrence of a line, as [`parse_all`] would give it,
/// with only that one parsed (the others are found, not parsed): whether a
/// row was cut by a terminal depends on its last assertion alone.
#[cfg(test)]
pub fn parse_last(line: &str) -> Option<DeviceLine<'_>> {
    parse_last_with(line, Ends::default())
}

/// [`parse_last`], walking the line with `ends` (fresh: see [`Ends::knowing`]).
pub fn parse_last_with(line: &str, mut ends: Ends) -> Option<DeviceLine<'_>> {
    let (mut start, mut end) = (0, 0);
    while end < line.len() {
        let Some(e) = ends.next(line, end) else { break };
        (start, end) = (end, e);
    }
    if end == 0 {
        return None;
    }
    parse_all(&line[start..]).pop()
}

/// Whether the first CUDA assertion (`Assertion `) of `piece` at or after
/// `from` closes exactly at `piece`'s end, its debris (`.`, `*`) included,
/// and is not the printf form (which runs to the end of its line). For a
/// piece whose only `ssertion ` that is, a copy of it glued before other
/// text that does not start with debris ends, for [`Ends::next`], where
/// the copy does: every byte `expression` reads to close it is the piece's.
pub fn closes_at_end(piece: &str, from: usize) -> bool {
    let Some(at) = piece
        .get(from..)
        .and_then(|rest| FIND_ASSERTION.find(rest.as_bytes()))
    else {
        return false;
    };
    let s = from + at + ASSERTION.len();
    !piece[s..].starts_with("failed: ")
        && expression(piece, s, false).is_some_and(|(_, _, end)| end == piece.len())
}

/// Whether `line` holds ROCm's marker (`Device-side assertion `).
pub fn has_rocm(line: &[u8]) -> bool {
    FIND_ROCM.find(line).is_some()
}

/// The next occurrence of a marker at or after a position, remembered.
#[derive(Default)]
struct Next {
    /// `None`: not searched yet; `Some(None)`: none left.
    at: Option<Option<usize>>,
}

impl Next {
    fn find(&mut self, b: &[u8], from: usize, needle: &Finder<'_>) -> Option<usize> {
        match self.at {
            Some(None) => None,
            Some(Some(i)) if i >= from => Some(i),
            _ => {
                let i = needle.find(&b[from..]).map(|i| from + i);
                self.at = Some(i);
                i
            }
        }
    }
}

/// The assertion text starting at `s`, and where the occurrence ends.
fn expression(line: &str, s: usize, rocm: bool) -> Option<(&str, Option<&str>, usize)> {
    let rest = &line[s..];
    // The printf form: `Assertion failed: `COND`: MSG` runs to the end of the line.
    if let Some(r) = rest.strip_prefix("failed: ") {
        let r0 = s + "failed: ".len();
        let r = r.trim_end();
        if let Some(inner) = r.strip_prefix('`') {
            if let Some(close) = inner.find("`: ").or_else(|| inner.rfind('`')) {
                let cond = &inner[..close];
                let msg = inner
                    .get(close + 3..)
                    .map(str::trim)
                    .filter(|m| !m.is_empty());
                return Some((cond, msg, line.len()));
            }
        }
        return Some((r, None, r0 + r.len()));
    }
    let lead = rest.len() - rest.trim_start_matches(['*', ' ']).len();
    let body = &rest[lead..];
    let body_start = s + lead;
    let (open, close_pat): (bool, &[&str]) = if body.starts_with('`') {
        (
            true,
            if rocm {
                &["' failed", "` failed"]
            } else {
                &["` failed", "`** failed", "' failed"]
            },
        )
    } else {
        (false, &[" failed"])
    };
    let text_start = body_start + usize::from(open);
    let text = &line[text_start..];
    // The nearest closing: every pattern ends in " failed", so walk those
    // and take the first whose quote matches (searching each pattern to the
    // end of the line made a line of glued assertions quadratic).
    let (close, pat_len) = FIND_FAILED.find_iter(text.as_bytes()).find_map(|i| {
        close_pat.iter().find_map(|p| {
            let quote = &p[..p.len() - " failed".len()];
            text[..i]
                .ends_with(quote)
                .then(|| (i - quote.len(), p.len()))
        })
    })?;
    let mut assertion = &text[..close];
    assertion = assertion.trim_matches(|c| c == '*' || c == ' ');
    if assertion.is_empty() && !open {
        return None;
    }
    let mut end = text_start + close + pat_len;
    let tail = &line[end..];
    let debris = tail.len() - tail.trim_start_matches(['.', '*']).len();
    end += debris;
    Some((assertion, None, end))
}

/// `[at ]PATH:LINE` and nothing else after an assertion.
pub fn trailing_place(rest: &str) -> Option<(&str, u64)> {
    let t = rest.trim();
    let t = t.strip_prefix("at ").map_or(t, str::trim_start);
    if t.contains(char::is_whitespace) {
        return None;
    }
    let (file, line) = t.rsplit_once(':')?;
    let line = line.parse().ok()?;
    let path_like = (file.contains('/') || file.contains('\\')) && file.contains('.');
    path_like.then_some((file, line))
}

/// The part before `Assertion`: `[prefix]FILE:LINE: FUNC: block: […], thread: […] `.
fn parse_head<'a>(
    head: &'a str,
    assertion: &'a str,
    rocm: bool,
    printf_message: Option<&'a str>,
) -> Option<DeviceLine<'a>> {
    let (coord_start, block, thread) = coordinates(head);
    let before = &head[..coord_start.unwrap_or(head.len())];
    let (file, line_no, function, rank) = match file_and_line(before) {
        Some((file, line_no, func_text, rank)) => {
            let f = func_text.trim().trim_end_matches(':').trim();
            (
                Some(file),
                Some(line_no),
                (!f.is_empty()).then_some(f),
                rank,
            )
        }
        None => (None, None, bare_kernel(before), None),
    };
    // A line with no place and no coordinates is a fragment of a torn line
    // (or prose); the caller decides whether it belongs to a known group.
    if file.is_none() && block.is_none() && !rocm {
        return Some(DeviceLine {
            file: None,
            line: None,
            function: None,
            block: None,
            thread: None,
            assertion,
            rank: None,
            rocm,
            printf_message,
        });
    }
    Some(DeviceLine {
        file,
        line: line_no,
        function,
        block,
        thread,
        assertion,
        rank,
        rocm,
        printf_message,
    })
}

/// A kernel name left alone before the coordinates when the paste lost the
/// path (`: nll_loss2d_forward_kernel: block: […]`): one identifier shaped like
/// a kernel (snake_case or camelCase), so a prefix such as `ERROR:` is not one.
fn bare_kernel(before: &str) -> Option<&str> {
    let (t, _) = crate::clean::strip_prefixes(before);
    let t = t.trim().trim_matches(':').trim();
    let b = t.as_bytes();
    let ident = b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    let lower = b.iter().any(u8::is_ascii_lowercase);
    let camel = b
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    (ident && lower && (t.contains('_') || camel) && t.len() >= 6).then_some(t)
}

/// The last `PATH:LINE:` in `before`, the text after it (the function), and
/// a glued launcher prefix's rank.
fn file_and_line(before: &str) -> Option<(&str, u64, &str, Option<i64>)> {
    let b = before.as_bytes();
    let mut i = b.len();
    while i > 0 {
        i -= 1;
        if b[i] != b':' {
            continue;
        }
        // `:DIGITS:` ending here?
        let mut j = i;
        while j > 0 && b[j - 1].is_ascii_digit() {
            j -= 1;
        }
        if j == i || j == 0 || b[j - 1] != b':' {
            continue;
        }
        let colon = j - 1;
        let token = &before[last_token_start(&before[..colon])..colon];
        let (token, prefix) = crate::clean::strip_prefixes(token);
        let token = token.trim_start_matches(['`', '*', '\'', '"', '(', ':', '>', '[']);
        let path_like = token == "unknown"
            || token.contains('/')
            || token.contains('\\')
            || token.contains('.');
        if !path_like {
            i = colon;
            continue;
        }
        let line_no: u64 = before[j..i].parse().ok()?;
        return Some((token, line_no, &before[i + 1..], prefix.rank));
    }
    None
}

#[cfg(test)]
mod tests;
