//! The code line a poster kept above the error line after cutting its
//! frame line (`    logpt = torch.gather(logpt, 1, target)`, then
//! `RuntimeError: Invalid index in gather …`, with no `File "…", line N`
//! above the code): the innermost frame's code, which the op guess and the
//! causes' code evidence read as they read a frame's. It is no frame: with
//! no file or line it places nothing.

use super::kept::CodeAbove;
use super::state::Reader;
use crate::text::clip;
use crate::traceback;
use crate::unwrap;

/// Code lines kept: one per error line, for the first error lines.
const MAX_CODE_ABOVE: usize = 16;

/// What the reader had found of error lines before a row.
pub(super) struct ErrorsSoFar {
    cpu: usize,
    device_error: bool,
}

impl Reader {
    pub(super) fn errors_so_far(&self) -> ErrorsSoFar {
        ErrorsSoFar {
            cpu: self.facts.cpu.len(),
            device_error: self.facts.device_error.is_some(),
        }
    }

    /// After row `region[start..end]` was read: when it gave a host-side
    /// error message or the device-side error line, is an exception line
    /// (`RuntimeError: …`), and the row above it is a code line that no
    /// frame line heads, that code is kept for the error.
    pub(super) fn code_above(
        &mut self,
        region: &[u8],
        start: usize,
        end: usize,
        before: ErrorsSoFar,
    ) {
        let new_error = self.facts.cpu.len() > before.cpu
            || (self.facts.device_error.is_some() && !before.device_error);
        if !new_error
            || self.facts.code_above.len() >= MAX_CODE_ABOVE
            || !exception_row(&region[start..end])
        {
            return;
        }
        let rows = unwrap::rows_before(region, start, &self.lines.earlier);
        let mut above = rows.iter().rev().map(|r| String::from_utf8_lossy(r));
        let Some(code) = above
            .next()
            .and_then(|r| orphan_code(&r).map(str::to_string))
        else {
            return;
        };
        // Under its frame line it is that frame's code, read with the traceback.
        if above
            .next()
            .is_some_and(|r| traceback::frame_parts(r.trim()).is_some())
        {
            return;
        }
        let error = self.pos();
        self.facts.code_above.push(CodeAbove {
            error,
            code: clip(&code, 300),
        });
    }
}

/// Whether a row is Python's exception line, unindented and unprefixed:
/// `RuntimeError: …`, `torch.AcceleratorError: …`.
fn exception_row(row: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', row) else {
        return false;
    };
    let name = &row[..colon];
    name.first().is_some_and(|b| b.is_ascii_alphabetic())
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        && (name.ends_with(b"Error") || name.ends_with(b"Exception"))
}

/// The code of an indented row that reads as a Python statement: a name
/// first, then a call, an index or an assignment (`x = f(…)`, `return
/// torch.embedding(…)`, `out = table[ids]`). Not a frame line, IPython's
/// numbered context (`  13 y = f(x)`), a caret line, or C++'s `what():`.
fn orphan_code(row: &str) -> Option<&str> {
    if !(row.starts_with(' ') || row.starts_with('\t')) {
        return None;
    }
    let t = row.trim();
    let head_end = t.find(['(', '[', '='])?;
    let head = &t[..head_end];
    let statement = t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && head
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ' '))
        && !t.starts_with("File \"")
        && !t.contains("(): ");
    statement.then_some(t)
}

#[cfg(test)]
mod tests {
    use super::{exception_row, orphan_code};

    #[test]
    fn exception_rows() {
        assert!(exception_row(b"RuntimeError: Invalid index in gather"));
        assert!(exception_row(b"torch.AcceleratorError: CUDA error"));
        assert!(!exception_row(b"  RuntimeError: indented"));
        assert!(!exception_row(b"[rank0]: RuntimeError: prefixed"));
        assert!(!exception_row(
            b"Exception raised from c10_cuda_check at x.cpp:43"
        ));
        assert!(!exception_row(b"ERROR: something"));
    }

    #[test]
    fn code_rows() {
        let code = "   logpt=torch.gather(logpt,1,torch.LongTensor(target))";
        assert_eq!(orphan_code(code), Some(code.trim()));
        assert!(orphan_code("    return torch.embedding(weight, input)").is_some());
        assert!(orphan_code("    out = table[ids]").is_some());
        assert_eq!(orphan_code("x = f(y)"), None, "not indented");
        assert_eq!(orphan_code("  File \"a.py\", line 3, in f"), None);
        assert_eq!(orphan_code("     13 y = f(x)"), None);
        assert_eq!(orphan_code("    ^^^^^^^^^"), None);
        assert_eq!(
            orphan_code("  what():  CUDA error: device-side assert"),
            None
        );
        assert_eq!(orphan_code("    some words of a message"), None);
        assert_eq!(orphan_code("    a message: with (parens)"), None);
    }
}
