//! The runs of trigger lines (`runs`) keep the lines that walking each line
//! keeps: at the window's end, at the buffer's ends, past the kept part.

use super::runs::AHEAD;
use super::*;
use proptest::prelude::*;

/// A few triggers (one of two bytes, which the runs do not search for), a
/// catalog literal wanted at word boundaries, one any case, one that
/// holds another.
fn search() -> LineSearch {
    let trigger = |t: &str| {
        let sought = Sought::new(t.as_bytes(), true, false, false, false);
        (t.as_bytes().to_vec(), sought, None)
    };
    let mut literals: Vec<_> = ["Assertion", "rror", ".cu", "\\n"]
        .into_iter()
        .map(trigger)
        .collect();
    literals.push((
        b"inf".to_vec(),
        Sought::new(b"inf", false, true, true, false),
        Some(0),
    ));
    literals.push((
        b"nan!".to_vec(),
        Sought::new(b"nan!", false, false, false, true),
        Some(1),
    ));
    // Its filter window (its rarest bytes) ends before the `inf` in it does.
    let long = b"QQQQQQQQQxinfinity";
    literals.push((
        long.to_vec(),
        Sought::new(long, false, false, false, false),
        Some(2),
    ));
    LineSearch::new(literals).expect("a search")
}

/// The lines kept by each way of searching `hay`: runs, line by line, the
/// DFA over every byte, the compares of a short buffer.
fn each_way(s: &LineSearch, hay: &[u8], max_line: usize) -> [(Vec<Line>, u64); 4] {
    // A catalog literal's line is kept only if it also holds `!`.
    let matters = |line: &[u8]| line.contains(&b'!');
    [
        s.search_with(s.bigrams(), true, hay, max_line, &[], &matters),
        s.search_with(s.bigrams(), false, hay, max_line, &[], &matters),
        s.search_with(None, false, hay, max_line, &[], &matters),
        s.search_small(hay, max_line, &[], &matters),
    ]
}

/// The lines (as numbers) runs keep, checked against the other two ways.
fn kept(hay: &[u8], max_line: usize) -> Vec<u64> {
    let s = search();
    // Teddy needs SSSE3 or NEON: elsewhere runs are searched line by line.
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert!(
            s.automata().runs.is_some(),
            "a packed searcher builds on this machine"
        );
    }
    let [runs, lines, every, small] = each_way(&s, hay, max_line);
    assert_eq!(runs, lines);
    assert_eq!(runs, every);
    assert_eq!(runs, small);
    runs.0.iter().map(|l| l.before).collect()
}

#[test]
fn a_trigger_across_the_windows_end_is_found_line_by_line() {
    let first = "x.cu: Assertion `a` failed\n";
    for shift in 0..12 {
        // `Assertion` starts `shift` bytes before the window's end, or after it.
        let pad = AHEAD - 6 + shift;
        let mut hay = first.to_string();
        hay.push_str(&"-".repeat(pad));
        hay.push_str("Assertion\nplain\n");
        assert_eq!(kept(hay.as_bytes(), MAX), [0, 1], "shift {shift}");
        // Short lines before it, kept for their catalog literal: the
        // window's lines are searched, then the run goes on.
        let mut hay = first.to_string();
        let lines = pad / 16;
        for _ in 0..lines {
            hay.push_str("short line inf!\n");
        }
        hay.push_str(&"-".repeat(pad % 16));
        hay.push_str("rror here\nplain\n.cu\n");
        let n = lines as u64;
        let want: Vec<u64> = (0..=n + 1).chain([n + 3]).collect();
        assert_eq!(kept(hay.as_bytes(), MAX), want, "shift {shift}");
    }
}

#[test]
fn triggers_at_the_very_start_and_end_are_kept() {
    assert_eq!(kept(b"Assertion", MAX), [0]);
    assert_eq!(kept(b"Assertion\n", MAX), [0]);
    assert_eq!(kept(b".cu\nrror", MAX), [0, 1]);
    assert_eq!(kept(b"rror\nplain\nnot inf!\nend rror", MAX), [0, 2, 3]);
    assert_eq!(kept(b"rror\nplain\nnot inf\nend rror\n", MAX), [0, 3]);
    assert_eq!(kept(b"", MAX), Vec::<u64>::new());
    assert_eq!(kept(b"\n\n", MAX), Vec::<u64>::new());
}

#[test]
fn a_trigger_past_the_kept_part_does_not_keep_its_line() {
    // The run is started by the first line; the second line's trigger ends
    // past its first 16 bytes, the third's at its 16th byte.
    let hay = b"rror\n0123456789ab Assertion\n0123456.cuAssertion\n";
    assert_eq!(kept(hay, 16), [0, 2]);
    // Past the kept part, a catalog literal is still asked about.
    let hay = b"rror\n0123456789 inf! Assertion\n";
    assert_eq!(kept(hay, 16), [0, 1]);
    // Two-byte triggers (not searched by the runs) are found by the walk.
    assert_eq!(kept(b"rror\n-\\n-\nx\n", MAX), [0, 1]);
}

#[test]
fn a_literal_begun_before_the_last_one_found_ends_is_found() {
    // The rest of each line holds no byte pair of a literal: the filter
    // finds nothing there.
    let rest = "0".repeat(40);
    // `inf` ends inside `QQQQQQQQQxinfinity` (and wants a boundary it
    // lacks): the walk goes on past it, for the literal that began before
    // it ended (which the filter no longer sees from there).
    let line = format!("0000000000 QQQQQQQQQxinfinity {rest}!\n");
    assert_eq!(kept(line.as_bytes(), MAX), [0]);
    // After `inf`, nothing is left: the walk may stop (the line is kept
    // for `inf`, and `matters` sees the `!` after it).
    let line = format!("0000000000 inf {rest}!\n");
    assert_eq!(kept(line.as_bytes(), MAX), [0]);
    let line = format!("0000000000 inf {rest}\n");
    assert_eq!(kept(line.as_bytes(), MAX), Vec::<u64>::new());
}

/// Pieces of lines: triggers, their near misses, catalog literals, noise.
const PIECES: &[&str] = &[
    "Assertion",
    "Assert",
    "rror",
    "rro",
    ".cu",
    ".c",
    "\\n",
    "\\",
    "inf",
    "INFO",
    "nan!",
    "NaN!",
    "!",
    " ",
    "x",
    "\t",
    "\r",
    "QQQQQQQQQxinfinity",
    "QQQQQQQQQ",
    "xinfinity",
];

#[test]
fn a_short_buffer_builds_no_automata() {
    let s = search();
    let line = b"x/Indexing.cu:1422: Assertion `srcIndex` failed.\n";
    let matters = |_: &[u8]| true;
    let short = line.repeat(SMALL / line.len());
    assert!(short.len() < SMALL);
    let found = s.lines(&short, MAX, &[], &matters);
    assert_eq!(found.0.len(), SMALL / line.len());
    assert!(
        !s.automata_built(),
        "a short buffer is searched without them"
    );
    // One line more and the buffer is large: the same lines, by the automata.
    let long = line.repeat(SMALL / line.len() + 1);
    let found_long = s.lines(&long, MAX, &[], &matters);
    assert!(s.automata_built());
    assert_eq!(found_long.0[..found.0.len()], found.0[..]);
    assert_eq!(found_long.1, found.1 + 1);
}

proptest! {
    /// Runs keep the lines that walking each line keeps, and that the DFA
    /// over every byte keeps, with lines long enough to cross the runs'
    /// window, cut at several lengths, the last newline there or not.
    #[test]
    fn runs_keep_what_walking_every_line_keeps(
        lines in prop::collection::vec(
            (prop::collection::vec(0..PIECES.len(), 0..6), 0usize..2 * AHEAD, 0usize..6),
            0..24,
        ),
        last_newline: bool,
        max_line in prop_oneof![Just(8usize), Just(64), Just(AHEAD), Just(MAX)],
    ) {
        let mut hay = Vec::new();
        for (pieces, pad, at) in &lines {
            // Padding (of up to two windows) among the pieces.
            for (i, &p) in pieces.iter().enumerate() {
                if i == *at {
                    hay.extend(std::iter::repeat_n(b'-', *pad));
                }
                hay.extend_from_slice(PIECES[p].as_bytes());
            }
            hay.push(b'\n');
        }
        if !last_newline {
            hay.pop();
        }
        let s = search();
        let [runs, lines, every, small] = each_way(&s, &hay, max_line);
        prop_assert_eq!(&runs, &lines);
        prop_assert_eq!(&runs, &every);
        prop_assert_eq!(&runs, &small);
    }
}

const MAX: usize = 1 << 18;
