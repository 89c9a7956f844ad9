//! `devassert check MODEL_DIR`: config vs tokenizer vs safetensors shapes,
//! and with `--data`, the data against the model's real bounds.

use crate::cli::{FormatArg, Global};
use crate::output;
use clap::Args;
use devassert_core::{Report, Severity};
use devassert_model::{ModelDir, Sourced};
use devassert_scan::{scan_paths, Bounds, ScanOptions, Target};
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A Hugging Face model directory (config.json, tokenizer files, *.safetensors).
    pub model_dir: PathBuf,
    /// Data files or folders to scan against the model's bounds: ids < embedding rows, lengths <= usable positions.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub data: Vec<PathBuf>,
    /// Column (Arrow, Parquet, CSV) or field (JSONL) holding the token ids.
    #[arg(long, value_name = "C", requires = "data")]
    pub column: Option<String>,
    /// Column holding class labels, checked against the classifier's classes (-100 is ignored).
    #[arg(long, value_name = "L", requires = "data")]
    pub labels_column: Option<String>,
}

pub fn run(args: CheckArgs, g: &Global) -> anyhow::Result<i32> {
    let model = ModelDir::read(&args.model_dir)?;
    let mut report = Report::new("check");
    report.findings = devassert_model::check(&model);
    report
        .extra
        .insert("model".into(), Value::Object(summary(&model)));

    let mut could_not_read = false;
    if !args.data.is_empty() {
        let mut data = Map::new();
        if let Some(rows) = model.embedding_rows() {
            let opts = ScanOptions {
                bounds: Bounds::new(0, rows.value as i64),
                column: args.column.clone(),
                max_len: model.usable_positions().map(|u| u.value),
                target: Target::Tokens,
                ..Default::default()
            };
            could_not_read |= merge_scan(
                &mut report,
                &mut data,
                "tokens",
                scan_paths(&args.data, &opts),
            );
        } else {
            anyhow::bail!("{}: no embedding size known (no config vocab_size, no embedding tensor): cannot bound --data", args.model_dir.display());
        }
        if let Some(col) = &args.labels_column {
            let Some(classes) = model.num_classes() else {
                anyhow::bail!("{}: --labels-column given but the model has no classification head or num_labels", args.model_dir.display());
            };
            let opts = ScanOptions {
                bounds: Bounds::new(0, classes.value as i64),
                column: Some(col.clone()),
                ignore: vec![-100],
                target: Target::Labels,
                ..Default::default()
            };
            could_not_read |= merge_scan(
                &mut report,
                &mut data,
                "labels",
                scan_paths(&args.data, &opts),
            );
        }
        report.extra.insert("data".into(), Value::Object(data));
    }

    let real = report.findings.iter().any(|f| f.severity > Severity::Note);
    report.exit_code = if real {
        1
    } else if could_not_read {
        2
    } else {
        0
    };
    if g.format == FormatArg::Human && !g.quiet {
        print!("{}", human_summary(&model, &report));
    }
    output::emit(&report, g, &output::render_options(g))?;
    Ok(report.exit_code)
}

/// Add a data scan's findings; keep its per-file sections. True when a file could not be read.
fn merge_scan(
    report: &mut Report,
    data: &mut Map<String, Value>,
    what: &str,
    scan: Report,
) -> bool {
    report.findings.extend(scan.findings);
    data.insert(what.into(), Value::Object(scan.extra));
    scan.exit_code == 2
}

fn sourced(s: &Option<Sourced>) -> Value {
    match s {
        Some(s) => json!({"value": s.value, "from": s.from}),
        None => Value::Null,
    }
}

/// What was read, for the JSON report's `model` section.
fn summary(m: &ModelDir) -> Map<String, Value> {
    let c = m.config.as_ref();
    let t = m.tokenizer.as_ref();
    let role = |l: &Option<devassert_model::Located>| match l {
        Some(l) => {
            json!({"tensor": l.tensor.name, "shape": l.tensor.shape, "file": l.tensor.file, "found_by": match l.found { devassert_model::Found::Name => "name", devassert_model::Found::Shape => "shape" }})
        }
        None => Value::Null,
    };
    let mut out = Map::new();
    out.insert("dir".into(), json!(m.path.display().to_string()));
    out.insert(
        "model_type".into(),
        json!(c.and_then(|c| c.model_type.clone())),
    );
    out.insert(
        "config_vocab_size".into(),
        json!(c.and_then(|c| c.vocab_size.as_ref()).map(|f| f.value)),
    );
    out.insert(
        "tokenizer".into(),
        match t {
            Some(t) => json!({"files": t.files, "base_size": t.base_size, "size": t.size, "max_id": t.max_id, "added_tokens": t.added.len(),
                "model_max_length": t.model_max_length, "class": t.class, "max_type_id": t.max_type_id}),
            None => Value::Null,
        },
    );
    out.insert(
        "weights".into(),
        json!(m
            .weights
            .as_ref()
            .map(|w| json!({"files": w.files, "tensors": w.tensors.len()}))),
    );
    out.insert("unread_weights".into(), json!(m.unread_weights));
    out.insert("input_embeddings".into(), role(&m.roles.input_embeddings));
    out.insert("output_head".into(), role(&m.roles.output_head));
    out.insert("position_embeddings".into(), role(&m.roles.positions));
    out.insert("token_type_embeddings".into(), role(&m.roles.token_types));
    out.insert("classifier".into(), role(&m.roles.classifier));
    out.insert("embedding_rows".into(), sourced(&m.embedding_rows()));
    out.insert("usable_positions".into(), sourced(&m.usable_positions()));
    out.insert("type_vocab_size".into(), sourced(&m.type_vocab()));
    out.insert("num_classes".into(), sourced(&m.num_classes()));
    out
}

fn human_summary(m: &ModelDir, report: &Report) -> String {
    let mut s = String::new();
    let c = m.config.as_ref();
    let kind = c
        .and_then(|c| c.model_type.clone())
        .unwrap_or_else(|| "unknown".into());
    let arch = c
        .map(|c| c.architectures.join(", "))
        .filter(|a| !a.is_empty())
        .map(|a| format!(" ({a})"))
        .unwrap_or_default();
    let _ = writeln!(s, "model      {}: {kind}{arch}", m.path.display());
    match c.and_then(|c| c.vocab_size.as_ref()) {
        Some(f) => {
            let _ = writeln!(s, "config     {} {}", f.name, f.value);
        }
        None if c.is_none() => {
            let _ = writeln!(s, "config     no config.json");
        }
        None => {}
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
                t.size.saturating_sub(t.base_size)
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
                w.tensors.len()
            );
            for (what, l) in [
                ("embeddings", &m.roles.input_embeddings),
                ("output", &m.roles.output_head),
                ("positions", &m.roles.positions),
                ("token types", &m.roles.token_types),
                ("classifier", &m.roles.classifier),
            ] {
                if let Some(l) = l {
                    let by = if l.found == devassert_model::Found::Shape {
                        " (by shape)"
                    } else {
                        ""
                    };
                    let _ = writeln!(s, "  {what:<12} {} {:?}{by}", l.tensor.name, l.tensor.shape);
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
    match m.usable_positions() {
        Some(u) => {
            let _ = writeln!(s, "positions  {} usable ({})", u.value, u.from);
        }
        None if m.config.is_some() => {
            let _ = writeln!(
                s,
                "positions  no position table (rotary/relative positions or unknown)"
            );
        }
        None => {}
    }
    if let Some(d) = report.extra.get("data").and_then(Value::as_object) {
        for (what, v) in d {
            let n = v
                .get("files")
                .and_then(Value::as_array)
                .map_or(0, |a| a.len());
            let _ = writeln!(s, "data       {what}: {n} part(s) scanned");
        }
    }
    s.push('\n');
    s
}
