//! A model directory as read: its files, each parsed once, with where each
//! value came from; the links it holds checked before a text file is read.

use crate::budget::{LeftOut, Reading};
use crate::config::{ModelConfig, Positions};
use crate::error::ModelError;
use crate::safetensors::Weights;
use crate::shapes::Roles;
use crate::{hub, safetensors, shapes, tokenizer};
use devassert_core::inside::Inside;
use std::path::{Path, PathBuf};

/// The files of a model directory that `check` reads.
pub const MODEL_FILES: &[&str] = &[
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "vocab.json",
    "vocab.txt",
];

/// The text files `check` reads and may quote: one that is a symlink must
/// lead inside the model folder (see [`Inside`]), or it is an error naming
/// it, never read. Safetensors weights may be linked from elsewhere (sharing
/// one copy between model folders is common): only their binary header is
/// parsed, and text in it that is not a valid header is never printed.
const TEXT_FILES: &[&str] = &[
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "model.safetensors.index.json",
];

fn check_links(dir: &Path) -> Result<(), ModelError> {
    let inside = Inside::new(dir).map_err(|e| ModelError::io(dir, e))?;
    for name in TEXT_FILES {
        let p = dir.join(name);
        if p.symlink_metadata().is_ok() {
            inside
                .check(&p)
                .map_err(|why| ModelError::invalid(&p, why))?;
        }
    }
    Ok(())
}

/// Weight files this crate does not read (pickles, TF, Flax): named in the
/// summary so a missing shape check is not a silent one.
const UNREAD_WEIGHTS: &[&str] = &[
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
    "tf_model.h5",
    "flax_model.msgpack",
    "model.ckpt.index",
];

/// Model types whose learned position table holds 2 rows more than
/// `max_position_embeddings` (an offset of 2 that positions never use).
const OFFSET_TWO_TYPES: &[&str] = &["opt", "bart", "mbart", "plbart"];

/// Everything read from one model directory.
#[derive(Debug, Clone)]
pub struct ModelDir {
    pub path: PathBuf,
    pub config: Option<ModelConfig>,
    pub tokenizer: Option<tokenizer::TokenizerInfo>,
    pub weights: Option<Weights>,
    pub roles: Roles,
    /// Weight files present but not read.
    pub unread_weights: Vec<String>,
    /// Files `check` would read that were left out: not regular files, or
    /// past the memory budget ([`Reading`]). The rest was read.
    pub left_out: Vec<LeftOut>,
}

/// A number with where it came from, for evidence and the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    pub value: u64,
    pub from: String,
}

impl ModelDir {
    /// Read the model `arg` names: a folder, a Hub id or a Hugging Face
    /// cache, resolved in the local cache only ([`hub::resolve`]). Missing
    /// files are fine (each check needs only its own); a file that is there
    /// but broken is an error naming it; one that is not a regular file or
    /// that the one memory budget of all the files cannot take is left out
    /// ([`ModelDir::left_out`]) and the others are read.
    pub fn read(arg: &Path) -> Result<ModelDir, ModelError> {
        Self::read_within(arg, Reading::default())
    }

    /// [`ModelDir::read`] within the budget of `reading`.
    pub fn read_within(arg: &Path, reading: Reading) -> Result<ModelDir, ModelError> {
        let dir = &hub::resolve(arg)?;
        check_links(dir)?;
        let config_path = dir.join("config.json");
        let config = if reading.present(&config_path) {
            reading.or_left_out(ModelConfig::read(&config_path, &reading.budget))?
        } else {
            None
        };
        let tokenizer = tokenizer::read_tokenizer(dir, &reading)?;
        let weights = safetensors::read_weights(dir, &reading)?;
        let unread_weights: Vec<String> = UNREAD_WEIGHTS
            .iter()
            .filter(|f| dir.join(f).is_file())
            .map(|f| f.to_string())
            .collect();
        let left_out = reading.into_left_out();
        if config.is_none() && tokenizer.is_none() && weights.is_none() {
            return Err(match left_out.first() {
                Some(first) => ModelError::NothingRead {
                    dir: dir.to_path_buf(),
                    first: first.path.clone(),
                    why: first.why.clone(),
                    more: left_out.len() - 1,
                },
                None => ModelError::NothingToCheck(dir.to_path_buf()),
            });
        }
        let vocab_hint = config
            .as_ref()
            .and_then(|c| c.vocab_size.as_ref())
            .map(|f| f.value.max(0) as u64)
            .or(tokenizer.as_ref().map(|t| t.size));
        let roles = weights
            .as_ref()
            .map(|w| shapes::locate(w, vocab_hint))
            .unwrap_or_default();
        Ok(ModelDir {
            path: dir.to_path_buf(),
            config,
            tokenizer,
            weights,
            roles,
            unread_weights,
            left_out,
        })
    }

    fn model_type(&self) -> &str {
        self.config
            .as_ref()
            .and_then(|c| c.model_type.as_deref())
            .unwrap_or("")
    }

    /// Rows of the input embedding table: the real tensor when the weights
    /// say, else what the config builds.
    pub fn embedding_rows(&self) -> Option<Sourced> {
        if let Some(l) = &self.roles.input_embeddings {
            return Some(Sourced {
                value: l.rows(),
                from: format!("{} {}", l.tensor.file, l.tensor.name),
            });
        }
        let f = self.config.as_ref()?.vocab_size.as_ref()?;
        Some(Sourced {
            value: f.value.max(0) as u64,
            from: format!("config.json {}", f.name),
        })
    }

    /// Whether position ids index a table (and so can run past it).
    pub fn has_position_table(&self) -> bool {
        self.roles.positions.is_some()
            || self
                .config
                .as_ref()
                .is_some_and(|c| c.positions() == Positions::Table)
    }

    /// The longest sequence the position table takes: the smaller of what the
    /// config builds and what the weights hold, less the rows position ids
    /// never reach (RoBERTa's `padding_idx + 1`, BART/OPT's 2).
    pub fn usable_positions(&self) -> Option<Sourced> {
        if !self.has_position_table() {
            return None;
        }
        let offset = self.config.as_ref().map_or(0, |c| c.position_offset());
        let mut best: Option<Sourced> = None;
        if let Some(f) = self.config.as_ref().and_then(|c| c.max_positions.as_ref()) {
            // BART/OPT configs already count usable positions.
            let usable = f.value - offset;
            let from = if offset > 0 {
                format!(
                    "config.json {} {} - {offset} (padding_idx + 1)",
                    f.name, f.value
                )
            } else {
                format!("config.json {}", f.name)
            };
            best = Some(Sourced {
                value: usable.max(0) as u64,
                from,
            });
        }
        if let Some(l) = &self.roles.positions {
            let tensor_offset = if OFFSET_TWO_TYPES.contains(&self.model_type()) {
                2
            } else {
                offset as u64
            };
            let usable = l.rows().saturating_sub(tensor_offset);
            if best.as_ref().is_none_or(|b| usable < b.value) {
                let from = if tensor_offset > 0 {
                    format!(
                        "{} {} rows {} - {tensor_offset}",
                        l.tensor.file,
                        l.tensor.name,
                        l.rows()
                    )
                } else {
                    format!("{} {}", l.tensor.file, l.tensor.name)
                };
                best = Some(Sourced {
                    value: usable,
                    from,
                });
            }
        }
        best
    }

    /// Rows of the token type table, when the model has one.
    pub fn type_vocab(&self) -> Option<Sourced> {
        if let Some(l) = &self.roles.token_types {
            return Some(Sourced {
                value: l.rows(),
                from: format!("{} {}", l.tensor.file, l.tensor.name),
            });
        }
        if self.weights.is_some() {
            // The weights are read and hold no token type table: nothing to index.
            return None;
        }
        let f = self.config.as_ref()?.type_vocab_size.as_ref()?;
        Some(Sourced {
            value: f.value.max(0) as u64,
            from: format!("config.json {}", f.name),
        })
    }

    /// Classes of the classification head, when the model has one.
    pub fn num_classes(&self) -> Option<Sourced> {
        if let Some(l) = &self.roles.classifier {
            return Some(Sourced {
                value: l.rows(),
                from: format!("{} {}", l.tensor.file, l.tensor.name),
            });
        }
        let c = self.config.as_ref()?;
        let is_classifier = c.architectures.iter().any(|a| {
            a.ends_with("ForSequenceClassification") || a.ends_with("ForTokenClassification")
        });
        if self.weights.is_some() || !is_classifier {
            return None;
        }
        let f = c.num_labels.as_ref()?;
        Some(Sourced {
            value: f.value.max(0) as u64,
            from: format!("config.json {}", f.name),
        })
    }
}
