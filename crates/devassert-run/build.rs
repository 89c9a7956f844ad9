//! Embeds every `python/devassert/**/*.py` file, sorted by path relative to
//! the package (`integrations/lightning.py`), as the guard package `devassert
//! run` writes for the child: a new guard module or subpackage ships without
//! a hand-kept list to update.
use std::{env, fs, path::Path, path::PathBuf};

/// The `.py` files under `dir`, recursively (`__pycache__` skipped).
fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    for entry in fs::read_dir(dir).expect("python/devassert is readable") {
        let path = entry.expect("a readable folder entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "__pycache__") {
                python_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../python/devassert");
    let mut files = Vec::new();
    python_files(&dir, &mut files);
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&dir).expect("under the package");
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_str().expect("a UTF-8 file name"))
                .collect::<Vec<_>>()
                .join("/");
            (name, p)
        })
        .collect();
    named.sort();
    let mut out = String::from("&[\n");
    for (name, p) in &named {
        println!("cargo:rerun-if-changed={}", p.display());
        let abs = fs::canonicalize(p).expect("guard file readable");
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
    }
    out.push(']');
    let dest = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("package.rs");
    // A new file renamed over the old one, never written through it: a
    // target directory copied with hard links shares this file with another
    // checkout's, which must keep embedding its own package.
    let tmp = dest.with_extension("rs.tmp");
    fs::write(&tmp, out).expect("write package.rs");
    fs::rename(&tmp, &dest).expect("rename package.rs into place");
}
