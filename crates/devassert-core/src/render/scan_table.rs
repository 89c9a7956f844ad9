//! The table of arrays a scan read, printed above its findings on a terminal.

use crate::finding::Finding;
use crate::sections::{FileSummary, ScanSection};
use std::fmt::Write as _;

/// Rows of the per-file table shown without `--verbose`.
const TABLE_ROWS: usize = 40;

/// The widest file name shown without `--verbose`: a Hugging Face cache path
/// (`~/.cache/huggingface/datasets/…/<hash>/data-00000-of-00004.arrow`)
/// would otherwise widen every row past the terminal. `-v` and the JSON keep
/// whole paths.
const NAME_WIDTH: usize = 60;

/// `s` cut to `width` characters by dropping its middle (`…` marks it): the
/// start says where the files are, the end which file it is.
fn elide(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    let head = (width - 1) / 3;
    let tail = width - 1 - head;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

pub(super) fn render(scan: &ScanSection, findings: &[Finding], verbose: bool) -> String {
    let files = &scan.files;
    let errors = scan.errors.len();
    let mut out = String::new();
    if files.is_empty() {
        if errors > 0 {
            let _ = writeln!(
                out,
                "nothing scanned: {} could not be used",
                plural(errors, "input")
            );
        }
        return out;
    }
    let name = |f: &FileSummary| {
        let name = match &f.part {
            Some(p) => format!("{}:{p}", f.file),
            None => f.file.clone(),
        };
        if verbose {
            name
        } else {
            elide(&name, NAME_WIDTH)
        }
    };
    let opt = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    let shown = if verbose {
        files.len()
    } else {
        files.len().min(TABLE_ROWS)
    };
    let rows: Vec<[String; 6]> = files[..shown]
        .iter()
        .map(|f| {
            [
                name(f),
                f.format.clone(),
                f.dtype.clone(),
                f.values.to_string(),
                format!("{}..{}", opt(f.min), opt(f.max)),
                f.out_of_range.to_string(),
            ]
        })
        .collect();
    let head = [
        "file",
        "format",
        "dtype",
        "values",
        "min..max",
        "out of range",
    ];
    let mut w = head.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i >= 3 {
                let _ = write!(s, "{c:>width$}  ", width = w[i]);
            } else {
                let _ = write!(s, "{c:<width$}  ", width = w[i]);
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(head));
    for r in &rows {
        let _ = writeln!(out, "{}", line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]));
    }
    if files.len() > shown {
        let _ = writeln!(
            out,
            "… {} more (-v shows all; --format json lists every file)",
            files.len() - shown
        );
    }
    let total: u64 = files.iter().map(|f| f.values).sum();
    let bad: u64 = files.iter().map(|f| f.out_of_range).sum();
    let _ = write!(
        out,
        "{} scanned, {total} values, {bad} out of range",
        plural(files.len(), "array")
    );
    if errors > 0 {
        let _ = write!(out, ", {} could not be used", plural(errors, "input"));
    }
    out.push('\n');
    if verbose {
        let run = &scan.scan;
        let mib = run.bytes as f64 / (1024.0 * 1024.0);
        let rate = if run.seconds > 0.0 {
            mib / run.seconds
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "read {} ({mib:.1} MiB) in {:.2} s, {rate:.0} MiB/s",
            plural(run.files as usize, "file"),
            run.seconds
        );
    }
    for f in findings {
        for h in f
            .evidence
            .get("hints")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
        {
            let _ = writeln!(out, "likely: {h}");
        }
    }
    out.push('\n');
    out
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::elide;

    #[test]
    fn long_names_keep_their_start_and_their_file() {
        assert_eq!(elide("tokens.bin", 60), "tokens.bin");
        let cache = "/home/u/.cache/huggingface/datasets/user___corpus/default/0.0.0/0123456789abcdef/corpus-train-00001-of-00004.arrow";
        let shown = elide(cache, 60);
        assert_eq!(shown.chars().count(), 60);
        assert_eq!(
            shown,
            "/home/u/.cache/hugg…abcdef/corpus-train-00001-of-00004.arrow"
        );
    }
}
