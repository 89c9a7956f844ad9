//! What was read from a model directory, as the report's `model` section.

use crate::model_dir::{ModelDir, Sourced};
use crate::shapes::{Found, Located};
use devassert_core::{ModelSummary, SourcedValue, TensorRole, TokenizerSummary, WeightsSummary};

fn sourced(s: Option<Sourced>) -> Option<SourcedValue> {
    s.map(|s| SourcedValue {
        from: s.from,
        value: s.value,
    })
}

fn role(l: &Option<Located>) -> Option<TensorRole> {
    l.as_ref().map(|l| TensorRole {
        file: l.tensor.file.clone(),
        found_by: match l.found {
            Found::Name => "name",
            Found::Shape => "shape",
        }
        .to_string(),
        shape: l.tensor.shape.clone(),
        tensor: l.tensor.name.clone(),
    })
}

/// The `model` section of `check`'s report.
pub fn summary(m: &ModelDir) -> ModelSummary {
    let c = m.config.as_ref();
    ModelSummary {
        classifier: role(&m.roles.classifier),
        config_vocab_size: c.and_then(|c| c.vocab_size.as_ref()).map(|f| f.value),
        dir: m.path.display().to_string(),
        embedding_rows: sourced(m.embedding_rows()),
        input_embeddings: role(&m.roles.input_embeddings),
        model_type: c.and_then(|c| c.model_type.clone()),
        num_classes: sourced(m.num_classes()),
        output_head: role(&m.roles.output_head),
        position_embeddings: role(&m.roles.positions),
        token_type_embeddings: role(&m.roles.token_types),
        tokenizer: m.tokenizer.as_ref().map(|t| TokenizerSummary {
            // Tokens past the base vocabulary, as `len(tokenizer)` counts
            // them: an added token that reuses a base id ([CLS] in BERT's
            // tokenizer.json) adds nothing.
            added_tokens: t.size.saturating_sub(t.base_size),
            base_size: t.base_size,
            class: t.class.clone(),
            files: t.files.clone(),
            max_id: t.max_id,
            max_type_id: t.max_type_id,
            model_max_length: t.model_max_length,
            size: t.size,
        }),
        type_vocab_size: sourced(m.type_vocab()),
        unread_weights: m.unread_weights.clone(),
        usable_positions: sourced(m.usable_positions()),
        weights: m.weights.as_ref().map(|w| WeightsSummary {
            files: w.files.clone(),
            tensors: w.tensors.len() as u64,
        }),
        has_config: c.is_some(),
        architectures: c.map(|c| c.architectures.clone()).unwrap_or_default(),
        config_vocab_field: c
            .and_then(|c| c.vocab_size.as_ref())
            .map(|f| f.name.clone()),
    }
}
