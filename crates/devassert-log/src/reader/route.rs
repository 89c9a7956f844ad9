//! Routes each line: a new input, a line looked at or only counted, a
//! line of assertions glued back to back read in pieces, a repeat of the
//! last thread line counted from its coordinates, and each cleaned line
//! handed to the jobs that read it.

use super::glued::MARKER;
use super::group::{Echo, Lent, EARLIER};
use super::kept::{Facts, InputStats};
use super::lines::rank_from_name;
use super::notebook::notebook_place;
use super::pos::Pos;
use super::searched::MAX_LINE;
use super::state::{Known, Reader};
use crate::clean::Stamp;
use crate::device_line;
use crate::errors;
use crate::traceback::Traceback;

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
    notebook: bool,
    groups_dropped: u64,
}

impl Reader {
    fn effects(&self) -> Effects {
        let f = &self.facts;
        Effects {
            host: (f.host.len(), f.host.iter().map(|e| e.count).sum()),
            device_error: f.device_error.is_some(),
            cpu: f.cpu.len(),
            hits: f.hits.len(),
            tracebacks: (
                f.tracebacks.len() + self.tracebacks.latest.len(),
                f.tracebacks_dropped,
            ),
            open: (
                self.tracebacks.builders.len(),
                self.tracebacks.chain_pending.len(),
                self.groups.pending_path.is_some(),
                self.dsa.open,
            ),
            dsa: f.dsa.as_ref().map(|d| d.failures),
            launch_blocking: f.launch_blocking,
            notebook: f.notebook.is_some(),
            groups_dropped: f.groups_dropped,
        }
    }

    /// A new input begins: the previous one's last line and tracebacks end.
    pub fn begin_input(&mut self, name: &str) {
        if !self.facts.inputs.is_empty() {
            self.end_input();
        }
        self.lines.input = self.facts.inputs.len();
        self.facts.inputs.push(InputStats {
            name: name.to_string(),
            lines: 0,
            bytes: 0,
        });
        self.lines.line_no = 0;
        self.lines.widest = 0;
        self.lines.widest_rows = 0;
        self.lines.input_rank = rank_from_name(name);
    }

    /// Bytes of the current input not fed (the Unicode spaces made one byte).
    pub fn count_bytes(&mut self, n: u64) {
        if let Some(s) = self.facts.inputs.get_mut(self.lines.input) {
            s.bytes += n;
        }
    }

    /// The input being read and the number of the line last taken in it.
    pub fn position(&self) -> (String, u64) {
        let name = self.facts.inputs.get(self.lines.input);
        (
            name.map_or_else(|| "-".to_string(), |s| s.name.clone()),
            self.lines.line_no,
        )
    }

    /// The names of the inputs read so far.
    pub fn input_names(&self) -> Vec<String> {
        self.facts.inputs.iter().map(|s| s.name.clone()).collect()
    }

    pub(super) fn ensure_input(&mut self) {
        if self.facts.inputs.is_empty() {
            self.begin_input("-");
        }
    }

    fn end_input(&mut self) {
        if self.lines.carry_started {
            self.read_carry();
        }
        self.flush_waiting();
        self.lines.earlier.clear();
        let builders: Vec<_> = self.tracebacks.builders.drain().collect();
        let mut done: Vec<Traceback> = builders
            .into_iter()
            .filter(|(_, b)| b.has_frames())
            .map(|(_, b)| b.finish())
            .collect();
        done.sort_by_key(|t| t.line);
        for tb in done {
            self.push_traceback(tb);
        }
        self.tracebacks.chain_pending.clear();
        self.groups.pending_path = None;
        self.dsa.open = false;
        self.groups.echo = None;
        self.groups.earlier.clear();
        if let Some(s) = self.facts.inputs.get_mut(self.lines.input) {
            s.lines = self.lines.line_no;
        }
    }

    pub fn finish(mut self) -> Facts {
        self.ensure_input();
        self.end_input();
        self.dsa_group();
        self.bare_groups();
        self.facts
            .tracebacks
            .extend(self.tracebacks.latest.drain(..));
        self.facts
    }

    pub(super) fn wants_every_line(&self) -> bool {
        !self.tracebacks.builders.is_empty()
            || self.groups.pending_path.is_some()
            || self.lines.waiting.is_some()
            || self.lines.released
            || self.dsa.open
            || self.pre.looks_at_everything()
    }

    pub(super) fn take_line(&mut self, raw: &[u8], look: bool) {
        self.take_line_knowing(raw, look, None);
    }

    /// [`Reader::take_line`], with what is known of `raw` already.
    pub(super) fn take_line_knowing(&mut self, raw: &[u8], look: bool, known: Option<Known<'_>>) {
        self.lines.line_no += 1;
        if !look {
            return;
        }
        #[cfg(feature = "test-hooks")]
        crate::crash::injected_panic(raw);
        let raw = &raw[..raw.len().min(MAX_LINE)];
        match super::glued::glued(raw, known) {
            Some((line, first, ends)) => self.take_glued(line, first, ends),
            None => self.take_piece(raw),
        }
    }

    /// No traceback, dangling path or DSA report is being read: a line
    /// that repeats the last thread line is only counted.
    pub(super) fn quiet(&self) -> bool {
        self.tracebacks.builders.is_empty() && self.groups.pending_path.is_none() && !self.dsa.open
    }

    /// A row that repeats the last thread line but for its block and
    /// thread: counted as [`Reader::take_line`] would count it, or read as
    /// the whole line it is where counting it needs more (a lent prefix, a
    /// glued line's echo, something open); a row past `MAX_LINE` is read
    /// whole too. Each row is compared once. False when it must be read as
    /// a row.
    pub(super) fn take_repeat(&mut self, raw: &[u8]) -> bool {
        if raw.len() >= MAX_LINE {
            self.take_line(raw, true);
            return true;
        }
        let Some(e) = self.groups.echo.as_ref() else {
            return false;
        };
        let Some((block, thread)) = e.repeat(raw) else {
            return false;
        };
        // One marker in the echo, one in its repeats: no glued line.
        let counted = e.single && e.lent.is_none() && self.quiet();
        let (group, rank) = (e.group, e.rank);
        if counted {
            self.lines.line_no += 1;
            self.count(group, rank, Some(block), Some(thread));
        } else {
            self.take_line(raw, true);
        }
        true
    }

    /// One line, or one piece of a glued line, read whole.
    pub(super) fn take_piece(&mut self, raw: &[u8]) {
        let quiet = self.quiet();
        if quiet && self.count_echoed(raw) {
            return;
        }
        let before = (self.effects(), self.groups.records);
        self.read_line(raw);
        // One assertion and nothing else: the next lines may repeat it.
        let last = self.groups.echo.take();
        if quiet && self.groups.records == before.1 + 1 && self.effects() == before.0 {
            if let (Some((b, t)), Some((group, rank, true))) =
                (device_line::coordinate_spans(raw), self.groups.last_record)
            {
                let single = MARKER
                    .find(raw)
                    .is_some_and(|i| MARKER.find(&raw[i + 1..]).is_none());
                // A glued line's pieces may repeat it to the line's end
                // without the terminal-cut walk (see `glued`).
                let text = std::str::from_utf8(raw).ok();
                let glues = single && text.is_some_and(|s| device_line::closes_at_end(s, t.end));
                let seam = [&raw[t.end..], &raw[..b.start]].concat();
                let fills_rows = glues && text.is_some_and(|s| super::glued::fills_rows(s, &seam));
                let lent = self.lent();
                self.groups.echo = Some(Echo {
                    single,
                    glues,
                    fills_rows,
                    raw: raw.to_vec(),
                    seam,
                    block: b,
                    thread: t,
                    group,
                    rank,
                    prefix: self.lines.last_prefix,
                    lent,
                });
                let earlier = &mut self.groups.earlier;
                if let Some(e) = last {
                    if earlier.len() >= EARLIER {
                        earlier.remove(0);
                    }
                    earlier.push(e);
                }
                return;
            }
        }
        self.groups.earlier.clear();
    }

    /// What a glued line's prefix lends the piece being read: a rank or a
    /// time of the line's prefix (see `read_line`), or nothing.
    pub(super) fn lent(&self) -> Lent {
        self.lines.glued_prefix.filter(|p| *p != (None, None))
    }

    /// Counts `raw` when it repeats the last thread line, or an earlier one
    /// (which becomes the last), but for its block and thread, with the
    /// same lent by a glued line's prefix. An earlier echo counts as
    /// reading its repeat would: since it was read, every line read was a
    /// thread line that changed nothing but its group's counts, and what
    /// reading a line gives (its group, rank, and that it changes nothing
    /// else: no host error, evidence, traceback, dangling path or DSA
    /// report) is then a function of its text and what is lent to it; the
    /// prefix it leaves for a glued line is restored.
    fn count_echoed(&mut self, raw: &[u8]) -> bool {
        match self.echoed(raw) {
            Some((which, block, thread)) => {
                self.count_echo(which, block, thread);
                true
            }
            None => false,
        }
    }

    /// The echo `raw` repeats, as [`Reader::count_echoed`] finds it (`None`:
    /// the last; `Some(i)`: the earlier one at `i`), and its block and
    /// thread; nothing changed.
    pub(super) fn echoed(&self, raw: &[u8]) -> Option<(Option<usize>, [u32; 3], [u32; 3])> {
        let lent = self.lent();
        let g = &self.groups;
        let last = g.echo.as_ref().filter(|e| e.lent == lent);
        if let Some((b, t)) = last.and_then(|e| e.repeat(raw)) {
            return Some((None, b, t));
        }
        g.earlier
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, e)| e.lent == lent)
            .find_map(|(i, e)| {
                let (b, t) = e.repeat(raw)?;
                Some((Some(i), b, t))
            })
    }

    /// Counts a repeat of the echo `which` (see [`Reader::echoed`]), which
    /// becomes the last.
    pub(super) fn count_echo(&mut self, which: Option<usize>, block: [u32; 3], thread: [u32; 3]) {
        let g = &mut self.groups;
        if let Some(i) = which {
            let e = g.earlier.remove(i);
            if let Some(last) = g.echo.replace(e) {
                g.earlier.push(last);
            }
        }
        let Some((group, rank, prefix)) = g.echo.as_ref().map(|e| (e.group, e.rank, e.prefix))
        else {
            return;
        };
        self.lines.last_prefix = prefix;
        self.count(group, rank, Some(block), Some(thread));
    }

    pub(super) fn pos(&self) -> Pos {
        Pos {
            input: self.lines.input,
            line: self.lines.line_no,
        }
    }

    /// One cleaned line of text.
    pub(super) fn text_line(&mut self, text: &str, rank: Option<i64>, time: Option<Stamp>) {
        use device_line::{gated, searcher, GatedSearcher, Searcher};
        static EQUALS: GatedSearcher = gated!(b" = ");
        static DSA: Searcher = searcher!(b"assertion failure");
        static BLOCKING: GatedSearcher = gated!(b"CUDA_LAUNCH_BLOCKING");
        static SERIALIZE: GatedSearcher = gated!(b"AMD_SERIALIZE_KERNEL");
        let t = text.trim();
        self.traceback_line(text, rank);
        self.device_lines(text, rank, time);
        // A plain line (no literal of the search in it) holds no trigger
        // word, none of the words below that hold one (`CUDA`,
        // `AMD_SERIALIZE`), and no literal set a catalog regex requires: of
        // these checks it needs only the ones that do not rest on them.
        // A line known to say nothing to the host-error table and the
        // evidence is not searched again, nor one of a shape known to say
        // nothing to the table.
        let plain = self.lines.plain || self.quiet_lines.contains(t);
        let mut said = false;
        if !plain && !self.quiet_hosts.contains(t) {
            match self
                .pre
                .has_trigger(t)
                .then(|| errors::classify(t))
                .flatten()
            {
                Some((kind, device)) => {
                    self.host_event(kind, device, t, rank, time);
                    said = true;
                }
                None if !errors::reads_codes(t) => self.quiet_hosts.insert(t),
                None => {}
            }
        }
        let b = t.as_bytes();
        if self.dsa.open || EQUALS.find(b).is_some() || DSA.find(b).is_some() {
            self.dsa_line(t, rank);
        }
        if !plain
            && !self.facts.launch_blocking
            && (BLOCKING.find(b).is_some() || SERIALIZE.find(b).is_some())
            && errors::sets_launch_blocking(t)
        {
            self.facts.launch_blocking = true;
        }
        if self.facts.notebook.is_none() {
            self.facts.notebook = notebook_place(t);
        }
        if !plain {
            said |= self.evidence(t, rank);
            if !said {
                self.quiet_lines.insert(t);
            }
        }
    }
}
