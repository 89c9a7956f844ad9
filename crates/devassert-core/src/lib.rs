//! devassert-core: the findings model, the rule catalog and the renderers
//! shared by every devassert command.

pub mod advice;
pub mod catalog;
pub mod contain;
pub mod docs;
pub mod facts;
pub mod finding;
pub mod inside;
pub mod lazy_regex;
pub mod place;
pub mod python_rules;
pub mod regular;
pub mod render;
pub mod rule_id;
pub mod sections;
pub mod source;
pub mod vocab;
pub mod vocabulary;

pub use catalog::{Catalog, CompiledRule, DeviceAssert, LogHits, Ranked, Rule};
pub use finding::{exit_code, Cause, Fallout, Finding, Report, Sample, SCHEMA};
pub use place::{Bound, DataLocation, Scalar, SourceLocation};
pub use render::{render, Format, RenderOptions};
pub use rule_id::{ids, RuleId, UnknownRule};
pub use sections::{
    Child, Command, DataScans, FileError, FileSummary, InputSummary, ModelSummary, RunSection,
    ScanBound, ScanRun, ScanSection, SkippedInput, SourcedValue, TensorRole, TokenizerSummary,
    WeightsSummary,
};
pub use vocabulary::{OpFamily, Severity, CAUSE_IDS};
