use super::super::shape_memo::ByShape;
use super::super::state::Reader;
use devassert_core::Catalog;
use proptest::prelude::*;

/// What a reader keeps of `log` fed in pieces of `chunk` bytes, with rows
/// read by shape or (`off`) every row read in full.
fn facts(log: &str, chunk: usize, off: bool) -> String {
    let mut r = Reader::new(Catalog::builtin());
    r.shape_rows.off = off;
    r.begin_input("log");
    for c in log.as_bytes().chunks(chunk) {
        r.feed(c);
    }
    let mut f = r.finish();
    // The log patterns met, in their order (not the map's).
    let patterns = Catalog::builtin().log_patterns().len();
    let hits: Vec<_> = (0..patterns)
        .filter_map(|i| Some((i, f.hits.captures(i)?)))
        .collect();
    let hits = format!("{hits:?}");
    f.hits = Default::default();
    format!("{f:?}\n{hits}")
}

/// Exception lines (and one a frame, one indented) that repeat but for
/// their numbers, among them ones whose numbers decide what is read: a
/// catalog message's digits (`bincount only supports 1-d`), a date that is a prefix
/// or not, an error code, a rank's prefix, a cell's place, a long number;
/// a number may be `255`, a catalog literal of digits alone.
fn exception(kind: usize, a: u64, b: u64) -> String {
    match kind {
        0 => format!("json.decoder.JSONDecodeError: Extra data: line {a} column {b} (char {a}{b})"),
        1 => format!("ValueError: bincount only supports {a}-d non-negative integral inputs {b}"),
        2 => format!(
            "2024-05-01 12:00:0{a} json.decoder.JSONDecodeError: Extra data: line {b} column 2"
        ),
        3 => format!(
            "{a}-{b}-{a} {a}:{b}:{a} json.decoder.JSONDecodeError: Extra data: line {b} column 2"
        ),
        4 => format!("ValueError: could not decode the row: error={a} near offset {b} of it"),
        5 => format!("[rank{a}]: ValueError: could not decode sample {b} of the shard here"),
        6 => format!("ValueError: Cell In[{a}], line {b} could not decode the row of the shard"),
        7 => format!(
            "json.decoder.JSONDecodeError: Extra data: line {a}{b}{a}{b}{a}{b}{a}{b}{a}{b}{a}{b}"
        ),
        8 => format!("  ValueError: an indented row {a} of a message that is long enough {b}"),
        9 => format!("File \"/home/ml/x.py\", line {a}{b}, in decode_the_row_of_the_shard"),
        10 => format!("IndexError: index {a} is out of bounds for dimension 0 with size {b}"),
        _ => format!("KeyError: 'sample_{a}' {b}"),
    }
}

fn traceback(logged: bool, kind: usize, a: u64, b: u64, message: bool) -> String {
    let mut s = String::new();
    if logged {
        // A time stamp (its date of four, two and two digits) or not.
        let date = if a % 3 == 1 { "24-5-01" } else { "2024-05-01" };
        s += &format!(
            "{date} 12:00:0{b},970 - WARNING - loader - skipping sample {a} of shard {b}\n"
        );
    }
    s += "Traceback (most recent call last):\n  \
          File \"/home/ml/gpt2-ft/data.py\", line 88, in __getitem__\n    \
          return self.decode(self.rows[i])\n  \
          File \"/usr/lib/python3.11/json/decoder.py\", line 340, in decode\n    \
          raise JSONDecodeError(\"Extra data\", s, end)\n";
    s += &exception(kind, a, b);
    s.push('\n');
    if message {
        s += &format!("  the message goes on {b}\n");
    }
    s
}

fn numbers() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 0..3u64, 2 => 0..100_000u64, 1 => Just(u64::MAX), 1 => Just(255u64)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Logs of handled tracebacks whose exception lines repeat by shape
    /// read as with every row read in full, whole and in pieces.
    #[test]
    fn rows_read_by_shape_are_read_as_in_full(
        // Pairs whose numbers decide what a row of the other's shape is
        // read as (a date that is a prefix or not, the catalog's `1-d`), or
        // any two.
        kinds in prop_oneof![Just((3, 2)), Just((1, 1)), (0..12usize, 0..12usize)],
        tbs in prop::collection::vec(
            (any::<bool>(), any::<bool>(), numbers(), numbers(), prop::bool::weighted(0.2)),
            4..40,
        ),
        chunk in 1..600usize,
        tail in prop::bool::ANY,
    ) {
        let mut log: String = tbs
            .iter()
            .map(|&(logged, first, a, b, message)| {
                // Two kinds of exception line a log, so that shapes repeat.
                let kind = if first { kinds.0 } else { kinds.1 };
                traceback(logged, kind, a, b, message)
            })
            .collect();
        if tail {
            log += "RuntimeError: CUDA error: device-side assert triggered\n";
        }
        let full = facts(&log, usize::MAX, true);
        prop_assert_eq!(&facts(&log, usize::MAX, false), &full);
        prop_assert_eq!(&facts(&log, chunk, false), &full);
    }
}

#[test]
fn the_unique_rows_are_read_by_shape() {
    let log: String = (0..6)
        .map(|i| traceback(true, 0, i, i * 7, false))
        .collect();
    let mut r = Reader::new(Catalog::builtin());
    r.begin_input("log");
    r.feed(log.as_bytes());
    // The exception line, and the logged line behind its time stamp
    // (`0-0-0 0:0:0,0 - `, a prefix whose shape is 16 bytes).
    let rows: [(&[u8], usize); 2] = [
        (
            b"json.decoder.JSONDecodeError: Extra data: line 0 column 0 (char 0)",
            0,
        ),
        (
            b"0-0-0 0:0:0,0 - WARNING - loader - skipping sample 0 of shard 0",
            16,
        ),
    ];
    for (shape, prefixes) in rows {
        let by = ByShape {
            prefixes,
            digit_literals: false,
            notebook: false,
        };
        assert_eq!(r.shape_rows.known.get(shape), Some(&Some(by)));
    }
}

/// A row of a known shape that holds a catalog literal of digits alone
/// (`255`, a void label) is read in full: its evidence is kept.
#[test]
fn a_known_shape_with_a_catalog_number_is_read_in_full() {
    let log: String = [(1, 2), (3, 4), (5, 6), (255, 7)]
        .iter()
        .map(|&(a, b)| traceback(true, 0, a, b, false))
        .collect();
    let full = facts(&log, usize::MAX, true);
    assert!(!full.ends_with("\n[]"), "its log patterns are met: {full}");
    assert_eq!(facts(&log, usize::MAX, false), full);
}

proptest! {
    /// A prefix's shape is as long as its shape made.
    #[test]
    fn a_shape_is_as_long_as_made(a in "[0-9a: ]{0,12}") {
        let mut sa = Vec::new();
        crate::text::shape_afresh(a.as_bytes(), &mut sa);
        prop_assert_eq!(crate::text::shape_len(a.as_bytes()), sa.len());
    }
}
