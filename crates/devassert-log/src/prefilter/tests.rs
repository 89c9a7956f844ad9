use super::*;
use crate::literals::pattern_requirement;

#[test]
fn a_value_at_the_end_of_a_line_is_found_without_its_newline() {
    let p = Prefilter::new(Catalog::builtin());
    let m = |l: &str| {
        let mut found = Vec::new();
        p.catalog_matches(l, |_| true, &mut found);
        !found.is_empty() && p.line_matters(l.as_bytes(), &[])
    };
    assert!(m("labels: tensor([3, 7, -1"));
    assert!(m("labels: tensor([3, 7, -1  "));
    assert!(m("labels: tensor([3, -1, 7])"));
    assert!(!m("'learning_rate': -1.120e-04, 'epoch': 161.99"));
    let (lines, n) = p.lines_that_matter(b"lr -1.2e-05\nlabels 3 -1\nok\n", MAX, &[]);
    assert_eq!((lines.len(), n), (1, 3));
    assert_eq!(lines[0].before, 1);
}

const MAX: usize = 1 << 18;

#[test]
fn every_casing_and_every_line_end_is_found() {
    let p = Prefilter::new(Catalog::builtin());
    let found = |hay: &str| p.lines_that_matter(hay.as_bytes(), MAX, &[]).0.len();
    // `(?i)…unet…|pspnet|deeplab…`: the casings model names have.
    for name in ["UNet", "PSPNet", "DeepLabV3", "Pytorch-UNet", "CityScapes"] {
        assert_eq!(found(&format!("model: {name}\n")), 1, "{name}");
    }
    // `is not satisfied\.$` sees the cleaned line: trailing white space,
    // CRLF and a colour reset are gone by then.
    for end in ["\n", "\t\n", "\r\n", "\x1b[0m\n", " \u{a0}\n"] {
        let line = format!("the invariant is not satisfied.{end}");
        assert_eq!(found(&line), 1, "{end:?}");
    }
    assert_eq!(found("it is not satisfied.x\n"), 0);
    // The search finds every literal in any case, then keeps a
    // case-sensitive one only in its own case.
    assert_eq!(found("Class values must be non-negative\n"), 1);
    assert_eq!(found("class values must be non-negative\n"), 0);
    assert_eq!(found("a relationship of cuda and fatal\n"), 0);
}

#[test]
fn a_literal_wanted_at_a_word_boundary_counts_only_there() {
    let p = Prefilter::new(Catalog::builtin());
    let found = |hay: &str| p.lines_that_matter(hay.as_bytes(), MAX, &[]).0.len();
    // `\b(nan|inf)\b` after a loss: not the `INF` of `INFO`.
    assert_eq!(found("2024-05-01 - INFO - step 8: loss 2.1\n"), 0);
    assert_eq!(found("step 8: loss inf\n"), 1);
    assert_eq!(found("step 8: loss=INF, lr 1e-4\n"), 1);
    // Cleaning takes the colour code away, and the regex sees `loss inf`.
    assert_eq!(found("step 8: loss \x1b[31minf\x1b[0m\n"), 1);
}

/// Up to 80 lines of 1 to 5 `PIECES` each.
fn piece_lines() -> impl proptest::strategy::Strategy<Value = Vec<Vec<usize>>> {
    proptest::collection::vec(proptest::collection::vec(0usize..PIECES.len(), 1..6), 0..80)
}

/// Text of `lines` of `PIECES`, the last newline kept or not.
fn hay_of(lines: &[Vec<usize>], last_newline: bool) -> Vec<u8> {
    let mut hay: Vec<u8> = Vec::new();
    for line in lines {
        hay.extend(line.iter().flat_map(|&i| PIECES[i].bytes()));
        hay.push(b'\n');
    }
    if !last_newline {
        hay.pop();
    }
    hay
}

proptest::proptest! {
    /// The bigram filter only spares the DFA walks: the lines kept are
    /// those of the DFA over every byte, on text made of catalog
    /// literals, their near misses and noise; and so are those of a short
    /// buffer's compares.
    #[test]
    fn the_filter_keeps_what_the_full_walk_keeps(
        lines in piece_lines(),
        last_newline: bool,
    ) {
        let p = Prefilter::shared(Catalog::builtin());
        let hay = hay_of(&lines, last_newline);
        let search = p.search.as_ref();
        proptest::prop_assert!(search.is_some_and(|s| s.bigrams().is_some()));
        if let Some(s) = search {
            let matters = |line: &[u8]| p.line_matters(line, &[]);
            let every = s.search_with(None, false, &hay, 64, &[], &matters);
            for runs in [false, true] {
                proptest::prop_assert_eq!(
                    &s.search_with(s.bigrams(), runs, &hay, 64, &[], &matters),
                    &every
                );
            }
            proptest::prop_assert_eq!(&s.search_small(&hay, 64, &[], &matters), &every);
        }
    }

    /// What `lines_that_matter` asks (only the catalog's sets, and nothing
    /// of a line found by retired regexes' literals alone) keeps the lines
    /// that asking `line_matters` of every line found keeps, whichever
    /// regexes are retired.
    #[test]
    fn skipping_retired_lines_keeps_what_asking_every_line_keeps(
        lines in piece_lines(),
        last_newline: bool,
        retired in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..4),
        cut in proptest::prelude::prop_oneof![proptest::prelude::Just(24), proptest::prelude::Just(MAX)],
    ) {
        let p = Prefilter::shared(Catalog::builtin());
        let hay = hay_of(&lines, last_newline);
        let s = p.search.as_ref().expect("the catalog's search");
        let every = |line: &[u8]| p.line_matters(line, &retired);
        let sets = |line: &[u8]| p.catalog_sets_met(line, &retired);
        for (bigrams, runs) in [(s.bigrams(), true), (s.bigrams(), false), (None, false)] {
            proptest::prop_assert_eq!(
                s.search_with(bigrams, runs, &hay, cut, &retired, &sets),
                s.search_with(bigrams, runs, &hay, cut, &[], &every)
            );
        }
        proptest::prop_assert_eq!(
            s.search_small(&hay, cut, &retired, &sets),
            s.search_small(&hay, cut, &[], &every)
        );
    }
}

/// The `hf` fact of `catalog/causes.toml` (a flag its first line sets): its `log` pattern.
fn hf_pattern(catalog: &Catalog) -> usize {
    catalog
        .log_patterns()
        .iter()
        .position(|re| re.as_str() == r"[/\\]transformers[/\\]|\bfrom transformers\b")
        .expect("the hf fact's pattern")
}

#[test]
fn the_search_asks_nothing_of_a_line_found_by_retired_regexes_alone() {
    let catalog = Catalog::builtin();
    let p = Prefilter::new(catalog);
    let hf = hf_pattern(catalog);
    let mut retired = p.retired();
    p.retire(hf, |j| j == hf, &mut retired);
    let s = p.search.as_ref().expect("the catalog's search");
    let asked = std::cell::Cell::new(0);
    // (lines kept, lines asked about) with `bits` retired.
    let search = |hay: &str, bits: &[u64]| {
        asked.set(0);
        let matters = |l: &[u8]| {
            asked.set(asked.get() + 1);
            p.catalog_sets_met(l, bits)
        };
        let kept = s.search_with(s.bigrams(), true, hay.as_bytes(), MAX, bits, &matters);
        (kept.0.len(), asked.get())
    };
    let warning = "/venv/lib/python3.11/site-packages/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set.";
    assert_eq!(search(&format!("{warning}\n"), &[]), (1, 1));
    assert_eq!(
        search(&format!("{warning}\n{warning}\n"), retired.bits()),
        (0, 0)
    );
    // Another regex's literal in the line: asked, and kept.
    let vocab = "/venv/lib/python3.11/site-packages/transformers/configuration_utils.py:917: vocab_size: 30522\n";
    assert_eq!(search(vocab, retired.bits()), (1, 1));
    // A literal of `-1$`, which the DFA sees only before a `\n`: asked
    // when the line ends with it before `\r\n` or white space.
    for end in ["\r\n", "  \n", ""] {
        let line = format!("{warning} -1{end}");
        assert_eq!(search(&line, retired.bits()), (1, 1), "{end:?}");
    }
    assert_eq!(search(&format!("{warning} -1.\n"), retired.bits()), (0, 0));
    // A trigger word settles the line without asking.
    assert_eq!(
        search(&format!("{warning} RuntimeError\n"), retired.bits()),
        (1, 0)
    );
}

const PIECES: &[&str] = &[
    "\n",
    "\r",
    " ",
    "  ",
    "x",
    "Assertion",
    "Assert",
    "assert",
    ".cu",
    ".cu:",
    "block: [",
    "1,0,0]",
    "loss inf",
    "grad_norm: NaN",
    "inf",
    "INF",
    "INFO",
    "Inf ",
    "nan",
    "NaN)",
    "nanny",
    "loss",
    "loss ",
    "-1",
    "-1,",
    "-1\n",
    "-1.5",
    "-100",
    "255",
    "2557",
    "255,",
    "seg",
    "voc",
    "embed_tokens",
    "tokens/s",
    "num_classes",
    "num_labels=",
    "CUDA error: ",
    "device-side assert triggered",
    "rror",
    "Traceback (most recent call last):",
    "File \"",
    "\x1b[31m",
    "\\n",
    "█",
    "é",
    "_",
    "Token indices sequence length is longer than the specified maximum sequence length ",
    "(600 > 512)",
    "resize_token_embeddings",
    "add_special_tokens",
    "ESC[0m",
    "^M",
    "\t",
    "CUBLAS_STATUS_EXECUTION_FAILED",
    "Watchdog caught collective operation timeout",
    "E",
    "UNet",
    "PSPNet",
    "is not satisfied.",
    "\x1b[0m",
    "/site-packages/transformers/",
    "transformers",
    "FutureWarning: ",
];

#[test]
fn lines_that_differ_in_numbers_match_as_they_would_without_the_memo() {
    let p = Prefilter::new(Catalog::builtin());
    let mut memo = SetsMemo::default();
    // Each line comes three times with other numbers: the second and third
    // read the digit-free literals from the memo. Literals with a digit
    // (`-1`, `Target 255 …`) and at the end of the line differ between them.
    let lines = [
        "Target 255 is out of bounds.",
        "Target 256 is out of bounds.",
        "Target 1 is out of bounds.",
        "labels: tensor([3, 7, -1",
        "labels: tensor([3, 7, 1",
        "labels: tensor([3, 7, -100])",
        "json.decoder.JSONDecodeError: Extra data: line 1 column 345 (char 678)",
        "json.decoder.JSONDecodeError: Extra data: line 1 column 34 (char 6)",
        "index 12 is out of bounds for dimension 0 with size 10",
        "index 3 is out of bounds for dimension 1 with size 2",
        "index -1 is out of bounds for dimension 0 with size 10",
    ];
    for round in 0..3 {
        for line in lines {
            let (mut plain, mut memoed) = (Vec::new(), Vec::new());
            p.catalog_matches(line, |_| true, &mut plain);
            p.catalog_matches_memo(line, |_| true, &mut memoed, &mut memo);
            assert_eq!(plain, memoed, "{line} (round {round})");
            // The search's check, with its thread's memo.
            let b = line.as_bytes();
            let met = p
                .sets_seen(b)
                .is_some_and(|s| p.required(&s, &[]).next().is_some());
            assert_eq!(
                p.line_matters(b, &[]),
                p.triggers.is_match(b) || met,
                "{line}"
            );
            assert_eq!(
                p.sets_seen(line.as_bytes()),
                p.sets_seen_memo(line.as_bytes(), &mut memo)
                    .map(<[u64]>::to_vec),
                "{line}"
            );
        }
    }
    // Lines of one key that a digit literal tells apart: the memo must not
    // have kept it.
    let mut seen = |l: &str| {
        p.sets_seen_memo(l.as_bytes(), &mut memo)
            .map(<[u64]>::to_vec)
    };
    assert_ne!(
        seen("Target 255 is out of bounds."),
        seen("Target 256 is out of bounds.")
    );
    assert_ne!(
        seen("labels: tensor([3, 7, -1"),
        seen("labels: tensor([3, 7, 1")
    );
}

#[test]
fn a_line_without_the_grams_of_digit_literals_holds_none() {
    let p = Prefilter::new(Catalog::builtin());
    assert!(
        p.digit_grams.is_some(),
        "no catalog literal with a digit is shorter than three bytes"
    );
    let holds = |l: &[u8]| p.may_hold_digit_literal(l);
    // Every literal with a digit holds one of the grams.
    for regex in distinct_regexes(Catalog::builtin()) {
        for set in pattern_requirement(regex.re.as_str()).iter().flatten() {
            for l in set.iter().map(|l| unmark(l).bytes) {
                if l.iter().any(u8::is_ascii_digit) {
                    assert!(holds(&l), "{}", String::from_utf8_lossy(&l));
                }
            }
        }
    }
    // The walk for them is skipped on such a line.
    let line = b"json.decoder.JSONDecodeError: Extra data: line 1 column 345 (char 678)";
    assert!(!holds(line));
}

#[test]
fn a_recorded_fact_retires_its_lines_but_not_a_trigger_line() {
    let catalog = Catalog::builtin();
    let p = Prefilter::new(catalog);
    let hf = hf_pattern(catalog);
    let warning: &[u8] = b"/venv/lib/python3.11/site-packages/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set.";
    let trigger: &[u8] = b"/venv/lib/python3.11/site-packages/transformers/trainer.py:2254: RuntimeError: CUDA error: device-side assert triggered";
    // Another fact in a line of the library: wanted until it is recorded.
    let vocab: &[u8] = b"/venv/lib/python3.11/site-packages/transformers/configuration_utils.py:917: vocab_size: 30522";
    let mut retired = p.retired();
    assert!(p.line_matters(warning, retired.bits()));
    // Recording another pattern retires nothing of this one.
    let other = (0..catalog.log_patterns().len())
        .find(|&i| i != hf)
        .expect("more patterns");
    p.retire(other, |j| j == other, &mut retired);
    assert!(p.line_matters(warning, retired.bits()));
    p.retire(hf, |j| j == hf || j == other, &mut retired);
    assert!(!p.line_matters(warning, retired.bits()));
    assert!(p.line_matters(trigger, retired.bits()));
    assert!(p.line_matters(vocab, retired.bits()));
    // The search passes the trigger line on, not the warning.
    let hay = [warning, b"\n", trigger, b"\n", warning, b"\n"].concat();
    let (lines, n) = p.lines_that_matter(&hay, MAX, retired.bits());
    assert_eq!((lines.len(), n), (1, 3));
    assert_eq!(lines[0].before, 1);
    // A search that ran before the fact was recorded passed both: the
    // reader drops the warning alone.
    assert_eq!(p.lines_that_matter(&hay, MAX, &[]).0.len(), 3);
    assert!(p.kept_only_by_retired(warning, &[], retired.bits()));
    assert!(!p.kept_only_by_retired(trigger, &[], retired.bits()));
    assert!(!p.kept_only_by_retired(vocab, &[], retired.bits()));
}

/// The reader keeps lines that hold no trigger by shape (digits blind):
/// a trigger with a digit would break that.
#[test]
fn no_trigger_word_holds_a_digit() {
    assert!(TRIGGERS
        .iter()
        .all(|t| !t.bytes().any(|b| b.is_ascii_digit())));
}

#[test]
fn the_per_line_automata_are_built_when_a_line_asks_for_them() {
    // Building them at start was a sixth of a short run's start-up.
    let p = Prefilter::new(Catalog::builtin());
    let built =
        |p: &Prefilter| [&p.catalog, &p.digit_free, &p.digit_literals].map(|kind| kind.is_built());
    assert_eq!(built(&p), [false; 3]);
    // A progress line the search passes over asks for none.
    let (lines, _) = p.lines_that_matter(b"step 10 loss 0.5\n", MAX, &[]);
    assert!(lines.is_empty());
    assert_eq!(built(&p), [false; 3]);
    let mut found = Vec::new();
    p.catalog_matches("labels: tensor([3, 7, -1", |_| true, &mut found);
    assert!(!found.is_empty());
    assert_eq!(built(&p), [true, false, false]);
}
