use super::inert::is_unsafe;
use crate::finding::{Report, SCHEMA};
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::io::{self, Write};

pub(super) fn render(report: &Report) -> String {
    document(report)
}

/// The `devassert/1` document of a command that stopped on an error before
/// it had a result: the envelope, exit code 2, and the message the error
/// line on stderr says (docs/json.md).
pub fn error_document(command: &str, error: &str) -> String {
    #[derive(Serialize)]
    struct ErrorDocument<'a> {
        schema: &'static str,
        command: &'a str,
        exit_code: i32,
        error: &'a str,
    }
    document(&ErrorDocument {
        schema: SCHEMA,
        command,
        exit_code: 2,
        error,
    })
}

fn document<T: Serialize>(value: &T) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Inert::default());
    // Serialising plain data with string keys into memory cannot fail.
    if let Err(e) = value.serialize(&mut ser) {
        return format!("{{\"error\": {:?}}}\n", e.to_string());
    }
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    s.push('\n');
    s
}

/// serde_json's pretty printer, but the characters a terminal would interpret
/// and serde_json passes through (DEL, C1 controls such as the 8-bit CSI
/// U+009B, bidi overrides) are written as `\uXXXX`: the decoded strings stay
/// exact, the printed JSON stays inert. serde_json escapes C0 itself.
#[derive(Default)]
struct Inert(PrettyFormatter<'static>);

impl Formatter for Inert {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in s.char_indices() {
            if is_unsafe(c) {
                w.write_all(&s.as_bytes()[start..i])?;
                // Every unsafe character is in the BMP: one \u escape.
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&s.as_bytes()[start..])
    }
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_and_decode_exactly() {
        let mut r = Report::new(crate::sections::Command::Explain);
        r.findings.push(crate::finding::Finding::new(
            "DA101",
            "n",
            crate::vocabulary::OpFamily::Unknown,
            "a\u{9b}b\u{202e}c\u{7f}d\x1be",
        ));
        let text = render(&r);
        assert!(text.contains(r"a\u009bb\u202ec\u007fd\u001be"), "{text}");
        let back: Report = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back.findings[0].summary, "a\u{9b}b\u{202e}c\u{7f}d\x1be");
    }
}
