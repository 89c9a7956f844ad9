//! `devassert explain` as a user meets it: the human output of a
//! representative set (snapshots), the JSON contract, and hostile inputs.

mod common;

use predicates::prelude::*;
use serde_json::Value;

fn human(dir: &str, files: &[&str]) -> String {
    let out = common::bin()
        .current_dir(common::fixtures().join(dir))
        .args(["explain", "--color", "never"])
        .args(files)
        .output()
        .expect("run devassert");
    assert!(
        out.status.code() == Some(1),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn snapshot_embedding_multirank() {
    insta::assert_snapshot!(human("logs/own", &["multirank-fallout-first.log"]));
}

#[test]
fn snapshot_launch_blocking_location() {
    insta::assert_snapshot!(human("logs/own", &["launch-blocking.log"]));
}

#[test]
fn snapshot_split_pair() {
    insta::assert_snapshot!(human("logs/own", &["split-job.out", "split-job.err"]));
}

#[test]
fn snapshot_inductor() {
    insta::assert_snapshot!(human("logs/own", &["inductor-tmp-path.log"]));
}

#[test]
fn snapshot_rocm_abort() {
    insta::assert_snapshot!(human("logs/own", &["rocm-abort.log"]));
}

#[test]
fn snapshot_no_kernel_line() {
    insta::assert_snapshot!(human("logs/corpus", &["064.log"]));
}

#[test]
fn snapshot_cpu_indexerror() {
    insta::assert_snapshot!(human("logs/own", &["cpu-indexerror.log"]));
}

#[test]
fn snapshot_bce_corpus() {
    insta::assert_snapshot!(human("logs/corpus", &["025.log"]));
}

#[test]
fn snapshot_dsa_report() {
    insta::assert_snapshot!(human("logs/own", &["dsa-report.log"]));
}

#[test]
fn snapshot_thc_linear_index() {
    insta::assert_snapshot!(human("logs/own", &["thc-linear-index.log"]));
}

#[test]
fn snapshot_vllm_v1_worker() {
    insta::assert_snapshot!(human("logs/own", &["serving-vllm-v1-worker.log"]));
}

fn json(files: &[std::path::PathBuf]) -> (Value, i32) {
    let out = common::bin()
        .args(["explain", "--format", "json"])
        .args(files)
        .output()
        .expect("run devassert");
    common::assert_contract(&[&out.stdout]);
    (
        serde_json::from_slice(&out.stdout).expect("json"),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn json_contract() {
    let own = common::fixtures().join("logs/own");
    let (r, code) = json(&[own.join("multirank-fallout-first.log")]);
    assert_eq!(code, 1, "a failure found: exit 1, as scan and check");
    assert_eq!(r["schema"], "devassert/1");
    assert_eq!(r["command"], "explain");
    assert_eq!(r["exit_code"], 1);
    let f = &r["findings"][0];
    for key in [
        "rule",
        "name",
        "op_family",
        "summary",
        "evidence",
        "location",
        "noticed_at",
        "values",
        "bound",
        "causes",
        "fixes",
    ] {
        assert!(f.get(key).is_some(), "finding lacks {key}");
    }
    assert_eq!(f["evidence"]["kernel"], "vectorized_gather_kernel");
    assert_eq!(
        f["evidence"]["source"],
        "aten/src/ATen/native/cuda/IndexKernelUtils.cu:16"
    );
    assert_eq!(f["evidence"]["threads"], 16);
    assert_eq!(f["evidence"]["blocks"], 2);
    assert!(f["location"].is_null());
    assert_eq!(f["noticed_at"]["file"], "/home/ml/llm/pretrain.py");
    assert_eq!(f["noticed_at"]["line"], 284);
    let confidences: Vec<f64> = f["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| c["confidence"].as_f64().expect("confidence"))
        .collect();
    assert!(
        confidences.windows(2).all(|w| w[0] >= w[1]),
        "causes ranked best first"
    );
    let ids: Vec<&str> = devassert_core::CAUSE_IDS.to_vec();
    assert!(f["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .all(|c| ids.contains(&c["id"].as_str().unwrap_or(""))));
    for fo in r["fallout"].as_array().expect("fallout") {
        assert!(
            fo["kind"].is_string()
                && fo["message"].is_string()
                && fo["count"].as_u64().is_some_and(|c| c > 0)
        );
    }
    let (r, _) = json(&[own.join("inductor-cpu.log")]);
    assert_eq!(
        r["findings"][0]["bound"],
        serde_json::json!({"low": 0, "high": 50257})
    );
}

#[test]
fn no_failure_exits_zero() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("clean.log");
    std::fs::write(&p, "epoch 1 loss 0.5\nepoch 2 loss 0.4\n").expect("write");
    common::bin()
        .arg("explain")
        .arg(&p)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no device-side failure found"));
    let (r, code) = json(&[p]);
    assert_eq!((code, r["exit_code"].as_i64()), (0, Some(0)));
    assert_eq!(r["findings"], serde_json::json!([]));
}

#[test]
fn hostile_inputs_never_panic() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, b"").expect("write");
    let one = tmp.path().join("one.log");
    std::fs::write(&one, b"x").expect("write");
    let binary = tmp.path().join("binary.bin");
    let bytes: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&binary, &bytes).expect("write");
    for p in [&one, &binary] {
        common::bin()
            .arg("explain")
            .arg(p)
            .assert()
            .code(0)
            .stdout(predicate::str::contains("no device-side failure found"));
    }
    // An empty log is not a clean one: nothing was read.
    common::bin()
        .arg("explain")
        .arg(&empty)
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::contains("nothing to explain")
                .and(predicate::str::contains("empty.log is empty")),
        );
    let missing = tmp.path().join("nope.log");
    common::bin()
        .arg("explain")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "nope.log: no such file or directory",
        ));
    let dir = tmp.path().join("empty-dir");
    std::fs::create_dir(&dir).expect("mkdir");
    common::bin()
        .arg("explain")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a directory with no log files"));
    // Stdin: `-`, and no argument with a pipe.
    let log = std::fs::read(common::fixtures().join("logs/corpus/070.log")).expect("read");
    common::bin()
        .args(["explain", "-"])
        .write_stdin(log.clone())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("DA201"));
    common::bin()
        .arg("explain")
        .write_stdin(log)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("read stdin"));
}

#[test]
fn github_format_annotates() {
    let own = common::fixtures().join("logs/own");
    common::bin()
        .args(["explain", "--format", "github"])
        .arg(own.join("launch-blocking.log"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("::error"));
}

#[test]
fn the_crash_traceback_is_kept_after_many_handled_ones() {
    // A job that logged a hundred handled tracebacks before it crashed: the
    // crash's own traceback (the last) still says where it was noticed.
    let mut log = String::new();
    for i in 0..100 {
        log.push_str(&format!("Traceback (most recent call last):\n  File \"/srv/data.py\", line {i}, in load\n    row = json.loads(line)\njson.decoder.JSONDecodeError: Extra data: line 1 column 9 (char 8)\n"));
    }
    log.push_str("../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [3,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\nTraceback (most recent call last):\n  File \"/srv/train.py\", line 118, in main\n    print(loss.item())\nRuntimeError: CUDA error: device-side assert triggered\n");
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("job.log");
    std::fs::write(&path, log).expect("write");
    let (v, _) = json(&[path]);
    assert_eq!(
        v["findings"][0]["noticed_at"]["line"], 118,
        "{}",
        v["findings"][0]
    );
}

#[test]
fn snapshot_cut_traceback() {
    // A paste cut before its error line: a note (exit 0) that asks for it.
    let out = common::bin()
        .current_dir(common::fixtures().join("logs/own"))
        .args(["explain", "--color", "never", "cut-traceback.log"])
        .output()
        .expect("run devassert");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    insta::assert_snapshot!(String::from_utf8(out.stdout).expect("utf-8 output"));
}
