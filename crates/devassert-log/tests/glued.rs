//! A line of assertions printed back to back is read in pieces, repeats
//! counted from their block and thread alone: what it finds must be what
//! the same assertions on lines of their own give (groups, counts, threads,
//! blocks, ranks), whatever the templates switch to midway and whatever
//! text follows the last.

use devassert_core::Catalog;
use devassert_log::{Facts, LogAnalyzer};

const INDEX: &str = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [B,0,0], thread: [T,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
const GATHER: &str = "/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: block: [B,0,0], thread: [T,0,0] Assertion `ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\"` failed.";

fn facts(text: &str) -> Facts {
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("log");
    a.feed(text.as_bytes());
    a.facts()
}

type Summary = Vec<(Option<String>, String, String, u64, usize, usize, Vec<i64>)>;

fn summary(f: &Facts) -> Summary {
    let mut v: Summary = f
        .groups
        .iter()
        .map(|g| {
            (
                g.kernel.clone(),
                g.assertion.clone(),
                g.source().unwrap_or_default(),
                g.lines,
                g.triples.len(),
                g.blocks.len(),
                g.ranks.iter().collect(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn glued_assertions_count_as_the_same_assertions_on_their_own_lines() {
    let mut pieces = Vec::new();
    for (k, t) in (0..40).enumerate() {
        // Templates switch, blocks change, one piece repeats another exactly.
        let tmpl = if (10..14).contains(&k) || k == 30 {
            GATHER
        } else {
            INDEX
        };
        let b = if k < 20 { 3 } else { 4 };
        pieces.push(
            tmpl.replace("B", &b.to_string())
                .replace("T", &(t % 37).to_string()),
        );
    }
    let tail = "RuntimeError: CUDA error: device-side assert triggered";
    for prefix in [
        "",
        "[rank3]: ",
        "[default5]:",
        "2024-05-01 12:00:01,123 ERROR ",
    ] {
        let glued = format!("{prefix}{}{tail}\n", pieces.concat());
        let apart: String = pieces
            .iter()
            .chain([&tail.to_string()])
            .map(|p| format!("{prefix}{p}\n"))
            .collect();
        let (g, a) = (facts(&glued), facts(&apart));
        assert_eq!(summary(&g), summary(&a), "prefix {prefix:?}");
        assert_eq!(g.groups.iter().map(|g| g.lines).sum::<u64>(), 40);
        // The error glued after the last assertion keeps the line's rank.
        let error_ranks = |f: &Facts| {
            f.device_error
                .as_ref()
                .map(|e| e.ranks.iter().collect::<Vec<_>>())
        };
        assert_eq!(error_ranks(&g), error_ranks(&a));
        assert_eq!(g.device_error.is_some(), a.device_error.is_some());
        assert!(
            g.device_error.is_some(),
            "the error after the last assertion is read"
        );
    }
}

/// Thread lines of two kernels in turns (line after line, or one glued
/// line each), some behind a prefix, some glued after a prefixed line:
/// the lines that repeat an echo before the last are counted as reading
/// them gives. The reference reads every line whole: an error line after
/// each changes what the reader holds, so no line is counted from an echo.
#[test]
fn thread_lines_in_turns_count_as_lines_read_whole() {
    let mut rows = Vec::new();
    for k in 0..60u32 {
        let tmpl = if k % 3 == 1 || k % 7 == 0 {
            GATHER
        } else {
            INDEX
        };
        let prefix = match k % 11 {
            4 => "[rank2]: ",
            9 => "[rank5]:",
            _ => "",
        };
        let n = 1 + (k % 4) as usize;
        let pieces: Vec<String> = (0..n)
            .map(|t| {
                tmpl.replace("[B,", &format!("[{},", k / 5))
                    .replace("[T,", &format!("[{},", t as u32 + k))
            })
            .collect();
        rows.push((prefix, pieces));
    }
    let error = "RuntimeError: CUDA error: device-side assert triggered";
    for glued in [false, true] {
        let line = |(prefix, pieces): &(&str, Vec<String>)| -> Vec<String> {
            if glued {
                vec![format!("{prefix}{}", pieces.concat())]
            } else {
                pieces.iter().map(|p| format!("{prefix}{p}")).collect()
            }
        };
        let plain: String = rows.iter().flat_map(line).map(|l| l + "\n").collect();
        let whole: String = rows
            .iter()
            .flat_map(line)
            .map(|l| format!("{l}\n{error}\n"))
            .collect();
        let (p, w) = (facts(&plain), facts(&whole));
        assert_eq!(summary(&p), summary(&w), "glued {glued}");
        assert_eq!(p.groups.len(), 2);
    }
}
