//! A large `tokenizer.json`, read in one streaming pass for what `check`
//! needs: the base vocabulary's size and ids, the added tokens, and the type
//! ids the post-processor gives a pair. The `tokenizers` library builds the
//! whole tokenizer (about 15 times the file's size in memory: a 100 MB file
//! took 1.7 GB); here the merges are skipped unread and each vocabulary entry
//! keeps only a hash of its token and its id.

use crate::budget::{Budget, NAME_ENTRY, VOCAB_ENTRY};
use crate::error::ModelError;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::Path;

/// Files up to this size go to the `tokenizers` library, which holds about
/// 15 times the file (4 MiB: ~64 MiB, within the 256 MiB budget); larger
/// ones are read here (a 63 MiB file took 848 MB in the library).
pub const FULL_READ_LIMIT: u64 = 4 << 20;

/// Take `bytes` from the budget, or stop the parse with why (said as the
/// budget, the file left out).
fn draw<E: de::Error>(budget: &Budget, bytes: u64) -> Result<(), E> {
    budget.take(bytes).map_err(E::custom)
}

/// Token → id, by a 64-bit hash of the token (collisions are out of reach
/// for vocabularies of millions).
#[derive(Debug, Default, Clone)]
pub struct Vocab(HashMap<u64, u64>);

fn key(token: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    token.hash(&mut h);
    h.finish()
}

impl Vocab {
    pub fn insert_if_absent(&mut self, token: &str, id: u64) {
        self.0.entry(key(token)).or_insert(id);
    }
    pub fn get(&self, token: &str) -> Option<u64> {
        self.0.get(&key(token)).copied()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn max_id(&self) -> Option<u64> {
        self.0.values().copied().max()
    }
}

#[derive(Debug, Deserialize)]
pub struct AddedJson {
    pub id: u64,
    pub content: String,
    #[serde(default)]
    pub special: bool,
}

/// What the pass keeps.
#[derive(Debug, Default)]
pub struct Light {
    pub vocab: Vocab,
    /// Entries of the model's own vocabulary.
    pub base_size: u64,
    pub added: Vec<AddedJson>,
    /// The largest type id a pair of sequences gets.
    pub pair_type_id: Option<u64>,
}

pub fn read(path: &Path, budget: &Budget) -> Result<Light, ModelError> {
    crate::json::read_with(path, budget, TopSeed(budget))
}

struct TopSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Light;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Light, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Light;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Light, A::Error> {
        let mut light = Light::default();
        let mut processor = None;
        while let Some(k) = map.next_key::<String>()? {
            match k.as_str() {
                "added_tokens" => light.added = map.next_value_seed(AddedSeed(self.0))?,
                "model" => {
                    let (vocab, n) = map.next_value_seed(ModelSeed(self.0))?;
                    light.vocab = vocab;
                    light.base_size = n;
                }
                "post_processor" => processor = map.next_value::<Option<serde_json::Value>>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        light.pair_type_id = Some(pair_type_id(processor.as_ref()));
        Ok(light)
    }
}

/// `model`: its `vocab` (a map of token to id, or Unigram's list of
/// `[piece, score]` whose ids are the positions); merges and the rest skipped.
struct ModelSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for ModelSeed<'_> {
    type Value = (Vocab, u64);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ModelSeed<'_> {
    type Value = (Vocab, u64);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer model object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = (Vocab::default(), 0);
        while let Some(k) = map.next_key::<String>()? {
            if k == "vocab" {
                out = map.next_value_seed(VocabSeed(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// Each entry kept draws [`VOCAB_ENTRY`] from the budget.
struct VocabSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for VocabSeed<'_> {
    type Value = (Vocab, u64);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed<'_> {
    type Value = (Vocab, u64);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocabulary: an object of token ids or a list of [piece, score]")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut vocab = Vocab::default();
        let mut n = 0u64;
        while let Some((token, id)) = map.next_entry::<String, u64>()? {
            draw(self.0, VOCAB_ENTRY)?;
            vocab.insert_if_absent(&token, id);
            n += 1;
        }
        Ok((vocab, n))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut vocab = Vocab::default();
        let mut n = 0u64;
        while let Some((piece, _score)) = seq.next_element::<(String, f64)>()? {
            draw(self.0, VOCAB_ENTRY)?;
            vocab.insert_if_absent(&piece, n);
            n += 1;
        }
        Ok((vocab, n))
    }
}

/// A slow tokenizer's `vocab.json` (token → id), streamed: its vocabulary,
/// or the first entry whose id is not a non-negative integer.
pub fn read_vocab_json(path: &Path, budget: &Budget) -> Result<Vocab, ModelError> {
    crate::json::read_with(path, budget, VocabJsonSeed(budget))?
        .map_err(|m| ModelError::invalid(path, m))
}

struct VocabJsonSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for VocabJsonSeed<'_> {
    type Value = Result<Vocab, String>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for VocabJsonSeed<'_> {
    type Value = Result<Vocab, String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object of tokens to ids")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut vocab = Vocab::default();
        let mut bad = None;
        while let Some(token) = map.next_key::<String>()? {
            if bad.is_some() {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            // A number or anything else: the value is small unless it is
            // wrong, and then only the first is kept for the message.
            let v = map.next_value::<serde_json::Value>()?;
            match v.as_u64() {
                Some(id) => {
                    draw(self.0, VOCAB_ENTRY)?;
                    vocab.insert_if_absent(&token, id);
                }
                None => {
                    let text = v.to_string();
                    let shown = devassert_core::render::inert::bounded(&text, 80);
                    bad = Some(format!(
                        "token {token:?} has id {shown}, not a non-negative integer"
                    ));
                }
            }
        }
        Ok(bad.map_or(Ok(vocab), Err))
    }
}

/// `added_tokens`: a list of entries (or null), each drawing its text and
/// [`NAME_ENTRY`] from the budget.
struct AddedSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for AddedSeed<'_> {
    type Value = Vec<AddedJson>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for AddedSeed<'_> {
    type Value = Vec<AddedJson>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of added tokens")
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(t) = seq.next_element::<AddedJson>()? {
            draw(self.0, t.content.len() as u64 + NAME_ENTRY)?;
            out.push(t);
        }
        Ok(out)
    }
}

/// The ids the `tokenizers` library gives the added tokens when it loads
/// them (it does not take the file's ids: a token of the vocabulary keeps its
/// id, a new one gets the next id past the vocabulary and the tokens added
/// before it), each with its entry, in the file's order.
pub fn assign_ids<'a>(
    added: &'a [AddedJson],
    vocab: &Vocab,
    base_size: u64,
) -> Vec<(u64, &'a AddedJson)> {
    let mut ids: HashMap<&str, u64> = HashMap::new();
    let mut out = Vec::with_capacity(added.len());
    for t in added {
        let id = match ids
            .get(t.content.as_str())
            .copied()
            .or_else(|| vocab.get(&t.content))
        {
            Some(id) => id,
            None => match ids.values().copied().max() {
                Some(max) if max >= base_size || base_size == 0 => max + 1,
                _ => base_size,
            },
        };
        ids.insert(&t.content, id);
        out.push((id, t));
    }
    out
}

/// The type id a pair's second sequence gets, as the post-processors of the
/// `tokenizers` library give it: a template's largest pair type id, 1 for
/// BERT's, 0 for RoBERTa's, and 1 (the default pair processing) otherwise.
fn pair_type_id(processor: Option<&serde_json::Value>) -> u64 {
    let Some(p) = processor else { return 1 };
    match p.get("type").and_then(serde_json::Value::as_str) {
        Some("RobertaProcessing") => 0,
        Some("TemplateProcessing") => p
            .get("pair")
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_object()?.values().next()?.get("type_id")?.as_u64())
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(1),
        Some("Sequence") => p
            .get("processors")
            .and_then(serde_json::Value::as_array)
            .and_then(|ps| {
                ps.iter()
                    .filter(|q| {
                        matches!(
                            q.get("type").and_then(serde_json::Value::as_str),
                            Some("TemplateProcessing" | "BertProcessing" | "RobertaProcessing")
                        )
                    })
                    .map(|q| pair_type_id(Some(q)))
                    .next_back()
            })
            .unwrap_or(1),
        _ => 1,
    }
}
