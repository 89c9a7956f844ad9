//! What the reader keeps besides assertion groups: where lines are, the
//! tracebacks (built line by line, one open per rank), the first host
//! error of each kind, and the catalog's evidence (log patterns, CPU
//! messages), each bounded.

use super::kept::{CpuHit, HostEvent};
use super::state::Reader;
use crate::clean::{self, Stamp};
use crate::device_line;
use crate::errors::HostKind;
use crate::prefilter::Target;
use crate::text::clip;
use crate::traceback::{self, Builder, RowStep, Step, Traceback};

/// Tracebacks kept.
const MAX_TRACEBACKS: usize = 48;
/// Tracebacks read at once (one per rank): a log of a million ranks must not
/// hold a million half-read tracebacks. Past it, a new one is counted as
/// dropped.
const MAX_OPEN_TRACEBACKS: usize = 256;
/// Host-side CPU message matches kept.
const MAX_CPU: usize = 16;
/// Statements of values kept from evidence lines.
const MAX_STATED: usize = 8;

impl Reader {
    pub(super) fn traceback_line(&mut self, text: &str, rank: Option<i64>) {
        self.traceback_line_known(text, rank, None);
    }

    /// [`Reader::traceback_line`], with what the builder reads of `text`
    /// when it is known (a repeated row: see `memo`).
    pub(super) fn traceback_line_known(
        &mut self,
        text: &str,
        rank: Option<i64>,
        row: Option<&RowStep>,
    ) {
        let feed = |b: &mut Builder| match row {
            Some(r) => b.step_known(text, r),
            None => b.step(text),
        };
        let t = row.map_or_else(|| text.trim(), |r| r.trimmed(text));
        if self.tracebacks.builders.is_empty()
            && !(traceback::may_start(t)
                || t.starts_with("During handling")
                || t.starts_with("The above exception"))
        {
            return;
        }
        if !row.is_some_and(RowStep::no_chain)
            && traceback::CHAIN_MARKERS.iter().any(|m| t.starts_with(m))
        {
            if let Some(b) = self.tracebacks.builders.remove(&rank) {
                let tb = b.finish();
                if !tb.frames.is_empty() {
                    self.push_traceback(tb);
                }
            }
            if self.tracebacks.chain_pending.len() < MAX_OPEN_TRACEBACKS {
                self.tracebacks.chain_pending.insert(rank);
            }
            return;
        }
        // One lookup for the builder of every line read while one is open.
        let step = match self.tracebacks.open(rank) {
            Some(b) => feed(b),
            None => {
                if !traceback::starts(t) {
                    return;
                }
                if self.tracebacks.builders.len() >= MAX_OPEN_TRACEBACKS {
                    if traceback::is_header(t) {
                        self.facts.tracebacks_dropped += 1;
                    }
                    return;
                }
                let mut b = self.new_builder(rank);
                let done = feed(&mut b);
                self.tracebacks.builders.insert(rank, b);
                done
            }
        };
        let Step::Done(tb, refeed) = step else {
            return;
        };
        // A line that ends one traceback and starts the next (a header after
        // a handled one) starts it in the finished builder's place: the map
        // is not asked to remove and insert the rank again.
        let again = refeed && traceback::starts(t);
        // What the finished builder left of its spare goes back first, so
        // that the traceback dropped below is kept in its buffers.
        let builders = &mut self.tracebacks.builders;
        let left = if again {
            builders.get_mut(&rank).map(Builder::take_spare)
        } else {
            builders.remove(&rank).map(|mut b| b.take_spare())
        };
        if let Some(left) = left {
            self.tracebacks.spare.reclaim(left);
        }
        if !tb.frames.is_empty() {
            self.push_traceback(tb);
        }
        if !again {
            return;
        }
        let b = self.new_builder(rank);
        let Some(open) = self.tracebacks.builders.get_mut(&rank) else {
            return;
        };
        *open = b;
        if let Step::Done(tb, _) = feed(open) {
            self.tracebacks.builders.remove(&rank);
            if !tb.frames.is_empty() {
                self.push_traceback(tb);
            }
        }
    }

    /// A builder for `rank`'s next traceback, starting at this line.
    fn new_builder(&mut self, rank: Option<i64>) -> Builder {
        let pending = &mut self.tracebacks.chain_pending;
        let chained = !pending.is_empty() && pending.remove(&rank);
        Builder::new(self.lines.input, self.lines.line_no, rank, chained)
            .with_spare(std::mem::take(&mut self.tracebacks.spare))
    }

    /// Keeps the first half of `MAX_TRACEBACKS` and the latest of the rest:
    /// a job that logged many handled tracebacks still keeps the crash's own
    /// (it comes last), in log order.
    pub(super) fn push_traceback(&mut self, tb: Traceback) {
        if self.facts.tracebacks.len() < MAX_TRACEBACKS / 2 {
            self.facts.tracebacks.push(tb);
            return;
        }
        let latest = &mut self.tracebacks.latest;
        if latest.len() >= MAX_TRACEBACKS - MAX_TRACEBACKS / 2 {
            if let Some(old) = latest.pop_front() {
                self.tracebacks.spare.keep(old);
            }
            self.facts.tracebacks_dropped += 1;
        }
        latest.push_back(tb);
    }

    pub(super) fn host_event(
        &mut self,
        kind: HostKind,
        device: bool,
        text: &str,
        rank: Option<i64>,
        time: Option<Stamp>,
    ) {
        let pos = self.pos();
        let message = clip(text, 300);
        if device && self.facts.device_error.is_none() {
            self.facts.device_error = Some(HostEvent {
                kind: HostKind::DeviceAssert,
                message: message.clone(),
                count: 1,
                ranks: rank.into_iter().collect(),
                first: pos,
                first_time: time,
            });
            if kind == HostKind::DeviceAssert {
                // The first one is the failure itself, not its fallout.
                return;
            }
        }
        match self.facts.host.iter_mut().find(|e| e.kind == kind) {
            Some(e) => {
                e.count += 1;
                if let Some(r) = rank {
                    e.ranks.insert(r, &mut self.rank_budget);
                }
            }
            None => self.facts.host.push(HostEvent {
                kind,
                message,
                count: 1,
                ranks: rank.into_iter().collect(),
                first: pos,
                first_time: time,
            }),
        }
    }

    /// Whether a row, behind its prefixes, states one of the catalog's
    /// host-side messages (`Target 5 is out of bounds.`).
    pub(super) fn states_host_message(&mut self, row: &str) -> bool {
        let mut matched = std::mem::take(&mut self.matched);
        let mut found = false;
        clean::each_readable(row, |body, _| {
            if !found {
                let c = device_line::without_coordinates(body);
                self.pre.catalog_matches_memo(
                    &c,
                    |t| matches!(t, Target::Cpu(_)),
                    &mut matched,
                    &mut self.sets_memo,
                );
                found = !matched.is_empty();
            }
        });
        self.matched = matched;
        found
    }

    /// The catalog's evidence in a line: `log` patterns (their first
    /// captures) and host-side CPU messages. Whether the line matched any
    /// (of those still wanted).
    pub(super) fn evidence(&mut self, t: &str, rank: Option<i64>) -> bool {
        // Block and thread numbers are not values the evidence may read.
        let c = device_line::without_coordinates(t);
        let hits = &self.facts.hits;
        let cpu_room = self.facts.cpu.len() < MAX_CPU;
        let wanted = |target| match target {
            Target::Log(i) => !hits.contains(i),
            Target::Cpu(_) => cpu_room,
        };
        let mut matched = std::mem::take(&mut self.matched);
        self.pre
            .catalog_matches_memo(&c, wanted, &mut matched, &mut self.sets_memo);
        let mut cpu_first = None;
        let mut evidence_line = false;
        for &target in &matched {
            match target {
                Target::Log(i) => {
                    evidence_line = true;
                    self.catalog.record_log_hit(i, &c, &mut self.facts.hits);
                    let hits = &self.facts.hits;
                    self.pre.retire(i, |j| hits.contains(j), &mut self.retired);
                }
                // The catalog's order decides between host messages.
                Target::Cpu(k) => cpu_first = Some(cpu_first.map_or(k, |f: usize| f.min(k))),
            }
        }
        let any = !matched.is_empty();
        self.matched = matched;
        if evidence_line && self.facts.stated.len() < MAX_STATED {
            let s = crate::values::stated(&c);
            if !s.values.is_empty() {
                self.facts.stated.push(s);
            }
        }
        if let Some(rule) = cpu_first.and_then(|k| self.catalog.cpu_rule(k)) {
            let hit = CpuHit {
                rule: rule.id.clone(),
                text: clip(t, 500),
                pos: self.pos(),
                rank,
            };
            self.facts.cpu.push(hit);
        }
        any
    }
}
