//! Device assertion lines -> assertion groups: one group per (kernel,
//! assertion, source), with its lines, ranks, blocks and threads counted.
//! A failing kernel prints one line per thread: a line that repeats the
//! last but for its block and thread is counted without being parsed, and
//! a glued line's repeats run by run (`thread_set`).

use super::group::AssertGroup;
use super::state::Reader;
use super::thread_set::{ThreadSet, MAX_TRIPLES};
use crate::clean::Stamp;
use crate::device_line::{self, DeviceLine};
use crate::normalize::{normalize_assertion, normalize_kernel, normalize_path};
use crate::text::clip;
use std::collections::HashSet;

/// Distinct assertion groups kept.
const MAX_GROUPS: usize = 256;
/// Distinct assertions with no place kept while no group names them.
const MAX_BARE: usize = 8;

impl Reader {
    pub(super) fn device_lines(&mut self, text: &str, rank: Option<i64>, time: Option<Stamp>) {
        let line_no = self.lines.line_no;
        // Reassemble `…/IndexKernelUtils.cu    return forward_call(…)` + `:16: kernel: block: …`.
        let joined = match self.groups.pending_path.take() {
            Some((l, r, path))
                if l + 1 == line_no && r == rank && device_line::continues_path(text) =>
            {
                let rest = text.trim_start();
                let sep = if rest.starts_with(':') || path.ends_with(':') {
                    ""
                } else {
                    " "
                };
                Some(format!("{path}{sep}{rest}"))
            }
            _ => None,
        };
        let line: &str = joined.as_deref().unwrap_or(text);
        static MARKER: device_line::Searcher = device_line::searcher!(b"ssertion ");
        static CU: device_line::Searcher = device_line::searcher!(b".cu");
        if MARKER.find(line.as_bytes()).is_some() {
            let found = device_line::parse_all(line);
            for d in found {
                self.record(&d, rank, time);
            }
        }
        if CU.find(text.as_bytes()).is_some() {
            if let Some(p) = device_line::dangling_path(text) {
                self.groups.pending_path = Some((line_no, rank, p.to_string()));
            }
        }
    }

    pub(super) fn record(&mut self, d: &DeviceLine<'_>, rank: Option<i64>, time: Option<Stamp>) {
        let rank = d.rank.or(rank);
        let gi = if !crate::unwrap::whole(d) {
            // A fragment of a torn line: it only counts toward a group it names.
            let a = normalize_assertion(d.assertion);
            match self.facts.groups.iter().position(|g| g.assertion == a) {
                Some(i) => i,
                None => {
                    self.keep_bare(a, rank, time);
                    return;
                }
            }
        } else {
            self.groups.scratch.clear();
            for part in [d.file.unwrap_or(""), d.function.unwrap_or(""), d.assertion] {
                self.groups.scratch.push_str(part);
                self.groups.scratch.push('\u{1}');
            }
            if let Some(l) = d.line {
                self.groups.scratch.push_str(&l.to_string());
            }
            match self.groups.last_group {
                Some(i) if self.groups.scratch == self.groups.last_raw => i,
                _ => {
                    let Some(i) = self.group_for(d, time) else {
                        return;
                    };
                    std::mem::swap(&mut self.groups.last_raw, &mut self.groups.scratch);
                    self.groups.last_group = Some(i);
                    i
                }
            }
        };
        self.groups.records += 1;
        self.groups.last_record = Some((gi, rank, d.block.is_some() && d.thread.is_some()));
        self.count(gi, rank, d.block, d.thread);
        let g = &mut self.facts.groups[gi];
        if g.printf_message.is_none() {
            g.printf_message = d.printf_message.map(|m| clip(m, 500));
        }
    }

    /// An assertion with no place that named no group: kept (the first
    /// [`MAX_BARE`] distinct ones) until the log is read.
    fn keep_bare(&mut self, assertion: String, rank: Option<i64>, time: Option<Stamp>) {
        let bare = &self.groups.bare;
        let i = match bare.iter().position(|g| g.assertion == assertion) {
            Some(i) => i,
            None if bare.len() < MAX_BARE => {
                let g = AssertGroup::bare(assertion, self.pos(), time);
                self.groups.bare.push(g);
                self.groups.bare.len() - 1
            }
            None => return,
        };
        let g = &mut self.groups.bare[i];
        g.lines += 1;
        if let Some(r) = rank {
            g.ranks.insert_lines(r, 1, &mut self.rank_budget);
        }
    }

    /// The bare assertions as groups of their own, when the log holds no
    /// other device line (the diagnosis keeps those a rule's assertion owns).
    pub(super) fn bare_groups(&mut self) {
        let bare = std::mem::take(&mut self.groups.bare);
        if self.facts.groups.is_empty() {
            self.facts.groups.extend(bare);
        }
    }

    /// One more line of group `gi`.
    pub(super) fn count(
        &mut self,
        gi: usize,
        rank: Option<i64>,
        block: Option<[u32; 3]>,
        thread: Option<[u32; 3]>,
    ) {
        match (block, thread) {
            (Some(b), Some(t)) => self.count_run(gi, rank, b, t, 1),
            _ => self.count_lines(gi, rank, block, 1),
        }
    }

    /// `n` more lines of group `gi`, of threads `first`, then x + 1, … of
    /// one block (a run, as a failing kernel prints its threads): counted
    /// as `n` calls of [`Reader::count`] would count them.
    pub(super) fn count_run(
        &mut self,
        gi: usize,
        rank: Option<i64>,
        block: [u32; 3],
        first: [u32; 3],
        n: u32,
    ) {
        if let Some(g) = self.facts.groups.get_mut(gi) {
            g.triples.insert_run(rank.unwrap_or(-1), block, first, n);
        }
        self.count_lines(gi, rank, Some(block), n);
    }

    /// `n` more lines of group `gi`, of one rank and block: everything a
    /// line counts but its thread.
    fn count_lines(&mut self, gi: usize, rank: Option<i64>, block: Option<[u32; 3]>, n: u32) {
        let Some(g) = self.facts.groups.get_mut(gi) else {
            return;
        };
        g.lines += u64::from(n);
        let r = rank.unwrap_or(-1);
        if let Some(r) = rank {
            g.ranks.insert_lines(r, u64::from(n), &mut self.rank_budget);
        }
        if let Some(b) = block.filter(|&b| g.last_block != Some((r, b))) {
            if g.blocks.len() < MAX_TRIPLES {
                g.blocks.insert((r, b));
            }
            g.last_block = Some((r, b));
        }
    }

    pub(super) fn group_for(&mut self, d: &DeviceLine<'_>, time: Option<Stamp>) -> Option<usize> {
        let file = d.file.map(normalize_path).unwrap_or_default();
        let kernel = d.function.map(normalize_kernel);
        let assertion = normalize_assertion(d.assertion);
        let source = match d.line {
            Some(l) => format!("{file}:{l}"),
            None => file.clone(),
        };
        let key = (kernel.clone(), assertion.clone(), source);
        if let Some(&i) = self.groups.index.get(&key) {
            return Some(i);
        }
        if self.facts.groups.len() >= MAX_GROUPS {
            self.facts.groups_dropped += 1;
            return None;
        }
        let i = self.facts.groups.len();
        self.facts.groups.push(AssertGroup {
            kernel,
            raw_kernel: d.function.map(|f| clip(f, 300)),
            assertion,
            file,
            line: d.line,
            lines: 0,
            triples: ThreadSet::default(),
            blocks: HashSet::default(),
            last_block: None,
            ranks: Default::default(),
            first: self.pos(),
            first_time: time,
            rocm: d.rocm,
            printf_message: None,
            from_dsa: false,
            bare: false,
        });
        self.groups.index.insert(key, i);
        Some(i)
    }
}
