//! What [`super::decide`] answers, and the kind of values it decides for: a
//! leaf, so that `blend` can take a decision without depending on the
//! engine that makes it.

use crate::finding::Cause;

/// What the values index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ids,
    Labels,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Ids => "ids",
            Kind::Labels => "labels",
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
}
