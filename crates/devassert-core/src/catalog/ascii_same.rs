//! `LazyRegex` matches ASCII text with the pattern compiled with Unicode
//! off, and other text with it as written, neither with the engines
//! `regex::Regex` uses: every catalog regex must still answer every text
//! as `regex::Regex` does. Run on every line of the real-log corpus and
//! the fixtures, and on strings made to match each pattern, then changed.

use super::Catalog;
use crate::lazy_regex::LazyRegex;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// Every regex of the embedded catalog, with `regex::Regex`'s compile of it.
fn regexes() -> &'static [(LazyRegex, regex::Regex)] {
    static ALL: OnceLock<Vec<(LazyRegex, regex::Regex)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let c = Catalog::builtin();
        let rules = c.rules().iter().flat_map(|r| r.regexes());
        let guesses = c.op_guesses.iter().map(|g| &g.frame);
        let mut all: Vec<(LazyRegex, regex::Regex)> = Vec::new();
        for re in rules.chain(c.log_patterns()).chain(guesses) {
            if all.iter().all(|(r, _)| r.as_str() != re.as_str()) {
                let reference = regex::Regex::new(re.as_str()).expect("compiles");
                all.push((re.clone(), reference));
            }
        }
        assert!(all.len() > 200, "{} regexes", all.len());
        all
    })
}

/// What `regex::Regex` says of `text`: whether it matches, and the
/// captures `LazyRegex::named_captures` gives.
fn reference<'h>(re: &regex::Regex, text: &'h str) -> (bool, Option<Vec<(String, &'h str)>>) {
    let caps = re.captures(text).map(|c| {
        re.capture_names()
            .flatten()
            .filter_map(|n| c.name(n).map(|m| (n.to_string(), m.as_str())))
            .collect()
    });
    (re.is_match(text), caps)
}

fn same(lazy: &LazyRegex, re: &regex::Regex, text: &str) -> Result<(), String> {
    let caps = lazy
        .named_captures(text)
        .map(|c| c.into_iter().map(|(n, t)| (n.to_string(), t)).collect());
    let got = (lazy.is_match(text), caps);
    let want = reference(re, text);
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "{:?} on {text:?}: {got:?}, regex::Regex {want:?}",
            lazy.as_str()
        ))
    }
}

fn lines_under(dir: &Path, lines: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            lines_under(&path, lines);
        } else if let Ok(bytes) = std::fs::read(&path) {
            let text = String::from_utf8_lossy(&bytes);
            lines.extend(text.lines().map(str::to_string));
        }
    }
}

#[test]
fn every_catalog_regex_answers_the_corpus_as_regex_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut lines = Vec::new();
    for dir in [
        "crates/devassert/tests/corpus/real",
        "crates/devassert/tests/fixtures",
        "examples",
    ] {
        lines_under(&root.join(dir), &mut lines);
    }
    lines.sort();
    lines.dedup();
    assert!(lines.len() > 1000, "{} lines", lines.len());
    assert!(
        lines.iter().any(|l| !l.is_ascii()),
        "some text outside ASCII"
    );
    let mut matched = 0;
    for (lazy, re) in regexes() {
        for line in &lines {
            if let Err(e) = same(lazy, re, line) {
                panic!("{e}");
            }
            matched += usize::from(re.is_match(line));
        }
    }
    assert!(matched > 500, "{matched} matches");
}

/// A string made to match regex `i` (`regex::Regex`'s Unicode classes give
/// digits, letters and spaces outside ASCII too), with edits: characters
/// put in or replaced by ones that differ between the two meanings.
fn fuzzed() -> impl Strategy<Value = (usize, String)> {
    let n = regexes().len();
    (0..n).prop_flat_map(|i| {
        let pattern = regexes()[i].0.as_str();
        let base = proptest::string::string_regex(pattern)
            .map(|s| s.boxed())
            .unwrap_or_else(|_| "[ -~]{0,40}".prop_map(String::from).boxed());
        let edits =
            proptest::collection::vec((any::<prop::sample::Index>(), 0..TRICKY.len()), 0..3);
        (Just(i), base, edits, any::<bool>()).prop_map(|(i, s, edits, ascii)| {
            let mut chars: Vec<char> = s.chars().collect();
            for (at, with) in edits {
                let c = TRICKY[with];
                if chars.is_empty() || at.index(2) == 0 {
                    chars.insert(at.index(chars.len() + 1), c);
                } else {
                    let k = at.index(chars.len());
                    chars[k] = c;
                }
            }
            if ascii {
                // The ASCII path: every character outside ASCII made ASCII.
                for c in &mut chars {
                    if !c.is_ascii() {
                        *c = char::from(b'0' + (u32::from(*c) % 10) as u8);
                    }
                }
            }
            (i, chars.into_iter().collect())
        })
    })
}

/// Characters whose class or case differs between ASCII and Unicode.
const TRICKY: &[char] = &[
    '0', '9', 'a', 'Z', '_', ' ', '\t', '\u{b}', '-', '.', ':', '[', ']', '(', ')', 'k', 'K', 's',
    'S', '\u{212a}', '\u{17f}', '\u{663}', '\u{ff13}', '\u{a0}', '\u{85}', '\u{2028}', '\u{e9}',
    '\u{c9}',
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
    #[test]
    fn every_catalog_regex_answers_fuzzed_text_as_regex_does((i, text) in fuzzed()) {
        let (lazy, re) = &regexes()[i];
        prop_assert!(same(lazy, re, &text).is_ok(), "{}", same(lazy, re, &text).unwrap_err());
    }
}
