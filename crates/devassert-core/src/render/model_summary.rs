//! What `check` read from a model directory, printed above its findings on a
//! terminal.

use crate::sections::{DataScans, ModelSummary};
use std::fmt::Write as _;

pub(super) fn render(m: &ModelSummary, data: Option<&DataScans>) -> String {
    let mut s = String::new();
    let kind = m.model_type.as_deref().unwrap_or("unknown");
    let arch = Some(m.architectures.join(", "))
        .filter(|a| !a.is_empty())
        .map(|a| format!(" ({a})"))
        .unwrap_or_default();
    let _ = writeln!(s, "model      {}: {kind}{arch}", m.dir);
    match (m.config_vocab_size, &m.config_vocab_field) {
        (Some(v), Some(name)) => {
            let _ = writeln!(s, "config     {name} {v}");
        }
        _ if !m.has_config => {
            let _ = writeln!(s, "config     no config.json");
        }
        _ => {}
    }
    match &m.tokenizer {
        Some(t) => {
            let max = t
                .max_id
                .map(|x| format!(", ids up to {x}"))
                .unwrap_or_default();
            let mml = t
                .model_max_length
                .map(|x| format!(", model_max_length {x}"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "tokenizer  {}: {} tokens ({} base + {} added){max}{mml}",
                t.files.join(", "),
                t.size,
                t.base_size,
                t.added_tokens
            );
        }
        None => {
            let _ = writeln!(s, "tokenizer  none found");
        }
    }
    match &m.weights {
        Some(w) => {
            let _ = writeln!(
                s,
                "weights    {} ({} tensors, headers only)",
                w.files.join(", "),
                w.tensors
            );
            for (what, l) in [
                ("embeddings", &m.input_embeddings),
                ("output", &m.output_head),
                ("positions", &m.position_embeddings),
                ("token types", &m.token_type_embeddings),
                ("classifier", &m.classifier),
            ] {
                if let Some(l) = l {
                    let by = if l.found_by == "shape" {
                        " (by shape)"
                    } else {
                        ""
                    };
                    let _ = writeln!(s, "  {what:<12} {} {:?}{by}", l.tensor, l.shape);
                }
            }
        }
        None if m.unread_weights.is_empty() => {
            let _ = writeln!(s, "weights    none (checked against config.json)");
        }
        None => {
            let _ = writeln!(s, "weights    {} not read (only safetensors headers are); checked against config.json", m.unread_weights.join(", "));
        }
    }
    match &m.usable_positions {
        Some(u) => {
            let _ = writeln!(s, "positions  {} usable ({})", u.value, u.from);
        }
        None if m.has_config => {
            let _ = writeln!(
                s,
                "positions  no position table (rotary/relative positions or unknown)"
            );
        }
        None => {}
    }
    for (what, scan) in data.into_iter().flat_map(DataScans::iter) {
        let _ = writeln!(s, "data       {what}: {} part(s) scanned", scan.files.len());
    }
    s.push('\n');
    s
}
