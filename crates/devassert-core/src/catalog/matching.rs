//! Matching and ranking: which rule owns a device assertion (its patterns,
//! else the fallback for the file's origin), which rule a host-side message
//! or a traceback's code names, and how a rule's causes rank on the evidence.

use super::compiled::{Catalog, CompiledAssert, CompiledRule, EvidenceKind};
use super::fallback;
use crate::finding::Cause;
use crate::place::{Bound, Scalar};
use std::collections::HashMap;

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

/// One device assertion as the log reader parsed it, already normalised
/// (path from PyTorch's root on with `/` separators, the function's bare
/// name, whitespace collapsed: `devassert-log`'s `normalize`).
#[derive(Debug, Clone, Copy)]
pub struct DeviceAssert<'a> {
    pub file: &'a str,
    pub kernel: Option<&'a str>,
    pub assertion: &'a str,
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
    /// The captures of log pattern `i`'s first match, if it matched.
    pub fn captures(&self, i: usize) -> Option<Vec<(&str, &str)>> {
        self.first
            .get(&i)
            .map(|c| c.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect())
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
    /// The rule's general fixes (each cause carries its own).
    pub fixes: Vec<String>,
    pub values: Vec<Scalar>,
    pub bound: Option<Bound>,
}

impl Catalog {
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

    /// Record that log pattern `i` matches `line` (known to match: a
    /// reader that checked the patterns one by one), with the captures of
    /// its first match.
    pub fn record_log_hit(&self, i: usize, line: &str, hits: &mut LogHits) {
        let Some(re) = self.log_patterns.get(i) else {
            return;
        };
        hits.first.entry(i).or_insert_with(|| {
            re.named_captures(line)
                .map(|c| {
                    c.into_iter()
                        .map(|(n, text)| (n.to_string(), text.to_string()))
                        .collect()
                })
                .unwrap_or_default()
        });
    }

    /// The faulting kernel a memory checker's report names (the op
    /// guesses' `device_frame`), if the log has one: its first.
    pub fn device_kernel<'h>(&self, hits: &'h LogHits) -> Option<&'h str> {
        let caps = hits.first.get(&self.device_frame?)?;
        caps.iter()
            .find(|(name, _)| name == "kernel")
            .map(|(_, text)| text.as_str())
    }

    /// The rule whose op a traceback's text (a frame's code line or function
    /// name) names, by the first op guess that matches it.
    pub fn guess_op(&self, text: &str) -> Option<&CompiledRule> {
        self.op_guesses
            .iter()
            .find(|g| g.frame.is_match(text))
            .map(|g| &self.rules[g.rule])
    }

    /// The rule an exception's class alone most often is (`op-guesses.toml`'s
    /// `by_exception`), for a traceback cut before its error line.
    pub fn guess_op_by_exception(&self, class: &str) -> Option<&CompiledRule> {
        self.exception_guesses
            .iter()
            .find(|(c, _)| c == class)
            .map(|&(_, rule)| &self.rules[rule])
    }

    /// Set the facts that the log's lines stated (`facts::log`'s `log`
    /// rows whose pattern matched), for values of `kind`.
    pub fn log_facts(&self, hits: &LogHits, kind: &str, facts: &mut crate::facts::Facts) {
        let rows = crate::facts::log::rows();
        for &(row, pattern) in &self.log_facts {
            let Some(r) = rows.get(row) else { continue };
            if r.kind.as_deref().is_some_and(|k| k != kind) {
                continue;
            }
            if let Some(caps) = hits.captures(pattern) {
                crate::facts::log::apply(r, &caps, facts);
            }
        }
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
        let mut scored: Vec<(f64, usize, Cause)> = Vec::new();
        for (order, cause) in rule.causes.iter().enumerate() {
            let mut confidence = cause.spec.prior;
            let mut reasons = Vec::new();
            for e in &cause.evidence {
                // What a matching evidence pattern captured (None: no match).
                let caps: Option<Vec<(&str, &str)>> = match &e.kind {
                    EvidenceKind::Frame(re) => frames.iter().any(|f| re.is_match(f)).then(Vec::new),
                    EvidenceKind::Assertion(re) => assertion.and_then(|a| re.named_captures(a)),
                    EvidenceKind::Log(i) => hits
                        .first
                        .get(i)
                        .map(|caps| caps.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect()),
                };
                // A base-vocabulary condition tests the captured `value`
                // (loading made sure the pattern captures one).
                let caps = caps.filter(|caps| {
                    !e.value_is_base_vocab
                        || caps.iter().any(|&(n, v)| n == "value" && base_vocab(v))
                });
                if let Some(caps) = caps {
                    take_captures(&caps, &mut out);
                    confidence += e.weight;
                    reasons.push(e.why.clone());
                }
            }
            // A score; `advice::calibrate` turns the finding's scores into shares.
            let confidence = (confidence.clamp(0.0, 0.95) * 100.0).round() / 100.0;
            let why = if reasons.is_empty() {
                cause.spec.why.clone()
            } else {
                format!("{} (evidence: {})", cause.spec.why, reasons.join("; "))
            };
            scored.push((
                confidence,
                order,
                Cause::new(cause.spec.id.clone(), confidence, why)
                    .with_fixes(cause.spec.fixes.iter().cloned()),
            ));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        // The causes carry their own fixes: `advice::next_steps` lists them
        // in rank order before these.
        for f in &rule.fixes {
            push_fix(&mut out.fixes, f);
        }
        out.causes = scored.into_iter().map(|(_, _, c)| c).collect();
        out
    }
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

fn base_vocab(text: &str) -> bool {
    text.trim()
        .parse::<i64>()
        .is_ok_and(crate::vocab::is_base_vocab)
}

fn take_captures(caps: &[(&str, &str)], out: &mut Ranked) {
    for &(name, text) in caps {
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

/// Where PyTorch's own sources start in a printed path (the log reader
/// cuts paths there; a file under one of them is PyTorch's).
pub const PYTORCH_ROOTS: &[&str] = &[
    "aten/",
    "c10/",
    "torch/csrc/",
    "caffe2/",
    "torch/headeronly/",
    "third_party/fbgemm/",
    "third_party/mslk/",
];

/// Whether a normalised path is PyTorch's own source.
pub fn is_pytorch_file(path: &str) -> bool {
    PYTORCH_ROOTS.iter().any(|r| path.starts_with(r))
}

/// Whether a path is an Inductor-generated Triton kernel.
pub fn is_inductor_file(path: &str) -> bool {
    path.contains("torchinductor") || path == "unknown" || path.is_empty()
}
