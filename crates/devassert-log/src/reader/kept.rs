//! What the reader keeps: [`Facts`] (assertion groups, tracebacks, host
//! errors, evidence, inputs) and the tracebacks still being read.

use super::dsa_report::DsaReport;
use super::group::AssertGroup;
use super::pos::Pos;
use crate::clean::Stamp;
use crate::errors::HostKind;
use crate::ranks::RankSet;
use crate::traceback::{Builder, Traceback};
use devassert_core::LogHits;
use std::collections::{HashMap, HashSet, VecDeque};

/// The first occurrence of a host error kind, and how often it came.
#[derive(Debug, Clone)]
pub struct HostEvent {
    pub kind: HostKind,
    pub message: String,
    pub count: u64,
    pub ranks: RankSet,
    pub first: Pos,
    pub first_time: Option<Stamp>,
}

#[derive(Debug, Clone)]
pub struct CpuHit {
    pub rule: String,
    pub text: String,
    pub pos: Pos,
    pub rank: Option<i64>,
}

/// A code line printed right above an error line with no frame line above
/// it (the poster cut `File "…", line N, in f`): the innermost frame's
/// code, with no file or line to place it (see `code_above`).
#[derive(Debug, Clone)]
pub struct CodeAbove {
    /// The error line it stands above.
    pub error: Pos,
    pub code: String,
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
    /// What the lines that matched catalog log evidence state about the
    /// offending value and its bound (a pattern captures what its rule
    /// needs; the line may say more: `index value V exceeds bounds B`).
    pub stated: Vec<crate::values::Stated>,
    pub launch_blocking: bool,
    /// The code lines above the first error lines whose frames the log lacks.
    pub code_above: Vec<CodeAbove>,
    /// The first IPython / Jupyter traceback place (`Cell In[12], line 3`,
    /// `<ipython-input-3-…>`): the program is a notebook, not a script.
    pub notebook: Option<String>,
    pub inputs: Vec<InputStats>,
}

/// Tracebacks being read: one per rank, and the ranks whose next one is
/// chained to the last ("During handling of the above exception").
#[derive(Default)]
pub(super) struct OpenTracebacks {
    /// Looked up for every line read while a traceback is open: a fast
    /// hash, not SipHash (their order is never read but sorted).
    pub(super) builders: HashMap<Option<i64>, Builder, ahash::RandomState>,
    pub(super) chain_pending: HashSet<Option<i64>, ahash::RandomState>,
    /// The latest tracebacks past the first half of `MAX_TRACEBACKS`
    /// (appended to `Facts::tracebacks` when the reader finishes).
    pub(super) latest: VecDeque<Traceback>,
    /// What the last traceback dropped from `latest` leaves the next builder.
    pub(super) spare: crate::traceback::Spare,
}

impl OpenTracebacks {
    /// `rank`'s open builder. One rank's (a log that logs handled
    /// tracebacks, asked at each of their rows) is found without hashing
    /// the rank: the map's only entry, if its key is `rank`.
    pub(super) fn open(&mut self, rank: Option<i64>) -> Option<&mut Builder> {
        if self.builders.len() == 1 {
            let (key, b) = self.builders.iter_mut().next()?;
            return (*key == rank).then_some(b);
        }
        self.builders.get_mut(&rank)
    }
}
