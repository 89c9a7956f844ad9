//! The cheap test that decides whether a line is looked at at all. Almost
//! every line of a long training log is progress output; one multi-literal
//! search over the whole buffer finds the few lines that can matter: our own
//! trigger words, plus, for every catalog `log` / `cpu_messages` regex, the
//! most selective set of literals every match of it must contain. Those
//! literals are derived from the regexes themselves (so a catalog edit needs
//! no change here); a line found only by them is then checked against all
//! the literal sets its regex requires before the regexes run.
//!
//! The search is the reader's hot loop (a 1 GiB log is mostly progress
//! lines), so it is one DFA over every literal (case-insensitive ones as the
//! casings logs use; see `literal_dfa`), and a large buffer is split at line
//! ends and searched on every core; only the lines that matter come back, in
//! order. A literal its regex wants at a word boundary (`\binf\b`) counts
//! only there, so `INFO` is not taken for `inf`.

use crate::bigram_filter::{BigramFilter, Pattern};
use crate::literal_dfa::LiteralDfa;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use devassert_core::lazy_regex::LazyRegex;
use devassert_core::Catalog;
use memchr::{memchr, memchr_iter, memrchr};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// Largest character class expanded into literals (`\s` has 25 characters,
/// 11 distinct first bytes).
const MAX_CLASS: usize = 32;

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
/// Literals may hold `BOUNDARY` marks.
type Requirement = Vec<Vec<Vec<u8>>>;

/// Marks a word boundary (`\b`) in a derived literal. No catalog literal
/// holds a NUL; the marks come out before any automaton is built.
const BOUNDARY: u8 = 0;

/// A literal without its boundary marks, and whether it wants a word
/// boundary before and after it (marks inside it are dropped: a looser
/// filter, never a missed line).
fn unmark(l: &[u8]) -> (Vec<u8>, bool, bool) {
    let bare: Vec<u8> = l.iter().copied().filter(|&b| b != BOUNDARY).collect();
    let before = l.first() == Some(&BOUNDARY);
    let after = l.len() > 1 && l.last() == Some(&BOUNDARY);
    (bare, before, after)
}

fn bare_len(l: &[u8]) -> usize {
    l.iter().filter(|&&b| b != BOUNDARY).count()
}

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
        // The end of a line is where a buffer's `\n` is (see `Prefilter::ends`).
        HirKind::Look(Look::End | Look::EndLF | Look::EndCRLF) => Some(vec![b"\n".to_vec()]),
        HirKind::Look(Look::WordAscii | Look::WordUnicode) => Some(vec![vec![BOUNDARY]]),
        // A small class joins its neighbours: `-1` followed by `[\s\]),]` is
        // `-1,`, `-1]`, … and not the `-1` of every `-1.2e-05` in a log.
        // A character outside ASCII stands as its first UTF-8 byte: every
        // match still holds the literal, and the automata stay small.
        HirKind::Class(Class::Unicode(c)) => {
            let mut v: Vec<Vec<u8>> = Vec::new();
            let mut looked = 0;
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    looked += 1;
                    let mut utf8 = [0u8; 4];
                    let lead = ch.encode_utf8(&mut utf8).as_bytes()[0];
                    if !v.iter().any(|l| l[0] == lead) {
                        v.push(vec![lead]);
                    }
                    if v.len() > MAX_CLASS || looked > 4 * MAX_CLASS {
                        return None;
                    }
                }
            }
            Some(v)
        }
        HirKind::Class(Class::Bytes(c)) => {
            let n: usize = c
                .ranges()
                .iter()
                .map(|r| usize::from(r.end() - r.start()) + 1)
                .sum();
            (n <= MAX_CLASS).then(|| {
                c.ranges()
                    .iter()
                    .flat_map(|r| (r.start()..=r.end()).map(|b| vec![b]))
                    .collect()
            })
        }
        HirKind::Capture(c) => exact(&c.sub),
        HirKind::Alternation(subs) => {
            let mut v = Vec::new();
            for s in subs {
                v.extend(exact(s)?);
            }
            v.sort();
            v.dedup();
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
    (!common, set.iter().map(|l| bare_len(l)).min().unwrap_or(0))
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
                if bare_len(lit) <= 3 {
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
    req.retain(|s| s.iter().all(|l| bare_len(l) >= 2));
    (!req.is_empty()).then_some(req)
}

/// A line that matters, inside the buffer searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub start: usize,
    /// Its `\n` (or the buffer's end).
    pub end: usize,
    /// Lines before it in the buffer.
    pub before: u64,
}

/// The lines kept so far, numbered by counting the `\n`s before them.
struct Kept {
    lines: Vec<Line>,
    /// Newlines are counted up to here, and there are `before` of them.
    counted: usize,
    before: u64,
}

impl Kept {
    fn keep(&mut self, hay: &[u8], start: usize, end: usize) {
        self.before += memchr_iter(b'\n', &hay[self.counted..start]).count() as u64;
        self.counted = start;
        self.lines.push(Line {
            start,
            end,
            before: self.before,
        });
    }
}

/// Below this a buffer is searched on one thread: handing it out costs more.
const PARALLEL_MIN: usize = 512 << 10;

/// The pieces a large buffer is searched in: small enough to share the cores
/// evenly with the reader's own thread, large enough for `LiteralDfa`'s stretches.
const PIECE: usize = 256 << 10;

/// A literal of the search: may the line that holds it matter?
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Sought {
    len: usize,
    /// A trigger word: the line matters.
    trigger: bool,
    /// Its regex wants a word boundary before / after it.
    before: bool,
    after: bool,
}

pub struct Prefilter {
    /// Triggers plus each catalog regex's most selective set (None: every
    /// line is looked at, see `unfiltered`).
    any: Option<LiteralDfa>,
    /// Rules out the lines `any` need not walk (None: it walks every byte).
    bigrams: Option<BigramFilter>,
    sought: Vec<Sought>,
    triggers: AhoCorasick,
    /// Every literal of every catalog requirement, for the per-line check.
    catalog: Option<AhoCorasick>,
    /// Literal id → requirement sets it satisfies.
    literal_sets: Vec<Vec<usize>>,
    /// Literals that end a line (`-1` then `$`: `-1\n`), as (what precedes the
    /// `\n`, literal id): a line handed over alone has no `\n` to find.
    ends: Vec<(Vec<u8>, usize)>,
    /// Per distinct catalog regex: the set ids it requires (all of them),
    /// run alone on the lines that hold its literals.
    patterns: Vec<(Vec<usize>, CatalogRegex)>,
    /// Regexes without a literal requirement: run on every line looked at.
    bare: Vec<CatalogRegex>,
    sets: usize,
    /// Some catalog regex has no literal its matches must contain: every
    /// line is looked at and checked against the catalog.
    unfiltered: bool,
}

/// A catalog pattern the reader records when a line matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// `Catalog::log_patterns()[i]`: cause evidence.
    Log(usize),
    /// `Catalog::cpu_patterns()[k]`: a host-side message of a rule.
    Cpu(usize),
}

/// One distinct regex of the catalog and the patterns it stands for (rules
/// share evidence such as the `255` borders).
struct CatalogRegex {
    re: LazyRegex,
    targets: Vec<Target>,
}

/// A DFA (a few hundred literals make a small one, twice as fast here as
/// the default NFA), or the default automaton when that is too big.
fn build<S: AsRef<[u8]>>(pats: &[S], kind: MatchKind) -> Option<AhoCorasick> {
    let with = |automaton| {
        AhoCorasickBuilder::new()
            .kind(automaton)
            .match_kind(kind)
            .build(pats)
            .ok()
    };
    with(Some(AhoCorasickKind::DFA)).or_else(|| with(None))
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
        let mut patterns: Vec<(Vec<usize>, CatalogRegex)> = Vec::new();
        let mut bare: Vec<CatalogRegex> = Vec::new();
        let sought = |l: Vec<u8>, trigger, before, after| {
            let len = l.len();
            (
                l,
                Sought {
                    len,
                    trigger,
                    before,
                    after,
                },
            )
        };
        let mut scan: Vec<(Vec<u8>, Sought)> = TRIGGERS
            .iter()
            .map(|t| sought(t.as_bytes().to_vec(), true, false, false))
            .collect();
        let mut sets = 0;
        // Each distinct regex once, with every pattern it stands for.
        let mut distinct: Vec<CatalogRegex> = Vec::new();
        let cpu = catalog.cpu_patterns().iter().enumerate();
        let log = catalog.log_patterns().iter().enumerate();
        let all = cpu
            .map(|(k, re)| (re, Target::Cpu(k)))
            .chain(log.map(|(i, re)| (re, Target::Log(i))));
        for (re, target) in all {
            match distinct.iter_mut().find(|d| d.re.as_str() == re.as_str()) {
                Some(d) => d.targets.push(target),
                None => distinct.push(CatalogRegex {
                    re: re.clone(),
                    targets: vec![target],
                }),
            }
        }
        for regex in distinct {
            let p = regex.re.as_str();
            let Some(req) = pattern_requirement(p) else {
                unfiltered = true;
                bare.push(regex);
                continue;
            };
            if let Some(best) = best_set(&req) {
                // Case-insensitive sets already hold the casings the per-line check accepts.
                scan.extend(best.iter().map(|l| {
                    let (bare, before, after) = unmark(l);
                    sought(bare, false, before, after)
                }));
            }
            let mut ids = Vec::new();
            for set in &req {
                let id = sets;
                sets += 1;
                ids.push(id);
                for lit in set {
                    let lit = unmark(lit).0;
                    let li = match literals.iter().position(|l| *l == lit) {
                        Some(i) => i,
                        None => {
                            literals.push(lit);
                            literal_sets.push(Vec::new());
                            literals.len() - 1
                        }
                    };
                    literal_sets[li].push(id);
                }
            }
            patterns.push((ids, regex));
        }
        scan.sort();
        scan.dedup();
        // A few hundred short literals always build; should it ever fail,
        // every line is a candidate: slow, still correct.
        let (scan, sought): (Vec<Vec<u8>>, Vec<Sought>) = scan.into_iter().unzip();
        let any = LiteralDfa::new(&scan);
        let bigrams =
            filter_patterns(&scan, &sought).and_then(|patterns| BigramFilter::new(&patterns));
        let fallback = || {
            build(&[""], MatchKind::Standard)
                .unwrap_or_else(|| unreachable!("the empty pattern always builds"))
        };
        let triggers = build(TRIGGERS, MatchKind::Standard).unwrap_or_else(fallback);
        let catalog_ac = if literals.is_empty() {
            None
        } else {
            // Standard: the per-line check finds every literal, overlapping ones too.
            build(&literals, MatchKind::Standard)
        };
        let unfiltered =
            unfiltered || any.is_none() || (!literals.is_empty() && catalog_ac.is_none());
        let ends = literals
            .iter()
            .enumerate()
            .filter_map(|(i, l)| Some((l.strip_suffix(b"\n")?.to_vec(), i)))
            .collect();
        Prefilter {
            any,
            bigrams,
            sought,
            triggers,
            catalog: catalog_ac,
            literal_sets,
            ends,
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

    /// Whether a raw line can matter: it holds one of the reader's trigger
    /// words, or every literal set some catalog regex requires. A line with
    /// neither can yield nothing (the reader's own checks all need a trigger).
    pub fn line_matters(&self, line: &[u8]) -> bool {
        self.unfiltered || self.triggers.is_match(line) || self.catalog_sets_met(line)
    }

    /// The lines of `hay` that matter (each cut at `max_line` bytes, as the
    /// reader keeps them), and how many lines `hay` has. Large buffers are
    /// cut at line ends into pieces searched on every core.
    pub fn lines_that_matter(&self, hay: &[u8], max_line: usize) -> (Vec<Line>, u64) {
        use rayon::prelude::*;
        if hay.len() < PARALLEL_MIN {
            return self.search(hay, max_line);
        }
        let mut cuts = vec![0];
        while let Some(&last) = cuts.last().filter(|&&c| c < hay.len()) {
            let at = (last + PIECE).min(hay.len());
            cuts.push(memchr(b'\n', &hay[at..]).map_or(hay.len(), |i| at + i + 1));
        }
        let parts: Vec<(Vec<Line>, u64)> = cuts
            .par_windows(2)
            .map(|w| self.search(&hay[w[0]..w[1]], max_line))
            .collect();
        let mut lines = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        let mut total = 0;
        for ((part, n), start) in parts.into_iter().zip(&cuts) {
            lines.extend(part.into_iter().map(|l| Line {
                start: l.start + start,
                end: l.end + start,
                before: l.before + total,
            }));
            total += n;
        }
        (lines, total)
    }

    fn search(&self, hay: &[u8], max_line: usize) -> (Vec<Line>, u64) {
        self.search_with(self.bigrams.as_ref(), hay, max_line)
    }

    /// The search, with the bigram filter or (`None`) the DFA over every byte.
    fn search_with(
        &self,
        bigrams: Option<&BigramFilter>,
        hay: &[u8],
        max_line: usize,
    ) -> (Vec<Line>, u64) {
        let count = |b: &[u8]| memchr_iter(b'\n', b).count() as u64;
        let mut kept = Kept {
            lines: Vec::new(),
            counted: 0,
            before: 0,
        };
        let Some(any) = self.any.as_ref().filter(|_| !self.unfiltered) else {
            let mut start = 0;
            while start < hay.len() {
                let end = memchr(b'\n', &hay[start..]).map_or(hay.len(), |i| start + i);
                kept.keep(hay, start, end);
                start = end + 1;
            }
            return (kept.lines, count(hay));
        };
        let mut hits = Vec::new();
        match bigrams {
            // Only the lines the filter cannot rule out are walked.
            Some(filter) => {
                // A trigger word in the part kept settles the line.
                let settles = |state| {
                    any.literals(state)
                        .iter()
                        .any(|&id| self.sought[id as usize].trigger)
                };
                let mut walk = |start: usize, end: usize| {
                    let line = &hay[start..(end + 1).min(hay.len())];
                    hits.clear();
                    any.ends_until(&line[..line.len().min(max_line)], &mut hits, settles);
                    if hits.last().is_none_or(|&(_, s)| !settles(s)) && line.len() > max_line {
                        hits.clear();
                        any.ends(line, &mut hits);
                    }
                    hits.iter_mut().for_each(|h| h.0 += start);
                    self.keep_lines(hay, &hits, max_line, &mut kept);
                };
                // The filter sees whole lines: at the end of the buffer it
                // could not see what follows a word that wants a boundary.
                let whole = memrchr(b'\n', hay).map_or(0, |i| i + 1);
                let mut from = 0;
                while let Some(at) = filter.next_candidate(&hay[..whole], from) {
                    let start = memrchr(b'\n', &hay[from..at]).map_or(from, |i| from + i + 1);
                    let end = at + memchr(b'\n', &hay[at..whole]).unwrap_or(0);
                    walk(start, end);
                    from = end + 1;
                }
                if whole < hay.len() {
                    walk(whole, hay.len());
                }
            }
            None => {
                any.ends(hay, &mut hits);
                self.keep_lines(hay, &hits, max_line, &mut kept);
            }
        }
        let total = kept.before + count(&hay[kept.counted..]);
        (kept.lines, total)
    }

    /// Keep the lines of `hits` (literal ends, in order) that matter.
    fn keep_lines(&self, hay: &[u8], hits: &[(usize, u32)], max_line: usize, kept: &mut Kept) {
        let Some(any) = self.any.as_ref() else { return };
        let mut i = 0;
        while let Some(&(first_end, _)) = hits.get(i) {
            // The line of the literal that ends at `first_end` (it may end with the `\n`).
            let last = first_end - 1;
            let start = memrchr(b'\n', &hay[..last]).map_or(0, |p| p + 1);
            let end = memchr(b'\n', &hay[last..]).map_or(hay.len(), |p| last + p);
            let line = &hay[start..end.min(start + max_line)];
            let (mut found, mut sure) = (false, false);
            while let Some(&(e, state)) = hits.get(i).filter(|h| h.0 <= end + 1) {
                i += 1;
                for &id in any.literals(state) {
                    let lit = &self.sought[id as usize];
                    // A literal that began on an earlier line (a `\n` inside it) counts as found.
                    let bounded = match (e - lit.len).checked_sub(start) {
                        Some(at) => at_boundaries(&hay[start..end], at, at + lit.len, lit),
                        None => true,
                    };
                    if bounded {
                        found = true;
                        // A trigger word inside the kept part settles it without a second look.
                        sure |= lit.trigger && e <= start + max_line;
                    }
                }
            }
            if sure || (found && self.line_matters(line)) {
                kept.keep(hay, start, end);
            }
        }
    }

    /// Whether the line holds one of the reader's own trigger words.
    pub fn has_trigger(&self, line: &str) -> bool {
        self.triggers.is_match(line)
    }

    /// The requirement sets whose literals `hay` holds, as a bitmap.
    fn sets_seen(&self, hay: &[u8]) -> Option<Vec<u64>> {
        let ac = self.catalog.as_ref()?;
        let mut seen = vec![0u64; self.sets.div_ceil(64)];
        let mut any = false;
        let trimmed = hay.trim_ascii_end();
        let at_end = self
            .ends
            .iter()
            .filter(|(stem, _)| trimmed.ends_with(stem))
            .map(|&(_, i)| i);
        let found = ac
            .find_overlapping_iter(hay)
            .map(|m| m.pattern().as_usize());
        for li in found.chain(at_end) {
            for &s in &self.literal_sets[li] {
                seen[s / 64] |= 1 << (s % 64);
                any = true;
            }
        }
        any.then_some(seen)
    }

    fn required<'a>(&'a self, seen: &'a [u64]) -> impl Iterator<Item = &'a CatalogRegex> + 'a {
        self.patterns
            .iter()
            .filter(|(ids, _)| ids.iter().all(|&s| seen[s / 64] & (1 << (s % 64)) != 0))
            .map(|(_, re)| re)
    }

    fn catalog_sets_met(&self, hay: &[u8]) -> bool {
        self.sets_seen(hay)
            .is_some_and(|seen| self.required(&seen).next().is_some())
    }

    /// The catalog patterns `line` matches, of those `wanted` (a pattern
    /// already recorded need not be matched again): literals first, then
    /// each regex whose literals are there, alone.
    pub fn catalog_matches(
        &self,
        line: &str,
        wanted: impl Fn(Target) -> bool,
        out: &mut Vec<Target>,
    ) {
        out.clear();
        let mut try_regex = |r: &CatalogRegex| {
            if r.targets.iter().any(|&t| wanted(t)) && r.re.is_match(line) {
                out.extend(r.targets.iter().filter(|&&t| wanted(t)));
            }
        };
        self.bare.iter().for_each(&mut try_regex);
        if let Some(seen) = self.sets_seen(line.as_bytes()) {
            self.required(&seen).for_each(try_regex);
        }
    }
}

/// The search's literals as the bigram filter's patterns: a literal wanted
/// at a word boundary after it brings the bytes that may follow it (those
/// `at_boundaries` accepts), which keeps `inf` from every `INFO`. None when
/// a `\n` is inside a literal: lines could then not be walked alone.
fn filter_patterns(literals: &[Vec<u8>], sought: &[Sought]) -> Option<Vec<Pattern>> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::with_capacity(literals.len());
    for (l, s) in literals.iter().zip(sought) {
        let (&last, body) = l.split_last()?;
        if body.contains(&b'\n') {
            return None;
        }
        let mut p: Pattern = l.iter().map(|&b| vec![b]).collect();
        if s.after && last.is_ascii() {
            p.push(
                (0..=255u8)
                    .filter(|&n| !n.is_ascii() || word(n) != word(last) || n == b'E')
                    .collect(),
            );
        }
        out.push(p);
    }
    Some(out)
}

/// Whether the literal at `line[from..to]` has the word boundaries its regex
/// wants. The regex sees the cleaned line, so a neighbour that cleaning may
/// take away (an escape sequence's final letter, a `\n` escape, a
/// timestamp's `Z`) or a byte outside ASCII proves nothing: the literal counts.
fn at_boundaries(line: &[u8], from: usize, to: usize, lit: &Sought) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    // Whether `\b` holds between the literal's `edge` byte and its raw neighbour.
    let boundary = |neighbour: Option<u8>, edge: u8| match neighbour {
        None => word(edge),
        Some(n) => !n.is_ascii() || word(n) != word(edge),
    };
    let (Some(&first), Some(&last)) = (line.get(from), line.get(to.wrapping_sub(1))) else {
        return true;
    };
    let hidden = || {
        memchr(0x1b, line).is_some()
            || memchr::memmem::find(line, b"ESC[").is_some()
            || memchr::memmem::find(line, b"^M").is_some()
    };
    if lit.before && first.is_ascii() {
        let prev = from.checked_sub(1).map(|p| line[p]);
        let ok = boundary(prev, first)
            || prev.is_some_and(|prev| {
                (from >= 2
                    && (line[from - 2] == b'\\'
                        || (prev == b'Z' && line[from - 2].is_ascii_digit())))
                    || (word(prev) && hidden())
            });
        if !ok {
            return false;
        }
    }
    !lit.after
        || !last.is_ascii()
        || boundary(line.get(to).copied(), last)
        || line[to..].starts_with(b"ESC[")
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
    fn a_value_at_the_end_of_a_line_is_found_without_its_newline() {
        let p = Prefilter::new(Catalog::builtin());
        let m = |l: &str| {
            let mut found = Vec::new();
            p.catalog_matches(l, |_| true, &mut found);
            !found.is_empty() && p.line_matters(l.as_bytes())
        };
        assert!(m("labels: tensor([3, 7, -1"));
        assert!(m("labels: tensor([3, 7, -1  "));
        assert!(m("labels: tensor([3, -1, 7])"));
        assert!(!m("'learning_rate': -1.120e-04, 'epoch': 161.99"));
        let (lines, n) = p.lines_that_matter(b"lr -1.2e-05\nlabels 3 -1\nok\n", MAX);
        assert_eq!((lines.len(), n), (1, 3));
        assert_eq!(lines[0].before, 1);
    }

    const MAX: usize = 1 << 18;

    #[test]
    fn requirements_of_patterns() {
        let r = lits(
            r"Token indices sequence length is longer than the specified maximum sequence length .*\((?P<value>\d+) > (?P<high>\d+)\)",
        );
        assert!(r
            .iter()
            .any(|s| s.iter().all(|l| l.starts_with("Token indices"))));
        assert!(lits(r"\d+>\d+").is_empty());
        // `-1` or `-100`, then a space, `]`, `)`, `,` or the line's end
        // (`\n`): not the `-1` of every `-1.2e-05` in a log.
        let r = lits(r"(^|[\s\[(,=])-(1|100)([\s\]),]|$)");
        assert_eq!(r.len(), 1, "{r:?}");
        for l in ["-1,", "-1 ", "-1]", "-1\n", "-100)", "-100\n"] {
            assert!(r[0].contains(&l.to_string()), "{l:?} in {r:?}");
        }
        assert!(
            !r[0].iter().any(|l| l == "-1" || l.starts_with("-1.")),
            "{r:?}"
        );
        assert_eq!(
            lits(r"(^|[^\d.])255([^\d.]|$)"),
            vec![vec!["255".to_string()]]
        );
        let r =
            pattern_requirement(r"(?i)\b(loss|grad\w*|logits?|probs?)\b[^\n]{0,40}\b(nan|inf)\b")
                .unwrap_or_default();
        assert_eq!(r.len(), 2);
        let best: Vec<(String, bool, bool)> = best_set(&r)
            .map(|s| {
                s.iter()
                    .map(|l| {
                        let (bare, before, after) = unmark(l);
                        (String::from_utf8_lossy(&bare).to_string(), before, after)
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Every casing, each wanted at word boundaries on both sides.
        assert!(
            ["nan", "NaN", "inf", "Inf", "INF"]
                .iter()
                .all(|w| best.contains(&(w.to_string(), true, true))),
            "{best:?}"
        );
    }

    #[test]
    fn a_literal_wanted_at_a_word_boundary_counts_only_there() {
        let p = Prefilter::new(Catalog::builtin());
        let found = |hay: &str| p.lines_that_matter(hay.as_bytes(), MAX).0.len();
        // `\b(nan|inf)\b` after a loss: not the `INF` of `INFO`.
        assert_eq!(found("2024-05-01 - INFO - step 8: loss 2.1\n"), 0);
        assert_eq!(found("step 8: loss inf\n"), 1);
        assert_eq!(found("step 8: loss=INF, lr 1e-4\n"), 1);
        // Cleaning takes the colour code away, and the regex sees `loss inf`.
        assert_eq!(found("step 8: loss \x1b[31minf\x1b[0m\n"), 1);
    }

    proptest::proptest! {
        /// The bigram filter only spares the DFA walks: the lines kept are
        /// those of the DFA over every byte, on text made of catalog
        /// literals, their near misses and noise.
        #[test]
        fn the_filter_keeps_what_the_full_walk_keeps(
            lines in proptest::collection::vec(
                proptest::collection::vec(0usize..PIECES.len(), 1..6), 0..80),
            last_newline: bool,
        ) {
            let p = Prefilter::shared(Catalog::builtin());
            let mut hay: Vec<u8> = Vec::new();
            for line in &lines {
                hay.extend(line.iter().flat_map(|&i| PIECES[i].bytes()));
                hay.push(b'\n');
            }
            if !last_newline {
                hay.pop();
            }
            let filter = p.bigrams.as_ref();
            proptest::prop_assert!(filter.is_some());
            proptest::prop_assert_eq!(p.search_with(filter, &hay, 64), p.search_with(None, &hay, 64));
        }
    }

    const PIECES: &[&str] = &[
        "\n",
        "\r",
        " ",
        "  ",
        "x",
        "Assertion",
        "Assert",
        "assert",
        ".cu",
        ".cu:",
        "block: [",
        "1,0,0]",
        "loss inf",
        "grad_norm: NaN",
        "inf",
        "INF",
        "INFO",
        "Inf ",
        "nan",
        "NaN)",
        "nanny",
        "loss",
        "loss ",
        "-1",
        "-1,",
        "-1\n",
        "-1.5",
        "-100",
        "255",
        "2557",
        "255,",
        "seg",
        "voc",
        "embed_tokens",
        "tokens/s",
        "num_classes",
        "num_labels=",
        "CUDA error: ",
        "device-side assert triggered",
        "rror",
        "Traceback (most recent call last):",
        "File \"",
        "\x1b[31m",
        "\\n",
        "█",
        "é",
        "_",
        "Token indices sequence length is longer than the specified maximum sequence length ",
        "(600 > 512)",
        "resize_token_embeddings",
        "add_special_tokens",
        "ESC[0m",
        "^M",
        "\t",
        "CUBLAS_STATUS_EXECUTION_FAILED",
        "Watchdog caught collective operation timeout",
        "E",
    ];
}
