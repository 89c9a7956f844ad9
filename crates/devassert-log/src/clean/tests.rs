use super::prefix::parse_prefixes;
use super::*;

fn strip(s: &str) -> (String, Option<i64>) {
    let (r, p) = strip_prefixes(s);
    (r.to_string(), p.rank)
}

#[test]
fn launcher_prefixes_come_off_with_their_rank() {
    assert_eq!(
        strip("[rank3]: RuntimeError: x"),
        ("RuntimeError: x".into(), Some(3))
    );
    assert_eq!(
        strip("[default0]:  File \"a.py\""),
        (" File \"a.py\"".into(), Some(0))
    );
    assert_eq!(
        strip("[1,0]<stderr>:/tmp/x.cu:1: k"),
        ("/tmp/x.cu:1: k".into(), Some(0))
    );
    assert_eq!(
        strip("(VllmWorker rank=1 pid=4242) ERROR x"),
        ("ERROR x".into(), Some(1))
    );
    assert_eq!(
        strip("(RayTrainWorker pid=112196) /pytorch/a.cu:1: k"),
        ("/pytorch/a.cu:1: k".into(), None)
    );
    assert_eq!(
        strip("15: Traceback (most recent call last):"),
        ("Traceback (most recent call last):".into(), Some(15))
    );
    // Server loggers after the worker prefix: the traceback keeps its indent.
    assert_eq!(
        strip("(Worker pid=12345) ERROR 05-14 10:22:33 [multiproc_executor.py:671]   File \"a.py\", line 3, in f"),
        ("  File \"a.py\", line 3, in f".into(), None)
    );
    assert_eq!(
        strip("(VllmWorker rank=2 pid=7) INFO 06-11 19:48:43 llm_engine.py:161] x"),
        ("x".into(), Some(2))
    );
    assert_eq!(
        strip("(RayWorkerWrapper pid=88, ip=10.0.0.3) WARNING [worker.py:40] RuntimeError: y"),
        ("RuntimeError: y".into(), None)
    );
    assert_eq!(
        strip("ERROR 05-14 10:22:33,123 [core.py:5] z"),
        ("z".into(), None)
    );
    // A level word that begins a message is left alone.
    assert_eq!(
        strip("ERROR: could not read x.py:3"),
        ("ERROR: could not read x.py:3".into(), None)
    );
    assert_eq!(
        strip("12:30:00 not a prefix"),
        ("12:30:00 not a prefix".into(), None)
    );
}

#[test]
fn timestamps_come_off_and_sort() {
    let (r, p) = strip_prefixes(
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught",
    );
    assert_eq!(r, "[Rank 1] Watchdog caught");
    assert_eq!(p.rank, Some(1));
    assert!(p.time.is_some());
    let (r, p) = strip_prefixes("2024-05-01 12:00:00,123 - INFO - step 5");
    assert_eq!(r, "INFO - step 5");
    let (_, q) = strip_prefixes("2024-05-01 12:00:01,000 - x");
    assert!(p.time < q.time);
    let (r, _) = strip_prefixes("[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog");
    assert_eq!(r, "[Rank 0] Watchdog");
}

#[test]
fn a_bracketed_logging_level_comes_off() {
    let (body, p) =
        strip_prefixes("2022-12-28 16:13:02 [ERROR]    File \"/home/u/run.py\", line 55, in main");
    assert_eq!(body, "   File \"/home/u/run.py\", line 55, in main");
    assert!(p.time.is_some());
    // Only a level: a bracketed word that is none stays.
    assert_eq!(strip_prefixes("[ERRORS] x").0, "[ERRORS] x");
}

#[test]
fn escapes_and_progress_bars_go() {
    assert_eq!(strip_escapes("\x1b[31mred\x1b[0m text"), "red text");
    let segs = segments("^MIteration:   0%| 3/1041319 ESC[A/opt/x.cu:272: k: block: [1,0,0]");
    assert_eq!(
        segs.last().map(|s| s.as_ref()),
        Some("Iteration:   0%| 3/1041319 /opt/x.cu:272: k: block: [1,0,0]")
    );
    assert_eq!(
        segments("a\rb\r\n")
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
        vec!["a", "b"]
    );
    assert!(segments("```text").is_empty());
    assert!(segments("``` c++").is_empty());
    // A one-line code block: its text is the line.
    assert_eq!(
        segments("```RuntimeError: CUDA error: device-side assert triggered```")[0],
        "RuntimeError: CUDA error: device-side assert triggered"
    );
    assert_eq!(segments("> > RuntimeError: x")[0], "RuntimeError: x");
    assert_eq!(
        segments("`/pytorch/a.cu:1: k: Assertion **`x` failed**.")[0],
        "/pytorch/a.cu:1: k: Assertion **`x` failed**."
    );
}

#[test]
fn ranks_of_any_size_are_ranks() {
    assert_eq!(
        strip("[rank1000000]: RuntimeError: x"),
        ("RuntimeError: x".into(), Some(1_000_000))
    );
    assert_eq!(
        strip("[rank123456789012345678]: y"),
        ("y".into(), Some(123_456_789_012_345_678))
    );
    assert_eq!(
        strip("[1,2000000]<stderr>:z"),
        ("z".into(), Some(2_000_000))
    );
    // Past what an i64 holds it is no rank prefix (nor any rank at all).
    let huge = format!("[rank{}]: w", "9".repeat(19));
    assert_eq!(strip(&huge), (huge.clone(), None));
}

#[test]
fn nccls_own_rank_tag_names_the_rank_and_stays_in_the_text() {
    for (line, rank) in [
        ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout", 1),
        ("[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] Timeout at NCCL work: 808", 3),
        ("[E1105 03:12:44.904112021 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 12] Exception (either an error or timeout) detected by watchdog", 12),
    ] {
        let (r, p) = strip_prefixes(line);
        assert_eq!(p.rank, Some(rank), "{line}");
        assert!(r.starts_with('['), "{r}");
    }
    // A bracket that only mentions a rank is no tag.
    for line in [
        "[Rank one] x",
        "[PG 0] Rank 1 x",
        "[Rank 1]x",
        "[Ranking 2] y",
    ] {
        assert_eq!(strip_prefixes(line).1.rank, None, "{line}");
    }
}

proptest::proptest! {
    /// The remembered answers are the parser's, whatever order lines (and
    /// lines that differ in one character) are asked in.
    #[test]
    fn remembered_prefixes_are_parsed_ones(picks in proptest::collection::vec((0usize..8, 0usize..2), 1..40)) {
        const LINES: [&str; 8] = [
            "[rank3]: RuntimeError: x",
            "[rank4]: RuntimeError: x",
            "2024-05-01 12:34:56,789 - WARNING - loader - skipping sample 7",
            "2024-05-01 12:34:57,789 - WARNING - loader - skipping sample 7",
            "WARNING - loader - skipping sample 7",
            "  File \"a.py\", line 3, in f",
            "",
            "[1,0]<stderr>:/tmp/x.cu:1: k",
        ];
        for (i, long) in picks {
            // Past the remembered length too.
            let line = if long == 1 { format!("{}{}", LINES[i], " x".repeat(300)) } else { LINES[i].to_string() };
            let (rest, prefix) = strip_prefixes(&line);
            proptest::prop_assert_eq!((rest, prefix), parse_prefixes(&line));
        }
    }
}

proptest::proptest! {
    /// A line's segments handed over one by one, a line of one segment
    /// without copies, are `readable`'s.
    #[test]
    fn each_readable_is_readable(parts in proptest::collection::vec(proptest::sample::select(vec![
        "[rank3]: ", "2024-05-01 12:34:56,789 - WARNING - loader - ", "RuntimeError: x", "\r", "^M",
        "\x1b[31m", "ESC[0m", "```", "> ", "`", "  ", "File \"a.py\", line 3", "\\n", "[1,0]<stderr>:", "é",
    ]), 0..12)) {
        let line = parts.concat();
        let mut each = Vec::new();
        each_readable(&line, |body, prefix| each.push((body.to_string(), prefix)));
        proptest::prop_assert_eq!(each, readable(&line));
    }
}

proptest::proptest! {
    /// A line's segments are its pieces between carriage returns, real or
    /// `^M`, each tidied, the blank ones dropped: a line the first scan
    /// finds neither in included (a `^` alone, an `M` alone).
    #[test]
    fn segments_split_at_each_return(parts in proptest::collection::vec(proptest::sample::select(vec![
        "RuntimeError: x", "\r", "^M", "^", "M", "\x1b[31m", "ESC[0m", "```", "> ", "  ", "é", "a",
    ]), 0..10)) {
        let line = parts.concat();
        let split: Vec<String> = line
            .replace("^M", "\r")
            .split('\r')
            .map(|seg| tidy(seg).into_owned())
            .filter(|s| !s.trim().is_empty())
            .collect();
        let each: Vec<String> = segments(&line).into_iter().map(Cow::into_owned).collect();
        proptest::prop_assert_eq!(each, split);
    }
}
