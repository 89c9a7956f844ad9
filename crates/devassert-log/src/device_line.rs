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

use memchr::memmem::{self, Finder};
use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

/// A searcher for a fixed needle, built once: building one for every
/// search cost as much as the search on the pieces of a glued line.
pub type Searcher = LazyLock<Finder<'static>>;

/// `static S: Searcher = searcher!(b"…");`
macro_rules! searcher {
    ($needle:expr) => {
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle))
    };
}
pub(crate) use searcher;

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
pub fn parse_last(line: &str) -> Option<DeviceLine<'_>> {
    let mut ends = Ends::default();
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

/// The last `block: [..]` / `global id: [..]` and the `thread:`/`local id:` after it.
fn coordinates(head: &str) -> (Option<usize>, Option<[u32; 3]>, Option<[u32; 3]>) {
    let (start, word) = match (head.rfind("block: ["), head.rfind("global id: [")) {
        (Some(a), Some(b)) if b > a => (b, "global id: ["),
        (Some(a), _) => (a, "block: ["),
        (None, Some(b)) => (b, "global id: ["),
        (None, None) => {
            // A torn line may keep only the thread.
            return match head.rfind("thread: [") {
                Some(t) => (Some(t), None, triple(&head[t + "thread: [".len()..])),
                None => (None, None, None),
            };
        }
    };
    let block = triple(&head[start + word.len()..]);
    let after = &head[start..];
    let thread = ["thread: [", "local id: ["]
        .iter()
        .filter_map(|w| after.rfind(w).map(|i| (i, w.len())))
        .max_by_key(|&(i, _)| i)
        .and_then(|(i, l)| triple(&after[i + l..]));
    (Some(start), block, thread)
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

/// Where the last whitespace-separated token of `s` starts: after the last
/// whitespace character, whose width is its own (a non-breaking space
/// pasted from a browser is two bytes; `k + 1` would cut it in half).
fn last_token_start(s: &str) -> usize {
    s.char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(k, c)| k + c.len_utf8())
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
    if !line.contains(": [") || !WORDS.iter().any(|w| line.contains(w)) {
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

/// A source path left dangling at the end of a line (the rest of the
/// assertion line continues on the next physical line): `…/IndexKernelUtils.cu    return forward_call(…)`
/// or `…\ScatterGatherKernel.cu:367:`. Returns the path (with `:LINE:` when present).
pub fn dangling_path(line: &str) -> Option<&str> {
    let t = line.trim_end();
    // `FILE:LINE:` at the very end.
    if let Some(stripped) = t.strip_suffix(':') {
        let n = stripped
            .bytes()
            .rev()
            .take_while(u8::is_ascii_digit)
            .count();
        if n > 0 && stripped[..stripped.len() - n].ends_with(':') {
            let tok = &t[last_token_start(t)..];
            if is_source_path(tok.trim_end_matches(|c: char| c == ':' || c.is_ascii_digit())) {
                return Some(tok);
            }
        }
    }
    // A path token ending in a CUDA source extension, followed by other
    // output: found from the `.cu` occurrences, not token by token (a line
    // of glued assertions has thousands of tokens and no such path).
    memmem::find_iter(t.as_bytes(), b".cu").find_map(|i| {
        let mut end = i + 3;
        if t.as_bytes().get(end) == Some(&b'h') {
            end += 1;
        }
        let rest = &t[end..];
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            return None;
        }
        let tok = &t[last_token_start(&t[..i])..end];
        is_source_path(tok).then_some(tok)
    })
}

fn is_source_path(tok: &str) -> bool {
    (tok.contains('/') || tok.contains('\\')) && (tok.ends_with(".cu") || tok.ends_with(".cuh"))
}

/// Whether a line continues a dangling path: `:16: FUNC: block: …` or `block: […]…`.
pub fn continues_path(line: &str) -> bool {
    let t = line.trim_start();
    if let Some(r) = t.strip_prefix(':') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        return n > 0 && r[n..].starts_with(':');
    }
    t.starts_with("block: [") || t.starts_with("global id: [")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> DeviceLine<'_> {
        let v = parse_all(line);
        assert_eq!(v.len(), 1, "{line}: {v:?}");
        v.into_iter().next().unwrap_or_else(|| unreachable!())
    }

    /// The byte parser gives what `str::parse` of the trimmed parts gives.
    fn numbers_by_parse(inner: &str) -> Option<[u32; 3]> {
        let mut v = [0u32; 3];
        let parts: Vec<&str> = inner.split(',').collect();
        if parts.len() > 3 {
            return None;
        }
        for (i, p) in parts.iter().enumerate() {
            v[i] = p.trim().parse().ok()?;
        }
        Some(v)
    }

    #[test]
    fn coordinates_parse_as_numbers() {
        let cases = [
            "0,0,0",
            "12, 3 ,4",
            "7",
            "1,2",
            "",
            ",",
            "1,,2",
            "1,2,3,4",
            " 5 ",
            "1 2,3",
            "4294967295,0,0",
            "4294967296,0,0",
            "00012,0,0",
            "+5,0,0",
            "5\t,0,0",
            "x",
        ];
        for c in cases {
            assert_eq!(numbers(c), numbers_by_parse(c), "{c:?}");
            if c.bytes()
                .all(|b| b.is_ascii_digit() || b == b',' || b == b' ')
            {
                assert_eq!(number_bytes(c.as_bytes()), numbers_by_parse(c), "{c:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn byte_numbers_agree_with_parse(s in "[0-9, ]{0,24}") {
            proptest::prop_assert_eq!(number_bytes(s.as_bytes()), numbers_by_parse(&s));
            proptest::prop_assert_eq!(numbers(&s), numbers_by_parse(&s));
        }
    }

    #[test]
    fn a_kernel_name_without_its_path_is_kept() {
        let d = one(": nll_loss2d_forward_kernel: block: [3,0,0], thread: [674,0,0] Assertion `t >= 0 && t < n_classes` failed.");
        assert_eq!(d.file, None);
        assert_eq!(d.function, Some("nll_loss2d_forward_kernel"));
        let d = one("indexSelectLargeIndex: block: [1,0,0], thread: [2,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
        assert_eq!(d.function, Some("indexSelectLargeIndex"));
        let d = one("ERROR: block: [1,0,0], thread: [2,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
        assert_eq!(d.function, None);
    }

    #[test]
    fn cuda_line() {
        let d = one("../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [371,0,0], thread: [116,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
        assert_eq!(d.file, Some("../aten/src/ATen/native/cuda/Indexing.cu"));
        assert_eq!(d.line, Some(1292));
        assert_eq!(d.function, Some("indexSelectLargeIndex"));
        assert_eq!(d.block, Some([371, 0, 0]));
        assert_eq!(d.thread, Some([116, 0, 0]));
        assert_eq!(d.assertion, "srcIndex < srcSelectDimSize");
    }

    #[test]
    fn windows_rocm_inductor_xpu_printf() {
        let d = one(
            r"C:\actions-runner\_work\pytorch\IndexKernel.cu:92: block: [94,0,0], thread: [32,0,0] Assertion `index >= -sizes[i] && index < sizes[i] && ``index out of bounds``` failed.",
        );
        assert_eq!(d.function, None);
        assert_eq!(d.line, Some(92));
        let d = one("/opt/rocm/pytorch/aten/src/ATen/native/hip/Loss.hip:250: nll_loss_forward_reduce_cuda_kernel_2d: Device-side assertion `t >= 0 && t < n_classes' failed.");
        assert!(d.rocm);
        assert_eq!(d.assertion, "t >= 0 && t < n_classes");
        assert_eq!(d.function, Some("nll_loss_forward_reduce_cuda_kernel_2d"));
        let d = one("unknown:0: unknown: block: [0,0,0], thread: [8,0,0] Assertion `index out of bounds: 0 <= tmp4 < 32000` failed.");
        assert_eq!(
            (d.file, d.line, d.function),
            (Some("unknown"), Some(0), Some("unknown"))
        );
        let d = one("/x/Indexing.cpp:16: vectorized_gather_kernel: global id: [1,0,0], local id: [3,0,0] Assertion `ind >=0` failed.");
        assert_eq!(d.thread, Some([3, 0, 0]));
        let d = one("[CUDA_KERNEL_ASSERT] /pytorch/aten/src/ATen/native/cuda/Repeat.cu:20: compute_cuda_kernel: block: [0,0,0], thread: [0,0,0]: Assertion failed: `result_size == cumsum_ptr[size - 1]`: Invalid input! In `repeat_interleave`, the `output_size` argument (5) must be the same as the sum of the elements in the `repeats` tensor (7).");
        assert_eq!(d.assertion, "result_size == cumsum_ptr[size - 1]");
        assert!(d.printf_message.is_some_and(|m| m.contains("(7)")));
    }

    #[test]
    fn backticks_inside_eaten_or_bold() {
        let d = one("/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.");
        assert_eq!(
            d.assertion,
            "probability tensor contains either `inf`, `nan` or element < 0"
        );
        let d = one("/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: k: block: [0,0,0], thread: [725,0,0] Assertion t >= 0 && t < n_classes failed");
        assert_eq!(d.assertion, "t >= 0 && t < n_classes");
        let d = one("/pytorch/aten/src/ATen/native/cuda/Loss.cu:111: operator(): block: [62,0,0], thread: [0,0,0] Assertion **`input_val >= zero && input_val <= one` failed**.");
        assert_eq!(d.assertion, "input_val >= zero && input_val <= one");
        let d = one("/pytorch/aten/src/ATen/native/cuda/Loss.cu:111: operator(): block: [62,0,0], thread: [2,0,0] Assertion `**input_val >= zero && input_val <= one` failed.**");
        assert_eq!(d.assertion, "input_val >= zero && input_val <= one");
    }

    #[test]
    fn place_after_the_assertion() {
        let d = one("RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at /pytorch/aten/src/THNN/generic/SpatialClassNLLCriterion.c:111");
        assert_eq!(
            d.file,
            Some("/pytorch/aten/src/THNN/generic/SpatialClassNLLCriterion.c")
        );
        assert_eq!(d.line, Some(111));
        assert_eq!(d.assertion, "cur_target >= 0 && cur_target < n_classes");
        let d = one("Assertion `a < b` failed. at the end of the day");
        assert_eq!(d.file, None);
    }

    #[test]
    fn glued_lines_and_prefixes() {
        let v = parse_all("../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [6,0,0], thread: [39../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], thread: [11,0,0] Assertion `srcIndex < srcSelectDimSize` failed.,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].block, Some([58, 0, 0]));
        assert_eq!(
            v[0].file.map(crate::normalize::normalize_path).as_deref(),
            Some("aten/src/ATen/native/cuda/Indexing.cu")
        );
        assert_eq!(v[1].file, None);
        let d = one("#####words_embeddings  [1,0]<stderr>:/tmp/pip/aten/src/THC/THCTensorIndex.cu:362: void indexSelectLargeIndex(TensorInfo<T, IndexType>, long) [with T = c10::Half, IndexType = unsigned int]: block: [66,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
        assert_eq!(d.rank, Some(0));
        assert_eq!(d.file, Some("/tmp/pip/aten/src/THC/THCTensorIndex.cu"));
        assert!(d
            .function
            .is_some_and(|f| f.starts_with("void indexSelectLargeIndex(")));
        assert!(parse_all("AssertionError: boom").is_empty());
        assert!(parse_last("AssertionError: boom").is_none());
    }

    #[test]
    fn many_glued_assertions_each_close_at_their_own_end() {
        let one = |t: usize, q: &str| {
            format!("/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: k: block: [0,0,0], thread: [{t},0,0] Assertion {q}t >= 0 && t < n_classes{q} failed.")
        };
        let mut line: String = (0..300).map(|t| one(t, "`")).collect();
        line.push_str(&one(300, "`"));
        line.push_str(&one(301, ""));
        let v = parse_all(&line);
        assert_eq!(v.len(), 302);
        assert!(
            v.iter().all(|d| d.assertion == "t >= 0 && t < n_classes"),
            "{:?}",
            v.last()
        );
        assert_eq!(v[299].thread, Some([299, 0, 0]));
        assert_eq!(v[301].thread, Some([301, 0, 0]));
        // The pieces a glued line is read in end where parse_all's do.
        let mut ends = Ends::default();
        let mut at = 0;
        let mut pieces = Vec::new();
        while let Some(e) = ends.next(&line, at) {
            pieces.push(&line[at..e]);
            at = e;
        }
        assert_eq!(pieces.len(), 302);
        let each: Vec<DeviceLine<'_>> = pieces.iter().flat_map(|p| parse_all(p)).collect();
        assert_eq!(each, v);
    }

    #[test]
    fn the_last_assertion_alone() {
        let glued = "../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [6,0,0], thread: [39../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], thread: [11,0,0] Assertion `srcIndex < srcSelectDimSize` failed.,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
        let thnn = "RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at /x/ClassNLLCriterion.c:93";
        let two: String = [ASSERT_LINE, ASSERT_LINE, "trailing text"].concat();
        for line in [
            glued,
            thnn,
            ASSERT_LINE,
            two.as_str(),
            "no assertion",
            "Assertion `open",
        ] {
            assert_eq!(parse_last(line), parse_all(line).pop(), "{line}");
        }
    }

    const ASSERT_LINE: &str = "/p/aten/src/ATen/native/cuda/Loss.cu:250: k: block: [0,0,0], thread: [1,0,0] Assertion `t < n` failed.";

    #[test]
    fn coordinates_of_a_thread_line() {
        let l = b"[rank0]:/x/Indexing.cu:1422: k: block: [371,0,0], thread: [116, 0, 0] Assertion `a < b` failed.";
        let (b, t) = coordinate_spans(l).unwrap_or((0..0, 0..0));
        assert_eq!(&l[b], b"371,0,0");
        assert_eq!(&l[t], b"116, 0, 0");
        // Two glued lines, or a thread before the block: not one line's coordinates.
        assert!(
            coordinate_spans(b"block: [1,0,0], thread: [2,0,0] block: [3,0,0], thread: [4")
                .is_none()
        );
        assert!(coordinate_spans(b"thread: [2,0,0] block: [1,0,0], thread: [2,0,0]").is_none());
        assert!(coordinate_spans(b"block: [x], thread: [2,0,0]").is_none());
        assert_eq!(
            without_coordinates("k: block: [255,0,0], thread: [3,0,0] Assertion `t < 255` failed."),
            "k: block: [], thread: [] Assertion `t < 255` failed."
        );
        assert_eq!(without_coordinates("labels 255"), "labels 255");
    }

    #[test]
    fn dangling_paths() {
        assert_eq!(dangling_path("/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu    return forward_call(*args, **kwargs)"), Some("/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu"));
        assert_eq!(
            dangling_path(r"Error during training: C:\a\ScatterGatherKernel.cu:367:"),
            Some(r"C:\a\ScatterGatherKernel.cu:367:")
        );
        assert!(continues_path(
            ":16: vectorized_gather_kernel: block: [1024,0,0]"
        ));
        assert!(continues_path(
            "block: [4935,0,0], thread: [121,0,0] Assertion x failed."
        ));
        assert!(!continues_path("x: block: [1]"));
        assert_eq!(
            dangling_path("see x.cu_old/a.cuh\tand b/c.cu"),
            Some("x.cu_old/a.cuh")
        );
        assert_eq!(dangling_path("a.cu b/c.cuda d/e.cuh"), Some("d/e.cuh"));
        let glued = "/p/aten/src/ATen/native/cuda/Loss.cu:250: k: block: [0,0,0], thread: [1,0,0] Assertion `t < n` failed.".repeat(50);
        assert_eq!(dangling_path(&glued), None);
    }

    /// Every multi-byte whitespace character Rust knows (U+0085, U+00A0,
    /// U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
    fn unicode_spaces() -> Vec<char> {
        (0x80..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .collect()
    }

    /// Issue 41: the token before `:LINE:` ends at a multi-byte space
    /// (`file_and_line`, through `parse_all`): the same place as after an ASCII one.
    #[test]
    fn a_path_after_a_multi_byte_space() {
        assert_eq!(unicode_spaces().len(), 19);
        for sp in unicode_spaces() {
            let line = format!("[rank0]:{sp}/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: indexSelectLargeIndex: block: [7,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
            let d = one(&line);
            assert_eq!(
                d.file,
                Some("/pytorch/aten/src/ATen/native/cuda/Indexing.cu"),
                "{sp:?}"
            );
            assert_eq!(
                (d.line, d.function),
                (Some(1553), Some("indexSelectLargeIndex"))
            );
            // The issue's 23-byte input: the space is the whole token before it.
            let short = format!("{sp}:5:Assertion s failed");
            assert_eq!(
                parse_all(&short),
                parse_all(" :5:Assertion s failed"),
                "{sp:?}"
            );
        }
    }

    /// `dangling_path`'s two token starts: `FILE:LINE:` at the end, and a
    /// `.cu` path followed by other output.
    #[test]
    fn a_dangling_path_after_a_multi_byte_space() {
        for sp in unicode_spaces() {
            let end = format!("Error during training:{sp}C:\\a\\ScatterGatherKernel.cu:367:");
            assert_eq!(
                dangling_path(&end),
                Some("C:\\a\\ScatterGatherKernel.cu:367:"),
                "{sp:?}"
            );
            let mid = format!("x{sp}/p/aten/IndexKernelUtils.cu{sp}return f()");
            assert_eq!(
                dangling_path(&mid),
                Some("/p/aten/IndexKernelUtils.cu"),
                "{sp:?}"
            );
        }
        assert_eq!(last_token_start("a\u{3000}b"), 4);
        assert_eq!(last_token_start("ab"), 0);
        assert_eq!(last_token_start("ab "), 3);
    }
}
