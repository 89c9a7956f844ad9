//! Embeds every `python/devassert/*.py` file, sorted by name, as the guard
//! package `devassert run` writes for the child: a new guard module ships
//! without a hand-kept list to update.
use std::{env, fs, path::PathBuf};

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../python/devassert");
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("python/devassert is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    // The writer puts files in one folder; a subpackage would be left out.
    if let Some(sub) = entries
        .iter()
        .find(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "__pycache__"))
    {
        panic!(
            "{} is a subpackage of the guard: GuardDir::write (src/guard.rs) writes one folder; teach it subfolders first",
            sub.display()
        );
    }
    let mut files: Vec<PathBuf> = entries
        .into_iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let mut out = String::from("&[\n");
    for p in &files {
        println!("cargo:rerun-if-changed={}", p.display());
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name");
        let abs = fs::canonicalize(p).expect("guard file readable");
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
    }
    out.push(']');
    let dest = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("package.rs");
    fs::write(dest, out).expect("write package.rs");
}
