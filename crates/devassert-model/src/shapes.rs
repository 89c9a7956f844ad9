//! Which tensors of the weights are the input embeddings, the output head,
//! the position and token-type tables and a classifier head: by name
//! patterns that cover the common architectures, with a fallback to shape
//! reasoning (a 2-D tensor whose first dimension is the vocabulary size).

use crate::safetensors::{TensorInfo, Weights};

/// How a tensor was picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Its name matched an architecture's pattern.
    Name,
    /// Its shape matched the vocabulary size.
    Shape,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub tensor: TensorInfo,
    pub found: Found,
}

impl Located {
    pub fn rows(&self) -> u64 {
        self.tensor.shape.first().copied().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Roles {
    pub input_embeddings: Option<Located>,
    pub output_head: Option<Located>,
    pub positions: Option<Located>,
    pub token_types: Option<Located>,
    pub classifier: Option<Located>,
}

/// Name endings, matched on whole dot-separated components, most specific
/// first within each role. Prefixes (`bert.`, `model.`, `transformer.`,
/// `language_model.`) do not matter.
const INPUT: &[&str] = &[
    "shared.weight",                     // T5, BART, Pegasus (the shared table)
    "embeddings.word_embeddings.weight", // BERT, RoBERTa, ELECTRA, DeBERTa, …
    "embed_tokens.weight",               // Llama, Mistral, Qwen, Gemma, OPT, BART
    "wte.weight",                        // GPT-2, GPT-J, CodeGen
    "word_embeddings.weight",            // BLOOM, Falcon, ChatGLM
    "embed_in.weight",                   // GPT-NeoX, Pythia
    "tok_embeddings.weight",             // original Llama, InternLM2
    "embeddings.weight",                 // Mamba
];
const OUTPUT: &[&str] = &[
    "lm_head.weight",
    "embed_out.weight",
    "lm_head.decoder.weight",
    "cls.predictions.decoder.weight",
    "generator_lm_head.weight",
    "output.weight",
];
const POSITION: &[&str] = &[
    "embeddings.position_embeddings.weight",
    "wpe.weight",
    "embed_positions.weight",
    "position_embeddings.weight",
];
const TOKEN_TYPE: &[&str] = &[
    "embeddings.token_type_embeddings.weight",
    "token_type_embeddings.weight",
];
const CLASSIFIER: &[&str] = &[
    "classifier.out_proj.weight",
    "classification_head.out_proj.weight",
    "classifier.weight",
    "score.weight",
    "logits_proj.weight",
];

fn ends_with_components(name: &str, pattern: &str) -> bool {
    name == pattern
        || name
            .strip_suffix(pattern)
            .is_some_and(|head| head.ends_with('.'))
}

/// The first pattern that matches any 2-D tensor wins; among its matches the
/// shortest name (the outermost module) does.
fn by_name(weights: &Weights, patterns: &[&str]) -> Option<Located> {
    for p in patterns {
        let best = weights
            .tensors
            .values()
            .filter(|t| t.shape.len() == 2 && ends_with_components(&t.name, p))
            // Vision towers and encoders of other modalities are not the text model.
            .filter(|t| {
                !["vision", "visual", "image", "audio"]
                    .iter()
                    .any(|m| t.name.contains(m))
            })
            .min_by_key(|t| (t.name.len(), t.name.clone()));
        if let Some(t) = best {
            return Some(Located {
                tensor: t.clone(),
                found: Found::Name,
            });
        }
    }
    None
}

/// Locate the roles; `vocab` (the config's `vocab_size`, else the
/// tokenizer's size) drives the shape fallback.
pub fn locate(weights: &Weights, vocab: Option<u64>) -> Roles {
    let mut roles = Roles {
        input_embeddings: by_name(weights, INPUT),
        output_head: by_name(weights, OUTPUT),
        positions: by_name(weights, POSITION),
        token_types: by_name(weights, TOKEN_TYPE),
        classifier: by_name(weights, CLASSIFIER),
    };
    if roles.input_embeddings.is_none() {
        if let Some(v) = vocab {
            let head = roles.output_head.as_ref().map(|l| l.tensor.name.clone());
            roles.input_embeddings = weights
                .tensors
                .values()
                .filter(|t| t.shape.len() == 2 && t.shape[0] == v && Some(&t.name) != head.as_ref())
                .min_by_key(|t| (t.name.len(), t.name.clone()))
                .map(|t| Located {
                    tensor: t.clone(),
                    found: Found::Shape,
                });
        }
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(list: &[(&str, &[u64])]) -> Weights {
        let mut w = Weights::default();
        for (name, shape) in list {
            w.tensors.insert(
                name.to_string(),
                TensorInfo {
                    name: name.to_string(),
                    dtype: "F32".into(),
                    shape: shape.to_vec(),
                    file: "model.safetensors".into(),
                },
            );
        }
        w
    }

    #[test]
    fn bert_with_and_without_prefix() {
        for prefix in ["", "bert."] {
            let w = weights(&[
                (
                    &format!("{prefix}embeddings.word_embeddings.weight"),
                    &[30522, 8],
                ),
                (
                    &format!("{prefix}embeddings.position_embeddings.weight"),
                    &[512, 8],
                ),
                (
                    &format!("{prefix}embeddings.token_type_embeddings.weight"),
                    &[2, 8],
                ),
                ("classifier.weight", &[3, 8]),
            ]);
            let r = locate(&w, None);
            assert_eq!(r.input_embeddings.unwrap().rows(), 30522);
            assert_eq!(r.positions.unwrap().rows(), 512);
            assert_eq!(r.token_types.unwrap().rows(), 2);
            assert_eq!(r.classifier.unwrap().rows(), 3);
        }
    }

    #[test]
    fn distilbert_pre_classifier_is_not_the_classifier() {
        let w = weights(&[
            ("pre_classifier.weight", &[8, 8]),
            ("classifier.weight", &[5, 8]),
        ]);
        assert_eq!(locate(&w, None).classifier.unwrap().rows(), 5);
        let w = weights(&[("pre_classifier.weight", &[8, 8])]);
        assert!(locate(&w, None).classifier.is_none());
    }

    #[test]
    fn gpt2_llama_t5() {
        let r = locate(
            &weights(&[
                ("transformer.wte.weight", &[50257, 8]),
                ("transformer.wpe.weight", &[1024, 8]),
            ]),
            None,
        );
        assert_eq!(
            r.input_embeddings.unwrap().tensor.name,
            "transformer.wte.weight"
        );
        assert_eq!(r.positions.unwrap().rows(), 1024);
        let r = locate(
            &weights(&[
                ("model.embed_tokens.weight", &[32000, 8]),
                ("lm_head.weight", &[32000, 8]),
            ]),
            None,
        );
        assert_eq!(r.output_head.unwrap().rows(), 32000);
        let r = locate(
            &weights(&[
                ("shared.weight", &[32128, 8]),
                ("encoder.embed_tokens.weight", &[32128, 8]),
            ]),
            None,
        );
        assert_eq!(r.input_embeddings.unwrap().tensor.name, "shared.weight");
    }

    #[test]
    fn shape_fallback_finds_an_unknown_name() {
        let r = locate(
            &weights(&[("net.tokens.table", &[1000, 8]), ("net.proj", &[8, 8])]),
            Some(1000),
        );
        let l = r.input_embeddings.unwrap();
        assert_eq!(
            (l.tensor.name.as_str(), l.found),
            ("net.tokens.table", Found::Shape)
        );
    }
}
