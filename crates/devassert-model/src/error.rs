//! What can go wrong while reading a model directory. Every variant names the
//! file, so the CLI's one error line tells the user what to look at.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: no such file or directory", .0.display())]
    Missing(PathBuf),
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{}: no config.json, tokenizer or safetensors weights found: not a Hugging Face model directory", .0.display())]
    NothingToCheck(PathBuf),
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
    #[error("{}: not a valid safetensors file: {message}", path.display())]
    Safetensors { path: PathBuf, message: String },
    #[error("{}: the tokenizers library cannot load it: {message}", path.display())]
    Tokenizer { path: PathBuf, message: String },
    #[error("{}: no embedding size known (no config vocab_size, no embedding tensor): cannot bound --data", .0.display())]
    NoEmbeddingSize(PathBuf),
    #[error("{}: --labels-column given but the model has no classification head or num_labels", .0.display())]
    NoClasses(PathBuf),
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ModelError::Io {
            path: path.into(),
            source,
        }
    }
    pub(crate) fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        ModelError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Read and parse a JSON file, naming it in any error.
pub(crate) fn read_json(path: &std::path::Path) -> Result<serde_json::Value, ModelError> {
    let bytes = std::fs::read(path).map_err(|e| ModelError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|source| ModelError::Json {
        path: path.to_path_buf(),
        source,
    })
}
