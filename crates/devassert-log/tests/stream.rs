//! The reader never panics on arbitrary bytes, and the report does not
//! depend on how the input is chunked.

use devassert_core::Catalog;
use devassert_log::LogAnalyzer;
use proptest::prelude::*;

fn report(chunks: &[&[u8]]) -> String {
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("log");
    for c in chunks {
        a.feed(c);
    }
    serde_json::to_string(&a.finish()).unwrap_or_default()
}

fn fixture(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../devassert/tests/fixtures/logs")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Split `data` at the given cut points (taken modulo its length).
fn chunked(data: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| if data.is_empty() { 0 } else { c % data.len() })
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut out = Vec::new();
    let mut prev = 0;
    for p in points {
        out.push(data[prev..p].to_vec());
        prev = p;
    }
    out.push(data[prev..].to_vec());
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let r = report(&[&bytes]);
        prop_assert!(r.contains("\"command\":\"explain\""));
    }

    #[test]
    fn log_like_noise_does_not_panic(parts in proptest::collection::vec(prop_oneof![
        Just("Assertion `".to_string()), Just("` failed.".to_string()), Just("block: [".to_string()), Just("thread: [".to_string()),
        Just("File \"".to_string()), Just("Traceback (most recent call last):\n".to_string()), Just("\r".to_string()), Just("\n".to_string()),
        Just("\x1b[".to_string()), Just("[rank1]:".to_string()), Just(":16:".to_string()), Just("\\n".to_string()), Just(".cu".to_string()),
        Just("device-side assert triggered".to_string()), Just("GPU assertion failure message = ".to_string()), "[ -~]{0,12}",
    ], 0..200)) {
        let text = parts.concat();
        let r = report(&[text.as_bytes()]);
        prop_assert!(r.contains("\"schema\":\"devassert/1\""));
    }

    #[test]
    fn chunking_does_not_change_the_report(cuts in proptest::collection::vec(any::<usize>(), 0..12), which in 0usize..4) {
        let name = ["own/multirank-fallout-first.log", "corpus/052.log", "own/repr-escaped.log", "own/glued-reassembly.log"][which];
        let data = fixture(name);
        let whole = report(&[&data]);
        let parts = chunked(&data, &cuts);
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        prop_assert_eq!(whole, report(&refs));
    }
}

#[test]
fn a_memory_checker_report_read_a_byte_at_a_time_is_the_same() {
    let data = fixture("own/memcheck-ctc-sanitizer.log");
    let whole = report(&[&data]);
    assert!(whole.contains("ctc_loss_log_alpha_gpu_kernel"), "{whole}");
    let bytes: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(whole, report(&bytes));
}

#[test]
fn byte_at_a_time_equals_one_chunk() {
    let data = fixture("own/split-job.out");
    let bytes: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(report(&[&data]), report(&bytes));
}

#[test]
fn lines_longer_than_the_cap_are_cut_not_kept() {
    let mut data = vec![b'x'; 3 * 1024 * 1024];
    data.extend_from_slice(b"\nRuntimeError: CUDA error: device-side assert triggered\n");
    let r = report(&[&data]);
    assert!(r.contains("DA001"), "{r}");
}

/// Found by the proptest above: a lone `>` quote marker after a `\r`.
#[test]
fn lone_quote_marker_after_cr_does_not_panic() {
    let mut a = devassert_log::LogAnalyzer::new(devassert_core::Catalog::builtin());
    a.feed(b"\\n\r>\r");
    assert_eq!(a.finish().exit_code, 0);
}

/// A burst of thread lines in `order`, each (rank, kernel, block, thread).
fn burst(order: &[(u8, bool, u32, u32)]) -> String {
    order
        .iter()
        .map(|&(rank, gather, b, t)| {
            let (file, kernel, cond) = if gather {
                ("IndexKernelUtils.cu:16", "vectorized_gather_kernel", "ind >=0 && ind < ind_dim_size")
            } else {
                ("Indexing.cu:1422", "indexSelectLargeIndex", "srcIndex < srcSelectDimSize")
            };
            format!("[rank{rank}]:/pytorch/aten/src/ATen/native/cuda/{file}: {kernel}: block: [{b},0,0], thread: [{t},0,0] Assertion `{cond}` failed.\n")
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Thread lines are counted from their coordinates once a line repeats
    /// the one before it; the counts must be those of parsing every line.
    #[test]
    fn repeated_thread_lines_count_exactly(
        order in proptest::collection::vec((0u8..3, any::<bool>(), 0u32..4, 0u32..40), 1..300),
        noise in proptest::collection::vec(0usize..300, 0..6),
    ) {
        let mut text = burst(&order);
        for n in noise {
            // Unrelated lines between thread lines break the runs.
            let at = text.match_indices('\n').nth(n % order.len()).map_or(0, |(i, _)| i + 1);
            text.insert_str(at, "{'loss': 2.1, 'grad_norm': 0.3}\n");
        }
        let mut a = LogAnalyzer::new(Catalog::builtin());
        a.feed(text.as_bytes());
        let facts = a.facts();
        for gather in [false, true] {
            let mine: Vec<_> = order.iter().filter(|o| o.1 == gather).collect();
            let g = facts.groups.iter().find(|g| g.kernel.as_deref().is_some_and(|k| k.contains("gather")) == gather);
            let Some(g) = g else {
                prop_assert!(mine.is_empty());
                continue;
            };
            prop_assert_eq!(g.lines, mine.len() as u64);
            let triples: std::collections::HashSet<_> = mine.iter().map(|o| (o.0, o.2, o.3)).collect();
            prop_assert_eq!(g.triples.len(), triples.len());
            let ranks: std::collections::BTreeSet<i64> = mine.iter().map(|o| i64::from(o.0)).collect();
            prop_assert_eq!(g.ranks.iter().collect::<Vec<_>>(), ranks.into_iter().collect::<Vec<_>>());
        }
    }
}

/// A buffer large enough for the search's automata reports the same as
/// small chunks searched by compares, line numbers included.
#[test]
fn large_buffer_search_equals_small_chunks() {
    let mut data = Vec::new();
    let progress =
        "[rank1]:{'loss': 2.1, 'grad_norm': 0.3, 'learning_rate': 5e-05, 'epoch': 0.1}\n";
    for i in 0..60_000 {
        data.extend_from_slice(progress.as_bytes());
        if i % 7000 == 0 {
            data.extend_from_slice(
                burst(&[(0, false, 3, i), (0, false, 3, i + 1), (0, true, 1, 2)]).as_bytes(),
            );
        }
    }
    data.extend_from_slice(&fixture("own/multirank-fallout-first.log"));
    assert!(data.len() > 4 << 20);
    let small: Vec<&[u8]> = data.chunks(64 * 1024).collect();
    assert_eq!(report(&[&data]), report(&small));
}

/// The report of `data` written to a file and explained from it (read in
/// buffers), and the report of it fed in chunks of 64 KiB.
fn read_in_buffers_and_chunked(data: &[u8], name: &str) -> (String, String) {
    let path = std::env::temp_dir().join(format!("devassert-{name}-{}.log", std::process::id()));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let read = devassert_log::explain_paths(std::slice::from_ref(&path), Catalog::builtin());
    let _ = std::fs::remove_file(&path);
    let read = serde_json::to_string(&read.unwrap_or_else(|e| panic!("{e}"))).unwrap_or_default();
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input(&path.to_string_lossy());
    for c in data.chunks(64 * 1024) {
        a.feed(c);
    }
    (read, serde_json::to_string(&a.finish()).unwrap_or_default())
}

/// A file is read, searched and taken in by buffers of whole lines; lines
/// longer than a buffer, a last line without its newline and
/// buffers that end mid-line give the report that small chunks give.
#[test]
fn reading_a_file_ahead_equals_small_chunks() {
    let mut data = Vec::new();
    let progress = "[rank1]: step 12: loss inf, INFO lr 5e-05 grad_norm 0.3\n";
    while data.len() < 3 << 20 {
        data.extend_from_slice(progress.as_bytes());
    }
    // Longer than the read buffer, with an assertion glued to its end.
    data.extend(std::iter::repeat_n(b'x', (5 << 20) / 2));
    data.extend_from_slice(burst(&[(0, false, 3, 1), (0, true, 1, 2)]).as_bytes());
    data.extend_from_slice(&fixture("own/multirank-fallout-first.log"));
    data.extend_from_slice(b"[rank0]: labels tensor([3, 7, -1");
    let (read, chunked) = read_in_buffers_and_chunked(&data, "ahead");
    assert!(read.contains("DA1"), "{read}");
    assert_eq!(read, chunked);
}

/// A device line a terminal wrapped at 60 columns inside its path: the
/// row that waits for the assertion's end starts in the path (`exing.cu:`),
/// so joining it looks back at the row before, which the reader may have
/// read in an earlier chunk (a waiting row keeps where that row is and
/// copies it only when its chunk ends first).
#[test]
fn a_wrapped_line_joined_across_any_chunk_end_looks_back_alike() {
    const LINE: &str = "/home/ml/checkouts/pytorch-2.1/aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectSmallIndex: block: [0,0,0], thread: [5,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
    let mut text = String::from("epoch 3, step 120: loss 2.31\n");
    for row in LINE.as_bytes().chunks(60) {
        text.push_str(std::str::from_utf8(row).unwrap_or_default());
        text.push('\n');
    }
    text.push_str("RuntimeError: CUDA error: device-side assert triggered\n");
    let data = text.as_bytes();
    let whole = report(&[data]);
    assert!(
        whole.contains("\"source\":\"aten/src/ATen/native/cuda/Indexing.cu:1289\""),
        "the path is joined from the row before: {whole}"
    );
    for cut in 1..data.len() {
        assert_eq!(whole, report(&[&data[..cut], &data[cut..]]), "cut at {cut}");
    }
}

/// A burst of thread lines (a run, whose lines the search finds by their
/// trigger words without walking them) with a line a terminal wrapped at
/// 60 columns in its middle: every line is counted and the wrapped one
/// joined, wherever a chunk ends.
#[test]
fn a_wrapped_line_inside_a_run_of_thread_lines_counts_wherever_a_chunk_ends() {
    const LINE: &str = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [3,0,0], thread: [99,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
    let threads = |from: u32| {
        burst(
            &(from..from + 8)
                .map(|t| (0, false, 3, t))
                .collect::<Vec<_>>(),
        )
    };
    let mut text = threads(0);
    for row in LINE.as_bytes().chunks(60) {
        text.push_str(std::str::from_utf8(row).unwrap_or_default());
        text.push('\n');
    }
    text.push_str(&threads(8));
    text.push_str("RuntimeError: CUDA error: device-side assert triggered\n");
    let data = text.as_bytes();
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.feed(data);
    let facts = a.facts();
    assert_eq!(facts.groups.len(), 1, "{:?}", facts.groups);
    assert_eq!(facts.groups[0].lines, 17);
    assert_eq!(facts.groups[0].triples.len(), 17);
    let whole = report(&[data]);
    for cut in 1..data.len() {
        assert_eq!(whole, report(&[&data[..cut], &data[cut..]]), "cut at {cut}");
    }
}

/// A real log (corpus 119, split tune2) whose poster cut the frame line of
/// the code above the error: that code is read wherever the input is cut,
/// one byte at a time included (the row above comes from an earlier chunk).
#[test]
fn the_code_above_a_cut_frame_is_read_whatever_the_chunking() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../devassert/tests/corpus/real/119.log");
    let data = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let whole = report(&[&data]);
    assert!(whole.contains("labels are gathered"), "{whole}");
    for cut in 0..data.len() {
        assert_eq!(whole, report(&[&data[..cut], &data[cut..]]), "cut at {cut}");
    }
    let bytes: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(whole, report(&bytes));
}

/// A piece of a log for `a_file_read_in_buffers_equals_small_chunks_anywhere`.
#[derive(Debug, Clone)]
enum Piece {
    /// Progress lines, about this many bytes.
    Progress(usize),
    /// One line of glued thread reports (about this many bytes), with or
    /// without a newline after it.
    Glued(usize, bool),
    /// One line of filler this long (longer than a read buffer or not).
    Long(usize),
    /// A burst of thread lines.
    Threads(u32),
    /// A line with a Unicode space in it.
    Spaced,
}

fn piece_text(p: &Piece) -> String {
    match *p {
        Piece::Progress(n) => "step 12: loss 0.3 lr 5e-05\n".repeat(n / 27 + 1),
        Piece::Glued(n, newline) => {
            let one = burst(&[(0, true, 3, 7)]);
            let one = one.trim_start_matches("[rank0]:").trim_end();
            let mut s = one.repeat(n / one.len() + 1);
            if newline {
                s.push('\n');
            }
            s
        }
        Piece::Long(n) => "x".repeat(n) + "\n",
        Piece::Threads(n) => burst(&(0..n).map(|t| (1, false, 2, t)).collect::<Vec<_>>()),
        Piece::Spaced => {
            "RuntimeError:\u{a0}CUDA error:\u{3000}device-side assert triggered\n".into()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// A file is read, searched and taken in by buffers of whole lines (a
    /// few hundred KiB): lines of any length around a buffer's size, glued
    /// reports, Unicode spaces, thread bursts, with or without a last
    /// newline, give the report that small chunks fed one by one give.
    #[test]
    fn a_file_read_in_buffers_equals_small_chunks_anywhere(
        pieces in proptest::collection::vec(prop_oneof![
            (1usize..400_000).prop_map(Piece::Progress),
            ((1usize..600_000), any::<bool>()).prop_map(|(n, nl)| Piece::Glued(n, nl)),
            (1usize..1_200_000).prop_map(Piece::Long),
            (1u32..200).prop_map(Piece::Threads),
            Just(Piece::Spaced),
        ], 1..6),
        last_newline in any::<bool>(),
    ) {
        let mut data: Vec<u8> = pieces.iter().flat_map(|p| piece_text(p).into_bytes()).collect();
        data.extend_from_slice(&fixture("own/multirank-fallout-first.log"));
        if !last_newline {
            data.extend_from_slice(b"[rank0]: labels tensor([3, 7, -1");
        }
        let (read, chunked) = read_in_buffers_and_chunked(&data, "ahead-any");
        prop_assert_eq!(read, chunked);
    }
}
