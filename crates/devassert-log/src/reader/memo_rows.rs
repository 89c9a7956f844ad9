//! What the reader keeps of rows that only the traceback builder reads
//! (the reading is in `memo`).

use crate::clean::Stamp;
use crate::prefilter::Target;
use crate::traceback::{Body, RowStep};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Rows kept at most, each at most [`MAX_ROW`] bytes: about 0.5 MiB.
pub(super) const MAX_ROWS: usize = 1024;
pub(super) const MAX_ROW: usize = 512;
/// Rows seen once, by hash, before they are looked at.
pub(super) const MAX_SEEN: usize = 8192;

/// What a row known to the builder alone reads as.
pub(super) struct Known {
    /// Its only segment, prefixes stripped, as `text_line` gets it, and
    /// what the builder reads of it (shared: the builder reads it while
    /// the reader is borrowed).
    pub(super) row: Rc<BuilderRow>,
    pub(super) rank: Option<i64>,
    pub(super) time: Option<Stamp>,
    /// Its width as `take_row` counts it (`unwrap::row`'s length).
    pub(super) width: usize,
}

/// A known row's text, and what `Builder::step` reads of it, found once.
pub(super) struct BuilderRow {
    pub(super) text: Box<str>,
    pub(super) step: RowStep,
}

/// A known row, and the known row read right after it last time: a
/// traceback logged again repeats its rows in the same order, so the next
/// row is compared with that one before it is hashed and looked up.
pub(super) struct KnownRow {
    /// Its bytes (`known` holds their hash).
    pub(super) raw: Box<[u8]>,
    pub(super) known: Known,
    /// Its index in `TracebackRows::rows`.
    pub(super) next: Option<usize>,
}

#[derive(Default)]
pub(super) struct TracebackRows {
    /// A known row's index in `rows`, by the hash of its bytes (`seen`'s
    /// hasher: a row is hashed once); a row of the same hash as a known
    /// other is read as any row.
    pub(super) known: HashMap<u64, usize, ahash::RandomState>,
    pub(super) rows: Vec<KnownRow>,
    /// The known row read last, while the rows read since are none.
    pub(super) last: Option<usize>,
    pub(super) seen: HashSet<u64, ahash::RandomState>,
    /// The catalog patterns a row matched (kept to reuse its allocation).
    pub(super) matched: Vec<Target>,
    /// How many times `known` and `rows` were cleared: a row's index
    /// names the same row while this stays.
    pub(super) generation: u64,
    /// The rows after a header, read at once when repeated (see `block`).
    pub(super) blocks: Blocks,
}

/// The rows read after a header as known rows, and what they left.
pub(super) struct Block {
    /// The header's known row (its index in `TracebackRows::rows`).
    pub(super) header: usize,
    /// The rank the header's prefix names (each row's names it too).
    pub(super) rank: Option<i64>,
    /// The rows' bytes, each with its `\n`.
    pub(super) bytes: Vec<u8>,
    /// Each row's known index and width.
    pub(super) rows: Vec<(usize, usize)>,
    /// The last row's prefix.
    pub(super) last_prefix: (Option<i64>, Option<Stamp>),
    /// The memo's generation the rows were known in.
    pub(super) generation: u64,
    /// What the rows left in the header's builder (`None` while recorded).
    pub(super) body: Option<Body>,
    /// Where the header's builder starts (input, line), while recorded.
    pub(super) start: (usize, u64),
}

/// The last block read, and the one being recorded.
#[derive(Default)]
pub(super) struct Blocks {
    pub(super) last: Option<Block>,
    pub(super) recording: Option<Block>,
}
