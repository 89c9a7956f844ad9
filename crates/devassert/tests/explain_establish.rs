//! A crash log with the user's own files beside it (the script, a model
//! directory, a data file): the cause is established, with the file and
//! line or the data place that proves it, and ranks first. Without the
//! files the same log gives the old "likely" ranking.

mod common;

use serde_json::Value;
use std::path::Path;

fn causes(cwd: &Path, extra: &[&str], log: &Path) -> Vec<Value> {
    let out = common::bin()
        .current_dir(cwd)
        .args(["explain", "--format", "json"])
        .arg(log)
        .args(extra)
        .output()
        .expect("run devassert");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    v["findings"][0]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn ids(c: &[Value]) -> Vec<String> {
    c.iter()
        .filter_map(|c| c["id"].as_str())
        .map(String::from)
        .collect()
}

/// Project `name`: with `extra`, `cause` is established first with a proof
/// holding `proof`; the log alone establishes nothing and ranks as before.
fn check(name: &str, extra: &[&str], cause: &str, proof: &str) {
    let dir = common::fixtures().join("projects").join(name);
    let log = dir.join("crash.log");
    let with = causes(&dir, extra, &log);
    assert_eq!(with[0]["id"], cause, "{name}: {with:?}");
    assert_eq!(with[0]["established"], true, "{name}: {with:?}");
    let p = with[0]["proof"].as_str().unwrap_or_default();
    assert!(p.contains(proof), "{name}: proof {p:?} lacks {proof:?}");
    // The log alone, read elsewhere: nothing established, no proof, the likely ranking.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let alone = causes(elsewhere.path(), &[], &log);
    assert!(
        alone
            .iter()
            .all(|c| c["established"] == false && c.get("proof").is_none()),
        "{name}: {alone:?}"
    );
    assert_eq!(ids(&alone), ids(&causes(&dir, &["--no-source"], &log)));
}

#[test]
fn added_tokens_without_resize() {
    check(
        "added-tokens",
        &[],
        "added_tokens_no_resize",
        "train.py:5 adds tokens",
    );
}

#[test]
fn added_tokens_measured_in_the_model_dir() {
    // The script adds nothing itself: the saved tokenizer already holds the
    // tokens, and only the model directory shows the embedding is smaller.
    check(
        "added-tokens-model",
        &["--model", "model"],
        "added_tokens_no_resize",
        "the tokenizer has 2 added token(s) with ids 8..=9 past the embedding's 8 rows",
    );
}

#[test]
fn pad_token_set_to_a_new_token() {
    let dir = common::fixtures().join("projects/pad-token");
    let c = causes(&dir, &[], &dir.join("crash.log"));
    let pad = c
        .iter()
        .find(|c| c["id"] == "pad_token_id_out_of_range")
        .expect("pad cause");
    assert_eq!(pad["established"], true);
    assert!(pad["proof"]
        .as_str()
        .is_some_and(|p| p.starts_with("train.py:5 ")));
}

#[test]
fn bce_without_sigmoid() {
    check("bce-logits", &[], "bce_on_logits", "train.py:5 uses a loss");
}

#[test]
fn masks_with_a_loss_that_ignores_nothing() {
    check(
        "mask-no-ignore",
        &["--data", "mask_0042.npy", "--classes", "3"],
        "ignore_label_not_ignored",
        "data holds 255 at mask_0042.npy",
    );
    // 255 is the void label: the hard-coded num_classes is not what it proves.
    let dir = common::fixtures().join("projects/mask-no-ignore");
    let c = causes(
        &dir,
        &["--data", "mask_0042.npy", "--classes", "3"],
        &dir.join("crash.log"),
    );
    assert!(c
        .iter()
        .all(|c| c["id"] != "label_ge_num_classes" || c["established"] == false));
}

#[test]
fn hard_coded_num_classes() {
    check(
        "num-classes",
        &[],
        "label_ge_num_classes",
        "train.py:4 hard-codes `num_classes = 5` but label 7",
    );
}

#[test]
fn generation_past_the_position_table() {
    check(
        "long-generate",
        &["--model", "model"],
        "seq_len_gt_max_positions",
        "chat.py:6 generates up to 2048 tokens",
    );
}

#[test]
fn token_ids_past_the_vocabulary_in_the_data() {
    check(
        "data-tokens",
        &["--data", "tokens.npy", "--vocab", "1000"],
        "token_id_ge_vocab",
        "data holds 1001, 1003 at tokens.npy",
    );
}

#[test]
fn data_without_a_range_is_a_clear_error() {
    let dir = common::fixtures().join("projects/data-tokens");
    let out = common::bin()
        .current_dir(&dir)
        .args(["explain", "crash.log", "--data", "tokens.npy"])
        .output()
        .expect("run devassert");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--vocab N, --classes N, or --model DIR"));
}

// Each model-dir cause, measured from `--model` when the log points at its
// table: the config's size against the log's value, bound or frame.

#[test]
fn type_vocab_size_from_a_roberta_config() {
    // RoBERTa's token type table has one row: a pair's type id 1 runs past it.
    check(
        "roberta-type-vocab",
        &["--model", "model"],
        "type_vocab_size",
        "the token type table has 1 row(s)",
    );
}

#[test]
fn seq_len_from_the_config_positions() {
    check(
        "bert-long-input",
        &["--model", "model"],
        "seq_len_gt_max_positions",
        "512 usable positions",
    );
}

#[test]
fn pad_token_id_from_the_config() {
    check(
        "llama-pad-config",
        &["--model", "model"],
        "pad_token_id_out_of_range",
        "pad_token_id",
    );
}

#[test]
fn labels_from_the_config_classes() {
    check(
        "classifier-labels",
        &["--model", "model"],
        "label_ge_num_classes",
        "3 classes; the log's label 3 is >= 3",
    );
}

/// `--data` naming a folder with nothing devassert reads in it: said on
/// stderr and in the JSON (`data`'s `errors`), exit 2 as `scan` and `check`
/// give, though the log's failure is still explained.
#[test]
fn data_with_nothing_readable_is_said() {
    let dir = common::fixtures().join("projects/data-tokens");
    let empty = tempfile::tempdir().expect("tempdir");
    std::fs::write(empty.path().join("notes.txt"), "not data\n").expect("write");
    let run = |format: &str| {
        common::bin()
            .current_dir(&dir)
            .args([
                "explain",
                "crash.log",
                "--vocab",
                "1000",
                "--format",
                format,
                "--data",
            ])
            .arg(empty.path())
            .output()
            .expect("run devassert")
    };
    let out = run("json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("devassert: error: --data"), "{err}");
    assert!(err.contains(&empty.path().display().to_string()), "{err}");
    common::assert_contract(&[&out.stdout]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["exit_code"], 2);
    assert_eq!(v["findings"][0]["rule"], "DA101", "the log is explained");
    let errors = v["data"]["tokens"]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(errors.len(), 1, "{v:#}");
    assert_eq!(errors[0]["file"], empty.path().display().to_string());
    let human = run("human");
    assert_eq!(human.status.code(), Some(2));
    let err = String::from_utf8_lossy(&human.stderr);
    assert!(err.contains("devassert: error: --data"), "{err}");
    // Readable data is no error, and its scan is in the report as well.
    let ok = common::bin()
        .current_dir(&dir)
        .args([
            "explain",
            "crash.log",
            "--vocab",
            "1000",
            "--format",
            "json",
            "--data",
            "tokens.npy",
        ])
        .output()
        .expect("run devassert");
    assert_eq!(ok.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&ok.stdout).expect("json");
    assert_eq!(v["data"]["tokens"]["errors"], serde_json::json!([]));
}
