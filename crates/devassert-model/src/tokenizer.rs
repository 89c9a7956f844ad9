//! The tokenizer side: how many ids it can emit (added tokens included), its
//! special tokens, its `model_max_length`, and whether it emits
//! `token_type_ids` above 0. Read from `tokenizer.json` with the `tokenizers`
//! library (one bounded streaming pass when the file is large:
//! [`tokenizer_json`]), or from `vocab.txt` / `vocab.json` when there is none, plus
//! `tokenizer_config.json`, `special_tokens_map.json` and `added_tokens.json`.
//! The base vocabulary's files are read by [`crate::tokenizer_base`]; this
//! module adds the config files' tokens, roles and limits.

use crate::budget::Reading;
use crate::error::ModelError;
use crate::json::read_json;
use crate::tokenizer_base::{tokenizer_json_base, vocab_txt_base, Base};
pub use crate::tokenizer_base::{AddedToken, VocabSource};
use crate::tokenizer_json::{self, Vocab};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// transformers writes `int(1e30)` for "no limit"; anything this large is one.
const NO_LIMIT: f64 = 1e15;

/// Tokenizer classes whose `model_input_names` leave out `token_type_ids`
/// (transformers' own class attributes); every other class inherits them.
const NO_TYPE_IDS: &[&str] = &[
    "Roberta",
    "XLMRoberta",
    "Camembert",
    "GPT2",
    "Llama",
    "CodeLlama",
    "T5",
    "MT5",
    "Bart",
    "MBart",
    "Qwen2",
    "Gemma",
    "Bloom",
    "Whisper",
    "DistilBert",
    "MPNet",
    "Longformer",
    "Marian",
    "Pegasus",
    "GPTNeoX",
    "CodeGen",
    "Blenderbot",
    "BlenderbotSmall",
    "Cohere",
    "Bert Generation",
    "Splinter",
    "Mistral",
    "Phi3",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialToken {
    /// `pad_token`, `bos_token`, … as `tokenizer_config.json` / `special_tokens_map.json` name it.
    pub role: String,
    pub content: String,
    pub id: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct TokenizerInfo {
    pub source: VocabSource,
    /// The files read (names relative to the model directory).
    pub files: Vec<String>,
    /// Size of the base vocabulary (the model's own tokens).
    pub base_size: u64,
    /// `len(tokenizer)`: distinct tokens with added tokens.
    pub size: u64,
    /// The largest id it can emit; `max_id + 1` rows are needed.
    pub max_id: Option<u64>,
    /// Added tokens, by id.
    pub added: Vec<AddedToken>,
    pub specials: Vec<SpecialToken>,
    /// `tokenizer_config.json`'s `model_max_length` when it is a real limit.
    pub model_max_length: Option<u64>,
    pub class: Option<String>,
    /// Whether the tokenizer returns `token_type_ids` at all.
    pub emits_type_ids: bool,
    /// The largest type id it gives a pair of sequences (when it emits them).
    pub max_type_id: Option<u64>,
}

impl TokenizerInfo {
    /// Added tokens with ids past the base vocabulary: the ones that need
    /// `resize_token_embeddings`.
    pub fn added_outside_base(&self) -> impl Iterator<Item = &AddedToken> {
        self.added.iter().filter(move |t| t.id >= self.base_size)
    }
}

/// A JSON object file the folder may hold; `None` when it is absent or
/// left out ([`Reading`]).
fn opt_json(path: &Path, reading: &Reading) -> Result<Option<Map<String, Value>>, ModelError> {
    if !reading.present(path) {
        return Ok(None);
    }
    match reading.or_left_out(read_json(path, &reading.budget))? {
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(ModelError::invalid(path, "not a JSON object")),
        None => Ok(None),
    }
}

/// A special token value: `"<s>"` or `{"content": "<s>", …}`.
fn token_content(v: &Value) -> Option<&str> {
    v.as_str()
        .or_else(|| v.get("content").and_then(Value::as_str))
}

/// Read the tokenizer of `dir`; `None` when it has no tokenizer files (or
/// all of them were left out).
pub fn read_tokenizer(dir: &Path, reading: &Reading) -> Result<Option<TokenizerInfo>, ModelError> {
    read_tokenizer_with(dir, tokenizer_json::FULL_READ_LIMIT, reading)
}

/// `read_tokenizer`, with a `tokenizer.json` over `full_limit` bytes read by
/// the bounded pass.
fn read_tokenizer_with(
    dir: &Path,
    full_limit: u64,
    reading: &Reading,
) -> Result<Option<TokenizerInfo>, ModelError> {
    let config_path = dir.join("tokenizer_config.json");
    let config = opt_json(&config_path, reading)?;
    let map_path = dir.join("special_tokens_map.json");
    let special_map = opt_json(&map_path, reading)?;
    let added_path = dir.join("added_tokens.json");
    let added_json = opt_json(&added_path, reading)?;

    // The first vocabulary file there and not left out, in transformers' order.
    let mut base = None;
    let tj = dir.join("tokenizer.json");
    if reading.present(&tj) {
        base = reading.or_left_out(tokenizer_json_base(&tj, full_limit, reading))?;
    }
    let txt = dir.join("vocab.txt");
    if base.is_none() && reading.present(&txt) {
        base = reading.or_left_out(vocab_txt_base(&txt, reading))?;
    }
    let vj = dir.join("vocab.json");
    if base.is_none() && reading.present(&vj) {
        let vocab = reading.or_left_out(tokenizer_json::read_vocab_json(&vj, &reading.budget))?;
        base = vocab.map(|vocab| Base {
            source: VocabSource::VocabJson,
            size: vocab.len() as u64,
            file: "vocab.json",
            vocab,
            added: BTreeMap::new(),
            pair_type_id: None,
        });
    }
    let mut files = Vec::new();
    let (source, base_size, mut vocab, mut added, pair_type_id) = match base {
        Some(b) => {
            files.push(b.file.to_string());
            if b.source == VocabSource::VocabJson && dir.join("merges.txt").is_file() {
                files.push("merges.txt".into());
            }
            (b.source, b.size, b.vocab, b.added, b.pair_type_id)
        }
        None if config.is_some() || added_json.is_some() => (
            VocabSource::AddedOnly,
            0,
            Vocab::default(),
            BTreeMap::new(),
            None,
        ),
        None => return Ok(None),
    };

    // Added tokens the slow tokenizers keep beside the vocabulary.
    if let Some(m) = &added_json {
        files.push("added_tokens.json".into());
        for (k, v) in m {
            let id = v.as_u64().ok_or_else(|| {
                ModelError::invalid(
                    &added_path,
                    format!("token {k:?} has id {v}, not a non-negative integer"),
                )
            })?;
            added.entry(id).or_insert(AddedToken {
                id,
                content: k.clone(),
                special: false,
            });
        }
    }
    let mut model_max_length = None;
    let mut class = None;
    let mut input_names: Option<Vec<String>> = None;
    if let Some(c) = &config {
        files.push("tokenizer_config.json".into());
        if let Some(m) = c.get("added_tokens_decoder").and_then(Value::as_object) {
            for (k, v) in m {
                let id = k.parse::<u64>().map_err(|_| {
                    ModelError::invalid(
                        &config_path,
                        format!("added_tokens_decoder key {k:?} is not a token id"),
                    )
                })?;
                let content = token_content(v).unwrap_or_default().to_string();
                let special = v.get("special").and_then(Value::as_bool).unwrap_or(false);
                added.entry(id).or_insert(AddedToken {
                    id,
                    content,
                    special,
                });
            }
        }
        model_max_length = c
            .get("model_max_length")
            .and_then(Value::as_f64)
            .filter(|&v| (1.0..NO_LIMIT).contains(&v))
            .map(|v| v as u64);
        class = c
            .get("tokenizer_class")
            .and_then(Value::as_str)
            .map(str::to_string);
        input_names = c
            .get("model_input_names")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            });
    }
    for t in added.values() {
        vocab.insert_if_absent(&t.content, t.id);
    }

    let mut specials = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for m in [config.as_ref(), special_map.as_ref()]
        .into_iter()
        .flatten()
    {
        for (role, v) in m {
            let contents: Vec<&str> = match v {
                Value::Array(list) if role == "additional_special_tokens" => {
                    list.iter().filter_map(token_content).collect()
                }
                v if role.ends_with("_token") => token_content(v).into_iter().collect(),
                _ => continue,
            };
            for content in contents {
                if seen.insert((role.clone(), content.to_string())) {
                    specials.push(SpecialToken {
                        role: role.clone(),
                        content: content.to_string(),
                        id: vocab.get(content),
                    });
                }
            }
        }
    }
    if special_map.is_some() {
        files.push("special_tokens_map.json".into());
    }

    let emits_type_ids = match (&input_names, &class) {
        (Some(names), _) => names.iter().any(|n| n == "token_type_ids"),
        (None, Some(c)) => {
            let bare = c.trim_end_matches("Fast").trim_end_matches("Tokenizer");
            !NO_TYPE_IDS.contains(&bare)
        }
        // A tokenizer.json alone (PreTrainedTokenizerFast) inherits the base class's names.
        (None, None) => true,
    };
    let max_type_id = if !emits_type_ids {
        None
    } else if source == VocabSource::TokenizerJson {
        pair_type_id
    } else {
        // The slow tokenizers' default: 0 for the first sequence, 1 for the second.
        Some(1)
    };

    let max_id = vocab.max_id();
    Ok(Some(TokenizerInfo {
        source,
        files,
        base_size,
        size: vocab.len() as u64,
        max_id,
        added: added.into_values().collect(),
        specials,
        model_max_length,
        class,
        emits_type_ids,
        max_type_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounded pass and the `tokenizers` library read the same facts.
    #[test]
    fn the_bounded_pass_agrees_with_the_library() {
        let added = r#"[{"id":7,"content":"<new>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
                        {"id":8,"content":"<more>","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":false}]"#;
        let wordpiece = r###"{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,
                           "vocab":{"[UNK]":0,"a":1,"[CLS]":2,"[SEP]":3,"b":4,"[PAD]":5}}"###;
        let bpe = r#"{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,
                     "fuse_unk":false,"byte_fallback":false,"vocab":{"a":0,"b":1,"ab":2,"[CLS]":3,"[SEP]":4},"merges":["a b"]}"#;
        let unigram = r#"{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],["a",-1.0],["b",-2.0],["[CLS]",-3.0]],"byte_fallback":false}"#;
        let template = r#"{"type":"TemplateProcessing",
            "single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
            "pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"Sequence":{"id":"B","type_id":1}}],
            "special_tokens":{"[CLS]":{"id":"[CLS]","ids":[3],"tokens":["[CLS]"]}}}"#;
        let template_0 = template.replace(r#""id":"B","type_id":1"#, r#""id":"B","type_id":0"#);
        let bert = r#"{"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]}"#;
        let roberta = r#"{"type":"RobertaProcessing","sep":["[SEP]",4],"cls":["[CLS]",3],"trim_offsets":true,"add_prefix_space":false}"#;
        let cases = [
            (wordpiece, bert.to_string()),
            (bpe, template.to_string()),
            (bpe, template_0),
            (bpe, roberta.to_string()),
            (bpe, "null".to_string()),
            (
                unigram,
                format!(
                    r#"{{"type":"Sequence","processors":[{{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}},{template}]}}"#
                ),
            ),
        ];
        for (model, processor) in cases {
            let d = tempfile::tempdir().unwrap();
            let json = format!(
                r#"{{"version":"1.0","truncation":null,"padding":null,"added_tokens":{added},"normalizer":null,
                   "pre_tokenizer":{{"type":"Whitespace"}},"post_processor":{processor},"decoder":null,"model":{model}}}"#
            );
            std::fs::write(d.path().join("tokenizer.json"), json).unwrap();
            std::fs::write(
                d.path().join("tokenizer_config.json"),
                r#"{"pad_token":"[PAD]","cls_token":"[CLS]","additional_special_tokens":["<new>"]}"#,
            )
            .unwrap();
            let full = read_tokenizer_with(d.path(), u64::MAX, &Reading::default())
                .unwrap()
                .unwrap();
            let light = read_tokenizer_with(d.path(), 0, &Reading::default())
                .unwrap()
                .unwrap();
            assert_eq!(
                format!("{light:?}"),
                format!("{full:?}"),
                "{model} {processor}"
            );
        }
    }

    #[test]
    fn the_bounded_pass_names_a_broken_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("tokenizer.json"),
            r#"{"model": {"vocab": {"a": -1}}}"#,
        )
        .unwrap();
        let e = read_tokenizer_with(d.path(), 0, &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("tokenizer.json"), "{e}");
    }

    #[test]
    fn broken_tokenizer_config_names_the_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("tokenizer_config.json"),
            "{\"model_max_length\": ",
        )
        .unwrap();
        let e = read_tokenizer(d.path(), &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tokenizer_config.json") && e.contains("invalid JSON"),
            "{e}"
        );
    }

    #[test]
    fn broken_tokenizer_json_names_the_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("tokenizer.json"), "{\"model\": 3}").unwrap();
        let e = read_tokenizer(d.path(), &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("tokenizer.json"), "{e}");
    }

    #[test]
    fn vocab_txt_with_added_tokens() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("vocab.txt"),
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n",
        )
        .unwrap();
        std::fs::write(d.path().join("added_tokens.json"), r#"{"<new>": 5}"#).unwrap();
        std::fs::write(d.path().join("tokenizer_config.json"), r#"{"tokenizer_class": "BertTokenizer", "model_max_length": 1000000000000000019884624838656, "pad_token": "[PAD]"}"#).unwrap();
        let t = read_tokenizer(d.path(), &Reading::default())
            .unwrap()
            .unwrap();
        assert_eq!((t.base_size, t.size, t.max_id), (5, 6, Some(5)));
        assert_eq!(t.model_max_length, None, "1e30 means no limit");
        assert_eq!(t.added_outside_base().count(), 1);
        assert_eq!(t.specials[0].id, Some(0));
        assert_eq!(t.max_type_id, Some(1));
    }

    #[test]
    fn vocab_json_with_a_bad_id_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("vocab.json"), r#"{"a": -3}"#).unwrap();
        let e = read_tokenizer(d.path(), &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("vocab.json") && e.contains("-3"), "{e}");
    }

    #[test]
    fn roberta_class_emits_no_type_ids() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("vocab.json"), r#"{"<s>": 0, "<pad>": 1}"#).unwrap();
        std::fs::write(
            d.path().join("tokenizer_config.json"),
            r#"{"tokenizer_class": "RobertaTokenizer"}"#,
        )
        .unwrap();
        let t = read_tokenizer(d.path(), &Reading::default())
            .unwrap()
            .unwrap();
        assert!(!t.emits_type_ids);
        assert_eq!(t.max_type_id, None);
    }
}
