//! A stretch the search left unsearched (the reader was reading
//! every line: `reader/searched.rs`) is read as a searched one: rows read
//! in every-line mode are asked of the search alone, and the rest of the
//! stretch is searched from the first row read otherwise. Whatever stretches
//! are searched ahead (with the regexes retired when the search ran, as the
//! thread sees them) or left, the reader keeps the same.

mod common;

use common::summary;
use devassert_core::Catalog;
use devassert_log::reader::{search_with, Reader, Searched};
use proptest::prelude::*;

/// Row kinds: handled tracebacks' rows, chained ones, logged lines with
/// host errors and evidence (some wide, some prefixed by a rank), thread
/// lines, progress bars, blank rows.
fn row(kind: u8, n: u32) -> String {
    let rank = |s: String| match n % 3 {
        0 => format!("[rank{}]:{s}", n % 4),
        _ => s,
    };
    match kind % 20 {
        0 => format!(
            "2024-05-01 12:00:{:02},{:03} - WARNING - loader - skipping sample {n} of shard {}",
            n % 60,
            n % 1000,
            n % 4096
        ),
        1 => rank("Traceback (most recent call last):".into()),
        2 => rank("  File \"/home/ml/gpt2-ft/data.py\", line 88, in __getitem__".into()),
        3 => rank("    return self.decode(self.rows[i])".into()),
        4 => format!("  File \"/usr/lib/python3.11/json/decoder.py\", line {n}, in decode"),
        5 => "    raise JSONDecodeError(\"Extra data\", s, end)".into(),
        6 => format!(
            "json.decoder.JSONDecodeError: Extra data: line 1 column {n} (char {})",
            n / 3
        ),
        7 => rank(format!("ValueError: num_classes = {}", n % 300)),
        8 => "During handling of the above exception, another exception occurred:".into(),
        9 => "The above exception was the direct cause of the following exception:".into(),
        10 => rank("RuntimeError: CUDA error: an illegal memory access was encountered".into()),
        11 => format!(
            "Token indices sequence length is longer than the specified maximum sequence length for this model ({} > 512)",
            512 + n % 100
        ),
        12 => format!(
            "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [{},0,0], thread: [{},0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
            n % 64,
            n % 128
        ),
        13 => format!(" {}%|#####     | {n}/1000 [00:{:02}<00:10]\r 51%|#####", n % 100, n % 60),
        14 => String::new(),
        15 => format!("{{'loss': 0.{n:04}, 'learning_rate': 4.9e-05, 'epoch': 0.{}}}", n % 100),
        16 => "For debugging consider passing CUDA_LAUNCH_BLOCKING=1".into(),
        17 => format!("    label {} out of range 255 for shard", n % 300),
        18 => "    ^^^^^^^^^^^^^^^^^^^^".into(),
        _ => format!("{:<90}", format!("INFO step {n} loss 0.{n}")),
    }
}

/// `log` read in stretches of whole lines ending after the `cuts` (taken
/// modulo its length), each searched ahead or left unsearched as `how`
/// says: 0 searched with no regex retired (as if searched far ahead), 1
/// searched with the regexes retired by now, 2 left to the reader.
fn read(log: &[u8], cuts: &[usize], how: impl Fn(usize) -> u8) -> String {
    let catalog = Catalog::builtin();
    let mut ends: Vec<usize> = cuts
        .iter()
        .filter_map(|&c| {
            let at = c % log.len();
            memchr::memchr(b'\n', &log[at..]).map(|i| at + i + 1)
        })
        .chain([log.len()])
        .collect();
    ends.sort_unstable();
    ends.dedup();
    let mut r = Reader::new(catalog);
    let early = r.retired().to_vec();
    let ahead: Vec<_> = {
        let mut start = 0;
        ends.iter()
            .map(|&e| {
                let s = search_with(catalog, &early, &log[start..e]);
                start = e;
                Some(s)
            })
            .collect()
    };
    r.begin_input("log");
    let mut start = 0;
    for (i, (&e, ahead)) in ends.iter().zip(ahead).enumerate() {
        let stretch = &log[start..e];
        let searched = match how(i) % 3 {
            0 => ahead,
            1 => Some(search_with(catalog, r.retired(), stretch)),
            _ => Some(Searched::later(stretch.len())),
        };
        r.feed_searched(stretch, searched);
        start = e;
    }
    summary(&r.finish())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn stretches_left_unsearched_read_as_searched(
        rows in proptest::collection::vec((0u8..40, 0u32..100_000), 1..400),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        hows in proptest::collection::vec(0u8..3, 13),
    ) {
        // Mostly handled tracebacks, as logged, with other rows among them.
        let mut log = String::new();
        for &(kind, n) in &rows {
            if kind >= 20 {
                for k in [0, 1, 2, 3, 4, 5, 6] {
                    log.push_str(&row(k, n));
                    log.push('\n');
                }
            } else {
                log.push_str(&row(kind, n));
                log.push('\n');
            }
        }
        let log = log.into_bytes();
        let searched = read(&log, &cuts, |_| 1);
        prop_assert_eq!(&read(&log, &cuts, |i| hows[i % hows.len()]), &searched);
        prop_assert_eq!(&read(&log, &cuts, |_| 2), &searched);
        prop_assert_eq!(&read(&log, &cuts, |_| 0), &searched);
    }
}
