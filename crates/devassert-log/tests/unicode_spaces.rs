//! Issue 41: a log pasted from a browser, GitHub or a chat has Unicode
//! spaces where the program printed ASCII ones. For every real fixture log,
//! any ASCII space or tab made any Unicode space gives no panic and the
//! same op families as the log itself.

use devassert_core::Catalog;
use devassert_log::LogAnalyzer;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Every multi-byte whitespace character (U+0085, U+00A0, U+1680,
/// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
static SPACES: LazyLock<Vec<char>> = LazyLock::new(|| {
    (0x80..=0x10ffff)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect()
});

/// A fixture log: its path, its bytes, its op families.
type Fixture = (PathBuf, Vec<u8>, Vec<String>);

/// The fixture logs, with their op families.
static FIXTURES: LazyLock<Vec<Fixture>> = LazyLock::new(|| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../devassert/tests/fixtures/logs");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let data = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let families = families(&[&data]);
            (p, data, families)
        })
        .collect()
});

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The op family of each finding, in order.
fn families(chunks: &[&[u8]]) -> Vec<String> {
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("log");
    for c in chunks {
        a.feed(c);
    }
    let report = serde_json::to_value(a.finish()).expect("a report");
    report["findings"]
        .as_array()
        .map(|f| f.iter().map(|f| f["op_family"].to_string()).collect())
        .unwrap_or_default()
}

/// The positions of the ASCII spaces and tabs of `data`.
fn blanks(data: &[u8]) -> Vec<usize> {
    (0..data.len())
        .filter(|&i| matches!(data[i], b' ' | b'\t'))
        .collect()
}

/// `data` with the bytes at `at` (spaces or tabs, ascending) made `with`.
fn replaced(data: &[u8], at: &[(usize, char)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 3 * at.len());
    let mut from = 0;
    for &(i, c) in at {
        out.extend_from_slice(&data[from..i]);
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        from = i + 1;
    }
    out.extend_from_slice(&data[from..]);
    out
}

#[test]
fn the_fixtures_have_findings() {
    assert!(FIXTURES.len() >= 50, "{} fixtures", FIXTURES.len());
    let with = FIXTURES.iter().filter(|f| !f.2.is_empty()).count();
    assert!(with * 2 > FIXTURES.len(), "{with} fixtures with findings");
    assert_eq!(SPACES.len(), 19);
}

/// Every space and tab of every fixture made the same Unicode space: each of
/// the 19, and chunks cut inside the multi-byte characters.
#[test]
fn every_blank_made_one_unicode_space() {
    for (path, data, want) in FIXTURES.iter() {
        let at = blanks(data);
        for (k, &sp) in SPACES.iter().enumerate() {
            let pasted = replaced(data, &at.iter().map(|&i| (i, sp)).collect::<Vec<_>>());
            // A cut one byte into the first replaced character (when there is one).
            let cut = at.first().map_or(0, |&i| i + 1).min(pasted.len());
            let (a, b) = pasted.split_at(cut);
            let got = if k % 2 == 0 {
                families(&[&pasted])
            } else {
                families(&[a, b])
            };
            assert_eq!(&got, want, "{} with every blank as {sp:?}", path.display());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any few blanks of any fixture, each made any Unicode space.
    #[test]
    fn any_blanks_made_any_unicode_spaces(
        which in any::<prop::sample::Index>(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..8),
    ) {
        let (path, data, want) = &FIXTURES[which.index(FIXTURES.len())];
        let at = blanks(data);
        prop_assume!(!at.is_empty());
        let mut chosen: Vec<(usize, char)> = picks
            .iter()
            .map(|(i, s)| (at[i.index(at.len())], SPACES[s.index(SPACES.len())]))
            .collect();
        chosen.sort_unstable_by_key(|c| c.0);
        chosen.dedup_by_key(|c| c.0);
        let pasted = replaced(data, &chosen);
        prop_assert_eq!(&families(&[&pasted]), want, "{} with {:?}", path.display(), chosen);
    }
}

/// The issue's own inputs through the whole reader: the finding is the one
/// an ASCII space gives.
#[test]
fn the_issue_inputs() {
    let realistic = |sp: &str| {
        format!("[rank0]:{sp}/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: indexSelectLargeIndex: block: [7,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\nRuntimeError: CUDA error: device-side assert triggered\n")
    };
    let report = |text: &[u8]| {
        let mut a = LogAnalyzer::new(Catalog::builtin());
        a.begin_input("log");
        a.feed(text);
        serde_json::to_value(a.finish()).expect("a report")
    };
    let ascii = report(realistic(" ").as_bytes());
    assert_eq!(ascii["findings"][0]["op_family"], "index_select");
    for sp in SPACES.iter() {
        let pasted = report(realistic(&sp.to_string()).as_bytes());
        assert_eq!(pasted["findings"], ascii["findings"], "{sp:?}");
        let short = report(format!("{sp}:5:Assertion s failed\n").as_bytes());
        assert_eq!(
            short["findings"],
            report(b" :5:Assertion s failed\n")["findings"],
            "{sp:?}"
        );
    }
}
