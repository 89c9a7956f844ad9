//! The rule catalog: one TOML file per rule under `catalog/`, embedded at
//! build time, validated and compiled once. It answers three questions:
//! which rule owns a device assertion line, which rule a host-side error text
//! belongs to, and how the rule's causes rank given the evidence seen.

use crate::finding::{Bound, Cause, Finding, OpFamily, Scalar, Severity, CAUSE_IDS};
use crate::lazy_regex::LazyRegex;
use crate::rule_id::RuleId;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/catalog_files.rs"));

/// Rules the matcher falls back to when no catalog pattern owns a line.
pub mod fallback {
    use crate::rule_id::ids;
    pub const NO_KERNEL_LINE: &str = ids::DEVICE_ASSERT_NO_KERNEL_LINE.as_str();
    pub const UNRECOGNISED_ASSERT: &str = ids::UNRECOGNISED_DEVICE_ASSERT.as_str();
    pub const INDUCTOR_ASSERT: &str = ids::INDUCTOR_DEVICE_ASSERT.as_str();
    pub const CUSTOM_KERNEL: &str = ids::CUSTOM_KERNEL_ASSERT.as_str();
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("catalog file {file}: {source}")]
    Toml {
        file: String,
        source: toml::de::Error,
    },
    #[error("catalog file {file}: {message}")]
    Invalid { file: String, message: String },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub name: String,
    pub op_family: OpFamily,
    pub title: String,
    pub summary: String,
    #[serde(default)]
    pub severity: Severity,
    #[serde(default)]
    pub internal: bool,
    #[serde(default)]
    pub ops: Vec<String>,
    #[serde(default)]
    pub bad_argument: String,
    #[serde(default)]
    pub bound: String,
    #[serde(default)]
    pub guard: String,
    #[serde(default)]
    pub fixes: Vec<String>,
    #[serde(default, rename = "assert")]
    pub asserts: Vec<AssertPattern>,
    #[serde(default)]
    pub cpu_messages: Vec<String>,
    #[serde(default, rename = "cause")]
    pub causes: Vec<CauseSpec>,
    pub doc: Doc,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssertPattern {
    pub file: Option<String>,
    pub kernel: Option<String>,
    pub assertion: Option<String>,
    #[serde(default)]
    pub releases: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CauseSpec {
    pub id: String,
    pub prior: f64,
    pub why: String,
    #[serde(default)]
    pub fixes: Vec<String>,
    #[serde(default)]
    pub evidence: Vec<EvidenceSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSpec {
    pub frame: Option<String>,
    pub log: Option<String>,
    pub assertion: Option<String>,
    pub weight: f64,
    pub why: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Doc {
    pub what: String,
    pub why: String,
    pub confirm: String,
    pub fix: String,
    #[serde(default)]
    pub example: String,
}

/// `catalog/op-guesses.toml`: traceback code → the rule whose kernel would
/// have asserted, for a failure the log shows without a kernel line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpGuessFile {
    #[serde(default, rename = "guess")]
    guesses: Vec<OpGuessSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpGuessSpec {
    frame: String,
    rule: String,
}

/// An op guess with its pattern checked and its rule found.
struct OpGuess {
    frame: LazyRegex,
    /// Index into the catalog's rules.
    rule: usize,
}

struct CompiledAssert {
    file: Option<LazyRegex>,
    kernel: Option<LazyRegex>,
    assertion: Option<LazyRegex>,
}

impl CompiledAssert {
    fn matches(&self, a: &DeviceAssert<'_>) -> bool {
        self.file.as_ref().is_none_or(|r| r.is_match(a.file)) && self.matches_any_file(a)
    }

    fn matches_any_file(&self, a: &DeviceAssert<'_>) -> bool {
        // Windows builds print no function: a kernel pattern cannot reject them.
        let kernel_ok = match (&self.kernel, a.kernel) {
            (Some(r), Some(k)) => r.is_match(k),
            _ => true,
        };
        let assertion_ok = self
            .assertion
            .as_ref()
            .is_none_or(|r| r.is_match(a.assertion));
        kernel_ok && assertion_ok
    }
}

enum EvidenceKind {
    Frame(LazyRegex),
    Log(usize),
    Assertion(LazyRegex),
}

struct CompiledEvidence {
    kind: EvidenceKind,
    weight: f64,
    why: String,
}

struct CompiledCause {
    spec: CauseSpec,
    evidence: Vec<CompiledEvidence>,
}

/// A rule with its patterns compiled.
pub struct CompiledRule {
    pub rule: Rule,
    asserts: Vec<CompiledAssert>,
    cpu_messages: Vec<LazyRegex>,
    causes: Vec<CompiledCause>,
}

impl CompiledRule {
    /// Every regex this rule holds (its `log` evidence lives in the catalog's
    /// [`Catalog::log_patterns`]).
    #[cfg(test)]
    fn regexes(&self) -> impl Iterator<Item = &LazyRegex> {
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

/// One device assertion as the log reader parsed it, already normalised
/// with [`normalize_path`], [`normalize_kernel`], [`normalize_assertion`].
#[derive(Debug, Clone, Copy)]
pub struct DeviceAssert<'a> {
    pub file: &'a str,
    pub kernel: Option<&'a str>,
    pub assertion: &'a str,
}

pub struct Catalog {
    rules: Vec<CompiledRule>,
    /// Every rule's `cpu_messages`, rules in id order, and the rule of each.
    cpu_patterns: Vec<LazyRegex>,
    cpu_owner: Vec<usize>,
    log_patterns: Vec<LazyRegex>,
    /// In the file's order: the first that matches wins.
    op_guesses: Vec<OpGuess>,
}

/// Which `log` evidence patterns fired while reading a log, with the named
/// captures (`value`, `low`, `high`) of their first match.
#[derive(Debug, Default, Clone)]
pub struct LogHits {
    first: HashMap<usize, Vec<(String, String)>>,
}

impl LogHits {
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
    /// How many catalog log patterns have matched.
    pub fn len(&self) -> usize {
        self.first.len()
    }
    /// Whether log pattern `i` (see [`Catalog::log_patterns`]) has matched.
    pub fn contains(&self, i: usize) -> bool {
        self.first.contains_key(&i)
    }
}

/// What the evidence says about a rule's causes.
#[derive(Debug, Clone, Default)]
pub struct Ranked {
    pub causes: Vec<Cause>,
    pub fixes: Vec<String>,
    pub values: Vec<Scalar>,
    pub bound: Option<Bound>,
}

/// Checked now, compiled on first use (see `lazy_regex`).
fn compile(file: &str, what: &str, pat: &str) -> Result<LazyRegex, CatalogError> {
    LazyRegex::new(pat).map_err(|e| CatalogError::Invalid {
        file: file.into(),
        message: format!("{what} pattern {pat:?}: {e}"),
    })
}

impl Catalog {
    /// The catalog embedded in this binary.
    pub fn builtin() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            // The embedded files are validated by this crate's tests; failing here
            // means the binary was built from a broken catalog.
            let (guesses, text) = OP_GUESSES_FILE;
            Catalog::from_sources(CATALOG_FILES.iter().copied())
                .and_then(|c| c.with_op_guesses(guesses, text))
                .unwrap_or_else(|e| panic!("embedded catalog is invalid: {e}"))
        })
    }

    pub fn from_sources<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Catalog, CatalogError> {
        let mut rules = Vec::new();
        let mut log_patterns: Vec<LazyRegex> = Vec::new();
        let mut ids = HashSet::new();
        let mut names = HashSet::new();
        for (file, text) in files {
            let rule: Rule = toml::from_str(text).map_err(|source| CatalogError::Toml {
                file: file.into(),
                source,
            })?;
            let invalid = |message: String| CatalogError::Invalid {
                file: file.into(),
                message,
            };
            let id_ok = rule.id.len() == 5
                && rule.id.starts_with("DA")
                && rule.id[2..].bytes().all(|b| b.is_ascii_digit());
            if !id_ok {
                return Err(invalid(format!(
                    "rule id {:?} is not DA followed by three digits",
                    rule.id
                )));
            }
            if !file.starts_with(&format!("{}-{}", rule.id, rule.name)) {
                return Err(invalid(format!(
                    "file name should be {}-{}.toml",
                    rule.id, rule.name
                )));
            }
            if !rule
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            {
                return Err(invalid(format!(
                    "rule name {:?} is not kebab-case",
                    rule.name
                )));
            }
            if !ids.insert(rule.id.clone()) || !names.insert(rule.name.clone()) {
                return Err(invalid(format!(
                    "duplicate rule id or name {} {}",
                    rule.id, rule.name
                )));
            }
            let mut asserts = Vec::new();
            for a in &rule.asserts {
                if a.file.is_none() && a.kernel.is_none() && a.assertion.is_none() {
                    return Err(invalid(
                        "an [[assert]] needs at least one of file, kernel, assertion".into(),
                    ));
                }
                let c = |p: &Option<String>, what| {
                    p.as_deref().map(|p| compile(file, what, p)).transpose()
                };
                asserts.push(CompiledAssert {
                    file: c(&a.file, "file")?,
                    kernel: c(&a.kernel, "kernel")?,
                    assertion: c(&a.assertion, "assertion")?,
                });
            }
            let cpu_messages = rule
                .cpu_messages
                .iter()
                .map(|m| compile(file, "cpu_messages", m))
                .collect::<Result<_, _>>()?;
            let mut causes = Vec::new();
            for cause in &rule.causes {
                if !CAUSE_IDS.contains(&cause.id.as_str()) {
                    return Err(invalid(format!(
                        "cause id {:?} is not in the contract's vocabulary",
                        cause.id
                    )));
                }
                if !(0.0..=1.0).contains(&cause.prior) {
                    return Err(invalid(format!(
                        "cause {} prior {} is outside [0, 1]",
                        cause.id, cause.prior
                    )));
                }
                let mut evidence = Vec::new();
                for e in &cause.evidence {
                    let kind = match (&e.frame, &e.log, &e.assertion) {
                        (Some(p), None, None) => EvidenceKind::Frame(compile(file, "frame", p)?),
                        (None, Some(p), None) => {
                            log_patterns.push(compile(file, "log", p)?);
                            EvidenceKind::Log(log_patterns.len() - 1)
                        }
                        (None, None, Some(p)) => {
                            EvidenceKind::Assertion(compile(file, "assertion", p)?)
                        }
                        _ => {
                            return Err(invalid(format!(
                                "evidence of cause {} needs exactly one of frame, log, assertion",
                                cause.id
                            )))
                        }
                    };
                    evidence.push(CompiledEvidence {
                        kind,
                        weight: e.weight,
                        why: e.why.clone(),
                    });
                }
                causes.push(CompiledCause {
                    spec: cause.clone(),
                    evidence,
                });
            }
            rules.push(CompiledRule {
                rule,
                asserts,
                cpu_messages,
                causes,
            });
        }
        rules.sort_by(|a, b| a.id.cmp(&b.id));
        let (mut cpu_patterns, mut cpu_owner) = (Vec::new(), Vec::new());
        for (ri, r) in rules.iter().enumerate() {
            cpu_patterns.extend(r.cpu_messages.iter().cloned());
            cpu_owner.extend(r.cpu_messages.iter().map(|_| ri));
        }
        Ok(Catalog {
            cpu_patterns,
            cpu_owner,
            log_patterns,
            rules,
            op_guesses: Vec::new(),
        })
    }

    /// The catalog with the traceback → op guesses of `text` (the file
    /// `file`, see `catalog/op-guesses.toml`): every pattern must parse and
    /// every rule be one of this catalog's.
    pub fn with_op_guesses(mut self, file: &str, text: &str) -> Result<Catalog, CatalogError> {
        let parsed: OpGuessFile = toml::from_str(text).map_err(|source| CatalogError::Toml {
            file: file.into(),
            source,
        })?;
        let mut guesses = Vec::with_capacity(parsed.guesses.len());
        for (n, g) in parsed.guesses.iter().enumerate() {
            let Some(rule) = self.rules.iter().position(|r| r.id == g.rule) else {
                return Err(CatalogError::Invalid {
                    file: file.into(),
                    message: format!("guess {}: no rule {:?} in the catalog", n + 1, g.rule),
                });
            };
            let what = format!("guess {}: frame", n + 1);
            guesses.push(OpGuess {
                frame: compile(file, &what, &g.frame)?,
                rule,
            });
        }
        self.op_guesses = guesses;
        Ok(self)
    }

    /// The rule whose op a traceback's text (a frame's code line or function
    /// name) names, by the first op guess that matches it.
    pub fn guess_op(&self, text: &str) -> Option<&CompiledRule> {
        self.op_guesses
            .iter()
            .find(|g| g.frame.is_match(text))
            .map(|g| &self.rules[g.rule])
    }

    pub fn rules(&self) -> &[CompiledRule] {
        &self.rules
    }

    /// A rule by id (`DA101`, any case) or name.
    pub fn get(&self, key: &str) -> Option<&CompiledRule> {
        self.rules
            .iter()
            .find(|r| r.id.eq_ignore_ascii_case(key) || r.name == key)
    }

    /// The rule that owns a device assertion line. Falls back to the generic
    /// rules: PyTorch's own files → DA004, Inductor/Triton → DA402, any other
    /// file → DA403 (custom kernel).
    pub fn match_assert(&self, a: &DeviceAssert<'_>) -> &CompiledRule {
        if let Some(r) = self
            .rules
            .iter()
            .find(|r| r.asserts.iter().any(|p| p.matches(a)))
        {
            return r;
        }
        let id = if is_inductor_file(a.file) || a.kernel == Some("unknown") {
            fallback::INDUCTOR_ASSERT
        } else if is_pytorch_file(a.file) {
            fallback::UNRECOGNISED_ASSERT
        } else {
            fallback::CUSTOM_KERNEL
        };
        self.get(id).unwrap_or(&self.rules[0])
    }

    /// The rule whose kernel and assertion patterns own the line whatever
    /// its path says (torn, interleaved or Windows lines garble or drop the
    /// path). Only patterns that name an assertion count, and never the
    /// Inductor and fallback rules, whose patterns are about the path.
    pub fn match_assert_any_file(&self, a: &DeviceAssert<'_>) -> Option<&CompiledRule> {
        let path_rules = [
            fallback::UNRECOGNISED_ASSERT,
            fallback::INDUCTOR_ASSERT,
            fallback::CUSTOM_KERNEL,
            crate::rule_id::ids::INDUCTOR_INDEX_OUT_OF_BOUNDS.as_str(),
        ];
        self.rules
            .iter()
            .filter(|r| !path_rules.contains(&r.id.as_str()))
            .find(|r| {
                r.asserts.iter().any(|p| {
                    // A pattern that takes any text (DA508's messages) says nothing without its path.
                    let specific = p
                        .assertion
                        .as_ref()
                        .is_some_and(|re| !re.is_match("\u{1}any text\u{1}"));
                    specific && p.matches_any_file(a)
                })
            })
    }

    /// Every rule whose patterns (not a fallback) own the line; a sound
    /// catalog has at most one.
    pub fn owners(&self, a: &DeviceAssert<'_>) -> Vec<&CompiledRule> {
        self.rules
            .iter()
            .filter(|r| r.asserts.iter().any(|p| p.matches(a)))
            .collect()
    }

    /// The rule whose host-side error text appears in `line`, if any.
    pub fn match_cpu_message(&self, line: &str) -> Option<&CompiledRule> {
        let k = self.cpu_patterns.iter().position(|re| re.is_match(line))?;
        self.cpu_rule(k)
    }

    /// Record which `log` evidence patterns `line` matches.
    pub fn observe_log_line(&self, line: &str, hits: &mut LogHits) {
        for (i, re) in self.log_patterns.iter().enumerate() {
            if re.is_match(line) {
                self.record_log_hit(i, line, hits);
            }
        }
    }

    /// The `log` evidence patterns; a pattern's index is its id in [`LogHits`].
    pub fn log_patterns(&self) -> &[LazyRegex] {
        &self.log_patterns
    }

    /// Record that log pattern `i` matches `line` (known to match: a
    /// reader that checked the patterns one by one), with the captures of
    /// its first match.
    pub fn record_log_hit(&self, i: usize, line: &str, hits: &mut LogHits) {
        let Some(re) = self.log_patterns.get(i) else {
            return;
        };
        hits.first.entry(i).or_insert_with(|| {
            re.captures(line)
                .map(|c| {
                    re.capture_names()
                        .flatten()
                        .filter_map(|n| c.name(n).map(|m| (n.to_string(), m.as_str().to_string())))
                        .collect()
                })
                .unwrap_or_default()
        });
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

    /// Rank a rule's causes. `frames` are traceback function names and code
    /// lines (innermost last); `assertion` the normalised assertion text.
    pub fn rank(
        &self,
        rule: &CompiledRule,
        frames: &[&str],
        assertion: Option<&str>,
        hits: &LogHits,
    ) -> Ranked {
        let mut out = Ranked::default();
        let mut scored: Vec<(f64, usize, Cause, &CauseSpec)> = Vec::new();
        for (order, cause) in rule.causes.iter().enumerate() {
            let mut confidence = cause.spec.prior;
            let mut reasons = Vec::new();
            for e in &cause.evidence {
                let fired = match &e.kind {
                    EvidenceKind::Frame(re) => frames.iter().any(|f| re.is_match(f)),
                    EvidenceKind::Assertion(re) => match assertion.and_then(|a| re.captures(a)) {
                        Some(c) => {
                            take_captures(
                                re.capture_names()
                                    .flatten()
                                    .filter_map(|n| c.name(n).map(|m| (n, m.as_str()))),
                                &mut out,
                            );
                            true
                        }
                        None => false,
                    },
                    EvidenceKind::Log(i) => match hits.first.get(i) {
                        Some(caps) => {
                            take_captures(
                                caps.iter().map(|(n, v)| (n.as_str(), v.as_str())),
                                &mut out,
                            );
                            true
                        }
                        None => false,
                    },
                };
                if fired {
                    confidence += e.weight;
                    reasons.push(e.why.clone());
                }
            }
            let confidence = (confidence.clamp(0.0, 0.95) * 100.0).round() / 100.0;
            let why = if reasons.is_empty() {
                cause.spec.why.clone()
            } else {
                format!("{} (evidence: {})", cause.spec.why, reasons.join("; "))
            };
            scored.push((
                confidence,
                order,
                Cause {
                    established: false,
                    proof: None,
                    id: cause.spec.id.clone(),
                    confidence,
                    why,
                },
                &cause.spec,
            ));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        if let Some((_, _, _, top)) = scored.first() {
            out.fixes.extend(top.fixes.iter().cloned());
        }
        for f in &rule.fixes {
            push_fix(&mut out.fixes, f);
        }
        out.causes = scored.into_iter().map(|(_, _, c, _)| c).collect();
        out
    }

    /// A finding for `rule` with the rule's identity and fixes filled in.
    pub fn finding(&self, rule: &CompiledRule) -> Finding {
        finding_of(rule)
    }

    /// The embedded rules, parsed but with no pattern compiled: all that
    /// naming a finding needs. `scan` and `check` match no log line, and
    /// compiling the catalog's patterns would be most of a short run.
    pub fn builtin_rules() -> &'static [Rule] {
        static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
        RULES.get_or_init(|| {
            // `builtin()` validates the same files (and this crate's tests call it).
            CATALOG_FILES
                .iter()
                .filter_map(|(_, text)| toml::from_str(text).ok())
                .collect()
        })
    }

    /// The finding of rule `id` of the embedded catalog, without compiling
    /// it. Every [`RuleId`] is generated from the embedded files, so it is
    /// always there; `builtin()` panics the same way on a broken catalog.
    pub fn builtin_finding(id: RuleId) -> Finding {
        match Self::builtin_rules().iter().find(|r| id == r.id) {
            Some(r) => finding_of(r),
            None => panic!("rule {id} is generated from the embedded catalog but not in it"),
        }
    }
}

fn finding_of(rule: &Rule) -> Finding {
    let mut f = Finding::new(&rule.id, &rule.name, rule.op_family, &rule.summary);
    f.severity = rule.severity;
    f.fixes = rule.fixes.clone();
    f
}

/// Add a fix unless one already listed says the same (`x` vs `x after y`).
pub fn push_fix(fixes: &mut Vec<String>, fix: &str) {
    if !fixes
        .iter()
        .any(|g| fix.starts_with(g.as_str()) || g.starts_with(fix))
    {
        fixes.push(fix.to_string());
    }
}

fn take_captures<'a>(caps: impl Iterator<Item = (&'a str, &'a str)>, out: &mut Ranked) {
    for (name, text) in caps {
        let Ok(v) = text.trim().parse::<i64>() else {
            continue;
        };
        match name {
            "value" if !out.values.contains(&Scalar::Int(v)) => out.values.push(Scalar::Int(v)),
            "high" => {
                out.bound
                    .get_or_insert(Bound {
                        low: Some(Scalar::Int(0)),
                        high: None,
                        high_inclusive: false,
                    })
                    .high = Some(Scalar::Int(v))
            }
            "low" => {
                out.bound
                    .get_or_insert(Bound {
                        low: None,
                        high: None,
                        high_inclusive: false,
                    })
                    .low = Some(Scalar::Int(v))
            }
            _ => {}
        }
    }
}

const PYTORCH_ROOTS: &[&str] = &[
    "aten/",
    "c10/",
    "torch/csrc/",
    "caffe2/",
    "torch/headeronly/",
    "third_party/fbgemm/",
    "third_party/mslk/",
];

/// The stable part of a printed source path: from `aten/`, `c10/`,
/// `torch/csrc/`, `caffe2/` or PyTorch's `third_party/` kernels on, with `/` separators; any
/// other path is returned with `/` separators only.
pub fn normalize_path(raw: &str) -> String {
    let p = raw.trim().replace('\\', "/");
    let mut best: Option<usize> = None;
    for root in PYTORCH_ROOTS {
        // The root must start the path or follow a separator (`/pytorch/aten/…`, `../aten/…`).
        let mut from = 0;
        while let Some(i) = p[from..].find(root) {
            let at = from + i;
            if at == 0 || p.as_bytes()[at - 1] == b'/' {
                best = Some(best.map_or(at, |b: usize| b.min(at)));
                break;
            }
            from = at + 1;
        }
    }
    match best {
        Some(i) => p[i..].to_string(),
        None => p,
    }
}

/// Whether a normalised path is PyTorch's own source.
pub fn is_pytorch_file(path: &str) -> bool {
    PYTORCH_ROOTS.iter().any(|r| path.starts_with(r))
}

/// Whether a path is an Inductor-generated Triton kernel.
pub fn is_inductor_file(path: &str) -> bool {
    path.contains("torchinductor") || path == "unknown" || path.is_empty()
}

/// The bare name of a printed device function: pretty signatures
/// (`void indexSelectSmallIndex(TensorInfo<T, I>, …) [with T = float, …]`),
/// qualified names (`at::native::<unnamed>::renormRowsL1`) and spelled-out
/// lambdas (`lambda [](int)->auto::operator()(int)->auto`) lose everything
/// but the name.
pub fn normalize_kernel(raw: &str) -> String {
    let s = raw.trim();
    let s = s.split(" [with ").next().unwrap_or(s);
    if s.contains("operator()") {
        return "operator()".to_string();
    }
    // Cut the parameter list: the first '(' outside template brackets.
    let mut depth = 0i32;
    let mut cut = s.len();
    for (i, ch) in s.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth <= 0 => {
                cut = i;
                break;
            }
            _ => {}
        }
    }
    let head = s[..cut].trim_end();
    // Drop the return type and qualifiers: the last whitespace-separated token
    // outside template brackets, then the last `::` component.
    let mut depth = 0i32;
    let mut start = 0;
    for (i, ch) in head.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' | '*' | '&' if depth <= 0 => start = i + 1,
            _ => {}
        }
    }
    let name = &head[start..];
    let name = name.rsplit("::").next().unwrap_or(name);
    // Template arguments on the name itself are not part of it.
    let name = name.split('<').next().unwrap_or(name);
    if name.is_empty() {
        s.to_string()
    } else {
        name.to_string()
    }
}

/// Whitespace runs collapsed to one space, ends trimmed.
pub fn normalize_assertion(raw: &str) -> String {
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_regex_compiles() {
        // Patterns are only parsed at load; one that parses but cannot compile
        // would otherwise match nothing, silently, on first use.
        let c = Catalog::builtin();
        let rules = c.rules().iter().flat_map(|r| r.regexes());
        let guesses = c.op_guesses.iter().map(|g| &g.frame);
        assert!(guesses.len() > 5, "the op guesses are loaded");
        for re in rules.chain(c.log_patterns()).chain(guesses) {
            if let Err(e) = re.compile() {
                panic!("{}: {e}", re.as_str());
            }
        }
    }

    #[test]
    fn op_guesses_name_rules_of_the_catalog_in_order() {
        let c = Catalog::builtin();
        let id = |t: &str| c.guess_op(t).map(|r| r.id.as_str());
        assert_eq!(id("out = F.embedding_bag(ids, w, offsets)"), Some("DA102"));
        assert_eq!(id("x = self.embed_tokens(input_ids)"), Some("DA101"));
        assert_eq!(id("loss = F.one_hot(y, 10)"), Some("DA121"));
        assert_eq!(id("print(total)"), None);
        let rules = || CATALOG_FILES.iter().copied();
        let load = |text: &str| {
            Catalog::from_sources(rules())
                .and_then(|c| c.with_op_guesses("op-guesses.toml", text))
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(load("[[guess]]\nframe = 'x'\nrule = 'DA101'"), None);
        let unknown = load("[[guess]]\nframe = 'x'\nrule = 'DA999'").unwrap_or_default();
        assert!(
            unknown.contains("op-guesses.toml") && unknown.contains("DA999"),
            "{unknown}"
        );
        let bad = load("[[guess]]\nframe = '(x'\nrule = 'DA101'").unwrap_or_default();
        assert!(
            bad.contains("op-guesses.toml") && bad.contains("guess 1"),
            "{bad}"
        );
        let typo = load("[[guess]]\nframes = 'x'\nrule = 'DA101'").unwrap_or_default();
        assert!(typo.contains("op-guesses.toml"), "{typo}");
    }

    #[test]
    fn uncompiled_rules_name_findings_as_the_catalog_does() {
        let c = Catalog::builtin();
        assert_eq!(Catalog::builtin_rules().len(), c.rules().len());
        for r in c.rules() {
            let light = serde_json::to_value(Catalog::builtin_finding(
                crate::RuleId::parse(&r.id).expect("a generated id"),
            ))
            .ok();
            assert_eq!(light, serde_json::to_value(c.finding(r)).ok(), "{}", r.id);
        }
    }

    #[test]
    fn paths_are_cut_at_the_pytorch_root() {
        assert_eq!(
            normalize_path("/pytorch/aten/src/ATen/native/cuda/Indexing.cu"),
            "aten/src/ATen/native/cuda/Indexing.cu"
        );
        assert_eq!(
            normalize_path("../aten/src/ATen/native/cuda/Loss.cu"),
            "aten/src/ATen/native/cuda/Loss.cu"
        );
        assert_eq!(
            normalize_path(
                r"C:\actions-runner\_work\pytorch\pytorch\pytorch\aten\src\ATen\native\cuda\IndexKernelUtils.cu"
            ),
            "aten/src/ATen/native/cuda/IndexKernelUtils.cu"
        );
        assert_eq!(
            normalize_path("/opt/conda/conda-bld/pytorch_1518244421288/work/torch/lib/THC/x.cuh"),
            "/opt/conda/conda-bld/pytorch_1518244421288/work/torch/lib/THC/x.cuh"
        );
        assert_eq!(
            normalize_path("/home/me/ext/my_kernel.cu"),
            "/home/me/ext/my_kernel.cu"
        );
        assert!(!is_pytorch_file("/home/me/ext/my_kernel.cu"));
    }

    #[test]
    fn kernel_names_lose_signatures() {
        assert_eq!(
            normalize_kernel("indexSelectLargeIndex"),
            "indexSelectLargeIndex"
        );
        assert_eq!(
            normalize_kernel("void indexSelectSmallIndex(TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, int, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2]"),
            "indexSelectSmallIndex"
        );
        assert_eq!(
            normalize_kernel(
                "Acctype bce_functor<Dtype, Acctype>::operator()(Tuple) [with Tuple = t]"
            ),
            "operator()"
        );
        assert_eq!(
            normalize_kernel("lambda [](int)->auto::operator()(int)->auto"),
            "operator()"
        );
        assert_eq!(
            normalize_kernel(
                "int at::native::<unnamed>::binarySearchForMultinomial(scalar_t *, scal"
            ),
            "binarySearchForMultinomial"
        );
        assert_eq!(
            normalize_kernel(
                "void at::native::<unnamed>::EmbeddingBag_updateOutputKernel(long *, lo"
            ),
            "EmbeddingBag_updateOutputKernel"
        );
        assert_eq!(
            normalize_kernel(
                "IndexType indexToOffset(const TensorInfo<T, IndexType> &, long, IndexT"
            ),
            "indexToOffset"
        );
        assert_eq!(normalize_kernel("unknown"), "unknown");
    }

    #[test]
    fn assertion_whitespace_collapses() {
        assert_eq!(
            normalize_assertion("  t >= 0  &&\tt < n_classes "),
            "t >= 0 && t < n_classes"
        );
    }
}
