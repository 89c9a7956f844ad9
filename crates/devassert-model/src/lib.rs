//! devassert-model: reads a Hugging Face model directory (config, tokenizer,
//! safetensors headers) and finds the mismatches between them that become
//! device-side asserts at run time: token ids past the embedding table,
//! special ids out of range, sequences longer than the position table,
//! token type ids past `type_vocab_size`, labels past the classifier head.
//!
//! Reading ([`ModelDir::read`]) and deciding ([`checks::check`]) are
//! separate; [`summary`] turns what was read into the report's `model`
//! section, [`data`] scans `--data` against the model's bounds; rendering is
//! devassert-core's.

pub mod budget;
pub mod checks;
pub mod config;
pub mod data;
mod decided;
pub mod error;
pub mod hub;
mod json;
pub mod model_dir;
pub mod safetensors;
pub mod shapes;
pub mod summary;
pub mod tokenizer;
mod tokenizer_base;
pub mod tokenizer_json;

pub use budget::{Budget, LeftOut, Reading};
pub use checks::check;
pub use config::{Field, ModelConfig, Positions};
pub use data::{check_data, DataCheck, DataOptions};
pub use error::ModelError;
pub use model_dir::{ModelDir, Sourced, MODEL_FILES};
pub use safetensors::{TensorInfo, Weights};
pub use shapes::{Found, Located, Roles};
pub use summary::summary;
pub use tokenizer::{TokenizerInfo, VocabSource};
