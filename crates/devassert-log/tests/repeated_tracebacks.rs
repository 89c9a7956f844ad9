//! A log of handled tracebacks repeats their rows thousands of times; a
//! repeated row that only the traceback builder reads goes to it at once
//! (`reader/memo.rs`). Every traceback must still be read whole and at its
//! place, and a repeated row that says something else (a launch-blocking
//! hint, a host error) must still say it.

mod common;

use common::{facts_in_chunks as facts, summary};
use devassert_core::Catalog;
use devassert_log::{Facts, LogAnalyzer};

fn handled(i: usize) -> String {
    format!(
        "step {i}: skipping a sample\n\
         Traceback (most recent call last):\n  \
         File \"/home/ml/data.py\", line 88, in __getitem__\n    \
         return self.decode(self.rows[i])\n  \
         File \"/home/ml/data.py\", line 61, in decode\n    \
         obj = json.loads(line)  # CUDA_LAUNCH_BLOCKING=1 made no difference\n\
         ValueError: bad row {i}\n"
    )
}

#[test]
fn repeated_tracebacks_are_read_whole_at_their_place() {
    let n = 100;
    let mut log: String = (0..n).map(handled).collect();
    log.push_str("RuntimeError: CUDA error: device-side assert triggered\n");
    for chunk in [log.len(), 4096, 97] {
        let f = facts(&log, chunk);
        // The first 24 and the latest 24, in log order.
        assert_eq!(f.tracebacks.len(), 48);
        assert_eq!(f.tracebacks_dropped, (n - 48) as u64);
        let kept = (0..24).chain(n - 24..n);
        for (tb, i) in f.tracebacks.iter().zip(kept) {
            assert_eq!(tb.line, 2 + 7 * i as u64, "traceback {i}");
            assert_eq!(
                tb.exception.as_deref(),
                Some(&*format!("ValueError: bad row {i}"))
            );
            let frames: Vec<_> = tb
                .frames
                .iter()
                .map(|f| {
                    (
                        f.file.as_str(),
                        f.line,
                        f.function.as_str(),
                        f.code.as_deref(),
                    )
                })
                .collect();
            assert_eq!(
                frames,
                [
                    (
                        "/home/ml/data.py",
                        88,
                        "__getitem__",
                        Some("return self.decode(self.rows[i])")
                    ),
                    (
                        "/home/ml/data.py",
                        61,
                        "decode",
                        Some("obj = json.loads(line)  # CUDA_LAUNCH_BLOCKING=1 made no difference")
                    ),
                ]
            );
        }
        assert!(
            f.launch_blocking,
            "the repeated code row's hint is still read"
        );
        let e = f
            .device_error
            .as_ref()
            .expect("the crash after the tracebacks");
        assert_eq!(e.first.line, 7 * n as u64 + 1);
        assert_eq!(f.inputs[0].lines, 7 * n as u64 + 1);
    }
}

/// A logged line as wide as the widest rows, behind a time stamp, waits
/// for the next row (a terminal may have cut it there): it is then read
/// alone, and the repeated header after it still goes to the builder.
fn logged(i: usize) -> String {
    format!(
        "2024-05-01 12:{:02}:{:02},{:03} - WARNING - loader - skipping sample {:07} of shard {:04}\n\
         Traceback (most recent call last):\n  \
         File \"/home/ml/data.py\", line 88, in __getitem__\n    \
         return self.decode(self.rows[i])\n\
         ValueError: bad row {i}\n",
        i / 60 % 60,
        i % 60,
        i % 1000,
        i * 7919 % 10_000_000,
        i % 4096,
    )
}

#[test]
fn wide_logged_lines_between_tracebacks_are_their_messages() {
    let n = 100;
    let mut log: String = (0..n).map(logged).collect();
    // A row as wide as the logged ones, cut by the terminal before the
    // error it holds: joined with the next, it is read in full.
    let cut = "2024-05-01 12:59:59,999 - ERROR   - trainer - step 4242 failed: Runtim";
    let width = logged(0).lines().next().map_or(0, str::len);
    log.push_str(&format!(
        "{cut:<width$}\neError: CUDA error: device-side assert triggered\n"
    ));
    for chunk in [log.len(), 4096, 97] {
        let f = facts(&log, chunk);
        assert_eq!(f.tracebacks.len(), 48);
        assert_eq!(f.tracebacks_dropped, (n - 48) as u64);
        let kept = (0..24).chain(n - 24..n);
        for (tb, i) in f.tracebacks.iter().zip(kept) {
            assert_eq!(tb.line, 2 + 5 * i as u64, "traceback {i}");
            assert_eq!(tb.frames.len(), 1, "traceback {i}");
            assert_eq!(
                tb.exception.as_deref(),
                Some(&*format!("ValueError: bad row {i}"))
            );
            // The next logged line is read as the message's next line.
            if i + 1 < n {
                let next = logged(i + 1);
                let line = next.lines().next().unwrap_or_default();
                let said = line.split_once(" - ").map_or(line, |(_, rest)| rest);
                assert_eq!(tb.message.len(), 1, "traceback {i}: {:?}", tb.message);
                assert!(
                    tb.message[0].ends_with(said),
                    "traceback {i}: {:?}",
                    tb.message
                );
            }
        }
        let e = f.device_error.as_ref().expect("the cut error is read");
        assert_eq!(e.first.line, 5 * n as u64 + 2);
        assert_eq!(f.inputs[0].lines, 5 * n as u64 + 2);
    }
}

/// Which of three bodies traceback `i` has: two that share their first
/// frame and go on differently, in an order with no period (so the row
/// that followed a row last time is often not the one that follows it
/// now), and now and then a third whose code row says something the
/// builder alone does not read (a launch-blocking hint: read whole).
fn body(i: usize) -> usize {
    if i % 17 == 5 {
        2
    } else {
        (i * i / 3 + i / 7) % 2
    }
}

fn interleaved(i: usize) -> String {
    let (second, code) = match body(i) {
        0 => ("decode", "obj = json.loads(line)"),
        1 => ("parse", "return self.parser.parse(line)"),
        _ => (
            "decode",
            "obj = json.loads(line)  # set CUDA_LAUNCH_BLOCKING=1",
        ),
    };
    format!(
        "Traceback (most recent call last):\n  \
         File \"/home/ml/data.py\", line 88, in __getitem__\n    \
         return self.decode(self.rows[i])\n  \
         File \"/home/ml/data.py\", line {}, in {second}\n    \
         {code}\n\
         ValueError: bad row {i}\n",
        61 + body(i),
    )
}

/// Known traceback rows are taken by comparing a row with the one that
/// followed the last known row before (`reader/memo.rs`): where the bodies
/// alternate that guess is wrong, and the row must still be read as what
/// it is, the latest tracebacks kept after many dropped ones, whatever the
/// chunks (a byte at a time: every row is a carried one).
#[test]
fn interleaved_bodies_keep_their_own_frames() {
    let n = 160;
    let log: String = (0..n).map(interleaved).collect();
    for chunk in [log.len(), 4096, 97, 1] {
        let f = facts(&log, chunk);
        assert_eq!(f.tracebacks.len(), 48, "chunk {chunk}");
        assert_eq!(f.tracebacks_dropped, (n - 48) as u64);
        let kept = (0..24).chain(n - 24..n);
        for (tb, i) in f.tracebacks.iter().zip(kept) {
            let want = interleaved(i);
            let rows: Vec<&str> = want.lines().map(str::trim).collect();
            assert_eq!(tb.line, 1 + 6 * i as u64, "traceback {i}, chunk {chunk}");
            let frames: Vec<_> = tb
                .frames
                .iter()
                .map(|f| (f.line, f.function.as_str(), f.code.as_deref()))
                .collect();
            let second = if body(i) == 1 { "parse" } else { "decode" };
            assert_eq!(
                frames,
                [
                    (88, "__getitem__", Some(rows[2])),
                    (61 + body(i) as u64, second, Some(rows[4])),
                ],
                "traceback {i}, chunk {chunk}"
            );
            assert_eq!(tb.exception.as_deref(), Some(rows[5]));
        }
        assert!(f.launch_blocking, "the odd body's hint is read");
        assert_eq!(f.inputs[0].lines, 6 * n as u64);
    }
}

/// Row `i` before a traceback, all as wide as the widest: a logged line
/// (it waits: a terminal may have cut it), and rows whose wait the header
/// after them does not end at once or that are not their own bytes.
fn before_header(i: usize, width: usize) -> Vec<u8> {
    let row = match i % 8 {
        // The prefix alone filled its row: joined with the header.
        1 => "[rank0]:".to_string(),
        // A frame the terminal cut before its function.
        2 => format!("  File \"/home/ml/{}.py\", line {i}", "d".repeat(40)),
        // A code row of the open traceback.
        3 => format!("    total = compute(rows[{i}], {})", "x".repeat(30)),
        // A host error behind a prefix.
        4 => format!("[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered {i}"),
        _ => format!(
            "2024-05-01 12:{:02}:{:02},{:03} - WARNING - loader - skipping sample {:07} of shard {:04}",
            i / 60 % 60,
            i % 60,
            i % 1000,
            i * 7919 % 10_000_000,
            i % 4096,
        ),
    };
    let mut row = format!("{row:<width$}").into_bytes();
    match i % 8 {
        // A carriage return at its end, or bytes that are not UTF-8 (one
        // replaced by more bytes, three by as many).
        5 => row.push(b'\r'),
        6 if i % 16 == 6 => row[10] = 0xff,
        6 => row[10..13].copy_from_slice(&[0xf0, 0x9f, 0x98]),
        _ => {}
    }
    row.push(b'\n');
    row
}

/// A row kept waiting for the next (a terminal may have cut it) is read at
/// once when the next row is a header in the same buffer
/// (`lines::released_by_header`); a byte at a time, every row is the last
/// of its buffer and waits. Both readings must keep the same, whatever the
/// row before the header is and whether it waits.
#[test]
fn a_wait_ended_by_a_header_reads_as_the_wait() {
    let width = 84;
    let n = 120;
    let mut log = Vec::new();
    for i in 0..n {
        log.extend(before_header(i, width));
        let header = if i % 11 == 7 {
            "  Traceback"
        } else {
            "Traceback"
        };
        log.extend(
            format!(
                "{header} (most recent call last):\n  \
                 File \"/home/ml/data.py\", line 88, in __getitem__\n    \
                 return self.decode(self.rows[i])\n\
                 json.decoder.JSONDecodeError: Extra data: line 1 column {} (char {})\n",
                20 + i * 7 % 880,
                20 + i * 13 % 880,
            )
            .into_bytes(),
        );
    }
    log.extend(b"RuntimeError: CUDA error: device-side assert triggered\n");
    let read = |chunk: usize| {
        let mut a = LogAnalyzer::new(Catalog::builtin());
        a.begin_input("log");
        for c in log.chunks(chunk) {
            a.feed(c);
        }
        summary(&a.facts())
    };
    let waited = read(1);
    assert!(waited.contains("illegal memory access"), "{waited}");
    for chunk in [log.len(), 4096, 97] {
        assert_eq!(read(chunk), waited, "chunk {chunk}");
    }
}

/// Traceback `i` of one of three bodies whose rows are of every kind the
/// builder reads of a repeated row (`traceback::RowStep`): frames with and
/// without the comma before `in`, code rows, caret rows, a repeated-line
/// note, indented message rows, blank rows, a chain (reversed dumps go to
/// `step` whole; `traceback::tests` compares those).
fn of_every_kind(i: usize) -> String {
    match i % 3 {
        0 => format!(
            "Traceback (most recent call last):\n  \
             File \"/home/ml/train.py\", line 12, in <module>\n    \
             main()\n    \
             ^^^^^^\n  \
             File \"/home/ml/train.py\", line 9 in main\n    \
             return f(x)\n  \
             File \"/home/ml/train.py\", line 5, in f\n    \
             return f(x - 1)\n    \
             [Previous line repeated 996 more times]\n\
             RecursionError: maximum recursion depth exceeded {i}\n    \
             while calling a Python object\n    \
             and more\n"
        ),
        1 => format!(
            "Traceback (most recent call last):\n  \
             File \"/home/ml/model.py\", line 14 in forward\n  \
             File \"/home/ml/train.py\", line 40 in step\n\
             SystemError: aborted {i}\n"
        ),
        _ => format!(
            "Traceback (most recent call last):\n  \
             File \"/home/ml/data.py\", line 88, in __getitem__\n    \
             return self.decode(self.rows[i])\n\
             KeyError: {i}\n\n\
             During handling of the above exception, another exception occurred:\n\n\
             Traceback (most recent call last):\n  \
             File \"/home/ml/data.py\", line 90, in __getitem__\n    \
             raise ValueError(i)\n\
             ValueError: {i}\n"
        ),
    }
}

/// Tracebacks as read (`Debug`), their places left out.
fn placeless(f: &Facts) -> Vec<String> {
    let mut tbs = f.tracebacks.clone();
    tbs.iter_mut()
        .map(|tb| {
            tb.line = 0;
            format!("{tb:?}")
        })
        .collect()
}

/// A row's third sight on goes to the builder as the `RowStep` found at
/// its second (`reader/memo.rs`): every kept traceback must be what the
/// same traceback reads as alone in a log (each row seen once), whatever
/// the chunks.
#[test]
fn repeated_rows_of_every_kind_build_as_read_alone() {
    let n = 90;
    let log: String = (0..n).map(of_every_kind).collect();
    for chunk in [log.len(), 4096, 97, 1] {
        let f = facts(&log, chunk);
        let kept = placeless(&f);
        assert_eq!(f.tracebacks_dropped + kept.len() as u64, 4 * n as u64 / 3);
        let mut want = Vec::new();
        for i in (0..n).filter(|i| *i < 24 || *i >= n - 40) {
            want.extend(placeless(&facts(&of_every_kind(i), 7)));
        }
        // The first 24 and the latest 24 of what reading each alone keeps.
        let latest: Vec<_> = want.split_off(want.len() - 24);
        let first: Vec<_> = want.into_iter().take(24).collect();
        assert_eq!(kept, [first, latest].concat(), "chunk {chunk}");
    }
}

/// Each rank's rows go to its own traceback, also while another rank's is
/// the only one open (`OpenTracebacks::open` finds one rank's builder
/// without hashing the rank).
#[test]
fn interleaved_ranks_build_their_own_tracebacks() {
    let log = "[rank0]: Traceback (most recent call last):\n\
               [rank0]:   File \"a.py\", line 1, in f\n\
               [rank1]: Traceback (most recent call last):\n\
               [rank1]:   File \"b.py\", line 2, in g\n\
               [rank0]: ValueError: zero\n\
               [rank1]: KeyError: one\n\
               [rank0]:   File \"c.py\", line 3, in h\n";
    for chunk in [log.len(), 7] {
        let f = facts(log, chunk);
        let read: Vec<_> = f
            .tracebacks
            .iter()
            .map(|t| {
                let files: Vec<_> = t.frames.iter().map(|f| f.file.as_str()).collect();
                (t.rank, files, t.exception.as_deref())
            })
            .collect();
        assert_eq!(
            read,
            [
                (Some(0), vec!["a.py"], Some("ValueError: zero")),
                (Some(1), vec!["b.py"], Some("KeyError: one")),
                (Some(0), vec!["c.py"], None),
            ],
            "read by {chunk}"
        );
    }
}

/// The rows after a header, of one of five bodies: the shape's four
/// frames with code rows; two of them with carets and a blank row; the
/// first again with its last code row changed (the same rows up to
/// there); a code row with a launch-blocking hint (not a builder-only
/// row); a chain marker inside (ends the traceback).
fn block_body(body: usize) -> &'static [&'static str] {
    const SHAPE: &[&str] = &[
        "  File \"/home/ml/gpt2-ft/data.py\", line 88, in __getitem__",
        "    return self.decode(self.rows[i])",
        "  File \"/home/ml/gpt2-ft/data.py\", line 61, in decode",
        "    obj = json.loads(line)",
        "  File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads",
        "    return _default_decoder.decode(s)",
        "  File \"/usr/lib/python3.11/json/decoder.py\", line 340, in decode",
        "    raise JSONDecodeError(\"Extra data\", s, end)",
    ];
    const CARETS: &[&str] = &[
        "  File \"/home/ml/train.py\", line 12, in <module>",
        "    main()",
        "    ^^^^^^",
        "",
        "  File \"/home/ml/train.py\", line 9 in main",
    ];
    const CHANGED: &[&str] = &[
        "  File \"/home/ml/gpt2-ft/data.py\", line 88, in __getitem__",
        "    return self.decode(self.rows[i])",
        "  File \"/home/ml/gpt2-ft/data.py\", line 61, in decode",
        "    obj = json.loads(line, strict=False)",
    ];
    const HINT: &[&str] = &[
        "  File \"/home/ml/gpt2-ft/data.py\", line 88, in __getitem__",
        "    x = f()  # CUDA_LAUNCH_BLOCKING=1 made no difference",
    ];
    const CHAIN: &[&str] = &[
        "  File \"/home/ml/gpt2-ft/data.py\", line 88, in __getitem__",
        "During handling of the above exception, another exception occurred:",
        "  File \"/home/ml/gpt2-ft/data.py\", line 90, in __getitem__",
    ];
    [SHAPE, CARETS, CHANGED, HINT, CHAIN][body % 5]
}

/// Traceback `i`: a row before it (none, a logged line, a rank's), its
/// header (a rank's prefix on it and its rows, or none), the rows of
/// `body` (one row of them of another rank, or none), its exception line
/// (unique, or the same each time) and message rows.
fn block_traceback(i: usize, t: (usize, usize, usize, bool, usize, usize)) -> String {
    let (before, prefix, body, unique, other_rank, messages) = t;
    let p = ["", "[rank0]: ", "[rank1]: "][prefix % 3];
    let mut s = match before % 3 {
        0 => String::new(),
        1 => format!(
            "2024-05-01 12:{:02}:{:02},{:03} - WARNING - loader - skipping sample {}\n",
            i / 60 % 60,
            i % 60,
            i % 1000,
            i * 7919
        ),
        _ => format!("{p}step {i} done\n"),
    };
    s.push_str(&format!("{p}Traceback (most recent call last):\n"));
    for (j, row) in block_body(body).iter().enumerate() {
        let q = if other_rank == j + 1 { "[rank3]: " } else { p };
        s.push_str(&format!("{q}{row}\n"));
    }
    if unique {
        s.push_str(&format!("{p}ValueError: bad row {i}\n"));
    } else {
        s.push_str(&format!("{p}ValueError: bad row\n"));
    }
    for k in 0..messages {
        s.push_str(&format!("{p}  note {k}\n"));
    }
    s
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Rows after a header that repeat the last ones byte for byte are
    /// read at once (`reader/block.rs`) in a buffer that holds them all;
    /// a byte at a time every row is read alone. Both must keep the same,
    /// whatever the bodies, prefixes, ranks, exception and message rows
    /// and the buffers' sizes.
    #[test]
    fn repeated_blocks_read_as_their_rows(
        tbs in proptest::collection::vec(
            (0usize..3, 0usize..3, 0usize..5, proptest::bool::ANY, 0usize..6, 0usize..3),
            1..60,
        ),
        same in 0usize..4,
        chunk in 64usize..5000,
    ) {
        // Runs of the same traceback, as a log of handled ones has them.
        let log: String = tbs
            .iter()
            .enumerate()
            .flat_map(|(i, &t)| {
                let n = if same == 0 { 1 } else { 1 + (t.2 + same) % 6 };
                (0..n).map(move |k| block_traceback(i * 8 + k, t))
            })
            .collect();
        let alone = summary(&facts(&log, 1));
        for c in [log.len(), chunk] {
            proptest::prop_assert_eq!(&summary(&facts(&log, c)), &alone, "chunk {}", c);
        }
    }
}

/// A block read at once at a second input's start (`reader/block.rs`:
/// the known rows, the last block and the header read last are kept, the
/// widest row is counted anew), then a prefixed row as wide as the
/// block's widest and the row after it: read as when every row is read
/// alone.
#[test]
fn a_block_read_at_an_inputs_start_reads_as_its_rows() {
    let cut = "2024-05-01 12:59:59,999 - ERROR   - trainer - step 42424: the loss went up to";
    // A code row as wide, that the builder alone reads (no cut seen in it).
    let code = format!("    obj = json.loads(line{})", ", x".repeat(17));
    assert_eq!(code.len(), cut.len());
    let block = |i: usize| {
        format!(
            "Traceback (most recent call last):\n  \
             File \"/home/ml/data.py\", line 61, in decode\n\
             {code}\n\
             ValueError: bad row {i}\n"
        )
    };
    // The first input ends with a header: the last row read as a known one.
    let first: String =
        (0..4).map(block).collect::<String>() + "Traceback (most recent call last):\n";
    let second = format!("{}{cut}\nnan at batch 7\n", block(10));
    let read = |chunk: usize| {
        let mut a = LogAnalyzer::new(Catalog::builtin());
        for (name, text) in [("one", &first), ("two", &second)] {
            a.begin_input(name);
            for c in text.as_bytes().chunks(chunk) {
                a.feed(c);
            }
        }
        summary(&a.facts())
    };
    let alone = read(1);
    assert!(!alone.contains("\"nan at batch 7\""), "{alone}");
    assert_eq!(read(usize::MAX), alone);
}
