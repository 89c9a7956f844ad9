//! A repeated traceback's rows after its header, read at once: a log that
//! logs a handled traceback per sample repeats the same frames and code
//! rows after each header byte for byte, and each of them was looked up
//! and stepped as a known row (`memo`), about a quarter of reading such a
//! log. The known rows after a header that leaves its builder fresh are
//! recorded as they are read, with what they leave in the builder
//! (`traceback::Body`); when the rows after the same header next time
//! are the same bytes, they are read at once: the builder is given the
//! body, and the reader counts the rows as `take_known_row` counts each.
//!
//! Equal because: a fresh builder's steps read nothing but their rows
//! (`Builder::is_fresh`); each recorded row was a known row (unchanged
//! while the memo is not cleared: its `generation`), read while only
//! tracebacks were open (which its own step does not change), stepping the
//! one builder the header started (checked when the recording ends:
//! still that builder, and no other row counted since); rows that end or
//! replace it (a header, a chain marker) are not in a block.

use super::memo_rows::Block;
use super::state::Reader;

/// Rows kept in a block at most (each at most `memo_rows::MAX_ROW` bytes).
const MAX_BLOCK_ROWS: usize = 64;

impl Reader {
    /// Reads `rest` (a region's rows from the next row on) up to the end
    /// of the last block, when the last row read was its header and the
    /// rows after it are the block's bytes; returns the bytes and rows read.
    pub(super) fn take_block(&mut self, rest: &[u8]) -> Option<(usize, usize)> {
        let memo = &self.traceback_rows;
        let b = memo.blocks.last.as_ref()?;
        if memo.last != Some(b.header)
            || b.generation != memo.generation
            || !rest.starts_with(&b.bytes)
            || !self.only_tracebacks_open()
        {
            return None;
        }
        let rank = b.rank.or(self.lines.input_rank);
        let open = self.tracebacks.open(rank).filter(|o| o.is_fresh())?;
        open.put_body(b.body.as_ref()?);
        // What `take_known_row` does for each row but the builder's step.
        let (memo, lines) = (&mut self.traceback_rows, &mut self.lines);
        let b = memo.blocks.last.as_ref()?;
        let mut prev = b.header;
        for &(at, width) in &b.rows {
            if let Some(r) = memo.rows.get_mut(prev) {
                r.next = Some(at);
            }
            prev = at;
            lines.count_width(width);
        }
        #[cfg(feature = "test-hooks")]
        for row in b.bytes.split(|&c| c == b'\n') {
            crate::crash::injected_panic(row);
        }
        memo.last = Some(prev);
        lines.line_no += b.rows.len() as u64;
        lines.last_prefix = b.last_prefix;
        let taken = (b.bytes.len(), b.rows.len());
        memo.blocks.recording = None;
        Some(taken)
    }

    /// A known row was read (`take_known_row`), the known row `at`: a
    /// header that left its builder fresh starts a recording, another row
    /// is added to the one under way. Called after the row's step.
    pub(super) fn record_known_row(&mut self, raw: &[u8], at: usize, header: bool) {
        let memo = &mut self.traceback_rows;
        let Some(k) = memo.rows.get(at).map(|r| &r.known) else {
            return;
        };
        let (rank, time, width) = (k.rank, k.time, k.width);
        if header {
            let open = self
                .tracebacks
                .builders
                .get(&rank.or(self.lines.input_rank));
            memo.blocks.recording = open.filter(|o| o.is_fresh()).map(|o| Block {
                header: at,
                rank,
                bytes: Vec::new(),
                rows: Vec::new(),
                last_prefix: (rank, time),
                generation: memo.generation,
                body: None,
                start: o.start(),
            });
            return;
        }
        let Some(rec) = memo.blocks.recording.as_mut() else {
            return;
        };
        if rank != rec.rank || rec.rows.len() >= MAX_BLOCK_ROWS {
            memo.blocks.recording = None;
            return;
        }
        rec.bytes.extend_from_slice(raw);
        rec.bytes.push(b'\n');
        rec.rows.push((at, width));
        rec.last_prefix = (rank, time);
    }

    /// The recording ends before a row that is not read as a known row, or
    /// a header, steps a builder: kept as the last block when its rows
    /// stepped the header's builder alone.
    pub(super) fn end_recording(&mut self) {
        let blocks = &mut self.traceback_rows.blocks;
        let Some(mut rec) = blocks.recording.take() else {
            return;
        };
        let open = self
            .tracebacks
            .builders
            .get(&rec.rank.or(self.lines.input_rank));
        let (input, line) = rec.start;
        let alone = input == self.lines.input
            && self.lines.line_no == line + rec.rows.len() as u64
            && rec.generation == self.traceback_rows.generation;
        if let Some(o) = open.filter(|o| alone && !rec.rows.is_empty() && o.start() == rec.start) {
            rec.body = Some(o.body());
            self.traceback_rows.blocks.last = Some(rec);
        }
    }
}
