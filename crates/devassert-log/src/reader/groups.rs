//! Device assertion lines -> assertion groups: one group per (kernel,
//! assertion, source), with its lines, ranks, blocks and threads counted.
//! A failing kernel prints one line per thread: a line that repeats the
//! last but for its block and thread is counted without being parsed.

use super::pos::Pos;
use super::Reader;
use crate::clean::Stamp;
use crate::device_line::{self, DeviceLine};
use crate::normalize::{normalize_assertion, normalize_kernel, normalize_path};
use std::collections::{HashMap, HashSet};

/// Distinct (rank, block, thread) triples remembered per group.
const MAX_TRIPLES: usize = 1 << 16;
/// Distinct assertion groups kept.
const MAX_GROUPS: usize = 256;

#[derive(Debug, Clone)]
pub struct AssertGroup {
    pub kernel: Option<String>,
    pub raw_kernel: Option<String>,
    pub assertion: String,
    /// Normalised path, empty when the line did not say.
    pub file: String,
    pub line: Option<u64>,
    pub lines: u64,
    pub triples: HashSet<(i64, [u32; 3], [u32; 3]), CoordState>,
    pub triples_capped: bool,
    pub blocks: HashSet<(i64, [u32; 3]), CoordState>,
    /// The last (rank, block) counted: the lines of one block come together.
    pub last_block: Option<(i64, [u32; 3])>,
    pub ranks: crate::ranks::RankSet,
    pub first: Pos,
    pub first_time: Option<Stamp>,
    pub rocm: bool,
    pub printf_message: Option<String>,
    /// From a DSA report rather than a printed line.
    pub from_dsa: bool,
}

/// Hashes the (rank, block, thread) coordinates counted for every thread
/// line: aHash, keyed per process so that a log cannot aim its coordinates
/// at one bucket (std's SipHash was a tenth of the time spent counting
/// thread lines).
pub type CoordState = ahash::RandomState;

impl AssertGroup {
    pub fn source(&self) -> Option<String> {
        if self.file.is_empty() {
            return None;
        }
        Some(match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        })
    }
}

/// What counting lines into groups remembers between lines.
#[derive(Default)]
pub(super) struct Groups {
    pub(super) index: HashMap<(Option<String>, String, String), usize>,
    /// A source path left at the end of the previous line, for reassembly.
    pub(super) pending_path: Option<(u64, Option<i64>, String)>,
    /// The last raw line identity and its group: thousands of identical lines are cheap.
    pub(super) last_raw: String,
    pub(super) last_group: Option<usize>,
    pub(super) scratch: String,
    /// The last line that was one device assertion and nothing else.
    pub(super) echo: Option<Echo>,
    /// Device assertions counted, and the group and rank of the last.
    pub(super) records: u64,
    /// (group, rank, whether it had block and thread).
    pub(super) last_record: Option<(usize, Option<i64>, bool)>,
}

/// A thread line to compare the next ones with: a failing kernel prints
/// one line per thread, and lines that differ from it only in their block
/// and thread numbers are counted into its group without being parsed.
pub(super) struct Echo {
    /// Whether `raw` holds "ssertion " once (its repeats then do too: the
    /// numbers that differ sit between brackets).
    pub(super) single: bool,
    pub(super) raw: Vec<u8>,
    pub(super) block: std::ops::Range<usize>,
    pub(super) thread: std::ops::Range<usize>,
    pub(super) group: usize,
    pub(super) rank: Option<i64>,
}

impl Echo {
    /// The block and thread of `raw` when the rest of it is this line's.
    pub(super) fn repeat(&self, raw: &[u8]) -> Option<([u32; 3], [u32; 3])> {
        // A repeat at the start of `raw` that ends where `raw` does.
        match self.repeat_at_start(raw)? {
            (b, t, end) if end == raw.len() => Some((b, t)),
            _ => None,
        }
    }

    /// The block and thread of the repeat of this line that `rest` starts
    /// with (glued to more text), and where the repeat ends. Its end must
    /// be where the line's ended: the debris after `failed` (`.`, `*`) the same.
    pub(super) fn repeat_at_start(&self, rest: &[u8]) -> Option<([u32; 3], [u32; 3], usize)> {
        let head = &self.raw[..self.block.start];
        let mid = &self.raw[self.block.end..self.thread.start];
        let tail = &self.raw[self.thread.end..];
        if !rest.starts_with(head) {
            return None;
        }
        let b = device_line::numbers_span(rest, head.len())?;
        if !rest[b.end..].starts_with(mid) {
            return None;
        }
        let t = device_line::numbers_span(rest, b.end + mid.len())?;
        let end = t.end + tail.len();
        if !rest[t.end..].starts_with(tail) || matches!(rest.get(end), Some(b'.' | b'*')) {
            return None;
        }
        let parse = |r: std::ops::Range<usize>| device_line::number_bytes(&rest[r]);
        Some((parse(b)?, parse(t)?, end))
    }
}

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
        if line.contains("ssertion ") {
            let found = device_line::parse_all(line);
            for d in found {
                self.record(&d, rank, time);
            }
        }
        if text.contains(".cu") {
            if let Some(p) = device_line::dangling_path(text) {
                self.groups.pending_path = Some((line_no, rank, p.to_string()));
            }
        }
    }

    pub(super) fn record(&mut self, d: &DeviceLine<'_>, rank: Option<i64>, time: Option<Stamp>) {
        let rank = d.rank.or(rank);
        let gi = if d.file.is_none() && d.block.is_none() && !d.rocm {
            // A fragment of a torn line: it only counts toward a group it names.
            let a = normalize_assertion(d.assertion);
            match self.facts.groups.iter().position(|g| g.assertion == a) {
                Some(i) => i,
                None => return,
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
            g.printf_message = d.printf_message.map(|m| m.chars().take(500).collect());
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
        let g = &mut self.facts.groups[gi];
        g.lines += 1;
        let r = rank.unwrap_or(-1);
        if let Some(r) = rank {
            g.ranks.insert(r, &mut self.rank_budget);
        }
        if let (Some(b), Some(t)) = (block, thread) {
            if g.triples.len() < MAX_TRIPLES {
                g.triples.insert((r, b, t));
            } else if !g.triples_capped && !g.triples.contains(&(r, b, t)) {
                // Once set, nothing more is learnt by looking.
                g.triples_capped = true;
            }
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
            raw_kernel: d.function.map(|f| f.chars().take(300).collect()),
            assertion,
            file,
            line: d.line,
            lines: 0,
            triples: HashSet::default(),
            triples_capped: false,
            blocks: HashSet::default(),
            last_block: None,
            ranks: Default::default(),
            first: self.pos(),
            first_time: time,
            rocm: d.rocm,
            printf_message: None,
            from_dsa: false,
        });
        self.groups.index.insert(key, i);
        Some(i)
    }
}
