//! A catalog regex compiled the first time it is used. The catalog holds
//! hundreds; compiling them all cost most of `explain`'s start-up (about
//! 90 ms), and one run uses a few: the rule of the assertion found, and the
//! evidence patterns whose literals a log line holds.
//!
//! Compiling even those few was most of explaining a short log, so a
//! pattern is compiled for what it is asked about:
//!
//! - **ASCII text** (nearly every log line) is matched by the pattern
//!   compiled with Unicode off: `\d`, `\w`, `\s`, `\b`, `.`, negated
//!   classes and case folding then cover ASCII alone, which on ASCII text
//!   is what their Unicode meanings match, byte for byte (a character
//!   outside ASCII can match only a character outside ASCII). A Unicode
//!   `\d{1,3}` compiles to hundreds of UTF-8 states; ASCII's is three
//!   byte ranges.
//! - **Other text**, and any text for a pattern that writes a character
//!   outside ASCII, is matched by the pattern as written (Unicode on).
//!
//! Both are built without the lazy DFA (its reverse NFA was a third of
//! each compile) or a literal prefilter (a Teddy and Aho-Corasick build,
//! half of what was left): the lines asked about are short, and the
//! reader asks only about lines that hold the pattern's literals. The
//! matches are the same whatever engines run them (`regex_automata::meta`'s
//! contract); `catalog::ascii_same` runs every catalog regex both ways.

use regex_automata::meta::{self, Regex};
use regex_automata::util::syntax;
use regex_automata::PatternID;
use regex_syntax::hir::{Class, Hir, HirKind};
use std::sync::{Arc, OnceLock};

/// A pattern checked at load (it parses) and compiled on first use. Cheap
/// to clone: clones share the compiled regexes.
#[derive(Clone)]
pub struct LazyRegex(Arc<Inner>);

struct Inner {
    pattern: String,
    /// For ASCII text (None: the pattern does not compile so, e.g. `\p{L}`).
    ascii: OnceLock<Option<Regex>>,
    unicode: OnceLock<Regex>,
}

impl LazyRegex {
    /// Checks that `pattern` parses as the regex crate would parse it; the
    /// error is its message.
    pub fn new(pattern: &str) -> Result<Self, String> {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(pattern)
            .map_err(|e| e.to_string())?;
        Ok(Self::checked_by_tests(pattern))
    }

    /// A pattern of the embedded catalog, which this crate's tests parse and
    /// compile (`every_builtin_regex_compiles`): not parsed again at each
    /// start (the parses were an eighth of `explain`'s start-up).
    pub fn checked_by_tests(pattern: &str) -> Self {
        LazyRegex(Arc::new(Inner {
            pattern: pattern.to_string(),
            ascii: OnceLock::new(),
            unicode: OnceLock::new(),
        }))
    }

    pub fn as_str(&self) -> &str {
        &self.0.pattern
    }

    /// Compile now: the error the first use would otherwise meet (a pattern
    /// that parses can still exceed the compiled size limit).
    pub fn compile(&self) -> Result<(), String> {
        self.compiled().map(|_| ())
    }

    fn compiled(&self) -> Result<&Regex, String> {
        if let Some(re) = self.0.unicode.get() {
            return Ok(re);
        }
        let re = build(&self.0.pattern, true)?;
        Ok(self.0.unicode.get_or_init(|| re))
    }

    /// The regex that answers for `text`. One that cannot compile (which
    /// the catalog tests rule out for the embedded catalog) matches nothing.
    fn for_text(&self, text: &str) -> &Regex {
        if text.is_ascii() {
            let ascii = self.0.ascii.get_or_init(|| ascii_build(&self.0.pattern));
            if let Some(re) = ascii {
                return re;
            }
        }
        self.compiled().unwrap_or_else(|_| never())
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.for_text(text).is_match(text)
    }

    /// The named groups of the first match in `text`, in the pattern's
    /// order, each with the text it took (a group that took part in no
    /// match is left out); None without a match.
    pub fn named_captures<'h>(&self, text: &'h str) -> Option<Vec<(&str, &'h str)>> {
        let re = self.for_text(text);
        let mut caps = re.create_captures();
        re.captures(text, &mut caps);
        if !caps.is_match() {
            return None;
        }
        let names = re.group_info().pattern_names(PatternID::ZERO).flatten();
        let taken = names.filter_map(|n| {
            let span = caps.get_group_by_name(n)?;
            Some((n, text.get(span.range())?))
        });
        Some(taken.collect())
    }

    /// The pattern's group names, in order.
    pub fn group_names(&self) -> Result<Vec<&str>, String> {
        let re = self.compiled()?;
        Ok(re
            .group_info()
            .pattern_names(PatternID::ZERO)
            .flatten()
            .collect())
    }
}

/// The pattern for ASCII text, None where it must be the Unicode one: a
/// character outside ASCII that the pattern writes (`(?i)\x{212A}`, the
/// Kelvin sign) can match ASCII text (`k`) in Unicode mode, and with
/// Unicode off it would not.
fn ascii_build(pattern: &str) -> Option<Regex> {
    let mut parser = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build();
    let hir = parser.parse(pattern).ok()?;
    if writes_outside_ascii(&hir) {
        return None;
    }
    meta::Builder::new()
        .configure(config(false))
        .build_from_hir(&hir)
        .ok()
}

/// Whether `hir` (parsed with Unicode off) holds a literal byte outside
/// ASCII, or a Unicode class (a `(?u)` group).
fn writes_outside_ascii(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Literal(lit) => !lit.0.is_ascii(),
        HirKind::Class(Class::Unicode(_)) => true,
        HirKind::Class(Class::Bytes(_)) | HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Repetition(rep) => writes_outside_ascii(&rep.sub),
        HirKind::Capture(cap) => writes_outside_ascii(&cap.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(writes_outside_ascii),
    }
}

fn config(unicode: bool) -> meta::Config {
    meta::Config::new()
        .hybrid(false)
        .auto_prefilter(false)
        .utf8_empty(unicode)
}

/// `pattern` compiled with Unicode on or off (see the module's comment).
fn build(pattern: &str, unicode: bool) -> Result<Regex, String> {
    let syntax = syntax::Config::new().unicode(unicode).utf8(unicode);
    meta::Builder::new()
        .configure(config(unicode))
        .syntax(syntax)
        .build(pattern)
        .map_err(|e| e.to_string())
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.0.pattern).finish()
    }
}

fn never() -> &'static Regex {
    static NEVER: OnceLock<Regex> = OnceLock::new();
    // An empty class: compiles, and matches nothing.
    NEVER.get_or_init(|| build(r"[^\s\S]", true).unwrap_or_else(|e| unreachable!("{e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_on_first_use_and_shares_it() {
        let r = LazyRegex::new(r"block: \[(?P<x>\d+)").expect("parses");
        let twin = r.clone();
        assert!(r.0.ascii.get().is_none() && r.0.unicode.get().is_none());
        assert!(r.is_match("block: [12,0,0]"));
        assert!(twin.0.ascii.get().is_some());
        assert!(
            twin.0.unicode.get().is_none(),
            "ASCII text needs no Unicode compile"
        );
        assert_eq!(r.named_captures("block: [12,0,0]"), Some(vec![("x", "12")]));
        assert_eq!(r.as_str(), r"block: \[(?P<x>\d+)");
        assert!(LazyRegex::new("(unclosed").is_err());
        assert!(!never().is_match("anything"));
    }

    #[test]
    fn text_outside_ascii_is_matched_with_unicode_classes() {
        // U+0663 is a digit to Unicode's `\d`, not to ASCII's.
        let r = LazyRegex::new(r"^\d+$").expect("parses");
        assert!(r.is_match("\u{663}\u{663}"));
        assert!(r.0.unicode.get().is_some());
        let k = LazyRegex::new(r"(?i)^k$").expect("parses");
        assert!(k.is_match("\u{212a}"), "the Kelvin sign folds to k");
        // And back: written in the pattern, it matches ASCII text.
        let written = [
            ("(?i)^\u{212a}$", "k"),
            (r"(?i)^\x{212A}$", "k"),
            ("(?i)^\u{17f}$", "S"),
            (r"(?i)^[\x{212A}]$", "K"),
            ("(?i)^[\u{212a}x]$", "k"),
        ];
        for (pattern, text) in written {
            let r = LazyRegex::new(pattern).expect("parses");
            assert!(r.is_match(text), "{pattern:?} on {text:?}");
        }
    }
}
