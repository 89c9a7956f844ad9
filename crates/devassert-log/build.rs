//! Derives, for every regex of `catalog/*.toml` that the prefilter reads
//! (`log`, `cpu_messages`, `device_frame` and the shared `[pattern]`s), the
//! literals each match must contain (`src/literals.rs`, the same code the
//! program runs), and the set of them that filters best, and embeds them
//! keyed by the pattern: parsing a hundred regexes with regex-syntax at
//! each start was a fifth of explaining an empty log, and choosing the
//! best sets a sixth of what was left. A pattern not found here (a catalog given at run time) is
//! derived at run time; the test `every_derived_requirement_is_the_run_times`
//! checks the table against the run-time derivation.
use std::{collections::BTreeSet, env, fs, path::PathBuf};

#[allow(dead_code)]
#[path = "src/literals.rs"]
mod literals;

/// Keys whose string (or strings) the prefilter reads as a regex.
const PATTERN_KEYS: &[&str] = &["log", "cpu_messages", "device_frame"];

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src/literals.rs");
    let dir = manifest.join("../../catalog");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    let mut patterns = BTreeSet::new();
    for p in &files {
        println!("cargo:rerun-if-changed={}", p.display());
        let text = fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        // A file that is not TOML is devassert-core's build's to report.
        let Ok(table) = text.parse::<toml::Table>() else {
            continue;
        };
        for (key, value) in &table {
            // patterns.toml: each entry is a regex other files name.
            let shared = key == "pattern";
            collect(key, value, shared, &mut patterns);
        }
    }
    let mut out = String::from(
        "/// (pattern, the literal sets its matches hold (none: no requirement),\n\
         /// the set that filters best), sorted.\n\
         pub(crate) static DERIVED: &[Entry] = &[\n",
    );
    for p in &patterns {
        let req = literals::pattern_requirement(p).unwrap_or_default();
        let best = literals::best_index(&req);
        let sets: Vec<String> = req
            .iter()
            .map(|set| {
                let lits: Vec<String> = set.iter().map(|l| byte_string(l)).collect();
                format!("&[{}]", lits.join(", "))
            })
            .collect();
        out.push_str(&format!("    ({p:?}, &[{}], {best:?}),\n", sets.join(", ")));
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let path = out_dir.join("derived_literals.rs");
    let tmp = path.with_extension("rs.tmp");
    fs::write(&tmp, out).expect("write a generated file");
    fs::rename(&tmp, &path).expect("rename a generated file into place");
}

/// Every string under a key of `PATTERN_KEYS` (or anywhere when `all`).
fn collect(key: &str, value: &toml::Value, all: bool, out: &mut BTreeSet<String>) {
    let wanted = all || PATTERN_KEYS.contains(&key);
    match value {
        toml::Value::String(s) if wanted => {
            out.insert(s.clone());
        }
        toml::Value::Array(items) => items.iter().for_each(|v| collect(key, v, all, out)),
        toml::Value::Table(t) => t.iter().for_each(|(k, v)| collect(k, v, all, out)),
        _ => {}
    }
}

/// `b"…"` with every byte escaped.
fn byte_string(bytes: &[u8]) -> String {
    let mut s = String::from("b\"");
    for b in bytes {
        s.push_str(&format!("\\x{b:02x}"));
    }
    s.push('"');
    s
}
