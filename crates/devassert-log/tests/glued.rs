//! A line of assertions printed back to back is read in pieces, repeats
//! counted from their block and thread alone: what it finds must be what
//! the same assertions on lines of their own give (groups, counts, threads,
//! blocks, ranks), whatever the templates switch to midway and whatever
//! text follows the last.

mod common;

use common::facts_in_chunks;
use devassert_log::{AssertGroup, Facts};

const INDEX: &str = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [B,0,0], thread: [T,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
const GATHER: &str = "/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: block: [B,0,0], thread: [T,0,0] Assertion `ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\"` failed.";

fn facts(text: &str) -> Facts {
    facts_in_chunks(text, usize::MAX)
}

type Counts = (Option<String>, String, String, u64, usize, usize, Vec<i64>);
type Summary = Vec<Counts>;

fn counts(g: &AssertGroup) -> Counts {
    (
        g.kernel.clone(),
        g.assertion.clone(),
        g.source().unwrap_or_default(),
        g.lines,
        g.triples.len(),
        g.blocks.len(),
        g.ranks.iter().collect(),
    )
}

fn summary(f: &Facts) -> Summary {
    let mut v: Summary = f.groups.iter().map(counts).collect();
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

/// A group's counts with every thread and block it holds, and where it
/// was first seen.
type Full = Vec<(Counts, Vec<(i64, [u32; 3], [u32; 3])>, Vec<(i64, [u32; 3])>)>;

fn full(f: &Facts) -> Full {
    let mut v: Full = f
        .groups
        .iter()
        .map(|g| {
            let mut triples: Vec<_> = g.triples.iter().collect();
            let mut blocks: Vec<_> = g.blocks.iter().copied().collect();
            triples.sort();
            blocks.sort();
            (counts(g), triples, blocks)
        })
        .collect();
    v.sort();
    v
}

/// Glued lines whose every piece repeats one thread line to the line's
/// end are counted without the terminal-cut check's walk of their pieces
/// (`reader::glued`), beside glued lines that switch template midway, end
/// in a piece cut after its path (the rest on the next row), end in the
/// printf form or in other text, are printf pieces alone (one assertion
/// to the line's end), or carry a prefix. Fed whole, in small chunks and a
/// byte at a time, the log reads as the same rows read with an error line
/// after each (no piece is then counted from an echo of an earlier line),
/// thread by thread.
#[test]
fn glued_lines_of_one_echo_count_as_lines_read_whole() {
    const PRINTF: &str = "[CUDA_KERNEL_ASSERT] /pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [B,0,0], thread: [T,0,0]: Assertion failed: `srcIndex < srcSelectDimSize`: index out of bounds";
    let piece = |tmpl: &str, b: u32, t: u32| {
        tmpl.replace("[B,", &format!("[{b},"))
            .replace("[T,", &format!("[{t},"))
    };
    let pieces = |tmpl: &str, b: u32, from: u32, n: u32| -> String {
        (from..from + n).map(|t| piece(tmpl, b, t)).collect()
    };
    // Each unit is one or more rows that read as one (a cut piece and its rest).
    let mut units: Vec<Vec<String>> = Vec::new();
    for k in 0..70u32 {
        let (b, n) = (k / 4, 2 + k % 5);
        let unit = match k % 10 {
            0 | 3 | 6 => vec![pieces(INDEX, b, k, n)],
            1 | 8 => vec![pieces(GATHER, b + 1, k, n)],
            2 => vec![pieces(INDEX, b, k, n) + &pieces(GATHER, b, k, 2)],
            4 => {
                // The last piece cut after its path: the next row goes on.
                let cut = piece(INDEX, b, k + n);
                let at = cut.find(":1422").unwrap();
                vec![pieces(INDEX, b, k, n) + &cut[..at], cut[at..].to_string()]
            }
            5 => vec![pieces(INDEX, b, k, n) + &piece(PRINTF, b, k + n)],
            7 => match k % 3 {
                0 => vec![pieces(PRINTF, b, k, n)],
                1 => vec![format!("[rank2]: {}", pieces(INDEX, b, k, n))],
                _ => vec![pieces(INDEX, b, k, n) + " step 12 done"],
            },
            _ => vec![pieces(INDEX, b, k, 1) + &piece(INDEX, b + 1, k) + &pieces(INDEX, b, k, n)],
        };
        units.push(unit);
    }
    let error = "RuntimeError: CUDA error: device-side assert triggered";
    let log: String = units.iter().flatten().map(|r| format!("{r}\n")).collect();
    let apart: String = units
        .iter()
        .map(|u| u.iter().map(|r| format!("{r}\n")).collect::<String>() + error + "\n")
        .collect();
    let read_whole = full(&facts(&apart));
    let rows = units.iter().map(Vec::len).sum::<usize>() as u64;
    let whole = facts(&log);
    assert_eq!(full(&whole), read_whole);
    assert_eq!(whole.inputs[0].lines, rows);
    for chunk in [97, 7, 1] {
        let f = facts_in_chunks(&log, chunk);
        assert_eq!(full(&f), read_whole, "chunk {chunk}");
        assert_eq!(f.inputs[0].lines, rows, "chunk {chunk}");
        let first = |f: &Facts| {
            let mut v: Vec<_> = f
                .groups
                .iter()
                .map(|g| (g.assertion.clone(), g.first.line))
                .collect();
            v.sort();
            v
        };
        assert_eq!(first(&f), first(&whole), "chunk {chunk}");
    }
    // The printf pieces join the first template's group, with their message.
    assert_eq!(whole.groups.len(), 2, "{:?}", summary(&whole));
    assert!(whole.groups.iter().any(|g| g.printf_message.is_some()));
}

/// A stretch of one glued row: threads of one template (0: INDEX, 1:
/// GATHER, 2: a relative path, whose `.` after the last piece's `failed.`
/// would be debris) and block going up, down or staying from x (or from
/// where the last stretch ended: a run that goes on in another block),
/// with thread y.
type Stretch = (u8, u32, Option<u32>, u32, u8, u32);

fn stretch() -> impl proptest::strategy::Strategy<Value = Stretch> {
    use proptest::prelude::*;
    let x = prop_oneof![0u32..3, 61u32..66, 126u32..130, Just(u32::MAX - 40)];
    let template = prop_oneof![6 => Just(0u8), 2 => Just(1u8), 1 => Just(2u8)];
    (
        template,
        0u32..3,
        proptest::option::of(x),
        1u32..70,
        0u8..3,
        0u32..2,
    )
}

/// The pieces of a stretch; `next`: the x after the last stretch's last.
fn stretch_pieces(&(tmpl, b, x, n, dir, y): &Stretch, next: &mut u32) -> String {
    const DOT: &str = "./k.cu:7: f: block: [B,0,0], thread: [T,0,0] Assertion `x` failed.";
    let tmpl = [INDEX, GATHER, DOT][usize::from(tmpl.min(2))];
    let x = x.unwrap_or(*next);
    (0..n)
        .map(|i| {
            let t = match dir {
                0 => x.saturating_add(i),
                1 => x.saturating_sub(i),
                _ => x,
            };
            *next = t.saturating_add(1);
            tmpl.replace("[B,", &format!("[{b},"))
                .replace("[T,0,", &format!("[{t},{y},"))
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]

    /// Glued rows of one to three templates whose threads run up, run down,
    /// restart, repeat or go on in another block or y, across the 64-thread chunks of a group's thread
    /// set and up to u32's end, some behind a rank prefix, count (lines,
    /// threads, blocks, ranks: every triple) as the same rows each read
    /// with an error line after it (no piece counted from an echo), fed
    /// whole and in chunks.
    #[test]
    fn glued_runs_count_as_rows_read_whole(
        rows in proptest::collection::vec(
            (proptest::sample::select(vec!["", "", "[rank1]: ", "[rank3]:"]),
             proptest::collection::vec(stretch(), 1..4)),
            1..8),
    ) {
        let error = "RuntimeError: CUDA error: device-side assert triggered";
        let mut next = 0;
        let mut row = |(prefix, s): &(&str, Vec<Stretch>)| {
            let pieces: String = s.iter().map(|s| stretch_pieces(s, &mut next)).collect();
            format!("{prefix}{pieces}\n")
        };
        let rows: Vec<String> = rows.iter().map(&mut row).collect();
        let log: String = rows.concat();
        let apart: String = rows.iter().map(|r| format!("{r}{error}\n")).collect();
        let read_whole = full(&facts(&apart));
        proptest::prop_assert_eq!(&full(&facts(&log)), &read_whole);
        proptest::prop_assert_eq!(&full(&facts_in_chunks(&log, 97)), &read_whole);
    }
}

/// Glued rows whose runs pass a group's cap of distinct threads midway: the
/// threads held, the count and the cap's note are those of the same rows
/// read whole.
#[test]
fn glued_runs_past_the_cap_count_as_rows_read_whole() {
    const SHORT: &str = "k.cu:1: f: block: [B,0,0], thread: [T,0,0] Assertion `x` failed.";
    let row = |b: u32| -> String {
        (0..100)
            .map(|t| {
                SHORT
                    .replace("[B,", &format!("[{b},"))
                    .replace("[T,", &format!("[{},", t + b % 7))
            })
            .collect::<String>()
            + "\n"
    };
    // 700 rows of 100 threads: past 65,536 distinct threads in the 656th.
    let log: String = (0..700).map(row).collect();
    let error = "RuntimeError: CUDA error: device-side assert triggered\n";
    let apart: String = (0..700).map(|b| row(b) + error).collect();
    let (glued, whole) = (facts(&log), facts(&apart));
    assert_eq!(full(&glued), full(&whole));
    let capped = |f: &Facts| {
        f.groups
            .iter()
            .map(|g| g.triples.capped())
            .collect::<Vec<_>>()
    };
    assert_eq!(capped(&glued), vec![true]);
    assert_eq!(capped(&glued), capped(&whole));
}
