//! The facts a crash log states: `[[log_fact]]` rows of
//! `catalog/causes.toml` name a pattern over the log's lines (`log`) or the
//! traceback's function names and code lines (`frame`), and what a match
//! sets: each named group whose name is a fact sets that fact to the number
//! it captured, and `fact` / `value` set one fact when the pattern matches;
//! `states` says the line names one offending value as negative, not its
//! number (one_hot's `Class values must be non-negative.`).
//! explain adds them to the offending values and bound it read, and decides
//! the causes with the same engine as the commands that measure.

use super::embedded::json;
#[cfg(test)]
use super::embedded::source;
use super::expr::Facts;
use super::table::{File, LogFactRow, FACT_NAMES, KINDS};
use crate::lazy_regex::LazyRegex;

/// Where a row's pattern looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Log,
    Frame,
}

/// What a line states of one offending value without its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// It is below 0: so it is no value past the bound, no void 255 and no
    /// wrapped -1. (A value past the bound proves no such 0: it may be a
    /// wrapped -1.)
    Negative,
}

impl Side {
    fn named(name: &str) -> Option<Side> {
        (name == "negative").then_some(Side::Negative)
    }

    /// The facts one stated value on this side proves, as the stated
    /// values' facts would (`stated_facts`): the counts it is not in are
    /// 0. What it is (-1, -100 …) stays unknown.
    fn facts(self) -> &'static [(&'static str, f64)] {
        match self {
            Side::Negative => &[("n_past", 0.0), ("n_255", 0.0), ("n_wrapped", 0.0)],
        }
    }
}

#[derive(Debug, Clone)]
pub struct LogFact {
    pub scope: Scope,
    pub re: LazyRegex,
    pub set: Option<(String, f64)>,
    pub states: Option<Side>,
    pub kind: Option<String>,
}

/// Parse and check the rows: one pattern each, every fact a known one.
pub fn compile(rows: &[LogFactRow]) -> Result<Vec<LogFact>, String> {
    read(rows, true)
}

/// The rows; with `patterns`, each pattern compiled and its groups checked
/// now. The embedded rows are read without (their patterns compile on first
/// use: compiling all at each start was a seventh of `explain`'s start-up),
/// as the test `the_rows_compile` checks them.
fn read(rows: &[LogFactRow], patterns: bool) -> Result<Vec<LogFact>, String> {
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let at = format!("causes.toml: log_fact #{}", i + 1);
        let (scope, pattern) = match (&r.log, &r.frame) {
            (Some(p), None) => (Scope::Log, p),
            (None, Some(p)) => (Scope::Frame, p),
            _ => return Err(format!("{at}: give one of `log` or `frame`")),
        };
        let re = if patterns {
            LazyRegex::new(pattern).map_err(|e| format!("{at}: {e}"))?
        } else {
            LazyRegex::checked_by_tests(pattern)
        };
        let groups: Vec<&str> = if patterns {
            re.group_names().map_err(|e| format!("{at}: {e}"))?
        } else {
            Vec::new()
        };
        if let Some(g) = groups.iter().find(|g| !FACT_NAMES.contains(g)) {
            return Err(format!("{at}: group `{g}` is no fact"));
        }
        let set = match &r.fact {
            Some(f) if FACT_NAMES.contains(&f.as_str()) => {
                Some((f.clone(), r.value.unwrap_or(1.0)))
            }
            Some(f) => return Err(format!("{at}: `{f}` is no fact")),
            None => None,
        };
        let states = match r.states.as_deref() {
            None => None,
            Some(name) => {
                Some(Side::named(name).ok_or_else(|| format!("{at}: states must be `negative`"))?)
            }
        };
        if patterns && set.is_none() && states.is_none() && groups.is_empty() {
            return Err(format!("{at}: the pattern sets no fact"));
        }
        if let Some(k) = &r.kind {
            if !KINDS.contains(&k.as_str()) {
                return Err(format!("{at}: kind must be one of {:?}", KINDS));
            }
        }
        out.push(LogFact {
            scope,
            re,
            set,
            states,
            kind: r.kind.clone(),
        });
    }
    Ok(out)
}

/// The rows of the embedded table (checked by the tests; a broken file
/// gives none rather than a panic in the user's run).
pub fn rows() -> &'static [LogFact] {
    static ROWS: std::sync::OnceLock<Vec<LogFact>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        serde_json::from_str::<File>(json())
            .map_err(|e| e.to_string())
            .and_then(|f| read(&f.log_fact, false))
            .unwrap_or_default()
    })
}

/// Set what one match states: its fact groups (numbers only) and its
/// constant. A fact already measured is kept: the log's own lines never
/// override the values and bound of the failure.
pub fn apply(row: &LogFact, captures: &[(&str, &str)], facts: &mut Facts) {
    for (name, text) in captures {
        if let Ok(v) = text.trim().parse::<f64>() {
            if v.is_finite() {
                facts.entry((*name).to_string()).or_insert(v);
            }
        }
    }
    if let Some((name, v)) = &row.set {
        facts.entry(name.clone()).or_insert(*v);
    }
    if let Some(side) = row.states {
        let one = [("count", 1.0), ("distinct", 1.0), ("sampled", 1.0)];
        for (name, v) in one.iter().chain(side.facts()) {
            facts.entry((*name).to_string()).or_insert(*v);
        }
    }
}

/// Apply every `frame` row of `kind` to the traceback's texts.
pub fn from_frames(frames: &[&str], kind: &str, facts: &mut Facts) {
    for row in rows().iter().filter(|r| r.scope == Scope::Frame) {
        if row.kind.as_deref().is_some_and(|k| k != kind) {
            continue;
        }
        if let Some(caps) = frames.iter().find_map(|f| row.re.named_captures(f)) {
            apply(row, &caps, facts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_compile() {
        let f: File = toml::from_str(source()).expect("parses");
        let rows = compile(&f.log_fact).expect("compiles");
        assert!(rows.len() >= 5);
        assert_eq!(rows.len(), super::rows().len());
    }

    #[test]
    fn a_row_states_a_negative_value_and_nothing_else() {
        let row = |states: &str| {
            let text = format!("[[cause]]\nid = \"x\"\nkind = \"ids\"\nrequires = \"1\"\nprior = 0.1\nwhy = \"w\"\n[[log_fact]]\nlog = 'neg'\nstates = \"{states}\"\n");
            let f: File = toml::from_str(&text).expect("parses");
            compile(&f.log_fact)
        };
        let rows = row("negative").expect("compiles");
        let mut f = Facts::new();
        f.insert("n_past".into(), 2.0);
        apply(&rows[0], &[], &mut f);
        assert_eq!(f.get("n_past"), Some(&2.0), "a measured count is kept");
        assert_eq!(f.get("n_wrapped"), Some(&0.0));
        assert_eq!(f.get("count"), Some(&1.0));
        assert_eq!(
            f.get("n_neg"),
            None,
            "-100 is not counted in n_neg: unknown"
        );
        assert!(row("past")
            .unwrap_err()
            .contains("states must be `negative`"));
    }

    #[test]
    fn a_frame_names_the_table_and_code_states_ignore_index() {
        let mut f = Facts::new();
        from_frames(
            &[
                "forward",
                "position_embeddings = self.position_embeddings(position_ids)",
                "loss = F.cross_entropy(out, y, ignore_index=255)",
            ],
            "ids",
            &mut f,
        );
        assert_eq!(f.get("hint_pos"), Some(&1.0));
        let mut g = Facts::new();
        from_frames(
            &["loss = F.cross_entropy(out, y, ignore_index=255)"],
            "labels",
            &mut g,
        );
        assert_eq!(g.get("ignore"), Some(&255.0));
    }
}
