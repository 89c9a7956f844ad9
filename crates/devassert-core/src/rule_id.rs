//! Rule ids as Rust knows them: one constant per catalog rule, generated
//! from `catalog/*.toml` by the build script, so a misspelt id fails to
//! compile. A [`RuleId`] can only come from those constants or from
//! [`RuleId::parse`] of a known id: an unknown id is an error, never an empty
//! finding.

use std::fmt;

/// The id (`DA###`) of a rule of the embedded catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The rule `id` names, when the embedded catalog has it.
    pub fn parse(id: &str) -> Result<RuleId, UnknownRule> {
        ids::ALL
            .iter()
            .copied()
            .find(|r| r.0 == id)
            .ok_or_else(|| UnknownRule(id.to_string()))
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<str> for RuleId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for RuleId {
    fn eq(&self, other: &String) -> bool {
        self.0 == other
    }
}

/// An id no rule of the catalog has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule {0:?} (`devassert rule` lists the rules)")]
pub struct UnknownRule(pub String);

/// One constant per rule, named after the rule's kebab-case name.
pub mod ids {
    use super::RuleId;
    include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));
}
