//! A `repr`'d error or traceback printed on one line (a logger's
//! `RuntimeError('…\n…')`): its pieces, one per escaped line break.

/// A line holding a `repr`'d error or traceback (`RuntimeError('CUDA error: …\nCUDA kernel errors…')`,
/// `'Traceback (most recent call last):\n  File …'`): its pieces, unescaped.
pub(super) fn unescape_repr(body: &str) -> Option<Vec<String>> {
    static ESCAPED_BREAK: crate::device_line::Searcher = crate::device_line::searcher!(b"\\n");
    ESCAPED_BREAK.find(body.as_bytes())?;
    let interesting = [
        "Traceback",
        "device-side assert",
        "CUDA error",
        "HIP error",
        "Assertion",
        "Error",
        "File \"",
    ];
    if !interesting.iter().any(|k| body.contains(k)) {
        return None;
    }
    let body = body.replace("\\\\n", "\\n");
    let breaks = line_breaks(&body);
    if breaks.is_empty() {
        return None;
    }
    let mut from = 0;
    let mut split = Vec::with_capacity(breaks.len() + 1);
    for b in breaks {
        split.push(&body[from..b]);
        from = b + 2;
    }
    split.push(&body[from..]);
    let pieces: Vec<String> = split
        .into_iter()
        .map(|p| {
            p.replace("\\'", "'")
                .replace("\\\"", "\"")
                .replace("\\t", "    ")
                .replace("\\\\", "\\")
        })
        .filter(|p| !p.trim().is_empty() && !matches!(p.trim(), "'" | "\"" | "')" | "\")"))
        .collect();
    (pieces.len() > 1).then_some(pieces)
}

/// Where `body` holds an escaped line break (`\n` as two characters): not
/// a C string's own `\n` inside a printed assertion (grouped-mm's offset
/// checks end their message with one), nor a Windows path's separator
/// before a component starting with `n` (`ATen\native`, `ops\nccl_…`,
/// `torch\nn`).
fn line_breaks(body: &str) -> Vec<usize> {
    let spans = assertion_spans(body);
    let in_assertion = |i: usize| {
        spans.iter().any(|(r, quoted)| {
            // Unquoted, the span's end is less sure: only a `\n` that ends a C string counts.
            r.contains(&i) && (*quoted || body[i + 2..].starts_with('"'))
        })
    };
    body.match_indices("\\n")
        .map(|(i, _)| i)
        .filter(|&i| !in_assertion(i) && !path_separator(body, i))
        .collect()
}

/// The spans of printed assertions, up to " failed", and whether the
/// assertion is quoted: "ssertion `" (CUDA's `` ` ``…`` ` ``, ROCm's
/// `` ` ``…`'`), or "Assertion " with the quotes lost (a markdown paste).
fn assertion_spans(body: &str) -> Vec<(std::ops::Range<usize>, bool)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = body[from..].find("ssertion ") {
        let start = from + i;
        let rest = &body[start + "ssertion ".len()..];
        let quoted = rest.starts_with('`');
        if !(quoted || (start > 0 && body.as_bytes()[start - 1] == b'A')) {
            from = start + "ssertion ".len();
            continue;
        }
        let Some(j) = body[start..].find(" failed") else {
            break;
        };
        out.push((start..start + j, quoted));
        from = start + j;
    }
    out
}

/// Whether the backslash at `i` separates path components: the text before
/// it is a component after `\` or `/`, or a drive (`C:`).
fn path_separator(body: &str, i: usize) -> bool {
    let before = &body.as_bytes()[..i];
    let word = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        .count();
    let head = &before[..i - word];
    match head.last() {
        Some(b'\\' | b'/') => word > 0,
        Some(b':') => {
            word == 0
                && head.len() >= 2
                && head[head.len() - 2].is_ascii_alphabetic()
                && (head.len() == 2 || !head[head.len() - 3].is_ascii_alphanumeric())
        }
        _ => false,
    }
}
