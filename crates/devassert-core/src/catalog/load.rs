//! Loading the catalog: every rule file parsed and checked (ids, names,
//! cause vocabulary, priors, one kind per evidence) and its patterns checked
//! and compiled on first use; the op guesses checked against the rules.

use super::compiled::{
    finding_of, Catalog, CompiledAssert, CompiledCause, CompiledEvidence, CompiledRule,
    EvidenceKind, OpGuess,
};
#[cfg(test)]
use super::files::CATALOG_FILES;
use super::files::{CATALOG_JSON, OP_GUESSES_FILE_JSON};
use super::schema::{CatalogError, OpGuessFile, Rule};
use crate::finding::Finding;
use crate::lazy_regex::LazyRegex;
use crate::rule_id::RuleId;
use crate::vocabulary::CAUSE_IDS;
use std::collections::HashSet;
use std::sync::OnceLock;

/// When a catalog's patterns are parsed (they are compiled on first use).
#[derive(Clone, Copy)]
enum Parse {
    /// Now: an error names the file.
    Now,
    /// Never at load: the embedded files, whose every pattern this crate's
    /// tests parse and compile (`every_builtin_regex_compiles`).
    ByTheTests,
}

/// Checked as `parse` says, compiled on first use (see `lazy_regex`).
fn compile(parse: Parse, file: &str, what: &str, pat: &str) -> Result<LazyRegex, CatalogError> {
    match parse {
        Parse::ByTheTests => Ok(LazyRegex::checked_by_tests(pat)),
        Parse::Now => LazyRegex::new(pat).map_err(|e| CatalogError::Invalid {
            file: file.into(),
            message: format!("{what} pattern {pat:?}: {e}"),
        }),
    }
}

impl Catalog {
    /// The catalog embedded in this binary.
    pub fn builtin() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            // The embedded files are validated by this crate's tests; failing here
            // means the binary was built from a broken catalog.
            // They are read in their JSON form (`build.rs`), the same values.
            let (guesses, text) = OP_GUESSES_FILE_JSON;
            let rules = CATALOG_JSON.iter().map(|&(file, text)| {
                serde_json::from_str(text)
                    .map(|rule| (file, rule))
                    .map_err(|source| CatalogError::Json {
                        file: file.into(),
                        source,
                    })
            });
            Catalog::from_rules(rules, Parse::ByTheTests)
                .and_then(|c| {
                    let parsed =
                        serde_json::from_str(text).map_err(|source| CatalogError::Json {
                            file: guesses.into(),
                            source,
                        })?;
                    c.with_op_guess_file(guesses, parsed, Parse::ByTheTests)
                })
                .map(Catalog::with_log_facts)
                .unwrap_or_else(|e| panic!("embedded catalog is invalid: {e}"))
        })
    }

    /// The catalog of rule files `(file name, TOML text)`.
    pub fn from_sources<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Catalog, CatalogError> {
        Catalog::from_rules(
            files.into_iter().map(|(file, text)| {
                toml::from_str(text)
                    .map(|rule| (file, rule))
                    .map_err(|source| CatalogError::Toml {
                        file: file.into(),
                        source,
                    })
            }),
            Parse::Now,
        )
    }

    /// The catalog of rules parsed from the files they name, each checked.
    fn from_rules<'a>(
        parsed: impl IntoIterator<Item = Result<(&'a str, Rule), CatalogError>>,
        parse: Parse,
    ) -> Result<Catalog, CatalogError> {
        let mut rules = Vec::new();
        let mut log_patterns: Vec<LazyRegex> = Vec::new();
        let mut ids = HashSet::new();
        let mut names = HashSet::new();
        let mut aten_ops = HashSet::new();
        for rule in parsed {
            let (file, rule) = rule?;
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
            // One ATen op, one rule: explain names the rule an op maps to.
            if let Some(op) = rule.aten.iter().find(|op| !aten_ops.insert(op.to_string())) {
                return Err(invalid(format!("aten op {op:?} is listed by two rules")));
            }
            let mut asserts = Vec::new();
            for a in &rule.asserts {
                if a.file.is_none() && a.kernel.is_none() && a.assertion.is_none() {
                    return Err(invalid(
                        "an [[assert]] needs at least one of file, kernel, assertion".into(),
                    ));
                }
                let c = |p: &Option<String>, what| {
                    p.as_deref()
                        .map(|p| compile(parse, file, what, p))
                        .transpose()
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
                .map(|m| compile(parse, file, "cpu_messages", m))
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
                        (Some(p), None, None) => {
                            EvidenceKind::Frame(compile(parse, file, "frame", p)?)
                        }
                        (None, Some(p), None) => {
                            log_patterns.push(compile(parse, file, "log", p)?);
                            EvidenceKind::Log(log_patterns.len() - 1)
                        }
                        (None, None, Some(p)) => {
                            EvidenceKind::Assertion(compile(parse, file, "assertion", p)?)
                        }
                        _ => {
                            return Err(invalid(format!(
                                "evidence of cause {} needs exactly one of frame, log, assertion",
                                cause.id
                            )))
                        }
                    };
                    let has_value = [&e.log, &e.assertion]
                        .into_iter()
                        .flatten()
                        .any(|p| p.contains("(?P<value>"));
                    if e.value_is_base_vocab && !has_value {
                        return Err(invalid(format!(
                            "evidence of cause {} has value_is_base_vocab but its log or assertion pattern captures no `value`",
                            cause.id
                        )));
                    }
                    evidence.push(CompiledEvidence {
                        kind,
                        value_is_base_vocab: e.value_is_base_vocab,
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
            exception_guesses: Vec::new(),
            device_frame: None,
            log_facts: Vec::new(),
        })
    }

    /// The catalog whose reader also records the log lines that state a
    /// fact (`[[log_fact]]` of `catalog/causes.toml`, see `facts::log`).
    pub fn with_log_facts(mut self) -> Catalog {
        for (i, row) in crate::facts::log::rows().iter().enumerate() {
            if row.scope == crate::facts::log::Scope::Log {
                self.log_patterns.push(row.re.clone());
                self.log_facts.push((i, self.log_patterns.len() - 1));
            }
        }
        self
    }

    /// The catalog with the traceback → op guesses of `text` (the file
    /// `file`, see `catalog/op-guesses.toml`): every pattern must parse and
    /// every rule be one of this catalog's.
    pub fn with_op_guesses(self, file: &str, text: &str) -> Result<Catalog, CatalogError> {
        let parsed: OpGuessFile = toml::from_str(text).map_err(|source| CatalogError::Toml {
            file: file.into(),
            source,
        })?;
        self.with_op_guess_file(file, parsed, Parse::Now)
    }

    fn with_op_guess_file(
        mut self,
        file: &str,
        parsed: OpGuessFile,
        parse: Parse,
    ) -> Result<Catalog, CatalogError> {
        let rule_of = |what: String, id: &str| {
            self.rules
                .iter()
                .position(|r| r.id == id)
                .ok_or_else(|| CatalogError::Invalid {
                    file: file.into(),
                    message: format!("{what}: no rule {id:?} in the catalog"),
                })
        };
        let mut guesses = Vec::with_capacity(parsed.guesses.len());
        for (n, g) in parsed.guesses.iter().enumerate() {
            let rule = rule_of(format!("guess {}", n + 1), &g.rule)?;
            let what = format!("guess {}: frame", n + 1);
            guesses.push(OpGuess {
                frame: compile(parse, file, &what, &g.frame)?,
                rule,
            });
        }
        let mut by_exception = Vec::with_capacity(parsed.by_exception.len());
        for (n, g) in parsed.by_exception.iter().enumerate() {
            let rule = rule_of(format!("by_exception {}", n + 1), &g.rule)?;
            by_exception.push((g.class.clone(), rule));
        }
        self.op_guesses = guesses;
        self.exception_guesses = by_exception;
        if let Some(p) = &parsed.device_frame {
            self.log_patterns
                .push(compile(parse, file, "device_frame", p)?);
            self.device_frame = Some(self.log_patterns.len() - 1);
        }
        Ok(self)
    }

    /// The embedded rules, parsed but with no pattern compiled: all that
    /// naming a finding needs. `scan` and `check` match no log line, and
    /// compiling the catalog's patterns would be most of a short run.
    pub fn builtin_rules() -> &'static [Rule] {
        static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
        RULES.get_or_init(|| {
            // `builtin()` validates the same files (and this crate's tests call it).
            CATALOG_JSON
                .iter()
                .filter_map(|(_, text)| serde_json::from_str(text).ok())
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
    fn every_file_reads_the_same_in_json_as_in_toml() {
        // The program reads the JSON forms `build.rs` writes; the TOML files
        // are the source. The same values, field by field (`{:?}` shows
        // every string and the exact f64), for every embedded file.
        use crate::catalog::files::{FACT_CAUSES_FILE, FACT_CAUSES_FILE_JSON, OP_GUESSES_FILE};
        fn same<T: serde::de::DeserializeOwned + std::fmt::Debug>(
            (file, toml_text): (&str, &str),
            (json_file, json_text): (&str, &str),
        ) {
            assert_eq!(file, json_file);
            let written: T = toml::from_str(toml_text).unwrap_or_else(|e| panic!("{file}: {e}"));
            let read: T = serde_json::from_str(json_text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(format!("{written:?}"), format!("{read:?}"), "{file}");
        }
        assert_eq!(CATALOG_FILES.len(), CATALOG_JSON.len());
        assert!(CATALOG_FILES.len() > 30, "every rule file is embedded");
        for (&toml_file, &json_file) in CATALOG_FILES.iter().zip(CATALOG_JSON) {
            same::<Rule>(toml_file, json_file);
        }
        same::<OpGuessFile>(OP_GUESSES_FILE, OP_GUESSES_FILE_JSON);
        same::<crate::facts::table::File>(FACT_CAUSES_FILE, FACT_CAUSES_FILE_JSON);
        // patterns.toml: `patterns::tests` compares `shared()` with the TOML.
    }

    #[test]
    fn op_guesses_name_rules_of_the_catalog_in_order() {
        let c = Catalog::builtin();
        let id = |t: &str| c.guess_op(t).map(|r| r.id.as_str());
        assert_eq!(id("out = F.embedding_bag(ids, w, offsets)"), Some("DA102"));
        assert_eq!(id("x = self.embed_tokens(input_ids)"), Some("DA101"));
        // A module's private table and Hugging Face's embeddings module.
        assert_eq!(
            id("return self._encoder(self._embedding(chars), mask)"),
            Some("DA101")
        );
        assert_eq!(id("out = self.embeddings(input_ids=ids)"), Some("DA101"));
        assert_eq!(id("v = model.get_embedding(text)"), None, "no table named");
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
        let class = load("[[by_exception]]\nclass = 'IndexError'\nrule = 'DA999'");
        assert!(class.is_some_and(|e| e.contains("by_exception 1") && e.contains("DA999")));
    }

    #[test]
    fn an_exception_class_names_its_usual_rule_and_nothing_else() {
        let c = Catalog::builtin();
        let id = |t: &str| c.guess_op_by_exception(t).map(|r| r.id.as_str());
        assert_eq!(id("IndexError"), Some("DA101"));
        assert_eq!(
            id("RuntimeError"),
            None,
            "CUDA's and every other op's class"
        );
        assert_eq!(id("indexerror"), None);
    }

    #[test]
    fn a_base_vocab_condition_needs_a_value_to_test() {
        // DA101's own file, with its base-vocabulary evidence's `value` renamed.
        let (file, text) = CATALOG_FILES
            .iter()
            .copied()
            .find(|(_, t)| t.contains("value_is_base_vocab"))
            .expect("a rule uses value_is_base_vocab");
        let broken = text.replace("(?P<value>\\d{4,7})", "(?P<id>\\d{4,7})");
        assert_ne!(broken, text, "the pattern to break is still there");
        let err = Catalog::from_sources([(file, broken.as_str())])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains(file) && err.contains("value_is_base_vocab"),
            "{err}"
        );
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
}
