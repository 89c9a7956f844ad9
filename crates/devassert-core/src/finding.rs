//! The one result type every command produces: a [`Finding`] tied to a rule of
//! the catalog, and the [`Report`] that carries findings and their fallout.
//! The serde shape of these types *is* the `devassert/1` JSON contract.

use crate::sections::{Command, DataScans, InputSummary, ModelSummary, RunSection, ScanSection};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

pub const SCHEMA: &str = "devassert/1";

/// The op families of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpFamily {
    IndexSelect,
    EmbeddingBag,
    NllLoss,
    #[serde(rename = "nll_loss2d")]
    NllLoss2d,
    GatherScatter,
    Index,
    Bce,
    Multinomial,
    CtcLoss,
    OneHot,
    Bincount,
    Inductor,
    CustomKernel,
    Unknown,
}

impl OpFamily {
    pub fn as_str(self) -> &'static str {
        match self {
            OpFamily::IndexSelect => "index_select",
            OpFamily::EmbeddingBag => "embedding_bag",
            OpFamily::NllLoss => "nll_loss",
            OpFamily::NllLoss2d => "nll_loss2d",
            OpFamily::GatherScatter => "gather_scatter",
            OpFamily::Index => "index",
            OpFamily::Bce => "bce",
            OpFamily::Multinomial => "multinomial",
            OpFamily::CtcLoss => "ctc_loss",
            OpFamily::OneHot => "one_hot",
            OpFamily::Bincount => "bincount",
            OpFamily::Inductor => "inductor",
            OpFamily::CustomKernel => "custom_kernel",
            OpFamily::Unknown => "unknown",
        }
    }
}

impl fmt::Display for OpFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The cause ids of the contract, best known first.
pub const CAUSE_IDS: &[&str] = &[
    "token_id_ge_vocab",
    "added_tokens_no_resize",
    "seq_len_gt_max_positions",
    "type_vocab_size",
    "pad_token_id_out_of_range",
    "negative_index",
    "label_ge_num_classes",
    "ignore_label_not_ignored",
    "negative_label",
    "bce_on_logits",
    "bce_target_range",
    "nan_in_input",
    "nan_inf_probs",
    "index_ge_dim_size",
    "index_overflow",
    "unknown",
];

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    #[default]
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A value as the contract writes it: an integer, a float, or one of the
/// strings `"nan"`, `"inf"`, `"-inf"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) if x.is_nan() => f.write_str("nan"),
            Scalar::Float(x) if x == f64::INFINITY => f.write_str("inf"),
            Scalar::Float(x) if x == f64::NEG_INFINITY => f.write_str("-inf"),
            Scalar::Float(x) => write!(f, "{x}"),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::Int(i) => s.serialize_i64(i),
            Scalar::Float(x) if x.is_finite() => s.serialize_f64(x),
            Scalar::Float(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Scalar::Int(i))
                } else {
                    n.as_f64()
                        .map(Scalar::Float)
                        .ok_or_else(|| D::Error::custom("number out of range"))
                }
            }
            Value::String(s) => match s.as_str() {
                "nan" => Ok(Scalar::Float(f64::NAN)),
                "inf" => Ok(Scalar::Float(f64::INFINITY)),
                "-inf" => Ok(Scalar::Float(f64::NEG_INFINITY)),
                other => Err(D::Error::custom(format!(
                    "expected a number, \"nan\", \"inf\" or \"-inf\", got {other:?}"
                ))),
            },
            other => Err(D::Error::custom(format!("expected a number, got {other}"))),
        }
    }
}

/// The valid range: `[low, high)` for indices (`high_inclusive` false), `[low, high]`
/// for probabilities.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub low: Option<Scalar>,
    pub high: Option<Scalar>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub high_inclusive: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Bound {
    pub fn index(low: i64, high: i64) -> Self {
        Bound {
            low: Some(Scalar::Int(low)),
            high: Some(Scalar::Int(high)),
            high_inclusive: false,
        }
    }
    pub fn closed(low: f64, high: f64) -> Self {
        Bound {
            low: Some(Scalar::Float(low)),
            high: Some(Scalar::Float(high)),
            high_inclusive: true,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let low = self
            .low
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-inf".into());
        let high = self
            .high
            .map(|v| v.to_string())
            .unwrap_or_else(|| "inf".into());
        let close = if self.high_inclusive { ']' } else { ')' };
        write!(f, "[{low}, {high}{close}")
    }
}

/// A place in Python source code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    pub file: String,
    pub line: u64,
    pub function: Option<String>,
    /// The source line as the traceback showed it, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl SourceLocation {
    /// The notebook cell this place is in, as IPython names it (`Cell
    /// In[12]`; explain and the guard in a notebook both name cells so):
    /// a place in the notebook, not a file.
    pub fn cell(&self) -> Option<&str> {
        let count = self.file.strip_prefix("Cell In[")?.strip_suffix(']')?;
        (!count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()))
            .then_some(self.file.as_str())
    }

    /// The file that holds this place's source, if any: never a cell's name,
    /// which no file on this machine stands for.
    pub fn source_file(&self) -> Option<&str> {
        self.cell().is_none().then_some(self.file.as_str())
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cell() {
            // IPython's own words for a cell's line (`%devassert explain` says the same).
            Some(cell) => {
                write!(f, "{cell}, line {}", self.line)?;
                if let Some(func) = self.function.as_deref().filter(|x| *x != "<module>") {
                    write!(f, " in {func}")?;
                }
            }
            None => {
                write!(f, "{}:{}", self.file, self.line)?;
                if let Some(func) = &self.function {
                    write!(f, " in {func}")?;
                }
            }
        }
        Ok(())
    }
}

/// A place in a data file (scan) or a tensor (guard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DataLocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Flat element index.
    pub index: u64,
    /// The document holding it (Megatron datasets, whose `row` is the
    /// sequence and `offset` the token in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Scalar>,
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The index passed to the dataset's `__getitem__`.
    pub dataset_index: u64,
    /// The row of the batch (its first dim); none when the op ran inside
    /// the dataset's `__getitem__` for this one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
}

impl fmt::Display for Sample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.row {
            Some(r) => write!(f, "{} (row {r})", self.dataset_index),
            None => write!(f, "{}", self.dataset_index),
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SourceLocation;

    fn place(file: &str, function: Option<&str>) -> SourceLocation {
        SourceLocation {
            file: file.into(),
            line: 7,
            function: function.map(Into::into),
            code: None,
        }
    }

    #[test]
    fn a_cell_is_shown_as_ipython_names_it_and_is_no_file() {
        let cell = place("Cell In[12]", Some("<module>"));
        assert_eq!(cell.to_string(), "Cell In[12], line 7");
        assert_eq!(cell.source_file(), None);
        let f = place("Cell In[3]", Some("Net.forward"));
        assert_eq!(f.to_string(), "Cell In[3], line 7 in Net.forward");
        let script = place("train.py", Some("<module>"));
        assert_eq!(script.to_string(), "train.py:7 in <module>");
        assert_eq!(script.source_file(), Some("train.py"));
        // Only IPython's exact name is a cell.
        for file in [
            "Cell In[x]",
            "Cell In[12].py",
            "dir/Cell In[12]",
            "Cell In[]",
        ] {
            assert_eq!(place(file, None).cell(), None, "{file}");
        }
    }
}
