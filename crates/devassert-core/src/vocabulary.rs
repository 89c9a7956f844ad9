//! The contract's closed vocabularies: the op families, the cause ids and
//! the severities a finding may carry.

use serde::{Deserialize, Serialize};
use std::fmt;

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
    "off_by_one",
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
