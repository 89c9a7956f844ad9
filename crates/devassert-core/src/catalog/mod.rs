//! The rule catalog: one TOML file per rule under `catalog/`, embedded at
//! build time, validated and compiled once. It answers three questions:
//! which rule owns a device assertion line, which rule a host-side error text
//! belongs to, and how the rule's causes rank given the evidence seen.
//!
//! By job: [`schema`] is the files as written, `load` checks and compiles
//! them, `matching` owns lines to rules and ranks causes. Turning printed
//! log text into the normalised form matched here is the log reader's job
//! (`devassert-log`'s `normalize`).

mod load;
mod matching;
pub mod schema;

use crate::finding::Finding;
use crate::lazy_regex::LazyRegex;
use load::OpGuess;

pub use load::CompiledRule;
pub use matching::{
    is_inductor_file, is_pytorch_file, push_fix, DeviceAssert, LogHits, Ranked, PYTORCH_ROOTS,
};
pub use schema::{AssertPattern, CatalogError, CauseSpec, Doc, EvidenceSpec, Rule};

/// Rules the matcher falls back to when no catalog pattern owns a line.
pub mod fallback {
    use crate::rule_id::ids;
    pub const NO_KERNEL_LINE: &str = ids::DEVICE_ASSERT_NO_KERNEL_LINE.as_str();
    pub const UNRECOGNISED_ASSERT: &str = ids::UNRECOGNISED_DEVICE_ASSERT.as_str();
    pub const INDUCTOR_ASSERT: &str = ids::INDUCTOR_DEVICE_ASSERT.as_str();
    pub const CUSTOM_KERNEL: &str = ids::CUSTOM_KERNEL_ASSERT.as_str();
}

/// The rules, compiled, with every pattern of each kind indexed for the reader.
pub struct Catalog {
    rules: Vec<CompiledRule>,
    /// Every rule's `cpu_messages`, rules in id order, and the rule of each.
    cpu_patterns: Vec<LazyRegex>,
    cpu_owner: Vec<usize>,
    log_patterns: Vec<LazyRegex>,
    /// In the file's order: the first that matches wins.
    op_guesses: Vec<OpGuess>,
}

impl Catalog {
    pub fn rules(&self) -> &[CompiledRule] {
        &self.rules
    }

    /// A rule by id (`DA101`, any case) or name.
    pub fn get(&self, key: &str) -> Option<&CompiledRule> {
        self.rules
            .iter()
            .find(|r| r.id.eq_ignore_ascii_case(key) || r.name == key)
    }

    /// The rule of an ATen op (`embedding`, `aten.gather`, `aten.index.Tensor`):
    /// the one whose `aten` list holds the op's name.
    pub fn rule_for_aten(&self, op: &str) -> Option<&CompiledRule> {
        let op = op.strip_prefix("aten.").unwrap_or(op);
        // An overload (`index.Tensor`, `gather.default`) names the same op.
        let op = op.split('.').next().unwrap_or(op);
        self.rules.iter().find(|r| r.aten.iter().any(|a| a == op))
    }

    /// The `log` evidence patterns; a pattern's index is its id in [`LogHits`].
    pub fn log_patterns(&self) -> &[LazyRegex] {
        &self.log_patterns
    }

    /// The `cpu_messages` patterns in the order [`Catalog::match_cpu_message`]
    /// tries them: the first that matches names the rule ([`Catalog::cpu_rule`]).
    pub fn cpu_patterns(&self) -> &[LazyRegex] {
        &self.cpu_patterns
    }

    /// The rule of `cpu_messages` pattern `k`.
    pub fn cpu_rule(&self, k: usize) -> Option<&CompiledRule> {
        self.cpu_owner.get(k).map(|&r| &self.rules[r])
    }

    /// A finding for `rule` with the rule's identity and fixes filled in.
    pub fn finding(&self, rule: &CompiledRule) -> Finding {
        load::finding_of(rule)
    }
}
