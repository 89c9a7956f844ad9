//! A catalog regex compiled the first time it is used. The catalog holds
//! hundreds; compiling them all cost most of `explain`'s start-up (about
//! 90 ms), and one run uses a few: the rule of the assertion found, and the
//! evidence patterns whose literals a log line holds.

use regex::Regex;
use std::sync::{Arc, OnceLock};

/// A pattern checked at load (it parses) and compiled on first use. Cheap
/// to clone: clones share the compiled regex.
#[derive(Clone)]
pub struct LazyRegex(Arc<Inner>);

struct Inner {
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// Checks that `pattern` parses as the regex crate would parse it; the
    /// error is its message.
    pub fn new(pattern: &str) -> Result<Self, String> {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(pattern)
            .map_err(|e| e.to_string())?;
        Ok(LazyRegex(Arc::new(Inner {
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        })))
    }

    /// A pattern of the embedded catalog, which this crate's tests parse and
    /// compile (`every_builtin_regex_compiles`): not parsed again at each
    /// start (the parses were an eighth of `explain`'s start-up).
    pub fn checked_by_tests(pattern: &str) -> Self {
        LazyRegex(Arc::new(Inner {
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        }))
    }

    pub fn as_str(&self) -> &str {
        &self.0.pattern
    }

    /// Compile now: the error the first use would otherwise meet (a pattern
    /// that parses can still exceed the compiled size limit).
    pub fn compile(&self) -> Result<&Regex, String> {
        if let Some(re) = self.0.compiled.get() {
            return Ok(re);
        }
        let re = Regex::new(&self.0.pattern).map_err(|e| e.to_string())?;
        Ok(self.0.compiled.get_or_init(|| re))
    }

    /// The compiled regex. One that cannot compile (which the catalog tests
    /// rule out for the embedded catalog) matches nothing.
    pub fn regex(&self) -> &Regex {
        self.compile().unwrap_or_else(|_| never())
    }
}

impl std::ops::Deref for LazyRegex {
    type Target = Regex;
    fn deref(&self) -> &Regex {
        self.regex()
    }
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.0.pattern).finish()
    }
}

fn never() -> &'static Regex {
    static NEVER: OnceLock<Regex> = OnceLock::new();
    // An empty class: compiles, and matches nothing.
    NEVER.get_or_init(|| Regex::new(r"[^\s\S]").unwrap_or_else(|e| unreachable!("{e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_on_first_use_and_shares_it() {
        let r = LazyRegex::new(r"block: \[(\d+)").expect("parses");
        let twin = r.clone();
        assert!(r.0.compiled.get().is_none());
        assert!(r.is_match("block: [12,0,0]"));
        assert!(twin.0.compiled.get().is_some());
        assert_eq!(r.as_str(), r"block: \[(\d+)");
        assert!(LazyRegex::new("(unclosed").is_err());
        assert!(!never().is_match("anything"));
    }
}
