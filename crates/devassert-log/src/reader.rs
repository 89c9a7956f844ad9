//! The streaming state machine: bytes in (any chunking), and out only what
//! the diagnosis needs, in bounded memory: assertion groups with counts,
//! the first tracebacks, the first host errors of each kind, the DSA report,
//! and the catalog's log evidence. Lines are split here; the prefilter skips
//! every line that cannot matter without looking at it further.

use crate::clean::{self, Stamp};
use crate::device_line::{self, DeviceLine};
use crate::errors::{self, HostKind};
use crate::prefilter::{Line, Prefilter, Target};
use crate::traceback::{self, Builder, Step, Traceback};
use crate::unwrap;
use devassert_core::catalog::{normalize_assertion, normalize_kernel, normalize_path};
use devassert_core::{Catalog, LogHits};
use memchr::{memchr, memrchr};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Longest line looked at; the rest of a longer line is dropped.
pub const MAX_LINE: usize = 256 * 1024;
/// Distinct (rank, block, thread) triples remembered per group.
const MAX_TRIPLES: usize = 1 << 16;
/// Distinct assertion groups kept.
const MAX_GROUPS: usize = 256;
/// Tracebacks kept.
const MAX_TRACEBACKS: usize = 48;
/// Host-side CPU message matches kept.
const MAX_CPU: usize = 16;

/// Where a line is: input index and 1-based line number in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub input: usize,
    pub line: u64,
}

#[derive(Debug, Clone)]
pub struct AssertGroup {
    pub kernel: Option<String>,
    pub raw_kernel: Option<String>,
    pub assertion: String,
    /// Normalised path, empty when the line did not say.
    pub file: String,
    pub line: Option<u64>,
    pub lines: u64,
    pub triples: HashSet<(i64, [u32; 3], [u32; 3])>,
    pub triples_capped: bool,
    pub blocks: HashSet<(i64, [u32; 3])>,
    pub ranks: BTreeSet<i64>,
    pub first: Pos,
    pub first_time: Option<Stamp>,
    pub rocm: bool,
    pub printf_message: Option<String>,
    /// From a DSA report rather than a printed line.
    pub from_dsa: bool,
}

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

/// The first occurrence of a host error kind, and how often it came.
#[derive(Debug, Clone)]
pub struct HostEvent {
    pub kind: HostKind,
    pub message: String,
    pub count: u64,
    pub ranks: BTreeSet<i64>,
    pub first: Pos,
    pub first_time: Option<Stamp>,
}

/// `TORCH_USE_CUDA_DSA` report fields (the first failure of the report).
#[derive(Debug, Clone, Default)]
pub struct DsaReport {
    pub message: Option<String>,
    pub assert_file: Option<String>,
    pub device_function: Option<String>,
    pub thread: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub launch_file: Option<String>,
    pub launch_function: Option<String>,
    pub kernel: Option<String>,
    pub failures: u64,
    pub first: Pos,
    pub rank: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct CpuHit {
    pub rule: String,
    pub text: String,
    pub pos: Pos,
    pub rank: Option<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct InputStats {
    pub name: String,
    pub lines: u64,
    pub bytes: u64,
}

/// Everything the reader kept.
#[derive(Debug, Default)]
pub struct Facts {
    pub groups: Vec<AssertGroup>,
    pub groups_dropped: u64,
    pub tracebacks: Vec<Traceback>,
    pub tracebacks_dropped: u64,
    /// First device-side assert error line (any wrapper).
    pub device_error: Option<HostEvent>,
    /// Per kind; the device-side assert error's later repeats included.
    pub host: Vec<HostEvent>,
    pub dsa: Option<DsaReport>,
    pub cpu: Vec<CpuHit>,
    pub hits: LogHits,
    pub launch_blocking: bool,
    pub ranks: BTreeSet<i64>,
    pub inputs: Vec<InputStats>,
}

pub struct Reader {
    catalog: &'static Catalog,
    pre: &'static Prefilter,
    pub facts: Facts,
    carry: Vec<u8>,
    carry_started: bool,
    input: usize,
    line_no: u64,
    /// Rank implied by the input's name (`rank3.log`).
    input_rank: Option<i64>,
    builders: HashMap<Option<i64>, Builder>,
    chain_pending: HashSet<Option<i64>>,
    /// A source path left at the end of the previous line, for reassembly.
    pending_path: Option<(u64, Option<i64>, String)>,
    group_index: HashMap<(Option<String>, String, String), usize>,
    /// The last raw line identity and its group: thousands of identical lines are cheap.
    last_raw: String,
    last_group: Option<usize>,
    scratch: String,
    dsa_open: bool,
    /// The last line that was one device assertion and nothing else.
    echo: Option<Echo>,
    /// Device assertions counted, and the group and rank of the last.
    records: u64,
    /// (group, rank, whether it had block and thread).
    last_record: Option<(usize, Option<i64>, bool)>,
    /// The catalog patterns a line matched (kept to reuse its allocation).
    matched: Vec<Target>,
    /// A row cut by the terminal, waiting for the rest of it (see `unwrap`).
    waiting: Option<Waiting>,
    /// The last rows before the region being scanned, for a row that was cut
    /// from its start.
    earlier: Vec<Vec<u8>>,
}

/// A cut row (or rows joined so far) waiting for the next.
struct Waiting {
    kind: unwrap::Kind,
    text: String,
    rows: usize,
    /// Its first row's number.
    line_no: u64,
    /// The rows before its first row, nearest last.
    before: Vec<Vec<u8>>,
}

/// The lines of a stretch of whole lines that may matter, found apart from
/// the reader (so that the next stretch is searched while this one is read).
pub struct Searched {
    len: usize,
    lines: Vec<Line>,
    total: u64,
}

/// Search `region` (whole lines, the first starting at its first byte) for
/// the lines a reader of `catalog` looks at.
pub fn search_with(catalog: &'static Catalog, region: &[u8]) -> Searched {
    search(Prefilter::shared(catalog), region)
}

fn search(pre: &Prefilter, region: &[u8]) -> Searched {
    let (lines, total) = pre.lines_that_matter(region, MAX_LINE);
    Searched {
        len: region.len(),
        lines,
        total,
    }
}

/// A thread line to compare the next ones with: a failing kernel prints
/// one line per thread, and lines that differ from it only in their block
/// and thread numbers are counted into its group without being parsed.
struct Echo {
    raw: Vec<u8>,
    block: std::ops::Range<usize>,
    thread: std::ops::Range<usize>,
    group: usize,
    rank: Option<i64>,
}

impl Echo {
    /// The block and thread of `raw` when the rest of it is this line's.
    fn repeat(&self, raw: &[u8]) -> Option<([u32; 3], [u32; 3])> {
        let head = &self.raw[..self.block.start];
        let mid = &self.raw[self.block.end..self.thread.start];
        if !raw.starts_with(head) {
            return None;
        }
        let b = device_line::numbers_span(raw, head.len())?;
        if !raw[b.end..].starts_with(mid) {
            return None;
        }
        let t = device_line::numbers_span(raw, b.end + mid.len())?;
        if raw[t.end..] != self.raw[self.thread.end..] {
            return None;
        }
        let parse = |r: std::ops::Range<usize>| {
            std::str::from_utf8(&raw[r])
                .ok()
                .and_then(device_line::numbers)
        };
        Some((parse(b)?, parse(t)?))
    }
}

/// What a line changed besides assertion groups: a line that changed none
/// of it can be counted again from its coordinates alone.
#[derive(PartialEq, Eq)]
struct Effects {
    host: (usize, u64),
    device_error: bool,
    cpu: usize,
    hits: usize,
    tracebacks: (usize, u64),
    open: (usize, usize, bool, bool),
    dsa: Option<u64>,
    launch_blocking: bool,
    groups_dropped: u64,
}

impl Reader {
    pub fn new(catalog: &'static Catalog) -> Self {
        Reader {
            catalog,
            pre: Prefilter::shared(catalog),
            facts: Facts::default(),
            carry: Vec::new(),
            carry_started: false,
            input: 0,
            line_no: 0,
            input_rank: None,
            builders: HashMap::new(),
            chain_pending: HashSet::new(),
            pending_path: None,
            group_index: HashMap::new(),
            last_raw: String::new(),
            last_group: None,
            scratch: String::new(),
            dsa_open: false,
            echo: None,
            records: 0,
            last_record: None,
            matched: Vec::new(),
            waiting: None,
            earlier: Vec::new(),
        }
    }

    fn effects(&self) -> Effects {
        let f = &self.facts;
        Effects {
            host: (f.host.len(), f.host.iter().map(|e| e.count).sum()),
            device_error: f.device_error.is_some(),
            cpu: f.cpu.len(),
            hits: f.hits.len(),
            tracebacks: (f.tracebacks.len(), f.tracebacks_dropped),
            open: (
                self.builders.len(),
                self.chain_pending.len(),
                self.pending_path.is_some(),
                self.dsa_open,
            ),
            dsa: f.dsa.as_ref().map(|d| d.failures),
            launch_blocking: f.launch_blocking,
            groups_dropped: f.groups_dropped,
        }
    }

    /// A new input begins: the previous one's last line and tracebacks end.
    pub fn begin_input(&mut self, name: &str) {
        if !self.facts.inputs.is_empty() {
            self.end_input();
        }
        self.input = self.facts.inputs.len();
        self.facts.inputs.push(InputStats {
            name: name.to_string(),
            lines: 0,
            bytes: 0,
        });
        self.line_no = 0;
        self.input_rank = rank_from_name(name);
    }

    fn ensure_input(&mut self) {
        if self.facts.inputs.is_empty() {
            self.begin_input("-");
        }
    }

    fn end_input(&mut self) {
        if self.carry_started {
            let line = std::mem::take(&mut self.carry);
            self.carry_started = false;
            let every = self.wants_every_line() || self.pre.line_matters(&line);
            if every {
                self.take_row(&line, 0, line.len());
            } else {
                self.take_line(&line, false);
            }
        }
        self.flush_waiting();
        self.earlier.clear();
        let builders: Vec<_> = self.builders.drain().collect();
        let mut done: Vec<Traceback> = builders
            .into_iter()
            .filter(|(_, b)| b.has_frames())
            .map(|(_, b)| b.finish())
            .collect();
        done.sort_by_key(|t| t.line);
        for tb in done {
            self.push_traceback(tb);
        }
        self.chain_pending.clear();
        self.pending_path = None;
        self.dsa_open = false;
        self.echo = None;
        if let Some(s) = self.facts.inputs.get_mut(self.input) {
            s.lines = self.line_no;
        }
    }

    pub fn finish(mut self) -> Facts {
        self.ensure_input();
        self.end_input();
        self.dsa_group();
        self.facts
    }

    /// A DSA report names the assertion even when no device line was printed.
    fn dsa_group(&mut self) {
        let Some(d) = &self.facts.dsa else { return };
        let Some(msg) = &d.message else { return };
        let assertion = normalize_assertion(msg);
        if self.facts.groups.iter().any(|g| g.assertion == assertion) {
            return;
        }
        let (file, line) = match d.assert_file.as_deref().and_then(|f| f.rsplit_once(':')) {
            Some((f, l)) => (normalize_path(f), l.trim().parse().ok()),
            None => (
                d.assert_file
                    .as_deref()
                    .map(normalize_path)
                    .unwrap_or_default(),
                None,
            ),
        };
        let rank = d.rank.unwrap_or(-1);
        let mut g = AssertGroup {
            kernel: d.device_function.as_deref().map(normalize_kernel),
            raw_kernel: d.device_function.clone(),
            assertion,
            file,
            line,
            lines: d.failures.max(1),
            triples: HashSet::new(),
            triples_capped: false,
            blocks: HashSet::new(),
            ranks: d.rank.into_iter().collect(),
            first: d.first,
            first_time: None,
            rocm: false,
            printf_message: None,
            from_dsa: true,
        };
        if let (Some(b), Some(t)) = (d.block, d.thread) {
            g.triples.insert((rank, b, t));
            g.blocks.insert((rank, b));
        }
        self.facts.groups.push(g);
    }

    fn wants_every_line(&self) -> bool {
        !self.builders.is_empty()
            || self.pending_path.is_some()
            || self.waiting.is_some()
            || self.dsa_open
            || self.pre.looks_at_everything()
    }

    /// Feed raw bytes; chunk boundaries are arbitrary.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.feed_searched(bytes, None);
    }

    /// Feed bytes that another thread has searched already (see `search`):
    /// the result is used when the bytes start a line, as they do when no
    /// partial line is pending.
    pub fn feed_searched(&mut self, mut bytes: &[u8], searched: Option<Searched>) {
        self.ensure_input();
        if let Some(s) = self.facts.inputs.get_mut(self.input) {
            s.bytes += bytes.len() as u64;
        }
        // A pending partial line takes the bytes up to the first newline: the
        // rest no longer starts where the search did.
        let fresh = !self.carry_started;
        if self.carry_started {
            match memchr(b'\n', bytes) {
                Some(i) => {
                    self.extend_carry(&bytes[..i]);
                    let line = std::mem::take(&mut self.carry);
                    self.carry_started = false;
                    let every = self.wants_every_line() || self.pre.line_matters(&line);
                    if every {
                        self.take_row(&line, 0, line.len());
                    } else {
                        self.take_line(&line, false);
                    }
                    unwrap::keep_row(&line, &mut self.earlier);
                    self.carry = line;
                    self.carry.clear();
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.extend_carry(bytes);
                    return;
                }
            }
        }
        let (region, tail) = match memrchr(b'\n', bytes) {
            Some(i) => (&bytes[..=i], &bytes[i + 1..]),
            None => (&bytes[..0], bytes),
        };
        let searched = searched
            .filter(|s| fresh && s.len == region.len())
            .unwrap_or_else(|| search(self.pre, region));
        self.scan(region, searched);
        if !tail.is_empty() {
            self.carry_started = true;
            self.extend_carry(tail);
        }
    }

    fn extend_carry(&mut self, b: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.carry.len());
        self.carry.extend_from_slice(&b[..b.len().min(room)]);
        self.carry_started = true;
    }

    /// Complete lines, each ending in `\n`.
    fn scan(&mut self, region: &[u8], searched: Searched) {
        let base = self.line_no;
        let Searched { lines, total, .. } = searched;
        let mut p = 0;
        let mut next = 0;
        while p < region.len() {
            if self.wants_every_line() {
                let e = p + memchr(b'\n', &region[p..]).unwrap_or(region.len() - p);
                self.take_row(region, p, e);
                p = e + 1;
                continue;
            }
            // Lines an every-line stretch already took are skipped.
            while lines.get(next).is_some_and(|l| l.start < p) {
                next += 1;
            }
            let Some(l) = lines.get(next) else { break };
            self.line_no = base + l.before;
            self.take_row(region, l.start, l.end.min(l.start + MAX_LINE));
            p = l.end + 1;
            next += 1;
        }
        self.line_no = base + total;
        unwrap::keep_last(region, &mut self.earlier);
    }

    /// Row `region[start..end]`: read alone, or joined with the rows the
    /// terminal cut it from (see `unwrap`), or kept waiting for the next row.
    fn take_row(&mut self, region: &[u8], start: usize, end: usize) {
        let raw = &region[start..end];
        if let Some(w) = self.waiting.take() {
            let next = unwrap::row(raw);
            match unwrap::resume(w.kind, &w.text, w.rows, &next) {
                unwrap::Resume::Joined(text) => {
                    let text = unwrap::backward(&w.before, &text).unwrap_or(text);
                    self.take_line(text.as_bytes(), true);
                    return;
                }
                unwrap::Resume::More(text) => {
                    self.line_no += 1;
                    self.waiting = Some(Waiting {
                        text,
                        rows: w.rows + 1,
                        ..w
                    });
                    return;
                }
                unwrap::Resume::Apart => self.read_waiting(w),
            }
        }
        // A repeat of the last thread line is whole.
        if raw.len() >= MAX_LINE || self.echo.as_ref().is_some_and(|e| e.repeat(raw).is_some()) {
            self.take_line(raw, true);
            return;
        }
        let cur = unwrap::row(raw);
        let device = unwrap::has_marker(&cur);
        if device && unwrap::path_may_be_cut(&cur) {
            let before = unwrap::rows_before(region, start, &self.earlier);
            if let Some(text) = unwrap::backward(&before, &cur) {
                self.take_line(text.as_bytes(), true);
                return;
            }
        }
        let in_tb = !self.builders.is_empty();
        if device || unwrap::full_width(raw) {
            if let Some(kind) = unwrap::cut(&cur, in_tb) {
                self.line_no += 1;
                self.waiting = Some(Waiting {
                    kind,
                    text: cur.into_owned(),
                    rows: 1,
                    line_no: self.line_no,
                    before: unwrap::rows_before(region, start, &self.earlier),
                });
                return;
            }
        }
        self.take_line(raw, true);
    }

    /// A waiting row that the next row did not finish, read as it is at its own place.
    fn read_waiting(&mut self, w: Waiting) {
        let now = self.line_no;
        self.line_no = w.line_no - 1;
        self.take_line(w.text.as_bytes(), true);
        self.line_no = now;
    }

    fn flush_waiting(&mut self) {
        if let Some(w) = self.waiting.take() {
            self.read_waiting(w);
        }
    }

    fn take_line(&mut self, raw: &[u8], look: bool) {
        self.line_no += 1;
        if !look {
            return;
        }
        let raw = &raw[..raw.len().min(MAX_LINE)];
        let quiet = self.builders.is_empty() && self.pending_path.is_none() && !self.dsa_open;
        if let Some(e) = self.echo.as_ref().filter(|_| quiet) {
            if let Some((block, thread)) = e.repeat(raw) {
                let (group, rank) = (e.group, e.rank);
                self.count(group, rank, Some(block), Some(thread));
                return;
            }
        }
        let before = (self.effects(), self.records);
        self.read_line(raw);
        // One assertion and nothing else: the next lines may repeat it.
        self.echo = None;
        if quiet && self.records == before.1 + 1 && self.effects() == before.0 {
            if let (Some((b, t)), Some((group, rank, true))) =
                (device_line::coordinate_spans(raw), self.last_record)
            {
                self.echo = Some(Echo {
                    raw: raw.to_vec(),
                    block: b,
                    thread: t,
                    group,
                    rank,
                });
            }
        }
    }

    fn read_line(&mut self, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw);
        for seg in clean::segments(&text) {
            let (body, prefix) = clean::strip_prefixes(&seg);
            let rank = prefix.rank.or(self.input_rank);
            if let Some(r) = rank {
                self.facts.ranks.insert(r);
            }
            if let Some(pieces) = unescape_repr(body) {
                for piece in pieces {
                    let (b, p2) = clean::strip_prefixes(&piece);
                    self.text_line(b, p2.rank.or(rank), prefix.time.or(p2.time));
                }
            } else {
                self.text_line(body, rank, prefix.time);
            }
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            input: self.input,
            line: self.line_no,
        }
    }

    /// One cleaned line of text.
    fn text_line(&mut self, text: &str, rank: Option<i64>, time: Option<Stamp>) {
        let t = text.trim();
        self.traceback_line(text, rank);
        self.device_lines(text, rank, time);
        if self.pre.has_trigger(t) {
            if let Some((kind, device)) = errors::classify(t) {
                self.host_event(kind, device, t, rank, time);
            }
        }
        if self.dsa_open || t.contains(" = ") || t.contains("assertion failure") {
            self.dsa_line(t, rank);
        }
        if !self.facts.launch_blocking
            && (t.contains("CUDA_LAUNCH_BLOCKING") || t.contains("AMD_SERIALIZE_KERNEL"))
            && errors::sets_launch_blocking(t)
        {
            self.facts.launch_blocking = true;
        }
        // Block and thread numbers are not values the evidence may read.
        let c = device_line::without_coordinates(t);
        let hits = &self.facts.hits;
        let cpu_room = self.facts.cpu.len() < MAX_CPU;
        let wanted = |target| match target {
            Target::Log(i) => !hits.contains(i),
            Target::Cpu(_) => cpu_room,
        };
        let mut matched = std::mem::take(&mut self.matched);
        self.pre.catalog_matches(&c, wanted, &mut matched);
        let mut cpu_first = None;
        for &target in &matched {
            match target {
                Target::Log(i) => self.catalog.record_log_hit(i, &c, &mut self.facts.hits),
                // The catalog's order decides between host messages.
                Target::Cpu(k) => cpu_first = Some(cpu_first.map_or(k, |f: usize| f.min(k))),
            }
        }
        self.matched = matched;
        if let Some(rule) = cpu_first.and_then(|k| self.catalog.cpu_rule(k)) {
            let hit = CpuHit {
                rule: rule.id.clone(),
                text: t.chars().take(500).collect(),
                pos: self.pos(),
                rank,
            };
            self.facts.cpu.push(hit);
        }
    }

    fn traceback_line(&mut self, text: &str, rank: Option<i64>) {
        let t = text.trim();
        if self.builders.is_empty()
            && !(t.starts_with("Traceback")
                || t.starts_with("File \"")
                || t.starts_with("During handling")
                || t.starts_with("The above exception"))
        {
            return;
        }
        if traceback::CHAIN_MARKERS.iter().any(|m| t.starts_with(m)) {
            if let Some(b) = self.builders.remove(&rank) {
                let tb = b.finish();
                if !tb.frames.is_empty() {
                    self.push_traceback(tb);
                }
            }
            self.chain_pending.insert(rank);
            return;
        }
        for _ in 0..2 {
            if !self.builders.contains_key(&rank) {
                if !(traceback::is_header(t) || traceback::parse_frame(t).is_some()) {
                    return;
                }
                let chained = self.chain_pending.remove(&rank);
                let b = Builder::new(self.input, self.line_no, rank, chained);
                self.builders.insert(rank, b);
            }
            let Some(b) = self.builders.get_mut(&rank) else {
                return;
            };
            match b.step(text) {
                Step::More | Step::Ignored => return,
                Step::Done(tb, refeed) => {
                    self.builders.remove(&rank);
                    if !tb.frames.is_empty() {
                        self.push_traceback(tb);
                    }
                    if !refeed {
                        return;
                    }
                }
            }
        }
    }

    fn push_traceback(&mut self, tb: Traceback) {
        if self.facts.tracebacks.len() < MAX_TRACEBACKS {
            self.facts.tracebacks.push(tb);
        } else {
            self.facts.tracebacks_dropped += 1;
        }
    }

    fn device_lines(&mut self, text: &str, rank: Option<i64>, time: Option<Stamp>) {
        let line_no = self.line_no;
        // Reassemble `…/IndexKernelUtils.cu    return forward_call(…)` + `:16: kernel: block: …`.
        let joined = match self.pending_path.take() {
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
                self.pending_path = Some((line_no, rank, p.to_string()));
            }
        }
    }

    fn record(&mut self, d: &DeviceLine<'_>, rank: Option<i64>, time: Option<Stamp>) {
        let rank = d.rank.or(rank);
        if let Some(r) = rank {
            self.facts.ranks.insert(r);
        }
        let gi = if d.file.is_none() && d.block.is_none() && !d.rocm {
            // A fragment of a torn line: it only counts toward a group it names.
            let a = normalize_assertion(d.assertion);
            match self.facts.groups.iter().position(|g| g.assertion == a) {
                Some(i) => i,
                None => return,
            }
        } else {
            self.scratch.clear();
            for part in [d.file.unwrap_or(""), d.function.unwrap_or(""), d.assertion] {
                self.scratch.push_str(part);
                self.scratch.push('\u{1}');
            }
            if let Some(l) = d.line {
                self.scratch.push_str(&l.to_string());
            }
            match self.last_group {
                Some(i) if self.scratch == self.last_raw => i,
                _ => {
                    let Some(i) = self.group_for(d, time) else {
                        return;
                    };
                    std::mem::swap(&mut self.last_raw, &mut self.scratch);
                    self.last_group = Some(i);
                    i
                }
            }
        };
        self.records += 1;
        self.last_record = Some((gi, rank, d.block.is_some() && d.thread.is_some()));
        self.count(gi, rank, d.block, d.thread);
        let g = &mut self.facts.groups[gi];
        if g.printf_message.is_none() {
            g.printf_message = d.printf_message.map(|m| m.chars().take(500).collect());
        }
    }

    /// One more line of group `gi`.
    fn count(
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
            g.ranks.insert(r);
        }
        if let (Some(b), Some(t)) = (block, thread) {
            if g.triples.len() < MAX_TRIPLES {
                g.triples.insert((r, b, t));
            } else if !g.triples.contains(&(r, b, t)) {
                g.triples_capped = true;
            }
        }
        if let Some(b) = block {
            if g.blocks.len() < MAX_TRIPLES {
                g.blocks.insert((r, b));
            }
        }
    }

    fn group_for(&mut self, d: &DeviceLine<'_>, time: Option<Stamp>) -> Option<usize> {
        let file = d.file.map(normalize_path).unwrap_or_default();
        let kernel = d.function.map(normalize_kernel);
        let assertion = normalize_assertion(d.assertion);
        let source = match d.line {
            Some(l) => format!("{file}:{l}"),
            None => file.clone(),
        };
        let key = (kernel.clone(), assertion.clone(), source);
        if let Some(&i) = self.group_index.get(&key) {
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
            triples: HashSet::new(),
            triples_capped: false,
            blocks: HashSet::new(),
            ranks: BTreeSet::new(),
            first: self.pos(),
            first_time: time,
            rocm: d.rocm,
            printf_message: None,
            from_dsa: false,
        });
        self.group_index.insert(key, i);
        Some(i)
    }

    fn host_event(
        &mut self,
        kind: HostKind,
        device: bool,
        text: &str,
        rank: Option<i64>,
        time: Option<Stamp>,
    ) {
        let pos = self.pos();
        let message: String = text.chars().take(300).collect();
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
                    e.ranks.insert(r);
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

    fn dsa_line(&mut self, t: &str, rank: Option<i64>) {
        const KEYS: [&str; 9] = [
            "GPU assertion failure message = ",
            "File containing assertion = ",
            "Device function containing assertion = ",
            "Thread ID that failed assertion = ",
            "Block ID that failed assertion = ",
            "File containing kernel launch = ",
            "Function containing kernel launch = ",
            "Name of kernel launched that led to failure = ",
            "Device that launched kernel = ",
        ];
        if t.contains("CUDA device-side assertion failures were found")
            || t.starts_with("Looking for device-side assertion failure information")
        {
            self.dsa_open = true;
            return;
        }
        let Some((k, v)) = KEYS
            .iter()
            .enumerate()
            .find_map(|(k, key)| t.find(key).map(|i| (k, t[i + key.len()..].trim())))
        else {
            if self.dsa_open
                && !(t.starts_with("Assertion failure")
                    || t.starts_with("Backtrace")
                    || t.starts_with("Stream kernel")
                    || t.is_empty())
            {
                // Launch backtraces run on; any other line ends the report.
                self.dsa_open = t.starts_with("frame #")
                    || t.starts_with('#')
                    || t.starts_with("But at least")
                    || t.starts_with("Adjust");
            }
            return;
        };
        self.dsa_open = true;
        let pos = self.pos();
        let d = self.facts.dsa.get_or_insert_with(|| DsaReport {
            first: pos,
            rank,
            ..DsaReport::default()
        });
        let v: String = v.chars().take(500).collect();
        match k {
            0 => {
                d.failures += 1;
                if d.message.is_none() {
                    d.message = Some(v);
                }
            }
            _ if d.failures > 1 => {}
            1 => d.assert_file = d.assert_file.take().or(Some(v)),
            2 => d.device_function = d.device_function.take().or(Some(v)),
            3 => d.thread = d.thread.or_else(|| bracket_triple(&v)),
            4 => d.block = d.block.or_else(|| bracket_triple(&v)),
            5 => d.launch_file = d.launch_file.take().or(Some(v)),
            6 => d.launch_function = d.launch_function.take().or(Some(v)),
            7 => d.kernel = d.kernel.take().or(Some(v)),
            _ => {}
        }
    }
}

fn bracket_triple(v: &str) -> Option<[u32; 3]> {
    let inner = v.trim().strip_prefix('[')?.split(']').next()?;
    let mut out = [0u32; 3];
    for (i, p) in inner.split(',').take(3).enumerate() {
        out[i] = p.trim().parse().ok()?;
    }
    Some(out)
}

/// A rank in a per-rank file's name: `rank3.log`, `log_rank_3.txt`,
/// torchrun's `…/attempt_0/3/stderr.log`.
pub fn rank_from_name(name: &str) -> Option<i64> {
    let n = name.replace('\\', "/");
    let lower = n.to_ascii_lowercase();
    if let Some(i) = lower.rfind("rank") {
        let rest = lower[i + 4..].trim_start_matches(['_', '-', '.']);
        let d: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if !d.is_empty() {
            return d.parse().ok();
        }
    }
    let parts: Vec<&str> = n.split('/').collect();
    if parts.len() >= 2 {
        let file = parts[parts.len() - 1];
        let dir = parts[parts.len() - 2];
        if (file.starts_with("stdout") || file.starts_with("stderr"))
            && !dir.is_empty()
            && dir.bytes().all(|b| b.is_ascii_digit())
        {
            return dir.parse().ok();
        }
    }
    None
}

/// A line holding a `repr`'d error or traceback (`RuntimeError('CUDA error: …\nCUDA kernel errors…')`,
/// `'Traceback (most recent call last):\n  File …'`): its pieces, unescaped.
fn unescape_repr(body: &str) -> Option<Vec<String>> {
    if !body.contains("\\n") {
        return None;
    }
    let interesting = [
        "Traceback",
        "device-side assert",
        "CUDA error",
        "HIP error",
        "Assertion",
        "Error",
        "File \"",
    ];
    if !interesting.iter().any(|k| body.contains(k)) {
        return None;
    }
    let body = body.replace("\\\\n", "\\n");
    let breaks = line_breaks(&body);
    if breaks.is_empty() {
        return None;
    }
    let mut from = 0;
    let mut split = Vec::with_capacity(breaks.len() + 1);
    for b in breaks {
        split.push(&body[from..b]);
        from = b + 2;
    }
    split.push(&body[from..]);
    let pieces: Vec<String> = split
        .into_iter()
        .map(|p| {
            p.replace("\\'", "'")
                .replace("\\\"", "\"")
                .replace("\\t", "    ")
                .replace("\\\\", "\\")
        })
        .filter(|p| !p.trim().is_empty() && !matches!(p.trim(), "'" | "\"" | "')" | "\")"))
        .collect();
    (pieces.len() > 1).then_some(pieces)
}

/// Where `body` holds an escaped line break (`\n` as two characters): not
/// a C string's own `\n` inside a printed assertion (grouped-mm's offset
/// checks end their message with one), nor a Windows path's separator
/// before a component starting with `n` (`ATen\native`, `ops\nccl_…`,
/// `torch\nn`).
fn line_breaks(body: &str) -> Vec<usize> {
    let quoted = assertion_spans(body);
    body.match_indices("\\n")
        .map(|(i, _)| i)
        .filter(|&i| !quoted.iter().any(|r| r.contains(&i)) && !path_separator(body, i))
        .collect()
}

/// The spans of printed assertions: from "ssertion `" to the quote that
/// closes it before " failed" (CUDA's `` ` ``, ROCm's `'`).
fn assertion_spans(body: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = body[from..].find("ssertion `") {
        let start = from + i;
        let Some(j) = body[start..].find(" failed") else {
            break;
        };
        out.push(start..start + j);
        from = start + j;
    }
    out
}

/// Whether the backslash at `i` separates path components: the text before
/// it is a component after `\` or `/`, or a drive (`C:`).
fn path_separator(body: &str, i: usize) -> bool {
    let before = &body.as_bytes()[..i];
    let word = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        .count();
    let head = &before[..i - word];
    match head.last() {
        Some(b'\\' | b'/') => word > 0,
        Some(b':') => {
            word == 0
                && head.len() >= 2
                && head[head.len() - 2].is_ascii_alphabetic()
                && (head.len() == 2 || !head[head.len() - 3].is_ascii_alphanumeric())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_file_names() {
        assert_eq!(rank_from_name("logs/rank3.log"), Some(3));
        assert_eq!(rank_from_name("log_rank_12.txt"), Some(12));
        assert_eq!(rank_from_name("/x/attempt_0/5/stderr.log"), Some(5));
        assert_eq!(rank_from_name("job.out"), None);
    }

    #[test]
    fn repr_pieces() {
        let p = unescape_repr(r"ERROR - RuntimeError('CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported\nCompile with `TORCH_USE_CUDA_DSA`')").unwrap_or_default();
        assert_eq!(p.len(), 3);
        assert!(p[0].ends_with("device-side assert triggered"));
        assert_eq!(unescape_repr("plain line"), None);
    }

    #[test]
    fn backslash_n_in_assertions_and_windows_paths_is_no_line_break() {
        let grouped = r#"/pytorch/aten/src/ATen/native/cuda/GroupMMCommon.cuh:55: prepare_grouped_gemm_data: block: [0,0,0], thread: [0,0,0] Assertion `delta >0 && "expected ofsets to be greater than 0\n"` failed."#;
        assert_eq!(unescape_repr(grouped), None);
        let windows = r"C:\actions-runner\_work\pytorch\pytorch\pytorch\aten\src\ATen\native\cuda\Loss.cu:250: block: [0,0,0], thread: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.";
        assert_eq!(unescape_repr(windows), None);
        let nccl = r"D:\torch\csrc\distributed\c10d\symm_mem\ops\nccl_all_to_all_nd.cu:112: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.";
        assert_eq!(unescape_repr(nccl), None);
        let frame = r#"File "C:\nn\x.py", line 3, in f"#;
        assert_eq!(unescape_repr(frame), None);
        // A repr that holds a device line still splits around it.
        let repr = r#"RuntimeError('x.cu:5: k: block: [0,0,0], thread: [0,0,0] Assertion `a && "b\n"` failed.\nCUDA error: device-side assert triggered')"#;
        let p = unescape_repr(repr).unwrap_or_default();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].ends_with(r#""b\n"` failed."#), "{p:?}");
    }

    #[test]
    fn windows_paths_keep_their_backslash_n() {
        let line = r"RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at c:\new-builder_3\win-wheel\pytorch\aten\src\thnn\generic/ClassNLLCriterion.c:93";
        assert_eq!(unescape_repr(line), None);
        let p = unescape_repr(
            r"Error('CUDA error at C:\w\aten\src\ATen\native\cuda\x.cu:12\nframe #0: c10::Error')",
        )
        .unwrap_or_default();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].ends_with(r"native\cuda\x.cu:12"), "{p:?}");
    }
}
