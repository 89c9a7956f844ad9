//! Embeds every `catalog/*.toml` file in the library, sorted by name, so the
//! binary carries its catalog and adding a rule needs no code change; and
//! writes one constant per rule id (`ids::EMBEDDING_INDEX_OUT_OF_RANGE` is
//! `DA101`), so a rule id misspelt in Rust fails to compile.
//!
//! Each file is embedded twice: as written, and as the same document in
//! JSON, which the program reads (parsing the catalog's TOML was a quarter
//! of `explain`'s start-up; JSON of the same values through the same serde
//! types reads about ten times faster). The TOML files stay the one source:
//! the JSON is made from them at every build, and a file that is not TOML
//! stops the build naming it.
use std::{env, fs, path::PathBuf};

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../catalog");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    // Rule files are `DA###-name.toml`; other TOML files are shared data.
    files.retain(|p| {
        p.extension().is_some_and(|e| e == "toml")
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("DA"))
    });
    files.sort();
    let mut out = String::from("pub(crate) static CATALOG_FILES: &[(&str, &str)] = &[\n");
    let mut json = String::from("pub(crate) static CATALOG_JSON: &[(&str, &str)] = &[\n");
    for p in &files {
        println!("cargo:rerun-if-changed={}", p.display());
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let abs = fs::canonicalize(p).expect("catalog file readable");
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
        json.push_str(&format!("    ({name:?}, {:?}),\n", toml_as_json(p)));
    }
    out.push_str("];\n");
    json.push_str("];\n");
    out.push_str(&json);
    // Data shared by the rules, loaded and validated with them.
    embed(&mut out, &dir, "OP_GUESSES_FILE", "op-guesses.toml");
    // The patterns rule files and causes.toml share by name.
    embed(&mut out, &dir, "PATTERNS_FILE", "patterns.toml");
    // The causes decided by measured facts (the `facts` module).
    embed(&mut out, &dir, "FACT_CAUSES_FILE", "causes.toml");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    replace(&out_dir.join("catalog_files.rs"), &out);
    replace(&out_dir.join("rule_ids.rs"), &rule_ids(&files));
    let vocabs = dir.join("base-vocabs.toml");
    println!("cargo:rerun-if-changed={}", vocabs.display());
    replace(&out_dir.join("base_vocabs.rs"), &base_vocabs(&vocabs));
}

/// `static NAME: (&str, &str) = (file, its text)` for `catalog/<file>`,
/// and `NAME_JSON` the same with its text in JSON.
fn embed(out: &mut String, dir: &std::path::Path, name: &str, file: &str) {
    let path = dir.join(file);
    println!("cargo:rerun-if-changed={}", path.display());
    let abs = fs::canonicalize(&path).unwrap_or_else(|e| panic!("catalog/{file} readable: {e}"));
    out.push_str(&format!(
        "pub(crate) static {name}: (&str, &str) = ({file:?}, include_str!({:?}));\n",
        abs.display().to_string()
    ));
    out.push_str(&format!(
        "pub(crate) static {name}_JSON: (&str, &str) = ({file:?}, {:?});\n",
        toml_as_json(&path)
    ));
}

/// The TOML file at `path` as a JSON document of the same values.
fn toml_as_json(path: &std::path::Path) -> String {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("{} readable: {e}", path.display()));
    let table: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()));
    // serde_json refuses what JSON cannot hold (a NaN), naming no file: say which.
    serde_json::to_string(&table)
        .unwrap_or_else(|e| panic!("{} has no JSON form: {e}", path.display()))
}

/// Write `path` as a new file (a temporary one renamed over it), never
/// through the old one: a target directory copied with hard links shares
/// its files with another checkout's, which must not change with this one.
fn replace(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("rs.tmp");
    fs::write(&tmp, text).expect("write a generated file");
    fs::rename(&tmp, path).expect("rename a generated file into place");
}

/// `catalog/base-vocabs.toml` as a sorted `&[i64]`. A broken file stops the
/// build: there is no sensible default for the list.
fn base_vocabs(path: &std::path::Path) -> String {
    let text = fs::read_to_string(path).expect("catalog/base-vocabs.toml readable");
    let table: toml::Table = text.parse().expect("catalog/base-vocabs.toml is TOML");
    let mut sizes: Vec<i64> = table
        .get("vocab")
        .and_then(|v| v.as_array())
        .expect("catalog/base-vocabs.toml has a `vocab` array")
        .iter()
        .map(|v| {
            v.get("size")
                .and_then(|s| s.as_integer())
                .expect("every vocab of catalog/base-vocabs.toml has an integer `size`")
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let list: Vec<String> = sizes.iter().map(i64::to_string).collect();
    format!(
        "/// Base vocabulary sizes of common tokenizers (`catalog/base-vocabs.toml`), sorted.\npub const BASE_VOCABS: &[i64] = &[{}];\n",
        list.join(", ")
    )
}

/// `pub const NAME: RuleId = RuleId("DA###");` per rule, named after its
/// kebab-case name, and `ALL` in catalog order. A file without an id or a
/// name is left to the catalog's own validation (its tests fail on it).
fn rule_ids(files: &[PathBuf]) -> String {
    let mut consts = String::new();
    let mut all = String::new();
    for p in files {
        let text = fs::read_to_string(p).expect("catalog file readable");
        let Ok(table) = text.parse::<toml::Table>() else {
            continue;
        };
        let field = |k: &str| table.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let (Some(id), Some(name)) = (field("id"), field("name")) else {
            continue;
        };
        let ident: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        let summary = field("summary").unwrap_or_default();
        consts.push_str(&format!(
            "/// {id} `{name}`: {}\npub const {ident}: RuleId = RuleId({id:?});\n",
            summary.replace('\n', " ")
        ));
        all.push_str(&format!("    {ident},\n"));
    }
    format!("{consts}\n/// Every rule, in catalog order.\npub const ALL: &[RuleId] = &[\n{all}];\n")
}
