//! The cheap test that decides whether a line is looked at at all. Almost
//! every line of a long training log is progress output; one multi-literal
//! search over the whole buffer (`line_search`) finds the few lines that can
//! matter: our own trigger words, plus, for every catalog `log` /
//! `cpu_messages` regex, the most selective set of literals every match of
//! it must contain (`literals`: taken from the parsed regex, so a catalog
//! edit needs no change here). A line found only by them is then checked
//! against all the literal sets its regex requires before the regexes run.

use crate::derived_literals::requirement_of;
use crate::line_search::{self, LineSearch, Sought};
use crate::literals::unmark;
use aho_corasick::AhoCorasick;
use devassert_core::lazy_regex::LazyRegex;
use devassert_core::Catalog;
use std::collections::HashMap;

pub use crate::line_search::Line;
pub use retired::Retired;
pub use sets_memo::SetsMemo;

use catalog_literals::{build, LazyKind};
use digit_grams::DigitGrams;
use sets_memo::Memo;
use triggers::TRIGGERS;

mod by_shape;
mod catalog_literals;
mod digit_grams;
mod retired;
mod sets_memo;
mod triggers;

pub struct Prefilter {
    /// Tells this prefilter's sets from another's in a thread's memo.
    id: u64,
    /// Triggers plus each catalog regex's most selective set (None: every
    /// line is looked at, see `unfiltered`).
    search: Option<LineSearch>,
    triggers: AhoCorasick,
    /// Every literal of every catalog requirement (with whether it is
    /// folded), for the per-line check: all in one walk (`catalog`), or
    /// apart, those without an ASCII digit and those with one, for the walk
    /// that `sets_memo` keeps. Each kind's automata (exact and folded) are
    /// built the first time a line asks for them: building the six DFAs
    /// was a sixth of `explain`'s start-up, and a log uses one kind or
    /// none.
    literals: Vec<(Vec<u8>, bool)>,
    catalog: LazyKind,
    digit_free: LazyKind,
    digit_literals: LazyKind,
    /// Where those literals may be (None: a literal is too short to tell).
    digit_grams: Option<DigitGrams>,
    /// Those asked about by shape (see `by_shape`).
    shape_literals: by_shape::ShapeLiterals,
    /// Literal id → requirement sets it satisfies.
    literal_sets: Vec<Vec<usize>>,
    /// Literals that end a line (`-1` then `$`: `-1\n`), as (what precedes the
    /// `\n`, folded, literal id): a line handed over alone has no `\n` to find.
    ends: Vec<(Vec<u8>, bool, usize)>,
    /// Per distinct catalog regex: the set ids it requires (all of them),
    /// run alone on the lines that hold its literals.
    patterns: Vec<(Vec<usize>, CatalogRegex)>,
    /// Regexes without a literal requirement: run on every line looked at.
    bare: Vec<CatalogRegex>,
    /// `log` pattern → its regex in `patterns` (see `retired`).
    log_regex: HashMap<usize, usize>,
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
        // Every literal of every requirement, with whether it is folded.
        let mut literals: Vec<(Vec<u8>, bool)> = Vec::new();
        let mut known: HashMap<(Vec<u8>, bool), usize> = HashMap::new();
        let mut literal_sets: Vec<Vec<usize>> = Vec::new();
        let mut patterns: Vec<(Vec<usize>, CatalogRegex)> = Vec::new();
        let mut bare: Vec<CatalogRegex> = Vec::new();
        // Each with the regex (index in `patterns`) it stands for.
        let mut scan: Vec<(Vec<u8>, Sought, Option<usize>)> = TRIGGERS
            .iter()
            .map(|t| {
                (
                    t.as_bytes().to_vec(),
                    Sought::new(t.as_bytes(), true, false, false, false),
                    None,
                )
            })
            .collect();
        let mut sets = 0;
        for regex in distinct_regexes(catalog) {
            let Some(derived) = requirement_of(regex.re.as_str()) else {
                unfiltered = true;
                bare.push(regex);
                continue;
            };
            let req = derived.sets;
            if let Some(best) = derived.best.map(|i| &req[i]) {
                // Folded literals stand for every casing a case-insensitive regex accepts.
                scan.extend(best.iter().map(|l| {
                    let l = unmark(l);
                    let sought = Sought::new(&l.bytes, false, l.before, l.after, l.fold);
                    (l.bytes, sought, Some(patterns.len()))
                }));
            }
            let mut ids = Vec::new();
            for set in &req {
                let id = sets;
                sets += 1;
                ids.push(id);
                for lit in set {
                    let lit = unmark(lit);
                    let next = literals.len();
                    let li = *known.entry((lit.bytes.clone(), lit.fold)).or_insert(next);
                    if li == next {
                        literals.push((lit.bytes, lit.fold));
                        literal_sets.push(Vec::new());
                    }
                    literal_sets[li].push(id);
                }
            }
            patterns.push((ids, regex));
        }
        // A few hundred short literals always build; should it ever fail,
        // every line is a candidate: slow, still correct.
        let search = LineSearch::new(scan);
        let fallback = || {
            build(&[""], false).unwrap_or_else(|| unreachable!("the empty pattern always builds"))
        };
        let triggers = build(TRIGGERS, false).unwrap_or_else(fallback);
        let unfiltered = unfiltered || search.is_none();
        let ends: Vec<_> = literals
            .iter()
            .enumerate()
            .filter_map(|(i, (l, fold))| Some((l.strip_suffix(b"\n")?.to_vec(), *fold, i)))
            .collect();
        let digit_grams = DigitGrams::new(&literals);
        let log_regex = patterns
            .iter()
            .enumerate()
            .flat_map(|(r, (_, re))| {
                re.targets.iter().filter_map(move |t| match t {
                    Target::Log(i) => Some((*i, r)),
                    Target::Cpu(_) => None,
                })
            })
            .collect();
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Prefilter {
            id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            search,
            triggers,
            shape_literals: by_shape::ShapeLiterals::new(&literals, &ends),
            literals,
            catalog: LazyKind::new(None),
            digit_free: LazyKind::new(Some(false)),
            digit_literals: LazyKind::new(Some(true)),
            digit_grams,
            literal_sets,
            ends,
            patterns,
            bare,
            log_regex,
            sets,
            unfiltered,
        }
    }

    /// Every line must be looked at (a catalog regex without a literal).
    pub fn looks_at_everything(&self) -> bool {
        self.unfiltered
    }

    /// Whether a raw line can matter: it holds one of the reader's trigger
    /// words, or every literal set some catalog regex not `retired`
    /// requires. A line with neither can yield nothing (the reader's own
    /// checks all need a trigger, and a retired regex is wanted no more).
    pub fn line_matters(&self, line: &[u8], retired: &[u64]) -> bool {
        self.unfiltered || self.triggers.is_match(line) || self.catalog_sets_met(line, retired)
    }

    /// The lines of `hay` that matter (each cut at `max_line` bytes, as the
    /// reader keeps them), and how many lines `hay` has.
    pub fn lines_that_matter(
        &self,
        hay: &[u8],
        max_line: usize,
        retired: &[u64],
    ) -> (Vec<Line>, u64) {
        // The search finds every literal where it ends, triggers among them,
        // and asks only of a line without a trigger word in its kept part:
        // of `line_matters`, the catalog's sets are left. It asks nothing of
        // a line found by retired regexes' literals alone: a regex not
        // retired whose sets the line meets has a literal of its best set
        // (searched) there, or one that ends the line (`\n`-ended literals
        // are looked for at the line's end too).
        match self.search.as_ref().filter(|_| !self.unfiltered) {
            Some(search) => search.lines(hay, max_line, retired, &|line| {
                self.catalog_sets_met(line, retired)
            }),
            None => line_search::every_line(hay),
        }
    }

    /// Whether the search may find `line` (one line, its `\n` included):
    /// false only where it finds none of its literals there, so finds no
    /// line; true may be a line it finds none in, which a reader then reads
    /// as it reads a found one (a cheaper answer than the search's own).
    pub fn may_find(&self, line: &[u8]) -> bool {
        match self.search.as_ref().filter(|_| !self.unfiltered) {
            Some(search) => search.may_find(line),
            None => true,
        }
    }

    /// No regex is retired yet: bits for a reader of this prefilter.
    pub fn retired(&self) -> Retired {
        Retired::new(self.patterns.len())
    }

    /// The reader has recorded `log` pattern `i` (`recorded`: whether it
    /// has recorded a pattern): its regex is retired when it stands for
    /// recorded `log` patterns alone (a host message is counted at every
    /// line: a regex with one is never retired).
    pub fn retire(&self, i: usize, recorded: impl Fn(usize) -> bool, retired: &mut Retired) {
        let Some(&r) = self.log_regex.get(&i) else {
            return;
        };
        let done = self.patterns[r].1.targets.iter().all(|t| match *t {
            Target::Log(j) => recorded(j),
            Target::Cpu(_) => false,
        });
        if done {
            retired.set(r);
        }
    }

    /// Whether a line searched with the regexes `then` retired mattered
    /// only by the sets of regexes retired since (by `now`): it holds no
    /// trigger, met a regex's sets with `then` and meets none with `now`.
    pub fn kept_only_by_retired(&self, line: &[u8], then: &[u64], now: &[u64]) -> bool {
        !self.unfiltered
            && !self.triggers.is_match(line)
            && sets_memo::with_thread_memo(self.id, |memo| {
                self.sets_seen_memo(line, memo).is_some_and(|seen| {
                    self.required(seen, then).next().is_some()
                        && self.required(seen, now).next().is_none()
                })
            })
    }

    /// Whether the line holds one of the reader's own trigger words.
    pub fn has_trigger(&self, line: &str) -> bool {
        self.triggers.is_match(line)
    }

    /// The requirement sets whose literals `hay` holds, as a bitmap.
    fn sets_seen(&self, hay: &[u8]) -> Option<Vec<u64>> {
        let mut seen = vec![0u64; self.sets.div_ceil(64)];
        self.sets_seen_into(hay, &mut seen).then_some(seen)
    }

    /// [`Prefilter::sets_seen`] marked in `seen` (no set marked yet);
    /// whether any.
    fn sets_seen_into(&self, hay: &[u8], seen: &mut [u64]) -> bool {
        self.walk(&self.catalog, hay, seen) | self.end_sets(hay, seen)
    }

    /// [`Prefilter::sets_seen`], the sets of the digit-free literals kept
    /// in `memo` for lines that differ only in their numbers; a key seen
    /// once is walked whole, as without the memo. The sets are the memo's
    /// (see `SetsMemo::sets`).
    fn sets_seen_memo<'m>(&self, hay: &[u8], memo: &'m mut SetsMemo) -> Option<&'m [u64]> {
        let free = match memo.look(hay, self.sets.div_ceil(64)) {
            Memo::Once => {
                let any = self.sets_seen_into(hay, memo.sets_mut());
                return any.then(|| memo.sets());
            }
            Memo::Known(any) => any,
            Memo::Keep => {
                let any = self.walk(&self.digit_free, hay, memo.sets_mut());
                memo.keep();
                any
            }
        };
        let any = free | self.digit_or_end_sets(hay, memo.sets_mut());
        any.then(|| memo.sets())
    }

    /// Whether `hay`'s literals without a digit (`free`), else with one or ending it, meet sets.
    pub fn kind_sets_met(&self, hay: &[u8], free: bool, seen: &mut Vec<u64>) -> bool {
        seen.clear();
        seen.resize(self.sets.div_ceil(64), 0);
        if free {
            return self.walk(&self.digit_free, hay, seen);
        }
        self.digit_or_end_sets(hay, seen)
    }

    /// Marks the sets of `hay`'s literals with a digit (where one may be) and ending it; any?
    fn digit_or_end_sets(&self, hay: &[u8], seen: &mut [u64]) -> bool {
        (self.may_hold_digit_literal(hay) && self.walk(&self.digit_literals, hay, seen))
            | self.end_sets(hay, seen)
    }

    /// The literals asked about by shape, where those with a digit built.
    pub fn shape_literals(&self) -> Option<&by_shape::ShapeLiterals> {
        let built = self.digit_literals.get(&self.literals);
        by_shape::all_built(built).then_some(&self.shape_literals)
    }

    /// Marks in `seen` the sets of the literals of `kind` that `hay` holds;
    /// whether there were any.
    fn walk(&self, kind: &LazyKind, hay: &[u8], seen: &mut [u64]) -> bool {
        let automata = kind.get(&self.literals);
        let mut any = false;
        for c in automata {
            any |= match &c.ac {
                Some(ac) => {
                    let found = ac.find_overlapping_iter(hay);
                    self.mark(found.map(|m| c.ids[m.pattern().as_usize()]), seen)
                }
                None => self.mark(c.ids.iter().copied(), seen),
            };
        }
        any
    }

    /// Marks in `seen` the sets of the literals that end `hay` (before
    /// their `\n`); whether there were any.
    fn end_sets(&self, hay: &[u8], seen: &mut [u64]) -> bool {
        let trimmed = hay.trim_ascii_end();
        let at_end = self
            .ends
            .iter()
            .filter(|(stem, fold, _)| {
                let tail = &trimmed[trimmed.len().saturating_sub(stem.len())..];
                tail.len() == stem.len()
                    && if *fold {
                        tail.eq_ignore_ascii_case(stem)
                    } else {
                        tail == stem.as_slice()
                    }
            })
            .map(|&(_, _, i)| i);
        self.mark(at_end, seen)
    }

    /// Whether `hay` may hold a literal with a digit.
    fn may_hold_digit_literal(&self, hay: &[u8]) -> bool {
        self.digit_grams.as_ref().is_none_or(|g| g.may_hold(hay))
    }

    fn mark(&self, literals: impl Iterator<Item = usize>, seen: &mut [u64]) -> bool {
        let mut any = false;
        for li in literals {
            for &s in &self.literal_sets[li] {
                seen[s / 64] |= 1 << (s % 64);
                any = true;
            }
        }
        any
    }

    /// The regexes not `retired` whose every set is in `seen`.
    fn required<'a>(
        &'a self,
        seen: &'a [u64],
        retired: &'a [u64],
    ) -> impl Iterator<Item = &'a CatalogRegex> + 'a {
        self.patterns
            .iter()
            .enumerate()
            .filter(|&(r, (ids, _))| {
                ids.iter().all(|&s| seen[s / 64] & (1 << (s % 64)) != 0)
                    && !retired::is_retired(retired, r)
            })
            .map(|(_, (_, re))| re)
    }

    fn catalog_sets_met(&self, hay: &[u8], retired: &[u64]) -> bool {
        // Asked of every line the search finds by a catalog literal alone
        // (often the same warning again): each thread keeps its own memo.
        sets_memo::with_thread_memo(self.id, |memo| {
            self.sets_seen_memo(hay, memo)
                .is_some_and(|seen| self.required(seen, retired).next().is_some())
        })
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
        self.catalog_matches_with(line, wanted, out, None);
    }

    /// [`Prefilter::catalog_matches`], the literal walk remembered in `memo`
    /// for lines that differ only in their numbers (see `sets_memo`).
    pub fn catalog_matches_memo(
        &self,
        line: &str,
        wanted: impl Fn(Target) -> bool,
        out: &mut Vec<Target>,
        memo: &mut SetsMemo,
    ) {
        self.catalog_matches_with(line, wanted, out, Some(memo));
    }

    fn catalog_matches_with(
        &self,
        line: &str,
        wanted: impl Fn(Target) -> bool,
        out: &mut Vec<Target>,
        memo: Option<&mut SetsMemo>,
    ) {
        out.clear();
        let mut try_regex = |r: &CatalogRegex| {
            if r.targets.iter().any(|&t| wanted(t)) && r.re.is_match(line) {
                out.extend(r.targets.iter().filter(|&&t| wanted(t)));
            }
        };
        self.bare.iter().for_each(&mut try_regex);
        let owned;
        let seen = match memo {
            Some(memo) => self.sets_seen_memo(line.as_bytes(), memo),
            None => {
                owned = self.sets_seen(line.as_bytes());
                owned.as_deref()
            }
        };
        if let Some(seen) = seen {
            self.required(seen, &[]).for_each(try_regex);
        }
    }
}

/// Each distinct regex of the catalog once, with every pattern it stands for.
fn distinct_regexes(catalog: &Catalog) -> Vec<CatalogRegex> {
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
    distinct
}

#[cfg(test)]
mod tests;
