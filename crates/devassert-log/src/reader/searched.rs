//! The lines of a stretch that may matter, found by the search apart from
//! the reader (before the reader takes the stretch in, `pump` in lib.rs),
//! or left for the reader to find. A reader that
//! reads every line (a traceback open on each, as in a log of handled
//! tracebacks) uses none of what the search finds but whether a row it
//! reads in full was found (a row found by none of the search's literals is
//! read with fewer checks, `Lines::plain`); of a stretch left unsearched it
//! asks the search's filter alone (`Prefilter::may_find`), and reads a row
//! the filter lets through as a found one, which reads the same: the checks
//! a plain row skips find nothing in a row the search would not keep.
//! The search is skipped (`Reader::every_line_hint`) when the reader read
//! every line of the last stretch it finished; a stretch it then leaves
//! unsearched is searched by the reader from the first line it reads
//! otherwise, if any: the lines found there are those the search would
//! have found (the search reads each line alone), with the regexes retired
//! by then.

use crate::prefilter::{Line, Prefilter};
use devassert_core::Catalog;

/// Longest line looked at; the rest of a longer line is dropped.
pub const MAX_LINE: usize = 256 * 1024;

/// The lines of a stretch of whole lines that may matter, or none yet.
pub struct Searched {
    pub(super) len: usize,
    /// None: not searched (see `Searched::later`).
    pub(super) found: Option<Found>,
}

/// What the search found in a stretch, or in its end from `Line::start`
/// of the first line on (offsets and counts are the whole stretch's).
pub(super) struct Found {
    pub(super) lines: Vec<Line>,
    /// How many lines the stretch has.
    pub(super) total: u64,
    /// The regexes retired when it was searched (see `prefilter::retired`).
    pub(super) retired: Vec<u64>,
}

impl Searched {
    /// A stretch of `len` bytes left for the reader to search.
    pub fn later(len: usize) -> Self {
        Searched { len, found: None }
    }
}

/// Search `region` (whole lines, the first starting at its first byte) for
/// the lines a reader of `catalog` looks at, with the regexes it has
/// `retired` by now.
pub fn search_with(catalog: &'static Catalog, retired: &[u64], region: &[u8]) -> Searched {
    Searched {
        len: region.len(),
        found: Some(search(Prefilter::shared(catalog), region, retired.to_vec())),
    }
}

fn search(pre: &Prefilter, region: &[u8], retired: Vec<u64>) -> Found {
    let (lines, total) = pre.lines_that_matter(region, MAX_LINE, &retired);
    Found {
        lines,
        total,
        retired,
    }
}

/// `region[from..]` searched (`from` at a line's start, `before` lines
/// before it), as the lines of `region`.
pub(super) fn search_from(
    pre: &Prefilter,
    region: &[u8],
    from: usize,
    before: u64,
    retired: &[u64],
) -> Found {
    let mut found = search(pre, &region[from..], retired.to_vec());
    for l in &mut found.lines {
        l.start += from;
        l.end += from;
        l.before += before;
    }
    found.total += before;
    found
}
