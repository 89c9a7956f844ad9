//! Every kernel assertion of the reference table (all those compiled into
//! PyTorch's wheels), printed the way real logs print it, read by the log
//! reader: the finding names the rule the catalog gives that assertion.
//! The line forms: a Linux build's (`/pytorch/aten/…:LINE: function: block:
//! …`) and a Windows build's (`C:\…\aten\…:LINE: block: …`, no function).

use devassert_core::catalog::{normalize_assertion, normalize_kernel, normalize_path};
use devassert_core::{Catalog, DeviceAssert};
use devassert_log::LogAnalyzer;

const TSV: &str = include_str!("../../../catalog/reference/pytorch-device-asserts-lines.tsv");

struct Row<'a> {
    file: &'a str,
    function: &'a str,
    assertion: &'a str,
    /// A line number some release printed.
    line: &'a str,
}

fn rows() -> Vec<Row<'static>> {
    TSV.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let line = cols.get(3..)?.iter().find(|c| !c.is_empty())?;
            Some(Row {
                file: cols[0],
                function: cols[1],
                assertion: cols[2],
                line,
            })
        })
        // The message kernel prints whatever text it is given (the log tests cover it).
        .filter(|r| r.assertion != "<runtime message>")
        .collect()
}

/// The printed line of `row` in each form a log takes, by name.
fn forms(row: &Row<'_>) -> [(&'static str, String); 2] {
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
        let (path, kernel, text) = (
            normalize_path(row.file),
            normalize_kernel(row.function),
            normalize_assertion(row.assertion),
        );
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
