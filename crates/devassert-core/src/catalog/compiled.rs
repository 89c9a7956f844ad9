//! The catalog as the program uses it: each rule with its patterns
//! compiled, and every pattern of each kind indexed for the reader. `load`
//! builds it; `matching` reads it.

use super::schema::{CauseSpec, Rule};
use crate::facts::Kind;
use crate::finding::Finding;
use crate::lazy_regex::LazyRegex;
use crate::vocabulary::OpFamily;

/// An op guess with its pattern checked and its rule found.
pub(super) struct OpGuess {
    pub(super) frame: LazyRegex,
    /// Index into the catalog's rules.
    pub(super) rule: usize,
}

pub(super) struct CompiledAssert {
    pub(super) file: Option<LazyRegex>,
    pub(super) kernel: Option<LazyRegex>,
    pub(super) assertion: Option<LazyRegex>,
}

pub(super) enum EvidenceKind {
    Frame(LazyRegex),
    Log(usize),
    Assertion(LazyRegex),
}

pub(super) struct CompiledEvidence {
    pub(super) kind: EvidenceKind,
    pub(super) value_is_base_vocab: bool,
    pub(super) weight: f64,
    pub(super) why: String,
}

pub(super) struct CompiledCause {
    pub(super) spec: CauseSpec,
    pub(super) evidence: Vec<CompiledEvidence>,
}

/// A rule with its patterns compiled.
pub struct CompiledRule {
    pub rule: Rule,
    pub(super) asserts: Vec<CompiledAssert>,
    pub(super) cpu_messages: Vec<LazyRegex>,
    pub(super) causes: Vec<CompiledCause>,
}

impl CompiledRule {
    /// Whether `text` is one of this rule's host-side CPU messages: a
    /// message two rules share (`index N is out of bounds for dimension d
    /// with size S`: advanced indexing and gather) states the values of
    /// whichever of them failed.
    pub fn states_cpu_message(&self, text: &str) -> bool {
        self.cpu_messages.iter().any(|m| m.is_match(text))
    }

    /// Every regex this rule holds (its `log` evidence lives in the catalog's
    /// [`Catalog::log_patterns`]).
    #[cfg(test)]
    pub(super) fn regexes(&self) -> impl Iterator<Item = &LazyRegex> {
        let asserts = self
            .asserts
            .iter()
            .flat_map(|a| [&a.file, &a.kernel, &a.assertion].into_iter().flatten());
        let evidence = self.causes.iter().flat_map(|c| &c.evidence);
        let evidence = evidence.filter_map(|e| match &e.kind {
            EvidenceKind::Frame(r) | EvidenceKind::Assertion(r) => Some(r),
            EvidenceKind::Log(_) => None,
        });
        asserts.chain(&self.cpu_messages).chain(evidence)
    }
}

impl std::ops::Deref for CompiledRule {
    type Target = Rule;
    fn deref(&self) -> &Rule {
        &self.rule
    }
}

/// The rules, compiled, with every pattern of each kind indexed for the reader.
pub struct Catalog {
    pub(super) rules: Vec<CompiledRule>,
    /// Every rule's `cpu_messages`, rules in id order, and the rule of each.
    pub(super) cpu_patterns: Vec<LazyRegex>,
    pub(super) cpu_owner: Vec<usize>,
    pub(super) log_patterns: Vec<LazyRegex>,
    /// In the file's order: the first that matches wins.
    pub(super) op_guesses: Vec<OpGuess>,
    /// `(exception class, index into rules)` of `op-guesses.toml`'s `by_exception`.
    pub(super) exception_guesses: Vec<(String, usize)>,
    /// The index in log_patterns of the op guesses' `device_frame`.
    pub(super) device_frame: Option<usize>,
    /// `(row of facts::log::rows(), its index in log_patterns)` for the
    /// `log` rows of `catalog/causes.toml`'s log facts.
    pub(super) log_facts: Vec<(usize, usize)>,
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

    /// What the bad values of `rule`'s finding are (its `values` key). A
    /// rule of another family than the finding's (DA001 naming a guessed
    /// op) says nothing of them: the first rule of the finding's family
    /// with the key does.
    pub fn values_of(&self, family: OpFamily, rule: &str) -> Option<Kind> {
        let own = self.get(rule)?;
        if own.values.is_some() || own.op_family == family {
            return own.values;
        }
        self.rules
            .iter()
            .filter(|r| r.op_family == family)
            .find_map(|r| r.values)
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
        finding_of(rule)
    }
}

/// A finding for `rule`, with the rule's identity, severity and fixes.
pub(super) fn finding_of(rule: &Rule) -> Finding {
    let mut f = Finding::new(&rule.id, &rule.name, rule.op_family, &rule.summary);
    f.severity = rule.severity;
    f.fixes = rule.fixes.clone();
    f
}
