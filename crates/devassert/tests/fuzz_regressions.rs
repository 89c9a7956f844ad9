//! Every input the fuzzers found (fuzz/regressions/<target>-<kind>-<hash>)
//! replayed through the built binary the way its target feeds it, under a
//! 1 GiB address-space limit: it must finish with a clear answer (exit 0, 1
//! or 2), not a signal, not an allocation the file's size cannot justify,
//! not a panic (which devassert reports as an internal error, exit 2).

mod common;

use common::repo_root;
use devassert_model::MODEL_FILES;
use devassert_scan::format::FORMATS;
use std::path::Path;
use std::process::Command;

/// The devassert command line that replays `data` as target `target` does,
/// with the input files written under `dir`.
fn replay_args(target: &str, data: &[u8], dir: &Path) -> Vec<String> {
    match target {
        "scan_formats" => {
            let (&sel, body) = data.split_first().expect("a selector byte");
            let format = FORMATS[sel as usize % FORMATS.len()].format;
            let path = dir.join(format!("input.{}", format.extension()));
            std::fs::write(&path, body).expect("write input");
            [
                "scan",
                "--input-format",
                format.name(),
                "--vocab",
                "1000",
                "--limit",
                "5",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([path.display().to_string()])
            .collect()
        }
        "log_reader" => {
            let path = dir.join("fuzz.log");
            std::fs::write(&path, data).expect("write input");
            vec!["explain".into(), path.display().to_string()]
        }
        "model_dir" => {
            // As fuzz_targets/model_dir.rs: the selected file next to a valid config.
            let (&sel, body) = data.split_first().expect("a selector byte");
            let model = dir.join("model");
            std::fs::create_dir_all(&model).expect("model dir");
            let config = r#"{"model_type": "bert", "vocab_size": 100, "max_position_embeddings": 64, "type_vocab_size": 2, "pad_token_id": 0}"#;
            std::fs::write(model.join("config.json"), config).expect("write config");
            std::fs::write(
                model.join(MODEL_FILES[sel as usize % MODEL_FILES.len()]),
                body,
            )
            .expect("write input");
            vec!["check".into(), model.display().to_string()]
        }
        t => panic!("no replay for fuzz target {t}: add one to this test"),
    }
}

#[test]
fn fuzz_regressions_replay_cleanly() {
    let dir = repo_root().join("fuzz/regressions");
    let exe = assert_cmd::cargo::cargo_bin("devassert");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/regressions") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            continue;
        }
        let target = name.split('-').next().unwrap_or_default();
        let tmp = tempfile::tempdir().expect("temp dir");
        let data = std::fs::read(&path).expect("read regression input");
        let args = replay_args(target, &data, tmp.path());
        let out = Command::new("sh")
            .args(["-c", "ulimit -v 1048576 && exec \"$0\" \"$@\""])
            .arg(&exe)
            .args(&args)
            .output()
            .expect("run devassert");
        let code = out.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "{name}: devassert {args:?} ended with {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // A panic caught is an internal error, exit 2: still a bug.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("internal error") && !stderr.contains("panicked"),
            "{name}: devassert {args:?} crashed:\n{stderr}"
        );
        replayed += 1;
    }
    assert!(replayed > 0, "no regression inputs in {}", dir.display());
}
