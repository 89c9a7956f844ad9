//! Every kernel assertion of the reference table (all those compiled into
//! PyTorch's wheels 1.4–2.15) is owned by exactly one rule, the internal
//! invariants by the generic one; and printed the way real logs print it,
//! read by the log reader, it gives that rule's finding. The line forms: a
//! Linux build's (`/pytorch/aten/…:LINE: function: block: …`), a Windows
//! build's (`C:\…\aten\…:LINE: block: …`, no function; and conda's
//! `C:/cb/…`), ROCm's (`Device-side assertion`, closed by an apostrophe) and a
//! markdown paste's (the backquotes lost).

use devassert_core::{Catalog, DeviceAssert};
use devassert_log::normalize::{normalize_assertion, normalize_kernel, normalize_path};
use devassert_log::LogAnalyzer;
use std::collections::HashSet;

const TSV: &str = include_str!("../../../catalog/reference/pytorch-device-asserts-lines.tsv");

const REFERENCE: &str = include_str!("../../../catalog/reference/pytorch-device-asserts.md");
const INTERNAL: &str = "DA901";

/// `(file basename, function, assertion)` of the reference's §3 table.
fn internal_rows() -> HashSet<(String, String, String)> {
    let start = REFERENCE
        .find("## 3. Internal invariants")
        .expect("reference has §3");
    let end = REFERENCE[start..]
        .find("\n## 4.")
        .map(|e| start + e)
        .expect("reference has §4");
    REFERENCE[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let unquote = |c: &str| {
                c.trim_matches(|ch| ch == '|' || ch == ' ')
                    .trim_matches('`')
                    .to_string()
            };
            (cells.len() >= 3).then(|| (unquote(cells[0]), unquote(cells[1]), unquote(cells[2])))
        })
        .collect()
}

#[test]
fn every_reference_assertion_has_exactly_one_rule() {
    let c = Catalog::builtin();
    let internal = internal_rows();
    assert!(
        internal.len() > 40,
        "parsed only {} internal rows",
        internal.len()
    );
    let rows = rows();
    let mut problems = Vec::new();
    for row in &rows {
        let (path, kernel, text) = normalized(row);
        let a = DeviceAssert {
            file: &path,
            kernel: Some(&kernel),
            assertion: &text,
        };
        let owners: Vec<&str> = c.owners(&a).iter().map(|r| r.id.as_str()).collect();
        let Row {
            file,
            function: func,
            assertion,
            ..
        } = row;
        let base = file.rsplit('/').next().unwrap_or(file).to_string();
        let is_internal = file.starts_with("caffe2/")
            || internal.contains(&(base, func.to_string(), assertion.to_string()));
        let ok = match owners.as_slice() {
            [only] => (*only == INTERNAL) == is_internal,
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{file} {func} `{assertion}` → {owners:?} (internal: {is_internal})"
            ));
        }
    }
    assert!(rows.len() > 250, "read only {} rows", rows.len());
    assert!(
        problems.is_empty(),
        "{} rows misplaced:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn windows_lines_without_function_still_match() {
    let c = Catalog::builtin();
    let path = normalize_path(
        r"C:\actions-runner\_work\pytorch\pytorch\pytorch\aten\src\ATen\native\cuda\IndexKernelUtils.cu",
    );
    let a = DeviceAssert {
        file: &path,
        kernel: None,
        assertion: r#"ind >=0 && ind < ind_dim_size && "vectorized gather kernel index out of bounds""#,
    };
    assert_eq!(c.match_assert(&a).id, "DA101");
}

struct Row<'a> {
    file: &'a str,
    function: &'a str,
    assertion: &'a str,
    /// A line number some release printed.
    line: &'a str,
}

/// The reference rows, but the message kernel's: it prints whatever text it
/// is given (the log tests cover it).
fn rows() -> Vec<Row<'static>> {
    TSV.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Row {
                file: cols[0],
                function: cols[1],
                assertion: cols[2],
                line: cols
                    .get(3..)
                    .and_then(|c| c.iter().copied().find(|c| !c.is_empty()))
                    .unwrap_or_else(|| panic!("a reference row without a line number: {l}")),
            }
        })
        .filter(|r| r.assertion != "<runtime message>")
        .collect()
}

/// A row's file, function and assertion as the catalog matches them.
fn normalized(row: &Row<'_>) -> (String, String, String) {
    (
        normalize_path(row.file),
        normalize_kernel(row.function),
        normalize_assertion(row.assertion),
    )
}

/// The printed line of `row` in each form a log takes, by name.
fn forms(row: &Row<'_>) -> [(&'static str, String); 5] {
    let Row {
        file,
        function,
        assertion,
        line,
    } = row;
    let windows = file.replace('/', "\\");
    [
        (
            "linux",
            format!("/pytorch/{file}:{line}: {function}: block: [3,0,0], thread: [7,0,0] Assertion `{assertion}` failed."),
        ),
        (
            "windows",
            format!("C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\{windows}:{line}: block: [3,0,0], thread: [7,0,0] Assertion `{assertion}` failed."),
        ),
        (
            "windows-conda",
            format!("C:/cb/pytorch_1000000000000/work/{file}:{line}: block: [3,0,0], thread: [7,0,0] Assertion `{assertion}` failed."),
        ),
        (
            "rocm",
            format!("/opt/conda/conda-bld/pytorch_1724789143830/work/{file}:{line}: {function}: Device-side assertion `{assertion}' failed."),
        ),
        (
            "markdown",
            format!("../{file}:{line}: {function}: block: [3,0,0], thread: [7,0,0] Assertion {assertion} failed."),
        ),
    ]
}

/// The rule of the first finding `explain` gives for `device_line`.
fn explained(device_line: &str) -> Option<String> {
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("train.log");
    let log = format!(
        "{device_line}\n{device_line}\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    loss.item()\nRuntimeError: CUDA error: device-side assert triggered\n"
    );
    a.feed(log.as_bytes());
    a.finish().findings.first().map(|f| f.rule.clone())
}

#[test]
fn every_reference_assertion_is_read_as_its_rule() {
    let catalog = Catalog::builtin();
    let rows = rows();
    assert!(rows.len() > 250, "read only {} rows", rows.len());
    let mut wrong = Vec::new();
    for row in &rows {
        let (path, kernel, text) = normalized(row);
        let want = catalog
            .match_assert(&DeviceAssert {
                file: &path,
                kernel: Some(&kernel),
                assertion: &text,
            })
            .id
            .clone();
        for (form, line) in forms(row) {
            let got = explained(&line);
            if got.as_deref() != Some(want.as_str()) {
                wrong.push(format!("{form}: {got:?}, want {want}: {line}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} lines read as another rule:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The device lines `catalog/check_catalog.py --write-fixture` prints for
/// the reference rows in every variant it knows (pre-1.5 pretty
/// signatures, per-release prefixes, Inductor's own lines), with the rule
/// each must get (`-`: none of the patterns, the DA004 fallback).
const CHECKER_LINES: &str = include_str!("fixtures/catalog-device-lines.tsv");

#[test]
fn every_line_of_the_catalog_checker_is_read_as_its_rule() {
    let mut wrong = Vec::new();
    let mut n = 0;
    for l in CHECKER_LINES.lines().filter(|l| !l.starts_with('#')) {
        let mut cols = l.splitn(3, '\t');
        let (Some(want), Some(variant), Some(line)) = (cols.next(), cols.next(), cols.next())
        else {
            continue;
        };
        n += 1;
        let want = if want == "-" { "DA004" } else { want };
        let got = explained(line);
        if got.as_deref() != Some(want) {
            wrong.push(format!("{variant}: {got:?}, want {want}: {line}"));
        }
    }
    assert!(n > 1800, "read only {n} lines");
    assert!(
        wrong.is_empty(),
        "{} lines read as another rule:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
