//! A model as users keep it: a folder, a Hub id (`org/name`, `org/name@rev`)
//! or a Hugging Face cache, resolved to one snapshot folder in the LOCAL
//! cache only. Nothing here touches the network.
//!
//! The cache (huggingface_hub's `file_download.py` layout):
//!
//! ```text
//! $HF_HUB_CACHE/                       (else $HF_HOME/hub, else ~/.cache/huggingface/hub)
//!   models--org--name/
//!     refs/main                        a commit hash
//!     snapshots/<hash>/config.json ->  ../../blobs/<etag>
//!     blobs/<etag>
//! ```

use crate::error::ModelError;
use std::path::{Path, PathBuf};

const MODEL_PREFIX: &str = "models--";
/// A ref file holds one commit hash; more is not a ref.
const MAX_REF_BYTES: u64 = 256;

/// The cache folder huggingface_hub uses, from the same variables in the
/// same order; `None` when not even `HOME` is set.
pub fn cache_root() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = var("HF_HUB_CACHE").or_else(|| var("HUGGINGFACE_HUB_CACHE")) {
        return Some(p);
    }
    let home = var("HF_HOME").or_else(|| {
        var("XDG_CACHE_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".cache")))
            .map(|c| c.join("huggingface"))
    })?;
    Some(home.join("hub"))
}

/// `org/name` or `name`, with an optional `@revision`, as the Hub spells ids.
fn hub_id(arg: &str) -> Option<(&str, Option<&str>)> {
    let (id, rev) = match arg.split_once('@') {
        Some((id, rev)) => (id, Some(rev)),
        None => (arg, None),
    };
    let part_ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    let parts: Vec<&str> = id.split('/').collect();
    if parts.len() > 2 || !parts.iter().all(|p| part_ok(p)) {
        return None;
    }
    if let Some(r) = rev {
        if !r.split('/').all(part_ok) {
            return None;
        }
    }
    Some((id, rev))
}

fn folder_of(id: &str) -> String {
    format!("{MODEL_PREFIX}{}", id.replace('/', "--"))
}

fn id_of(folder: &str) -> Option<String> {
    folder
        .strip_prefix(MODEL_PREFIX)
        .map(|rest| rest.replacen("--", "/", 1))
}

/// A repository folder of the cache: `models--…` holding `snapshots/`.
fn is_repo(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(MODEL_PREFIX))
        && dir.join("snapshots").is_dir()
}

/// The model ids a cache folder holds, sorted.
fn models_in(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter(|e| is_repo(&e.path()))
        .filter_map(|e| e.file_name().to_str().and_then(id_of))
        .collect();
    ids.sort();
    ids
}

/// The cache a folder is: itself (it holds `models--…`) or its `hub/` (an
/// `HF_HOME`). A folder with a config.json is a model, whatever else it holds.
fn as_cache(dir: &Path) -> Option<PathBuf> {
    if dir.join("config.json").exists() {
        return None;
    }
    [dir.to_path_buf(), dir.join("hub")]
        .into_iter()
        .find(|d| !models_in(d).is_empty())
}

/// The folder to read for what the user named.
pub fn resolve(arg: &Path) -> Result<PathBuf, ModelError> {
    if arg.is_dir() {
        if is_repo(arg) {
            let root = arg.parent().unwrap_or(Path::new("."));
            return snapshot(root, arg, &display_id(arg), None);
        }
        if let Some(root) = as_cache(arg) {
            let models = models_in(&root);
            return match models.as_slice() {
                [one] => snapshot(&root, &root.join(folder_of(one)), one, None),
                _ => Err(ModelError::ChooseModel {
                    example: example(&root, &models[0]),
                    root,
                    models,
                }),
            };
        }
        return Ok(arg.to_path_buf());
    }
    if arg.symlink_metadata().is_ok() {
        return Err(ModelError::NotADirectory(arg.to_path_buf()));
    }
    let text = arg.to_str().unwrap_or_default();
    let Some((id, rev)) = hub_id(text) else {
        return Err(ModelError::Missing(arg.to_path_buf()));
    };
    let Some(root) = cache_root() else {
        return Err(ModelError::Missing(arg.to_path_buf()));
    };
    let repo = root.join(folder_of(id));
    if !is_repo(&repo) {
        if names_a_folder_here(id) {
            return Err(ModelError::Missing(arg.to_path_buf()));
        }
        return Err(ModelError::NotInCache {
            id: text.to_string(),
            download: download_command(id, rev),
            looked_in: repo,
        });
    }
    snapshot(&root, &repo, id, rev)
}

/// Whether `org/name` is a path into a folder `org` that exists here: then
/// the user meant a local path, which is missing ("no such file"), not a
/// Hub id. A Hub id the cache holds is read whatever the folder: this only
/// chooses the error.
fn names_a_folder_here(id: &str) -> bool {
    id.split_once('/')
        .is_some_and(|(org, _)| Path::new(org).is_dir())
}

/// The command that fetches `id` into the cache: `hf download`, the CLI
/// huggingface_hub installs (it replaced `huggingface-cli download`).
fn download_command(id: &str, rev: Option<&str>) -> String {
    match rev {
        Some(rev) => format!("hf download {id} --revision {rev}"),
        None => format!("hf download {id}"),
    }
}

/// How to check model `id` of the cache `root`: by its id when `root` is
/// the cache the id is looked up in, else with `HF_HUB_CACHE` set to it.
fn example(root: &Path, id: &str) -> String {
    let same = |a: &Path, b: &Path| matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y);
    if cache_root().is_some_and(|c| same(&c, root)) {
        format!("devassert check {id}")
    } else {
        format!(
            "HF_HUB_CACHE={} devassert check {id}",
            devassert_core::render::inert::shell_word(&root.display().to_string())
        )
    }
}

fn display_id(repo: &Path) -> String {
    repo.file_name()
        .and_then(|n| n.to_str())
        .and_then(id_of)
        .unwrap_or_else(|| repo.display().to_string())
}

/// The snapshot folder of `rev` (a branch or tag under `refs/`, or a commit
/// hash; `main` by default), which must really be inside the cache `root`
/// or inside its repository folder, wherever that really is.
fn snapshot(root: &Path, repo: &Path, id: &str, rev: Option<&str>) -> Result<PathBuf, ModelError> {
    let rev = rev.unwrap_or("main");
    let ref_file = repo.join("refs").join(rev);
    let commit = if ref_file.is_file() {
        read_ref(&ref_file)?
    } else if repo.join("snapshots").join(rev).is_dir() {
        rev.to_string()
    } else {
        return Err(ModelError::RevisionNotInCache {
            id: id.to_string(),
            rev: rev.to_string(),
            repo: repo.to_path_buf(),
        });
    };
    let snap = repo.join("snapshots").join(&commit);
    if !snap.is_dir() {
        return Err(ModelError::invalid(
            &ref_file,
            format!(
                "names snapshot {commit}, which is not in the cache (an interrupted download?)"
            ),
        ));
    }
    let real_root = std::fs::canonicalize(root).map_err(|e| ModelError::io(root, e))?;
    let real = std::fs::canonicalize(&snap).map_err(|e| ModelError::io(&snap, e))?;
    // The repository folder may itself be a link to another disk (a cache
    // spread over disks): the snapshot must then be inside it, there.
    let real_repo = std::fs::canonicalize(repo).map_err(|e| ModelError::io(repo, e))?;
    if !real.starts_with(&real_root) && !real.starts_with(&real_repo) {
        return Err(ModelError::invalid(
            &snap,
            format!(
                "a link to {}, outside the cache {}: not followed",
                real.display(),
                real_root.display()
            ),
        ));
    }
    Ok(snap)
}

/// A commit hash from a `refs/` file: hex, nothing else.
fn read_ref(path: &Path) -> Result<String, ModelError> {
    use std::io::Read;
    let mut text = String::new();
    devassert_core::regular::open(path)
        .and_then(|f| f.take(MAX_REF_BYTES).read_to_string(&mut text))
        .map_err(|e| ModelError::io(path, e))?;
    let hash = text.trim();
    if hash.is_empty() || hash.len() > 64 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ModelError::invalid(path, "not a commit hash"));
    }
    Ok(hash.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ids_are_told_from_paths() {
        assert_eq!(
            hub_id("meta-llama/Llama-3.2-1B"),
            Some(("meta-llama/Llama-3.2-1B", None))
        );
        assert_eq!(hub_id("gpt2"), Some(("gpt2", None)));
        assert_eq!(hub_id("org/m@v1.0"), Some(("org/m", Some("v1.0"))));
        for not in [
            "./m",
            "/abs/m",
            "a/b/c",
            "../m",
            "a/..",
            "",
            "org/m@",
            "org/m@../x",
        ] {
            assert_eq!(hub_id(not), None, "{not}");
        }
        assert_eq!(folder_of("org/name"), "models--org--name");
        assert_eq!(download_command("org/m", None), "hf download org/m");
        assert_eq!(
            download_command("org/m", Some("v1.0")),
            "hf download org/m --revision v1.0"
        );
        assert_eq!(id_of("models--org--na--me").as_deref(), Some("org/na--me"));
    }
}
