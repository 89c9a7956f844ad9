//! The cheap test that decides whether a line is looked at at all. Almost
//! every line of a long training log is progress output; one multi-literal
//! search over the whole buffer finds the few lines that can matter: our own
//! trigger words, plus, for every catalog `log` / `cpu_messages` regex, the
//! most selective set of literals every match of it must contain. Those
//! literals are derived from the regexes themselves (so a catalog edit needs
//! no change here); a line found only by them is then checked against all
//! the literal sets its regex requires before the regexes run.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use devassert_core::Catalog;
use regex::Regex;
use regex_syntax::hir::{Hir, HirKind};

/// Words without which a line cannot hold anything the reader itself uses.
const TRIGGERS: &[&str] = &[
    "Assertion",
    "assertion",
    "assert",
    "Assert",
    "rror",
    "Traceback",
    "File \"",
    "CUDA",
    "HIP",
    "NCCL",
    "CUBLAS",
    "cuDNN",
    "CUDNN",
    "Fatal",
    "terminate",
    "atchdog",
    "ChildFailed",
    "synchronize",
    ".cu",
    "block: [",
    "global id: [",
    "containing",
    "Name of kernel",
    "illegal memory",
    "launch failure",
    "HSA_STATUS",
    "During handling",
    "above exception",
    "AMD_SERIALIZE",
    "xception",
    "\\n",
    "out of bounds",
    "out of range",
];

/// Words in nearly every line of a training log: a literal set holding one
/// of them is a poor filter when the regex offers another.
const COMMON: &[&str] = &[
    "loss", "grad", "step", "epoch", "info", "lr", "rate", "time", "train", "batch", "iter",
    "it/s", "warn", "model",
];

/// A regex's requirement: every match contains one literal of each set.
type Requirement = Vec<Vec<Vec<u8>>>;

fn requirement(h: &Hir) -> Option<Requirement> {
    match h.kind() {
        HirKind::Literal(l) => Some(vec![vec![l.0.to_vec()]]),
        HirKind::Capture(c) => requirement(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => requirement(&r.sub),
        HirKind::Concat(subs) => {
            // Runs of exactly-known parts join into longer literals (`-` + `(1|100)` → `-1`, `-100`).
            let mut all: Requirement = Vec::new();
            let mut run: Option<Vec<Vec<u8>>> = None;
            for sub in subs {
                match (exact(sub), run.take()) {
                    (Some(e), None) => run = Some(e),
                    (Some(e), Some(r)) => match cross(&r, &e) {
                        Some(c) => run = Some(c),
                        None => {
                            all.push(r);
                            run = Some(e);
                        }
                    },
                    (None, r) => {
                        all.extend(r);
                        all.extend(requirement(sub).into_iter().flatten());
                    }
                }
            }
            all.extend(run);
            (!all.is_empty()).then_some(all)
        }
        HirKind::Alternation(subs) => {
            let mut union = Vec::new();
            for s in subs {
                union.extend(best_set(&requirement(s)?)?.iter().cloned());
            }
            Some(vec![union])
        }
        _ => None,
    }
}

/// The finite set of strings `h` matches exactly, when small.
fn exact(h: &Hir) -> Option<Vec<Vec<u8>>> {
    match h.kind() {
        HirKind::Literal(l) => Some(vec![l.0.to_vec()]),
        HirKind::Capture(c) => exact(&c.sub),
        HirKind::Alternation(subs) => {
            let mut v = Vec::new();
            for s in subs {
                v.extend(exact(s)?);
            }
            (v.len() <= 64).then_some(v)
        }
        HirKind::Concat(subs) => subs
            .iter()
            .try_fold(vec![Vec::new()], |acc, s| cross(&acc, &exact(s)?)),
        _ => None,
    }
}

fn cross(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len() * b.len() > 64 {
        return None;
    }
    Some(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| [x.as_slice(), y.as_slice()].concat()))
            .collect(),
    )
}

/// How good a literal set is as a filter: longer shortest literal, no common words.
fn score(set: &[Vec<u8>]) -> (bool, usize) {
    let common = set.iter().any(|l| {
        let s = String::from_utf8_lossy(l).to_ascii_lowercase();
        COMMON.iter().any(|c| s.contains(c))
    });
    (!common, set.iter().map(Vec::len).min().unwrap_or(0))
}

fn best_set(req: &Requirement) -> Option<&Vec<Vec<u8>>> {
    req.iter()
        .filter(|s| !s.is_empty())
        .max_by_key(|s| score(s))
}

/// The requirement of a catalog regex, with case-insensitive parts reduced
/// to the casings logs use (lower, Capitalised, UPPER; every casing of words of up to three letters).
fn pattern_requirement(pattern: &str) -> Option<Requirement> {
    let insensitive = pattern.contains("(?i");
    let plain = pattern.replace("(?i)", "").replace("(?i:", "(?:");
    let hir = regex_syntax::parse(&plain).ok()?;
    let mut req = requirement(&hir)?;
    if insensitive {
        for set in &mut req {
            let mut out = Vec::new();
            for lit in set.iter() {
                let s = String::from_utf8_lossy(lit).to_string();
                let lower = s.to_ascii_lowercase();
                let mut title = lower.clone();
                if let Some(f) = title.get_mut(0..1) {
                    f.make_ascii_uppercase();
                }
                let mut variants = vec![lower.clone(), title, s.to_ascii_uppercase(), s.clone()];
                // Short words get every casing (`NaN`, `iNF`): there are few.
                if lower.len() <= 3 {
                    for mask in 0u32..(1 << lower.len()) {
                        variants.push(
                            lower
                                .bytes()
                                .enumerate()
                                .map(|(i, b)| {
                                    if mask & (1 << i) != 0 {
                                        b.to_ascii_uppercase() as char
                                    } else {
                                        b as char
                                    }
                                })
                                .collect(),
                        );
                    }
                }
                for v in variants {
                    let v = v.into_bytes();
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
            *set = out;
        }
    }
    // Single bytes filter nothing.
    req.retain(|s| s.iter().all(|l| l.len() >= 2));
    (!req.is_empty()).then_some(req)
}

pub struct Prefilter {
    /// Triggers plus each catalog regex's most selective set: does the line matter?
    any: AhoCorasick,
    /// The same for the case-insensitive regexes' literals (a second, small automaton:
    /// case folding would make the first one too slow).
    any_folded: Option<AhoCorasick>,
    triggers: AhoCorasick,
    /// Every literal of every catalog requirement, for the per-line check.
    catalog: Option<AhoCorasick>,
    /// Literal id → requirement sets it satisfies.
    literal_sets: Vec<Vec<usize>>,
    /// Per catalog regex: the set ids it requires (all of them), and the
    /// regex itself, run alone on lines that have its literals (the
    /// catalog's RegexSet then runs only on lines that truly match).
    patterns: Vec<(Vec<usize>, Regex)>,
    /// Regexes without a literal requirement: run on every line looked at.
    bare: Vec<Regex>,
    sets: usize,
    /// Some catalog regex has no literal its matches must contain: every
    /// line is looked at and checked against the catalog.
    unfiltered: bool,
}

fn build<S: AsRef<[u8]>>(pats: &[S]) -> Option<AhoCorasick> {
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .build(pats)
        .ok()
}

impl Prefilter {
    /// The prefilter of a catalog, built once per process: building it
    /// (deriving literals from every catalog regex) costs far more than
    /// reading a short log, and every reader of one catalog needs the same.
    pub fn shared(catalog: &'static Catalog) -> &'static Prefilter {
        static BUILT: std::sync::Mutex<Vec<(usize, &'static Prefilter)>> =
            std::sync::Mutex::new(Vec::new());
        let key = catalog as *const Catalog as usize;
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, p)) = built.iter().find(|(k, _)| *k == key) {
            return p;
        }
        // One per distinct 'static catalog (in practice: the embedded one).
        let p: &'static Prefilter = Box::leak(Box::new(Prefilter::new(catalog)));
        built.push((key, p));
        p
    }

    pub fn new(catalog: &Catalog) -> Self {
        let mut unfiltered = false;
        let mut literals: Vec<Vec<u8>> = Vec::new();
        let mut literal_sets: Vec<Vec<usize>> = Vec::new();
        let mut patterns: Vec<(Vec<usize>, Regex)> = Vec::new();
        let mut bare: Vec<Regex> = Vec::new();
        let mut scan: Vec<Vec<u8>> = TRIGGERS.iter().map(|t| t.as_bytes().to_vec()).collect();
        let mut folded: Vec<Vec<u8>> = Vec::new();
        let mut sets = 0;
        for rule in catalog.rules() {
            let regexes = rule.cpu_messages.iter().chain(
                rule.causes
                    .iter()
                    .flat_map(|c| c.evidence.iter().filter_map(|e| e.log.as_ref())),
            );
            for p in regexes {
                // The catalog compiled these already; one that does not compile here cannot match there.
                let Ok(re) = Regex::new(p) else { continue };
                let Some(req) = pattern_requirement(p) else {
                    unfiltered = true;
                    bare.push(re);
                    continue;
                };
                if let Some(best) = best_set(&req) {
                    if p.contains("(?i") {
                        // One case-folded literal scans for all its casings.
                        folded.extend(best.iter().map(|l| l.to_ascii_lowercase()));
                    } else {
                        scan.extend(best.iter().cloned());
                    }
                }
                let mut ids = Vec::new();
                for set in &req {
                    let id = sets;
                    sets += 1;
                    ids.push(id);
                    for lit in set {
                        let li = match literals.iter().position(|l| l == lit) {
                            Some(i) => i,
                            None => {
                                literals.push(lit.clone());
                                literal_sets.push(Vec::new());
                                literals.len() - 1
                            }
                        };
                        literal_sets[li].push(id);
                    }
                }
                patterns.push((ids, re));
            }
        }
        scan.sort();
        scan.dedup();
        // A few hundred short literals always build; should it ever fail,
        // the empty pattern makes every line a candidate: slow, still correct.
        let fallback =
            || build(&[""]).unwrap_or_else(|| unreachable!("the empty pattern always builds"));
        folded.sort();
        folded.dedup();
        let any = build(&scan).unwrap_or_else(fallback);
        let any_folded = if folded.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .build(&folded)
                .ok()
        };
        let triggers = build(TRIGGERS).unwrap_or_else(fallback);
        let catalog_ac = if literals.is_empty() {
            None
        } else {
            build(&literals)
        };
        let unfiltered = unfiltered || (!literals.is_empty() && catalog_ac.is_none());
        Prefilter {
            any,
            any_folded,
            triggers,
            catalog: catalog_ac,
            literal_sets,
            patterns,
            bare,
            sets,
            unfiltered,
        }
    }

    /// Every line must be looked at (a catalog regex without a literal).
    pub fn looks_at_everything(&self) -> bool {
        self.unfiltered
    }

    /// The next trigger at or after `from` in `hay`, using and updating the
    /// per-automaton look-ahead in `next` (absolute positions; each buffer is
    /// searched once per automaton, not once per line).
    pub fn find(
        &self,
        hay: &[u8],
        from: usize,
        next: &mut [Option<Option<(usize, usize)>>; 2],
    ) -> Option<(usize, usize)> {
        let search = |ac: &AhoCorasick| {
            ac.find(&hay[from..])
                .map(|m| (from + m.start(), from + m.end()))
        };
        for (i, slot) in next.iter_mut().enumerate() {
            let stale = match slot {
                None => true,
                Some(Some((s, _))) => *s < from,
                Some(None) => false,
            };
            if stale {
                *slot = Some(match i {
                    0 => search(&self.any),
                    _ => self.any_folded.as_ref().and_then(search),
                });
            }
        }
        [next[0].flatten(), next[1].flatten()]
            .into_iter()
            .flatten()
            .min()
    }

    pub fn is_match(&self, hay: &[u8]) -> bool {
        self.unfiltered
            || self.any.is_match(hay)
            || self.any_folded.as_ref().is_some_and(|ac| ac.is_match(hay))
    }

    /// Whether the line holds one of the reader's own trigger words.
    pub fn has_trigger(&self, line: &str) -> bool {
        self.triggers.is_match(line)
    }

    /// Whether some catalog regex matches `line` (checked literals first, then that regex alone).
    pub fn catalog_may_match(&self, line: &str) -> bool {
        if self.bare.iter().any(|r| r.is_match(line)) {
            return true;
        }
        let Some(ac) = &self.catalog else {
            return false;
        };
        let mut seen = vec![0u64; self.sets.div_ceil(64)];
        let mut any = false;
        for m in ac.find_overlapping_iter(line) {
            for &s in &self.literal_sets[m.pattern().as_usize()] {
                seen[s / 64] |= 1 << (s % 64);
                any = true;
            }
        }
        any && self.patterns.iter().any(|(ids, re)| {
            ids.iter().all(|&s| seen[s / 64] & (1 << (s % 64)) != 0) && re.is_match(line)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(p: &str) -> Vec<Vec<String>> {
        pattern_requirement(p)
            .unwrap_or_default()
            .into_iter()
            .map(|s| {
                s.into_iter()
                    .map(|l| String::from_utf8_lossy(&l).to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn requirements_of_patterns() {
        let r = lits(
            r"Token indices sequence length is longer than the specified maximum sequence length .*\((?P<value>\d+) > (?P<high>\d+)\)",
        );
        assert!(r
            .iter()
            .any(|s| s.iter().all(|l| l.starts_with("Token indices"))));
        assert!(lits(r"\d+>\d+").is_empty());
        assert_eq!(
            lits(r"(^|[\s\[(,=])-(1|100)([\s\]),]|$)"),
            vec![vec!["-1".to_string(), "-100".to_string()]]
        );
        assert_eq!(
            lits(r"(^|[^\d.])255([^\d.]|$)"),
            vec![vec!["255".to_string()]]
        );
        let r =
            pattern_requirement(r"(?i)\b(loss|grad\w*|logits?|probs?)\b[^\n]{0,40}\b(nan|inf)\b")
                .unwrap_or_default();
        assert_eq!(r.len(), 2);
        let best: Vec<String> = best_set(&r)
            .map(|s| {
                s.iter()
                    .map(|l| String::from_utf8_lossy(l).to_string())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            ["nan", "NaN", "inf", "Inf", "INF"]
                .iter()
                .all(|w| best.contains(&w.to_string())),
            "{best:?}"
        );
    }
}
