//! A source path left dangling at a line's end, whose assertion goes on
//! on the next physical line.

use crate::text::last_token_start;
use memchr::memmem;

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
