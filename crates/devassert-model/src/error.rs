//! What can go wrong while reading a model directory. Every variant names the
//! file, so the CLI's one error line tells the user what to look at.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: no such file or directory", .0.display())]
    Missing(PathBuf),
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{id}: no such file or directory, and not in the local Hugging Face cache (looked in {}; nothing is downloaded: fetch it first, e.g. `{download}`, or set HF_HUB_CACHE / HF_HOME to the cache that holds it)", looked_in.display())]
    NotInCache {
        /// As the user wrote it (`org/name@rev`).
        id: String,
        /// The command of current huggingface_hub that fetches it.
        download: String,
        looked_in: PathBuf,
    },
    #[error("{id}@{rev}: no such revision in the local Hugging Face cache (no refs/{rev} or snapshots/{rev} in {})", repo.display())]
    RevisionNotInCache {
        id: String,
        rev: String,
        repo: PathBuf,
    },
    #[error("{}: a Hugging Face cache holding {} models ({}): say which one, e.g. `{example}`", root.display(), models.len(), listed(models))]
    ChooseModel {
        root: PathBuf,
        models: Vec<String>,
        /// The command that checks the first of them.
        example: String,
    },
    #[error("{}: no config.json, tokenizer or safetensors weights found: not a Hugging Face model directory", .0.display())]
    NothingToCheck(PathBuf),
    #[error("{}: nothing could be read: {}: {why}{}", dir.display(), first.display(), if *more > 0 { format!(" (and {more} more left out)") } else { String::new() })]
    NothingRead {
        dir: PathBuf,
        first: PathBuf,
        why: String,
        more: usize,
    },
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: invalid JSON", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// More than the command's memory budget has left: the file is left
    /// out, the others still read ([`crate::budget::Reading`]).
    #[error("{}: {message}", path.display())]
    OverBudget { path: PathBuf, message: String },
    #[error("{}: not a valid safetensors file: {message}", path.display())]
    Safetensors { path: PathBuf, message: String },
    #[error("{}: the tokenizers library cannot load it: {message}", path.display())]
    Tokenizer { path: PathBuf, message: String },
    #[error("{}: no embedding size known (no config vocab_size, no embedding tensor): cannot bound --data", .0.display())]
    NoEmbeddingSize(PathBuf),
    #[error("{}: --labels-column given but the model has no classification head or num_labels", .0.display())]
    NoClasses(PathBuf),
}

/// The first models of a cache, for an error line.
fn listed(models: &[String]) -> String {
    const SHOWN: usize = 12;
    let mut s = models
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if models.len() > SHOWN {
        s.push_str(&format!(", … {} more", models.len() - SHOWN));
    }
    s
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ModelError::Io {
            path: path.into(),
            source,
        }
    }
    pub(crate) fn over_budget(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        ModelError::OverBudget {
            path: path.into(),
            message: message.into(),
        }
    }
    pub(crate) fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        ModelError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}
