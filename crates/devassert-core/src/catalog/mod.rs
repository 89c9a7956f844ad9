//! The rule catalog: one TOML file per rule under `catalog/`, embedded at
//! build time, validated and compiled once. It answers three questions:
//! which rule owns a device assertion line, which rule a host-side error text
//! belongs to, and how the rule's causes rank given the evidence seen.
//!
//! By job: [`schema`] is the files as written, `load` checks and compiles
//! them into the types of `compiled`, `matching` owns lines to rules and
//! ranks causes, [`fallback`] names the rules it falls back to, `files`
//! holds the embedded files, `patterns` the patterns they share by name;
//! this module only declares and re-exports them.
//! Turning printed log text into the normalised form matched here is the
//! log reader's job (`devassert-log`'s `normalize`).

#[cfg(test)]
mod ascii_same;
mod compiled;
pub mod fallback;
mod files;
mod load;
mod matching;
pub(crate) mod patterns;
pub mod schema;

pub use compiled::{Catalog, CompiledRule};
pub(crate) use files::{FACT_CAUSES_FILE, FACT_CAUSES_FILE_JSON};
pub use matching::{
    is_inductor_file, is_pytorch_file, push_fix, DeviceAssert, LogHits, Ranked, PYTORCH_ROOTS,
};
pub use schema::{AssertPattern, CatalogError, CauseSpec, Doc, EvidenceSpec, Rule};
