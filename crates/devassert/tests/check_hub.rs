//! `devassert check` on models as users keep them: a Hub id (`org/name`,
//! `@revision`) or a Hugging Face cache folder, resolved in the local cache
//! only. The cache is built by `tests/support/make_hub_cache.py` with
//! huggingface_hub's own layout code (blobs, snapshot symlinks, refs) and
//! read back by the library before any test uses it.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// HF_HOME of the built cache (its models under `hub/`), made once per run.
fn hf_home() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hf-home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/make_hub_cache.py");
        let out = Command::new(common::python())
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run make_hub_cache.py");
        assert!(
            out.status.success(),
            "make_hub_cache.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn hub() -> PathBuf {
    hf_home().join("hub")
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(hf_home().join("manifest.json")).unwrap()).unwrap()
}

/// `devassert check ARGS --format json` with only `env` set of the cache variables.
fn check(env: &[(&str, &Path)], args: &[&str]) -> (i32, Option<Value>, String) {
    let mut cmd = common::bin();
    for k in [
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "HF_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["check", "--format", "json"])
        .args(args)
        .output()
        .expect("run devassert");
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).ok(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn snapshot(id: &str) -> String {
    manifest()[id]["snapshot"].as_str().unwrap().to_string()
}

#[test]
fn hub_ids_resolve_in_the_local_cache_wherever_huggingface_hub_keeps_it() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".cache")).unwrap();
    std::os::unix::fs::symlink(hf_home(), home.path().join(".cache/huggingface")).unwrap();
    let hub = hub();
    let envs: [&[(&str, &Path)]; 3] = [
        &[("HF_HUB_CACHE", &hub)],
        &[("HF_HOME", hf_home())],
        // The default: ~/.cache/huggingface/hub (here a link to the cache, as users make).
        &[("HOME", home.path())],
    ];
    let m = manifest();
    let commit = m["devassert-test/tiny-bert"]["commit"].as_str().unwrap();
    for env in envs {
        for id in [
            "devassert-test/tiny-bert".to_string(),
            "devassert-test/tiny-bert@v1.0".to_string(),
            format!("devassert-test/tiny-bert@{commit}"),
        ] {
            let (code, json, err) = check(env, &[&id]);
            assert_eq!(code, 0, "{id} with {env:?}: {err}");
            let dir = json.unwrap()["model"]["dir"].as_str().unwrap().to_string();
            assert!(
                Path::new(&dir).ends_with(format!("snapshots/{commit}")),
                "{id}: {dir}"
            );
        }
    }
    // Read through the blob links: the planted added tokens are found.
    let (code, json, err) = check(
        &[("HF_HUB_CACHE", &hub)],
        &["devassert-test/tiny-bert-added"],
    );
    assert_eq!(code, 1, "{err}");
    let json = json.unwrap();
    assert_eq!(
        json["model"]["dir"],
        snapshot("devassert-test/tiny-bert-added")
    );
    assert!(
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["causes"][0]["id"] == "added_tokens_no_resize"),
        "{json:#}"
    );
}

#[test]
fn a_cache_folder_holding_several_models_lists_them_and_asks_which() {
    for named in [hub(), hf_home().to_path_buf()] {
        let (code, _, err) = check(&[], &[named.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("a Hugging Face cache holding 2 models (devassert-test/tiny-bert, devassert-test/tiny-bert-added)")
                && err.contains("say which one")
                && err.contains("HF_HUB_CACHE="),
            "{err}"
        );
    }
    // Its own cache: the id alone is the answer.
    let (_, _, err) = check(&[("HF_HUB_CACHE", &hub())], &[hub().to_str().unwrap()]);
    assert!(
        err.contains("e.g. `devassert check devassert-test/tiny-bert`"),
        "{err}"
    );
    // A repository folder of the cache, and a cache of one model, are that model.
    let repo = hub().join("models--devassert-test--tiny-bert");
    let (code, json, err) = check(&[], &[repo.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        json.unwrap()["model"]["dir"],
        format!(
            "{}/snapshots/{}",
            repo.display(),
            manifest()["devassert-test/tiny-bert"]["commit"]
                .as_str()
                .unwrap()
        )
    );
    let one = tempfile::tempdir().unwrap();
    copy_repo(&repo, one.path());
    let (code, json, err) = check(&[], &[one.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(json.unwrap()["model"]["dir"]
        .as_str()
        .unwrap()
        .starts_with(one.path().to_str().unwrap()));
}

/// A copy of a cache repository (its links kept as links) under `root`.
fn copy_repo(repo: &Path, root: &Path) -> PathBuf {
    let st = Command::new("cp")
        .arg("-a")
        .arg(repo)
        .arg(root)
        .status()
        .expect("cp -a");
    assert!(st.success());
    root.join(repo.file_name().unwrap())
}

#[test]
fn what_is_not_there_is_named_and_nothing_is_downloaded() {
    let hub = hub();
    let (code, _, err) = check(&[("HF_HUB_CACHE", &hub)], &["meta-llama/Llama-3.2-1B"]);
    assert_eq!(code, 2);
    let looked = hub.join("models--meta-llama--Llama-3.2-1B");
    assert!(
        err.contains("meta-llama/Llama-3.2-1B: no such file or directory, and not in the local Hugging Face cache")
            && err.contains(&format!("looked in {}", looked.display())),
        "{err}"
    );
    let (code, _, err) = check(&[("HF_HUB_CACHE", &hub)], &["devassert-test/tiny-bert@v9"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("devassert-test/tiny-bert@v9: no such revision"),
        "{err}"
    );
    for path in ["./nonexist", "/nonexistent/model"] {
        let (code, _, err) = check(&[("HF_HUB_CACHE", &hub)], &[path]);
        assert_eq!(code, 2);
        assert!(
            err.contains(&format!("{path}: no such file or directory")),
            "{err}"
        );
    }
}

#[test]
fn a_cache_entry_leading_out_of_the_cache_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.json"), "{\"vocab_size\": 1}").unwrap();
    let commit = manifest()["devassert-test/tiny-bert"]["commit"]
        .as_str()
        .unwrap()
        .to_string();
    let fresh = || {
        let root = tempfile::tempdir().unwrap();
        let repo = copy_repo(
            &hub().join("models--devassert-test--tiny-bert"),
            root.path(),
        );
        (root, repo)
    };

    // A snapshot file linked to a file outside the cache.
    let (root, repo) = fresh();
    let config = repo.join("snapshots").join(&commit).join("config.json");
    std::fs::remove_file(&config).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.json"), &config).unwrap();
    let (code, _, err) = check(
        &[("HF_HUB_CACHE", root.path())],
        &["devassert-test/tiny-bert"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("config.json") && err.contains("outside"),
        "{err}"
    );

    // A snapshot folder that is a link out of the cache.
    let (root, repo) = fresh();
    let snap = repo.join("snapshots").join(&commit);
    std::fs::rename(&snap, outside.path().join("snap")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("snap"), &snap).unwrap();
    let (code, _, err) = check(
        &[("HF_HUB_CACHE", root.path())],
        &["devassert-test/tiny-bert"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("outside the cache"), "{err}");

    // A ref that is a path, not a commit hash.
    let (root, repo) = fresh();
    std::fs::write(repo.join("refs/main"), "../../../../etc").unwrap();
    let (code, _, err) = check(
        &[("HF_HUB_CACHE", root.path())],
        &["devassert-test/tiny-bert"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refs/main: not a commit hash"), "{err}");
}

/// `devassert check ARG` run in `cwd` with the built cache as HF_HUB_CACHE.
fn check_in(cwd: &Path, arg: &str) -> (i32, String) {
    let mut cmd = common::bin();
    for k in ["HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"] {
        cmd.env_remove(k);
    }
    let out = cmd
        .env("HF_HUB_CACHE", hub())
        .current_dir(cwd)
        .args(["check", arg])
        .output()
        .expect("run devassert");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_missing_path_into_a_folder_here_is_no_such_file_and_the_hub_hint_is_hf_download() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("runs")).unwrap();
    // `runs/` exists: `runs/final` is a path into it, which is missing.
    let (code, err) = check_in(d.path(), "runs/final");
    assert_eq!(code, 2);
    assert!(
        err.contains("runs/final: no such file or directory"),
        "{err}"
    );
    assert!(!err.contains("Hugging Face cache"), "{err}");
    // No folder `meta-llama` here: a Hub id, not in the cache; the command
    // that fetches it is the one current huggingface_hub installs.
    let (code, err) = check_in(d.path(), "meta-llama/Llama-3.2-1B");
    assert_eq!(code, 2);
    assert!(
        err.contains("not in the local Hugging Face cache")
            && err.contains("`hf download meta-llama/Llama-3.2-1B`")
            && !err.contains("huggingface-cli"),
        "{err}"
    );
    // A Hub id the cache holds is read even beside a folder of its org's name.
    let id = manifest()
        .as_object()
        .and_then(|m| m.keys().find(|k| k.contains('/')).cloned())
        .expect("a model with an org in the cache");
    let org = id.split('/').next().unwrap_or_default();
    std::fs::create_dir_all(d.path().join(org)).unwrap();
    let (code, err) = check_in(d.path(), &id);
    assert!(code == 0 || code == 1, "{id}: {err}");
}
