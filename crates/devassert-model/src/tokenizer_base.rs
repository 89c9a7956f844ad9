//! The tokenizer's base vocabulary: `tokenizer.json` (with the `tokenizers`
//! library, or in one bounded pass when it is large or the budget cannot
//! hold what the library keeps) or `vocab.txt`, each entry drawn from the
//! budget; with the added tokens `tokenizer.json` carries.

use crate::budget::{cost, Reading, LIBRARY_PER_BYTE, VOCAB_ENTRY};
use crate::error::ModelError;
use crate::tokenizer_json::{self, Vocab};
use std::collections::BTreeMap;
use std::path::Path;

/// Where the vocabulary came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VocabSource {
    TokenizerJson,
    VocabTxt,
    VocabJson,
    /// Only added tokens are known (a sentencepiece `tokenizer.model`, which is not read).
    AddedOnly,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedToken {
    pub id: u64,
    pub content: String,
    pub special: bool,
}

/// What the base vocabulary was read from.
pub(crate) struct Base {
    pub(crate) source: VocabSource,
    pub(crate) size: u64,
    pub(crate) file: &'static str,
    pub(crate) vocab: Vocab,
    /// Added tokens, by id, that came with it (`tokenizer.json`'s).
    pub(crate) added: BTreeMap<u64, AddedToken>,
    pub(crate) pair_type_id: Option<u64>,
}

/// `tokenizer.json`: with the `tokenizers` library when it is small and the
/// budget can take what the library holds, else in one bounded pass.
pub(crate) fn tokenizer_json_base(
    tj: &Path,
    full_limit: u64,
    reading: &Reading,
) -> Result<Base, ModelError> {
    let budget = &reading.budget;
    let len = std::fs::metadata(tj).map_or(u64::MAX, |m| m.len());
    let library = cost(len, LIBRARY_PER_BYTE);
    if len > full_limit || library > budget.left() {
        let light = tokenizer_json::read(tj, budget)?;
        let mut added = BTreeMap::new();
        for (id, t) in tokenizer_json::assign_ids(&light.added, &light.vocab, light.base_size) {
            added.insert(
                id,
                AddedToken {
                    id,
                    content: t.content.clone(),
                    special: t.special,
                },
            );
        }
        return Ok(Base {
            source: VocabSource::TokenizerJson,
            size: light.base_size,
            file: "tokenizer.json",
            vocab: light.vocab,
            added,
            pair_type_id: light.pair_type_id,
        });
    }
    // Held only while it is read: given back below.
    budget
        .take(library)
        .map_err(|why| ModelError::over_budget(tj, why))?;
    let base = tokenizer_json_library(tj, reading);
    budget.give(library);
    base
}

fn tokenizer_json_library(tj: &Path, reading: &Reading) -> Result<Base, ModelError> {
    // tokenizers panics on some malformed files ("Helper" on a JSON
    // error inside its `decoder`, found by fuzzing): contain it.
    let tok = devassert_core::contain::contain(|| tokenizers::Tokenizer::from_file(tj))
        .map_err(|panic| ModelError::Tokenizer {
            path: tj.to_path_buf(),
            message: panic,
        })?
        .map_err(|e| ModelError::Tokenizer {
            path: tj.to_path_buf(),
            message: e.to_string(),
        })?;
    let mut vocab = Vocab::default();
    let entries = tok.get_vocab(true);
    reading
        .budget
        .take(cost(entries.len() as u64, VOCAB_ENTRY))
        .map_err(|why| ModelError::over_budget(tj, why))?;
    for (k, v) in entries {
        vocab.insert_if_absent(&k, u64::from(v));
    }
    let mut added = BTreeMap::new();
    for (id, t) in tok.get_added_tokens_decoder() {
        added.insert(
            u64::from(id),
            AddedToken {
                id: u64::from(id),
                content: t.content,
                special: t.special,
            },
        );
    }
    // Encode a pair to see the type ids its post-processor really gives.
    let mut pair_type_id = None;
    if let Ok(Ok(enc)) = devassert_core::contain::contain(|| tok.encode(("a", "b"), true)) {
        pair_type_id = enc.get_type_ids().iter().max().map(|&m| u64::from(m));
    }
    Ok(Base {
        source: VocabSource::TokenizerJson,
        size: tok.get_vocab_size(false) as u64,
        file: "tokenizer.json",
        vocab,
        added,
        pair_type_id,
    })
}

/// `vocab.txt`: one token a line, its id the line number (transformers'
/// `load_vocab`); the text and each entry drawn from the budget.
pub(crate) fn vocab_txt_base(p: &Path, reading: &Reading) -> Result<Base, ModelError> {
    let budget = &reading.budget;
    let len = std::fs::metadata(p).map_or(0, |m| m.len());
    budget
        .take(len)
        .map_err(|why| ModelError::over_budget(p, why))?;
    let vocab = vocab_txt_lines(p, len, reading);
    // The text is dropped by now, read or not: only the map is kept.
    budget.give(len);
    let (vocab, lines) = vocab?;
    Ok(Base {
        source: VocabSource::VocabTxt,
        size: lines,
        file: "vocab.txt",
        vocab,
        added: BTreeMap::new(),
        pair_type_id: None,
    })
}

/// The tokens of `vocab.txt` (at most `len` bytes) and its line count.
fn vocab_txt_lines(p: &Path, len: u64, reading: &Reading) -> Result<(Vocab, u64), ModelError> {
    // Never more than was taken (the file may have grown since).
    let text = devassert_core::regular::read(p, len).map_err(|e| ModelError::io(p, e))?;
    let text = String::from_utf8_lossy(&text);
    let lines = text.lines().count() as u64;
    reading
        .budget
        .take(cost(lines, VOCAB_ENTRY))
        .map_err(|why| ModelError::over_budget(p, why))?;
    let mut vocab = Vocab::default();
    for (i, line) in text.lines().enumerate() {
        vocab.insert_if_absent(line.trim_end_matches('\r'), i as u64);
    }
    Ok((vocab, lines))
}
