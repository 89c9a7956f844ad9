//! `explain` on Inductor asserts of real compiled programs (CPU runs, see
//! fixtures/inductor/README.md): the kernel that asserted, the ATen op it
//! was built from and its rule, what `ksN` is, and the user's line, read from
//! the generated code in the log or in `--inductor-dir`; without it, which
//! flag or folder would give it.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    common::fixtures().join("inductor")
}

fn explain(args: &[&str]) -> Value {
    let out = common::bin()
        .current_dir(dir())
        .args(["explain", "--format", "json", "--no-source"])
        .args(args)
        .output()
        .expect("run devassert");
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    let f = report["findings"][0].clone();
    assert_eq!(f["rule"], "DA401", "{f:#}");
    f
}

fn location(f: &Value) -> (String, u64) {
    let loc = &f["location"];
    let file = loc["file"].as_str().unwrap_or_default();
    let name = Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    (name.unwrap_or_default(), loc["line"].as_u64().unwrap_or(0))
}

#[test]
fn output_code_in_the_log_names_the_embedding_and_the_users_line() {
    let f = explain(&["embed.output_code.log"]);
    assert_eq!(location(&f), ("embed.py".into(), 8));
    assert_eq!(f["location"]["code"], "h = vocab(ids)");
    assert_eq!(f["evidence"]["op"], "aten.embedding");
    assert_eq!(f["evidence"]["op_rule"], "DA101");
    let g = &f["evidence"]["generated_code"];
    assert_eq!(g["kernel"], "cpp_fused_embedding_mean_relu_0");
    assert_eq!(g["bound"]["expr"], "100L");
    // The generated wrapper's line is kept as where Python noticed it.
    assert_eq!(f["noticed_at"]["function"], "call");
}

#[test]
fn a_dynamic_bound_is_named_as_the_size_it_is() {
    let f = explain(&[
        "--inductor-dir",
        "lookup.torch_compile_debug",
        "lookup.output_code.log",
    ]);
    assert_eq!(location(&f), ("lookup.py".into(), 5));
    assert_eq!(f["location"]["code"], "rows = table[idx]");
    assert_eq!(f["evidence"]["op"], "aten.index");
    assert_eq!(f["evidence"]["op_rule"], "DA111");
    let ks2 = &f["evidence"]["generated_code"]["bound"]["symbols"]["ks2"];
    assert_eq!(ks2["symbol"], "s70");
    assert_eq!(
        (ks2["input"].as_str(), ks2["dim"].as_u64()),
        (Some("arg2_1"), Some(0))
    );
    let note = f["evidence"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("the size of dimension 0 of arg2_1 (f32[s70, s44]), argument 0 of aten.index (`rows = table[idx]`)"),
        "{note}"
    );
}

#[test]
fn the_folder_is_named_and_another_compiles_folder_is_told_apart() {
    let f = explain(&[
        "--inductor-dir",
        "lookup.torch_compile_debug",
        "lookup.output_code.log",
    ]);
    let from = f["evidence"]["generated_code"]["from"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(from, "lookup.torch_compile_debug");
    let plain = explain(&[
        "--inductor-dir",
        "lookup.torch_compile_debug",
        "embed.plain.log",
    ]);
    // Another compile's folder: the kernel is not there, and explain says so.
    assert_eq!(plain["evidence"]["generated_code"]["kernel_found"], false);
    assert!(plain["fixes"][0]
        .as_str()
        .unwrap_or_default()
        .contains("from another compile"));
}

#[test]
fn output_code_without_a_graph_names_the_op_and_how_to_get_the_line() {
    let f = explain(&["lookup.output_code.log"]);
    assert_eq!(f["evidence"]["op_rule"], "DA111");
    assert_eq!(
        f["location"]["function"], "call",
        "no graph: the line stays the wrapper's"
    );
    let note = f["evidence"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("TORCH_LOGS=output_code,post_grad_graphs"),
        "{note}"
    );
}

#[test]
fn a_fused_cross_entropy_is_the_loss_rule_at_the_users_line() {
    let f = explain(&["loss.output_code.log"]);
    assert_eq!(f["evidence"]["op"], "aten.nll_loss_forward");
    assert_eq!(f["evidence"]["op_rule"], "DA201");
    assert_eq!(location(&f), ("loss.py".into(), 7));
    assert_eq!(
        f["location"]["code"],
        "return F.cross_entropy(scores, labels)"
    );
}

#[test]
fn without_generated_code_the_finding_says_which_flag_or_folder() {
    let f = explain(&["embed.plain.log"]);
    let g = &f["evidence"]["generated_code"];
    assert!(g["from"].is_null());
    assert_eq!(g["kernel"], "cpp_fused_embedding_mean_relu_0");
    let cache = g["cache_dir"].as_str().unwrap_or_default();
    assert!(cache.starts_with("/tmp/torchinductor_root/tmp"), "{cache}");
    let fix = f["fixes"][0].as_str().unwrap_or_default();
    assert!(
        fix.contains("TORCH_LOGS=output_code,post_grad_graphs"),
        "{fix}"
    );
    assert!(fix.contains("TORCH_COMPILE_DEBUG=1"), "{fix}");
    assert!(fix.contains(&format!("--inductor-dir {cache}")), "{fix}");
    assert!(f["evidence"].get("op").is_none());
}

#[test]
fn human_output_names_the_op_and_line() {
    let out = common::bin()
        .current_dir(dir())
        .args([
            "explain",
            "--color",
            "never",
            "--no-source",
            "embed.output_code.log",
        ])
        .output()
        .expect("run devassert");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // The cache folder's name is random per run.
    let text = regex_lite_replace(&text);
    insta::assert_snapshot!(text);
}

/// `/tmp/torchinductor_root/tmpXXXXXXXX/` → a fixed name.
fn regex_lite_replace(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    let key = "/tmp/torchinductor_root/tmp";
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        rest = &rest[i + key.len()..];
        let end = rest.find('/').unwrap_or(rest.len());
        out.push_str("XXXXXXXX");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn a_symlink_out_of_the_folder_is_not_followed() {
    let tmp = std::env::temp_dir().join(format!("devassert-inductor-{}", std::process::id()));
    let inside = tmp.join("inside");
    let outside = tmp.join("outside");
    std::fs::create_dir_all(&inside).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let model = dir().join("lookup.torch_compile_debug/run_2026_12_05_20_06_03_196507-pid_12450/torchinductor/model__0_inference_0.0");
    for name in ["output_code.py", "fx_graph_readable.py"] {
        std::fs::copy(model.join(name), outside.join(name)).expect("copy");
    }
    std::os::unix::fs::symlink(&outside, inside.join("linked")).expect("symlink");
    let out = common::bin()
        .current_dir(dir())
        .args([
            "explain",
            "--format",
            "json",
            "--no-source",
            "--inductor-dir",
        ])
        .arg(&inside)
        .arg("embed.plain.log")
        .output()
        .expect("run devassert");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("linked") && stderr.contains("not followed"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = &report["findings"][0];
    assert!(f["evidence"]["generated_code"]["from"].is_null());
    assert!(
        f["fixes"][0]
            .as_str()
            .unwrap_or_default()
            .contains("holds no Inductor output code"),
        "{f:#}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn an_inductor_dir_that_is_not_a_folder_is_unusable_input() {
    let out = common::bin()
        .current_dir(dir())
        .args(["explain", "--inductor-dir", "embed.py", "embed.plain.log"])
        .output()
        .expect("run devassert");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("embed.py"));
}

/// A folder past the walk's 100,000 entries: said on stderr and in the
/// JSON (`skipped`), and the advice does not name the very folder again.
#[test]
fn a_folder_past_its_entries_is_said_and_not_advised_again() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The cache folder the crash's wrapper names, holding the bound's
    // worth of files that are not Inductor's code, and one more.
    let cache = tmp.path().join("torchinductor/tmpmfb5vncz");
    std::fs::create_dir_all(&cache).expect("mkdir");
    for i in 0..=100_000 {
        std::fs::File::create(cache.join(format!("f{i:06}.txt"))).expect("create");
    }
    let log = std::fs::read_to_string(dir().join("embed.plain.log"))
        .expect("log")
        .replace(
            "/tmp/torchinductor_root",
            &format!("{}/torchinductor", tmp.path().display()),
        );
    let log_path = tmp.path().join("crash.log");
    std::fs::write(&log_path, log).expect("write log");
    let named = cache;
    let out = common::bin()
        .args([
            "explain",
            "--format",
            "json",
            "--no-source",
            "--inductor-dir",
        ])
        .arg(&named)
        .arg(&log_path)
        .output()
        .expect("run devassert");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("more than 100000 entries"), "{err}");
    common::assert_contract(&[&out.stdout]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let skipped = v["skipped"].as_array().cloned().unwrap_or_default();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0]["why"]
        .as_str()
        .unwrap_or_default()
        .contains("100000 entries"));
    let fix = v["findings"][0]["fixes"][0].as_str().unwrap_or_default();
    assert!(fix.contains("read only in part"), "{fix}");
    assert!(
        !fix.contains(&format!("--inductor-dir {}", named.display())),
        "{fix}"
    );
}

/// Generated code past the 96 MiB read from a folder in all: the file
/// where the read stopped is named, with the bound.
#[test]
fn the_total_read_from_a_folder_is_said() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Four files of 32 MiB (sparse: no disk is used): the fourth is past
    // 96 MiB.
    for i in 0..4 {
        let f = std::fs::File::create(tmp.path().join(format!("m{i:02}.py"))).expect("create");
        f.set_len(32 << 20).expect("set_len");
    }
    let out = common::bin()
        .current_dir(dir())
        .args([
            "explain",
            "--format",
            "json",
            "--no-source",
            "--inductor-dir",
        ])
        .arg(tmp.path())
        .arg("embed.plain.log")
        .output()
        .expect("run devassert");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("m03.py") && err.contains("96 MiB"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let skipped = v["skipped"].as_array().cloned().unwrap_or_default();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0]["path"]
        .as_str()
        .unwrap_or_default()
        .ends_with("m03.py"));
}
