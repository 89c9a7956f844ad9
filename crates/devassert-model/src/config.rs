//! `config.json`, model-type aware: each architecture spells its vocabulary,
//! position and label fields its own way, and multimodal models nest the
//! language model's fields under `text_config`.

use crate::budget::Budget;
use crate::error::ModelError;
use crate::json::{self, Take};
use serde_json::{Map, Value};
use std::path::Path;

/// A field value with the name it was read from (`n_positions`, `text_config.vocab_size`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub value: i64,
}

/// How a model turns position ids into embeddings, which decides whether a
/// long sequence indexes past a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positions {
    /// A learned (or sinusoidal) table indexed by position: too-long inputs assert.
    Table,
    /// Rotary, ALiBi or relative buckets: no table to run past.
    NoTable,
    /// Not known from the config alone.
    Unknown,
}

#[derive(Debug, Clone, Default)]
pub struct ModelConfig {
    pub model_type: Option<String>,
    pub architectures: Vec<String>,
    pub vocab_size: Option<Field>,
    pub max_positions: Option<Field>,
    pub type_vocab_size: Option<Field>,
    /// `pad_token_id`, `bos_token_id`, `eos_token_id` (each of a list),
    /// `decoder_start_token_id`, with their field names.
    pub special_ids: Vec<Field>,
    /// `len(id2label)` or `num_labels`, with the field it came from.
    pub num_labels: Option<Field>,
    pub position_embedding_type: Option<String>,
    pub tie_word_embeddings: bool,
}

/// RoBERTa-style models offset position ids by `padding_idx + 1`.
const PADDING_OFFSET_TYPES: &[&str] = &[
    "roberta",
    "xlm-roberta",
    "camembert",
    "data2vec-text",
    "xmod",
    "longformer",
    "roberta-prelayernorm",
    "mpnet",
    "ibert",
    "luke",
    "markuplm",
    "esm",
];
/// BART-style learned position embeddings hold `max_position_embeddings + 2` rows, so all are usable.
const TABLE_TYPES: &[&str] = &[
    "bert",
    "distilbert",
    "electra",
    "albert",
    "gpt2",
    "gpt_neo",
    "opt",
    "bart",
    "mbart",
    "blenderbot",
    "blenderbot-small",
    "marian",
    "pegasus",
    "biogpt",
    "xglm",
    "ernie",
    "layoutlm",
    "big_bird",
    "megatron-bert",
    "mobilebert",
    "squeezebert",
    "funnel",
    "deberta",
    "deberta-v2",
    "nezha",
    "rembert",
    "roformer",
    "splinter",
    "canine",
    "whisper",
    "gpt_bigcode",
    "codegen",
    "imagegpt",
    "xlm",
    "flaubert",
    "lilt",
    "tapas",
];
const NO_TABLE_TYPES: &[&str] = &[
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "phi",
    "phi3",
    "falcon",
    "gpt_neox",
    "gptj",
    "stablelm",
    "starcoder2",
    "olmo",
    "olmo2",
    "cohere",
    "t5",
    "mt5",
    "umt5",
    "longt5",
    "bloom",
    "mpt",
    "deepseek_v2",
    "deepseek_v3",
    "granite",
    "internlm2",
    "persimmon",
    "mamba",
    "rwkv",
    "jamba",
    "ernie4_5",
    "glm",
    "glm4",
    "smollm3",
];

impl ModelConfig {
    pub fn read(path: &Path, budget: &Budget) -> Result<ModelConfig, ModelError> {
        // The label maps are only counted: a config of a million classes
        // is not held in memory.
        let take = |k: &str| match k {
            "id2label" | "label2id" => Take::Count,
            _ => Take::Keep,
        };
        let read = json::read_object(path, &take, budget)?;
        let labels = read
            .counts
            .iter()
            .find(|(k, _)| k == "id2label")
            .map(|&(_, n)| n as i64);
        Self::from_parts(&read.map, labels).map_err(|message| ModelError::invalid(path, message))
    }

    /// The fields devassert checks, from a config held whole.
    pub fn from_map(root: &Map<String, Value>) -> Result<ModelConfig, String> {
        let labels = root
            .get("id2label")
            .and_then(Value::as_object)
            .map(|m| m.len() as i64);
        Self::from_parts(root, labels)
    }

    /// The fields devassert checks, `id2label` given by its size; an
    /// impossible value of one of them (a negative or fractional size, a
    /// number written as a string) is an error naming the key rather than a
    /// field silently skipped.
    fn from_parts(root: &Map<String, Value>, id2label: Option<i64>) -> Result<ModelConfig, String> {
        // Multimodal configs keep the language model under `text_config`;
        // its fields win when the top level lacks them.
        let text = root.get("text_config").and_then(Value::as_object);
        let field = |key: &str, size: bool| -> Result<Option<Field>, String> {
            let found = match (root.get(key), text.and_then(|t| t.get(key))) {
                (Some(v), _) if !v.is_null() => Some((key.to_string(), v)),
                (_, Some(v)) if !v.is_null() => Some((format!("text_config.{key}"), v)),
                _ => None,
            };
            let Some((name, v)) = found else {
                return Ok(None);
            };
            let value = checked_int(&name, v, size)?;
            Ok(Some(Field { name, value }))
        };
        let int = |key: &str| field(key, true);
        let model_type = root
            .get("model_type")
            .and_then(Value::as_str)
            .map(str::to_string);
        let architectures = root
            .get("architectures")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let mut max_positions = None;
        for key in [
            "max_position_embeddings",
            "n_positions",
            "max_seq_len",
            "seq_length",
            "max_sequence_length",
            "n_ctx",
        ] {
            // Every spelling present is checked; the first one is used.
            let f = int(key)?;
            max_positions = max_positions.or(f);
        }
        let mut special_ids = Vec::new();
        for key in [
            "pad_token_id",
            "bos_token_id",
            "eos_token_id",
            "decoder_start_token_id",
            "sep_token_id",
        ] {
            let (name, v) = match (root.get(key), text.and_then(|t| t.get(key))) {
                (Some(v), _) if !v.is_null() => (key.to_string(), v),
                (_, Some(v)) => (format!("text_config.{key}"), v),
                _ => continue,
            };
            // Ids may be negative (-1 for "none"); they are still numbers.
            let list = match v {
                Value::Array(list) => list.as_slice(),
                v => std::slice::from_ref(v),
            };
            for v in list.iter().filter(|v| !v.is_null()) {
                special_ids.push(Field {
                    value: checked_int(&name, v, false)?,
                    name: name.clone(),
                });
            }
        }
        let num_labels = match id2label {
            Some(n) => Some(Field {
                name: "id2label".into(),
                value: n,
            }),
            None => int("num_labels")?,
        };
        let tie = root
            .get("tie_word_embeddings")
            .or_else(|| text.and_then(|t| t.get("tie_word_embeddings")))
            .and_then(Value::as_bool)
            .unwrap_or(true);
        Ok(ModelConfig {
            model_type,
            architectures,
            vocab_size: int("vocab_size")?,
            max_positions,
            type_vocab_size: int("type_vocab_size")?,
            special_ids,
            num_labels,
            position_embedding_type: root
                .get("position_embedding_type")
                .and_then(Value::as_str)
                .map(str::to_string),
            tie_word_embeddings: tie,
        })
    }

    fn model_type(&self) -> &str {
        self.model_type.as_deref().unwrap_or("")
    }

    /// Rows of the position table that position ids never reach (RoBERTa's
    /// `padding_idx + 1`).
    pub fn position_offset(&self) -> i64 {
        if PADDING_OFFSET_TYPES.contains(&self.model_type()) {
            let pad = self
                .special_ids
                .iter()
                .find(|f| f.name.ends_with("pad_token_id"))
                .map_or(1, |f| f.value);
            pad.max(0) + 1
        } else {
            0
        }
    }

    pub fn positions(&self) -> Positions {
        let t = self.model_type();
        if matches!(
            self.position_embedding_type.as_deref(),
            Some("relative_key" | "relative_key_query" | "rotary")
        ) {
            return Positions::NoTable;
        }
        if TABLE_TYPES.contains(&t) || PADDING_OFFSET_TYPES.contains(&t) {
            Positions::Table
        } else if NO_TABLE_TYPES.contains(&t) {
            Positions::NoTable
        } else {
            Positions::Unknown
        }
    }
}

/// The integer `name` holds; floats that are whole numbers count (some tools
/// write `512.0`). A size must not be negative. Anything else (a string, a
/// fraction, a number beyond i64) is an error saying what the key holds.
fn checked_int(name: &str, v: &Value, size: bool) -> Result<i64, String> {
    let shown = || devassert_core::render::inert::bounded(&v.to_string(), 80).into_owned();
    let n = match v {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i,
            (None, Some(f)) if f.fract() != 0.0 => {
                return Err(format!("{name} is {}: not a whole number", shown()))
            }
            (None, Some(f)) if f.abs() < 9e15 => f as i64,
            _ => return Err(format!("{name} is {}: too large", shown())),
        },
        Value::String(_) => {
            return Err(format!(
                "{name} is the string {}: write it as a number, without quotes",
                shown()
            ))
        }
        _ => return Err(format!("{name} is {}: not a number", shown())),
    };
    if size && n < 0 {
        return Err(format!("{name} is {n}: a size cannot be negative"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(v: Value) -> ModelConfig {
        ModelConfig::from_map(v.as_object().unwrap()).unwrap()
    }

    #[test]
    fn a_file_s_label_map_is_counted_not_held() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.json");
        let labels: Vec<String> = (0..1000).map(|i| format!("\"{i}\":\"L{i}\"")).collect();
        let text = format!(
            "{{\"model_type\":\"bert\",\"id2label\":{{{}}},\"label2id\":{{}},\"num_labels\":3}}",
            labels.join(",")
        );
        std::fs::write(&p, text).unwrap();
        let c = ModelConfig::read(&p, &Budget::new(1 << 20)).unwrap();
        let n = c.num_labels.unwrap();
        assert_eq!((n.name.as_str(), n.value), ("id2label", 1000));
    }

    #[test]
    fn reads_gpt2_names() {
        let c = cfg(
            json!({"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024, "bos_token_id": 50256, "eos_token_id": 50256}),
        );
        assert_eq!(
            c.max_positions,
            Some(Field {
                name: "n_positions".into(),
                value: 1024
            })
        );
        assert_eq!(c.special_ids.len(), 2);
        assert_eq!(c.positions(), Positions::Table);
    }

    #[test]
    fn eos_lists_and_text_config() {
        let c = cfg(
            json!({"model_type": "llava", "text_config": {"vocab_size": 32064, "eos_token_id": [1, 32007], "max_position_embeddings": 4096}}),
        );
        assert_eq!(c.vocab_size.unwrap().name, "text_config.vocab_size");
        assert_eq!(
            c.special_ids.iter().map(|f| f.value).collect::<Vec<_>>(),
            vec![1, 32007]
        );
    }

    #[test]
    fn roberta_offset_comes_from_the_pad_id() {
        let c = cfg(
            json!({"model_type": "roberta", "max_position_embeddings": 514, "pad_token_id": 1}),
        );
        assert_eq!(c.position_offset(), 2);
    }

    #[test]
    fn id2label_wins_over_num_labels() {
        let c = cfg(json!({"num_labels": 2, "id2label": {"0": "a", "1": "b", "2": "c"}}));
        assert_eq!(c.num_labels.unwrap().value, 3);
    }

    #[test]
    fn impossible_values_are_errors_naming_the_key() {
        let err = |v: Value| ModelConfig::from_map(v.as_object().unwrap()).unwrap_err();
        assert_eq!(
            err(json!({"vocab_size": -5})),
            "vocab_size is -5: a size cannot be negative"
        );
        assert_eq!(
            err(json!({"vocab_size": "30522"})),
            "vocab_size is the string \"30522\": write it as a number, without quotes"
        );
        assert_eq!(
            err(json!({"vocab_size": 30522.5})),
            "vocab_size is 30522.5: not a whole number"
        );
        assert!(err(json!({"text_config": {"n_positions": true}}))
            .starts_with("text_config.n_positions is true"));
        assert!(err(json!({"pad_token_id": [1, "2"]})).starts_with("pad_token_id is the string"));
        let big = err(json!({"num_labels": 1e300}));
        assert!(
            big.starts_with("num_labels is 1") && big.ends_with("too large"),
            "{big}"
        );
        // Whole floats and negative ids are fine.
        let c = cfg(json!({"vocab_size": 512.0, "pad_token_id": -1}));
        assert_eq!(c.vocab_size.unwrap().value, 512);
        assert_eq!(c.special_ids[0].value, -1);
    }

    #[test]
    fn null_ids_are_absent() {
        let c = cfg(json!({"pad_token_id": null, "eos_token_id": 2}));
        assert_eq!(
            c.special_ids,
            vec![Field {
                name: "eos_token_id".into(),
                value: 2
            }]
        );
    }
}
