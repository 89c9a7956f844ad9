//! JSON Lines: one object per line; `--column` is a dotted field path whose
//! value is an integer or an array of integers.

use super::reader::{Input, Reader};
use crate::error::{bad, Result};
use crate::format::InputFormat;
use crate::options::{ScanOptions, Target};
use crate::values::{Layout, Part, Values};
use serde_json::Value;

pub struct Jsonl;

fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, key| match v {
        Value::Object(m) => m.get(key),
        Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

fn int(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_u64().map(|u| i64::try_from(u).unwrap_or(i64::MAX)))
}

impl Reader for Jsonl {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let text =
            std::str::from_utf8(input.data()).map_err(|e| bad(format!("not UTF-8 text: {e}")))?;
        let mut field: Option<String> = opts.column.clone();
        let mut values = Vec::new();
        let mut offsets = vec![0u64];
        let mut any_array = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let lineno = n + 1;
            let obj: Value = serde_json::from_str(line)
                .map_err(|e| bad(format!("line {lineno}: not valid JSON: {e}")))?;
            let path = match &field {
                Some(f) => f.clone(),
                None => {
                    let chosen = default_field(&obj, opts.target).ok_or_else(|| {
                        let keys: Vec<&str> = obj
                            .as_object()
                            .map(|m| m.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        bad(format!(
                            "line {lineno}: pass --column to choose a field (fields: {})",
                            keys.join(", ")
                        ))
                    })?;
                    field = Some(chosen.clone());
                    chosen
                }
            };
            let v = lookup(&obj, &path)
                .ok_or_else(|| bad(format!("line {lineno}: no field {path:?}")))?;
            match v {
                Value::Array(items) => {
                    any_array = true;
                    for (j, item) in items.iter().enumerate() {
                        values.push(int(item).ok_or_else(|| {
                            bad(format!(
                                "line {lineno}: {path}[{j}] is {item}, not an integer"
                            ))
                        })?);
                    }
                }
                Value::Null => {}
                other => values.push(int(other).ok_or_else(|| {
                    bad(format!("line {lineno}: {path} is {other}, not an integer"))
                })?),
            }
            offsets.push(values.len() as u64);
        }
        let scalars = !any_array && offsets.windows(2).all(|w| w[1] - w[0] == 1);
        let layout = if scalars {
            Layout::Scalars
        } else {
            Layout::Rows { offsets }
        };
        let label = if any_array { "array<int>" } else { "int" };
        Ok(vec![Part {
            name: field,
            format: InputFormat::Jsonl,
            dtype_label: label.into(),
            data: Values::from_i64(values).into(),
            layout,
            shape: None,
        }])
    }
}

fn default_field(obj: &Value, target: Target) -> Option<String> {
    let usual: &[&str] = match target {
        Target::Tokens => &["input_ids", "tokens", "token_ids", "ids"],
        Target::Labels => &["labels", "label", "target", "class", "class_id"],
    };
    usual
        .iter()
        .find(|k| lookup(obj, k).is_some())
        .map(|k| k.to_string())
}
