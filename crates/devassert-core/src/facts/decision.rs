//! What [`super::decide`] answers, and the kind of values it decides for: a
//! leaf, so that `blend` can take a decision without depending on the
//! engine that makes it.

use crate::finding::Cause;

/// What the values index: token ids into a table, class labels of a
/// loss, or the indices of an indexing op into any dimension (`x[idx]`,
/// gather / scatter, index_add, take …), whose meaning the op alone does
/// not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Ids,
    Labels,
    Index,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Ids => "ids",
            Kind::Labels => "labels",
            Kind::Index => "index",
        }
    }
}

/// The causes the facts allow, best first, and the ones they refute.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    pub causes: Vec<Cause>,
    /// The measured facts behind each cause, in the causes' order (empty:
    /// ranked by its prior).
    pub support: Vec<Vec<String>>,
    /// `cause_id: the fact that refutes it`.
    pub ruled_out: Vec<String>,
    /// What the supports added to each cause's prior, in the causes' order.
    pub gain: Vec<f64>,
    /// Causes whose `fits` the facts make false for every definition: they
    /// fit none of the values. Where all the bad values were measured
    /// they are simply not causes; where a log states only some of them
    /// (explain) they may fit others, so they stay, without a fix.
    pub unfit: Vec<String>,
    /// Kept causes whose every fix, applied to the facts by its `check`,
    /// fails and none is left to show: a general fix of the same cause
    /// (a rule's) says the same unchecked, and must not be shown either.
    pub fixes_refuted: Vec<String>,
}
