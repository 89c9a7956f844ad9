//! devassert-core: the findings model, the rule catalog and the renderers
//! shared by every devassert command.

pub mod catalog;
pub mod contain;
pub mod docs;
pub mod finding;
pub mod lazy_regex;
pub mod render;
pub mod source;

pub use catalog::{Catalog, CompiledRule, DeviceAssert, LogHits, Ranked, Rule};
pub use finding::{
    Bound, Cause, DataLocation, Fallout, Finding, OpFamily, Report, Scalar, Severity,
    SourceLocation, CAUSE_IDS, SCHEMA,
};
pub use render::{render, Format, RenderOptions};
