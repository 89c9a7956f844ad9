//! Scan tests' shared steps: gen.py's inputs in a temp dir, and
//! `devassert scan --format json` on them (its output checked against the
//! contract).

use super::{assert_contract, bin, python};
use serde_json::Value;
use std::path::Path;

/// A temp dir holding the inputs `kinds` of gen.py.
pub fn gen(kinds: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scan_data/gen.py");
    let out = std::process::Command::new(python())
        .arg(&script)
        .arg(dir.path())
        .args(kinds)
        .output()
        .expect("run gen.py");
    assert!(
        out.status.success(),
        "gen.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

pub struct Run {
    pub code: i32,
    pub report: Value,
    pub stderr: String,
}

/// `devassert scan ARGS --format json` in `dir`.
pub fn scan(dir: &Path, args: &[&str]) -> Run {
    let out = bin()
        .current_dir(dir)
        .arg("scan")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run devassert");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    assert_contract(&[&out.stdout]);
    Run {
        code: out.status.code().unwrap_or(-1),
        report,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The finding with `check` (range, max_len, …) of `rule`.
pub fn finding<'a>(r: &'a Value, rule: &str, check: &str) -> &'a Value {
    r["findings"]
        .as_array()
        .and_then(|fs| {
            fs.iter()
                .find(|f| f["rule"] == rule && f["evidence"]["check"] == check)
        })
        .unwrap_or_else(|| panic!("no {rule} {check} finding in {r:#}"))
}

/// `devassert scan ARGS` in `dir`: its human output.
pub fn human(dir: &Path, args: &[&str]) -> String {
    let out = bin()
        .current_dir(dir)
        .arg("scan")
        .args(args)
        .args(["--color", "never"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}
