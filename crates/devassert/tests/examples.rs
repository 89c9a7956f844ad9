//! The README tour's examples (`examples/`), each run through the built binary
//! with the arguments the README shows, and checked against what the example
//! holds, read here from the files themselves: the crash log's cause, the ids
//! of `tokens.jsonl` past the model's vocabulary, the tiny model's added
//! tokens, and `train.py` stopped at the line that calls the embedding, on the
//! first batch holding a bad id (real PyTorch on CPU). And `python -m
//! devassert` without a binary saying how to build one from this repository.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn examples() -> PathBuf {
    common::repo_root().join("examples")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The README's tour shows `command` as it is run here.
fn shown_in_readme(command: &str) {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).expect("README");
    assert!(
        readme.contains(command),
        "the README's tour no longer shows `{command}`; keep it and this test together"
    );
}

/// `devassert --format json ARGS` from the repository root: (exit code, report).
fn json_of(args: &[&str]) -> (i32, Value) {
    let out = common::bin()
        .current_dir(common::repo_root())
        .args(["--format", "json"])
        .args(args)
        .output()
        .expect("run devassert");
    let code = out.status.code().expect("exit code");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(json["exit_code"], code, "{json}");
    (code, json)
}

/// The model's embedding rows: `vocab_size` of tiny-model/config.json.
fn model_vocab() -> u64 {
    read_json(&examples().join("tiny-model/config.json"))["vocab_size"]
        .as_u64()
        .expect("vocab_size")
}

/// (row, offset, id) of every id of tokens.jsonl at or past `vocab`.
fn ids_past(vocab: u64) -> Vec<(u64, u64, u64)> {
    let text = std::fs::read_to_string(examples().join("tokens.jsonl")).expect("tokens.jsonl");
    let mut past = Vec::new();
    for (row, line) in text.lines().enumerate() {
        let record: Value = serde_json::from_str(line).expect("a JSON record");
        let ids = record["input_ids"].as_array().expect("input_ids");
        for (offset, id) in ids.iter().enumerate() {
            let id = id.as_u64().expect("a token id");
            if id >= vocab {
                past.push((row as u64, offset as u64, id));
            }
        }
    }
    past
}

#[test]
fn explain_names_the_crash_logs_op_and_its_added_tokens() {
    shown_in_readme("scripts/devassert explain examples/crash-embedding.log");
    let (code, json) = json_of(&["explain", "examples/crash-embedding.log"]);
    assert_eq!(code, 1, "{json}");
    let f = &json["findings"][0];
    assert_eq!(f["rule"], "DA101", "{json}");
    // The log says "Added 4 tokens: [...] -> vocab 50261" before the crash.
    assert_eq!(f["causes"][0]["id"], "added_tokens_no_resize", "{f}");
}

#[test]
fn scan_finds_every_id_past_the_models_vocabulary() {
    let vocab = model_vocab();
    shown_in_readme(&format!(
        "scripts/devassert scan examples/tokens.jsonl --vocab {vocab}"
    ));
    let planted = ids_past(vocab);
    assert!(!planted.is_empty(), "tokens.jsonl holds no id >= {vocab}");
    let (code, json) = json_of(&[
        "scan",
        "examples/tokens.jsonl",
        "--vocab",
        &vocab.to_string(),
    ]);
    assert_eq!(code, 1, "{json}");
    let findings = json["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{json}");
    let f = &findings[0];
    assert_eq!(f["rule"], "DA101");
    assert_eq!(f["count"], planted.len(), "{f}");
    assert_eq!(f["bound"]["high"], vocab);
    let found: Vec<(u64, u64, u64)> = f["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| {
            assert_eq!(l["file"], "examples/tokens.jsonl");
            let n = |k: &str| l[k].as_u64().unwrap_or_else(|| panic!("{k} in {l}"));
            (n("row"), n("offset"), n("value"))
        })
        .collect();
    assert_eq!(found, planted);
}

#[test]
fn check_finds_the_added_tokens_the_embedding_lacks() {
    shown_in_readme("scripts/devassert check examples/tiny-model");
    let vocab = model_vocab();
    let tokenizer = read_json(&examples().join("tiny-model/tokenizer.json"));
    let added: Vec<u64> = tokenizer["added_tokens"]
        .as_array()
        .expect("added_tokens")
        .iter()
        .filter_map(|t| t["id"].as_u64())
        .filter(|&id| id >= vocab)
        .collect();
    assert!(
        !added.is_empty(),
        "tiny-model's tokenizer adds no id >= {vocab}"
    );
    let (code, json) = json_of(&["check", "examples/tiny-model"]);
    assert_eq!(code, 1, "{json}");
    let errors: Vec<&Value> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{json}");
    let f = errors[0];
    assert_eq!(f["rule"], "DA101");
    assert_eq!(f["causes"][0]["id"], "added_tokens_no_resize", "{f}");
    assert_eq!(f["values"], serde_json::json!(added), "{f}");
    assert_eq!(f["bound"]["high"], vocab);
}

#[test]
fn run_stops_train_py_at_the_embedding_on_the_first_bad_batch() {
    shown_in_readme("scripts/devassert run -- python examples/train.py");
    let source = std::fs::read_to_string(examples().join("train.py")).expect("train.py");
    let line = source
        .lines()
        .position(|l| l.contains("self.embed(ids)"))
        .expect("train.py calls self.embed(ids)")
        + 1;
    let first_bad_row = ids_past(model_vocab())[0].0;
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("run.json");
    let out = common::bin()
        .current_dir(common::repo_root())
        .args(["--color", "never", "run", "--report"])
        .arg(&report)
        .arg("--")
        .arg(common::python())
        .arg("examples/train.py")
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .expect("run devassert run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The program's own exit code: the guard's exception ended it.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    // train.py batches two rows; the batches before the bad row train.
    let batches_before = first_bad_row / 2;
    for step in 0..batches_before {
        assert!(stdout.contains(&format!("step {step}: loss")), "{stdout}");
    }
    assert!(
        !stdout.contains(&format!("step {batches_before}:")),
        "{stdout}"
    );
    let json = read_json(&report);
    let f = &json["findings"][0];
    assert_eq!(f["rule"], "DA101", "{json}");
    assert_eq!(f["evidence"]["source"], "guard", "{f}");
    let file = f["location"]["file"].as_str().expect("location.file");
    assert!(file.ends_with("examples/train.py"), "{f}");
    assert_eq!(f["location"]["line"], line, "{f}");
    assert_eq!(f["samples"][0]["dataset_index"], first_bad_row, "{f}");
    assert!(stderr.contains("error[DA101]"), "{stderr}");
}

#[test]
fn python_m_devassert_without_a_binary_says_how_to_build_one_here() {
    // The guard from the checkout, and a PATH with no devassert on it.
    let empty = tempfile::tempdir().expect("tempdir");
    let root = common::repo_root();
    let out = Command::new(common::python())
        .args(["-m", "devassert", "--version"])
        .env("PYTHONPATH", root.join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PATH", empty.path())
        .output()
        .expect("run python -m devassert");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let build = root.join("scripts/build-wheel");
    assert!(build.is_file(), "the message names {}", build.display());
    assert!(stderr.contains(&*build.to_string_lossy()), "{stderr}");
    assert!(stderr.contains("-m pip install "), "{stderr}");
    assert!(
        stderr.contains(&*root.join("dist").to_string_lossy()),
        "{stderr}"
    );
    assert!(!stderr.contains("pip install devassert"), "{stderr}");
}
