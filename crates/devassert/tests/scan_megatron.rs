//! `devassert scan` on Megatron-LM indexed datasets written by megatron-core's
//! own `IndexedDatasetBuilder` (tests/scan_data/gen.py `megatron`): dtype,
//! sequences and documents from the `.idx`, every broken index a clear error,
//! and a `.bin` without its `.idx` read as u16 is told to be int32. A test
//! binary of its own: importing torch for the writer would count against the
//! memory bound that scan.rs checks on its children.

mod common;

use common::scan_data::{finding, gen, human, scan};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The values of every location.
fn values(f: &Value) -> Vec<i64> {
    f["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["value"].as_i64().unwrap())
        .collect()
}

/// The Megatron datasets of gen.py (megatron-core's own writer), made once:
/// importing torch and megatron-core is most of a test's time.
fn megatron() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = gen(&["megatron"]);
        let keep = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("scan-megatron-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&keep);
        let from = d.keep();
        std::fs::rename(&from, &keep)
            .or_else(|_| copy_dir(&from, &keep))
            .expect("keep the megatron data");
        keep
    })
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()))?;
        } else {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// (document, sequence, token, index, value) of every location.
fn doc_places(f: &Value) -> Vec<(u64, u64, u64, u64, i64)> {
    f["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["document"].as_u64().expect("document"),
                l["row"].as_u64().expect("row"),
                l["offset"].as_u64().expect("offset"),
                l["index"].as_u64().unwrap(),
                l["value"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn megatron_datasets_take_dtype_and_documents_from_the_idx() {
    let d = megatron();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(d.join("megatron_expected.json")).expect("expected places"),
    )
    .unwrap();
    let planted: Vec<(u64, u64, u64, u64, i64)> = expected["planted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["document"].as_u64().unwrap(),
                p["sequence"].as_u64().unwrap(),
                p["token"].as_u64().unwrap(),
                p["index"].as_u64().unwrap(),
                p["value"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(planted.len(), 3);
    // The .bin, the .idx and the prefix (as --data-path takes it) name the same dataset.
    for name in [
        "llama_text_document.bin",
        "llama_text_document.idx",
        "llama_text_document",
    ] {
        let r = scan(d, &[name, "--vocab", "128256"]);
        assert_eq!(r.code, 1, "{name}: {:#}", r.report);
        assert_eq!(
            doc_places(finding(&r.report, "DA101", "range")),
            planted,
            "{name}"
        );
        let file = &r.report["files"][0];
        assert_eq!(file["file"], "llama_text_document.bin");
        assert_eq!(file["format"], "megatron");
        assert_eq!(file["dtype"], "int32 (Megatron .idx)");
        assert_eq!(
            file["values"], expected["tokens"],
            "int32: not twice the tokens"
        );
        assert_eq!(file["rows"], expected["sequences"]);
        assert_eq!(file["max_len"], 34);
        assert!(
            r.report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["evidence"]["check"] != "dtype_overflow"),
            "{name}: int32 tokens are not wrapped u16 ones"
        );
    }
    // --max-len counts Megatron sequences: lengths are 12 + (seq * 7) % 23.
    let r = scan(
        d,
        &[
            "llama_text_document.bin",
            "--vocab",
            "200001",
            "--ignore",
            "-1",
            "--max-len",
            "33",
        ],
    );
    let f = finding(&r.report, "DA101", "max_len");
    let rows: Vec<(u64, u64)> = f["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["row"].as_u64().unwrap(), l["document"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![13, 36, 59]
    );
    assert_eq!(rows[2].1, 29, "sequence 59 is in document 29 (as planted)");

    // GPT-2's vocabulary: the same writer stores uint16, and the .idx says so.
    let r = scan(d, &["gpt2_text_document.bin", "--vocab", "50257"]);
    assert_eq!(r.report["files"][0]["dtype"], "uint16 (Megatron .idx)");
    assert_eq!(
        doc_places(finding(&r.report, "DA101", "range")),
        vec![
            (4, 4, 7, 47, 50257),
            (4, 4, 8, 48, 50258),
            (4, 4, 9, 49, 50259)
        ]
    );
    let text = human(d, &["gpt2_text_document.bin", "--vocab", "50257"]);
    assert!(
        text.contains("at gpt2_text_document.bin document 4, sequence 4, token 7: 50257"),
        "{text}"
    );
}

#[test]
fn a_megatron_bin_without_its_idx_read_as_u16_says_int32() {
    let d = megatron();
    let lone = "lone/llama_text_document.bin";
    let r = scan(d, &[lone, "--vocab", "128256"]);
    let f = finding(&r.report, "DA101", "dtype_mismatch");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["evidence"]["dtype"], "i32");
    assert!(
        f["fixes"][0].as_str().unwrap().contains("--dtype int32"),
        "{f:#}"
    );
    assert_eq!(f["locations"][0]["file"], lone);
    assert!(
        r.report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["evidence"]["check"] != "dtype_overflow"),
        "not index_overflow: {:#}",
        r.report
    );
    // As suggested: the planted ids at their token indices, and no warning.
    let r = scan(d, &[lone, "--vocab", "128256", "--dtype", "int32"]);
    assert_eq!(
        values(finding(&r.report, "DA101", "range")),
        vec![128256, 200000, -1]
    );
    assert!(r.report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["evidence"]["check"] != "dtype_mismatch"));
    // An explicit --dtype u16 is the user's word: no guess.
    let r = scan(d, &[lone, "--vocab", "128256", "--dtype", "u16"]);
    assert!(r.report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["evidence"]["check"] != "dtype_mismatch"));
}

/// A copy of the Llama dataset under `dir` with its .idx (and .bin) changed.
fn broken_megatron(dir: &Path, idx: impl Fn(&mut Vec<u8>), bin: impl Fn(&mut Vec<u8>)) {
    let src = megatron();
    for (ext, change) in [("idx", &idx as &dyn Fn(&mut Vec<u8>)), ("bin", &bin)] {
        let mut b = std::fs::read(src.join(format!("llama_text_document.{ext}"))).unwrap();
        change(&mut b);
        std::fs::write(dir.join(format!("bad.{ext}")), b).unwrap();
    }
}

#[test]
fn corrupt_megatron_index() {
    type Change = fn(&mut Vec<u8>);
    let none: Change = |_| {};
    let cases: Vec<(Change, Change, &str)> = vec![
        (
            |b| b.truncate(b.len() - 3),
            none,
            "truncated or not this format",
        ),
        (
            none,
            |b| b.truncate(b.len() - 4),
            "need more than the .bin's 7256 bytes",
        ),
        (|b| b[17] = 7, none, "dtype code 7 (float32)"),
        (|b| b[9] = 3, none, "version 3 is unknown"),
        // Sequence 1's start pointer (after 79 int32 lengths) moved back.
        (
            |b| b[34 + 79 * 4 + 8] = 0,
            none,
            "sequence 1 starts at byte",
        ),
        (|b| b[34 + 3] = 0x80, none, "negative length"),
        (
            |b| {
                let at = b.len() - 8;
                b[at..].copy_from_slice(&1000u64.to_le_bytes());
            },
            none,
            "not ascending",
        ),
    ];
    for (idx, bin, want) in cases {
        let d = tempfile::tempdir().unwrap();
        broken_megatron(d.path(), idx, bin);
        let r = scan(d.path(), &["bad.bin", "--vocab", "128256"]);
        assert_eq!(r.code, 2, "{want}: {:#}", r.report);
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains("bad.bin"))
            .unwrap_or_default();
        assert!(
            line.contains("bad.idx") && line.contains(want),
            "{want}: {line:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_megatron_index_linked_from_outside_the_folder_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    broken_megatron(d.path(), |_| {}, |_| {});
    std::fs::rename(d.path().join("bad.bin"), data.join("bad.bin")).unwrap();
    std::os::unix::fs::symlink(d.path().join("bad.idx"), data.join("bad.idx")).unwrap();
    let r = scan(&data, &["bad.bin", "--vocab", "128256"]);
    assert_eq!(r.code, 2, "{:#}", r.report);
    assert!(r.stderr.contains("outside"), "{}", r.stderr);
}
