//! The one result type every command produces: a [`Finding`] tied to a rule of
//! the catalog, and the [`Report`] that carries findings and their fallout.
//! The serde shape of these types *is* the `devassert/1` JSON contract.

use crate::place::{is_false, Bound, DataLocation, Scalar, SourceLocation};
use crate::sections::{
    Command, DataScans, InputSummary, ModelSummary, RunSection, ScanSection, SkippedInput,
};
use crate::vocabulary::{OpFamily, Severity};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

pub const SCHEMA: &str = "devassert/1";

/// A ranked root cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    pub id: String,
    /// The cause's share of the evidence weight among the finding's causes:
    /// the confidences of one finding sum to at most 1 (see
    /// [`crate::advice`]). Not a frequency measured on labelled crashes.
    pub confidence: f64,
    pub why: String,
    /// Shown by measured facts (the user's own script, model directory or
    /// data), not only likely from the log.
    #[serde(default)]
    pub established: bool,
    /// What establishes it: the file and line, or the data place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    /// What to do when this is the cause; the finding's `fixes` lists them
    /// in the causes' order (see [`crate::advice`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
}

impl Cause {
    /// A likely cause (not established).
    pub fn new(id: impl Into<String>, confidence: f64, why: impl Into<String>) -> Self {
        Cause {
            id: id.into(),
            confidence,
            why: why.into(),
            established: false,
            proof: None,
            fixes: Vec::new(),
        }
    }

    /// The same cause with the fixes that address it.
    pub fn with_fixes<S: Into<String>>(mut self, fixes: impl IntoIterator<Item = S>) -> Self {
        self.fixes = fixes.into_iter().map(Into::into).collect();
        self
    }
}

/// One root failure, tied to a catalog rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: String,
    pub name: String,
    pub op_family: OpFamily,
    pub summary: String,
    #[serde(default)]
    pub severity: Severity,
    /// What the finding rests on: kernel, assertion, source, threads, blocks,
    /// ranks (explain); op, argument, shape, dtype, device, pid (guard); …
    #[serde(default)]
    pub evidence: Map<String, Value>,
    /// Innermost frame of the user's code that called the op, when known reliably.
    pub location: Option<SourceLocation>,
    /// Where Python reported the error, when that differs from `location`.
    pub noticed_at: Option<SourceLocation>,
    /// Distinct offending values (at most a few dozen).
    #[serde(default)]
    pub values: Vec<Scalar>,
    /// How often each of `values` occurs, when counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub value_counts: Vec<u64>,
    /// All offending values, when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The smallest and largest offending values, when known: `values` is a
    /// sample and need not hold them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_min: Option<Scalar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_max: Option<Scalar>,
    pub bound: Option<Bound>,
    /// First places found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<DataLocation>,
    #[serde(default)]
    pub causes: Vec<Cause>,
    /// Next steps: the causes' fixes in the causes' order, then the rule's
    /// general ones, each once ([`crate::advice::settle`] derives them).
    #[serde(default)]
    pub fixes: Vec<String>,
    /// The program caught the guard's exception (`devassert run`: the child
    /// exited 0, or its process recorded at exit that this raise was not
    /// uncaught); such a finding did not end the run.
    #[serde(default, skip_serializing_if = "is_false")]
    pub caught: bool,
    /// The dataset samples the offending rows of a DataLoader batch came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
    /// Whether `samples` is known for sure (false: the batch could not be
    /// tied to its indices with certainty, e.g. a custom collate or sampler).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_certain: Option<bool>,
}

/// One offending row of a DataLoader batch and the dataset index it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The index passed to the dataset's `__getitem__`.
    pub dataset_index: u64,
    /// The row of the batch (its first dim); none when the op ran inside
    /// the dataset's `__getitem__` for this one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    /// The split (or named source) the dataset is, when there are several
    /// (preflight on a DatasetDict: `train`, `validation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
}

impl fmt::Display for Sample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dataset_index)?;
        if let Some(s) = &self.split {
            write!(f, " of {s}")?;
        }
        match self.row {
            Some(r) => write!(f, " (row {r})"),
            None => Ok(()),
        }
    }
}

impl Finding {
    /// The severity to show: a finding the program caught did not end the
    /// run, so it is shown as a note whatever the op's failure would be.
    pub fn shown_severity(&self) -> Severity {
        if self.caught {
            Severity::Note
        } else {
            self.severity
        }
    }

    /// A finding with its rule's identity and nothing else.
    pub fn new(rule: &str, name: &str, op_family: OpFamily, summary: &str) -> Finding {
        Finding {
            rule: rule.to_string(),
            name: name.to_string(),
            op_family,
            summary: summary.to_string(),
            severity: Severity::Error,
            evidence: Map::new(),
            location: None,
            noticed_at: None,
            values: Vec::new(),
            value_counts: Vec::new(),
            count: None,
            value_min: None,
            value_max: None,
            bound: None,
            locations: Vec::new(),
            causes: Vec::new(),
            fixes: Vec::new(),
            caught: false,
            samples: Vec::new(),
            samples_certain: None,
        }
    }
}

/// An error caused by an earlier finding; never a root cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fallout {
    /// `cublas`, `cudnn`, `nccl_timeout`, `repeated_error`, `later_assert`, `abort`, …
    pub kind: String,
    pub message: String,
    pub count: u64,
    /// The first ranks (at most 256), lowest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<i64>,
    /// How many ranks in all, when `ranks` does not list them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_total: Option<u64>,
    /// The highest rank, when `ranks` does not list them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_max: Option<i64>,
    /// Lines that named a rank past what devassert counts (scattered ranks
    /// past its memory bound for ranks), when any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_uncounted: Option<u64>,
    /// `ranks_total` is a lower bound: lines named ranks that were not
    /// counted (`ranks_uncounted`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ranks_total_at_least: bool,
    /// 1-based line in the (first) input where it first appeared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// What a command produced. After the contract's common fields come the
/// sections of the command that made it (see [`crate::sections`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub command: Command,
    pub exit_code: i32,
    pub findings: Vec<Finding>,
    pub fallout: Vec<Fallout>,
    /// `run`: the child, the guard level, the log file.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSection>,
    /// `check --data`: the data scans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataScans>,
    /// `scan`: the arrays scanned, the unreadable files, the totals.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanSection>,
    /// `explain`: the inputs read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<InputSummary>>,
    /// `check`: what was read from the model directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSummary>,
    /// `explain`: what it was given but left out, in part or whole (a
    /// folder's entry it cannot read, a folder walk that reached its bound).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedInput>,
}

/// The exit code of the contract, the same for every command (the linters'
/// convention): 2 when an input could not be used (the result is incomplete,
/// so it is never a clean one), else 1 when a finding above a note is
/// reported, else 0. A finding the program caught is a note (see
/// [`Finding::shown_severity`]).
pub fn exit_code(findings: &[Finding], input_unusable: bool) -> i32 {
    if input_unusable {
        2
    } else if findings.iter().any(|f| f.shown_severity() > Severity::Note) {
        1
    } else {
        0
    }
}

impl Report {
    pub fn new(command: Command) -> Self {
        Report {
            schema: SCHEMA.to_string(),
            command,
            exit_code: 0,
            findings: Vec::new(),
            fallout: Vec::new(),
            run: None,
            data: None,
            scan: None,
            inputs: None,
            model: None,
            skipped: Vec::new(),
        }
    }
}
