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
    assert_eq!(a.finish().exit_code, 1);
}
