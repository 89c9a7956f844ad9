//! `devassert scan` on real files written by numpy, pyarrow, Pillow and
//! safetensors (tests/scan_data/gen.py) with planted bad values, ignored
//! sentinels and edge values: the exact places found, corrupt input of every
//! format, shards and their merge, the JSON contract, and the human output.

mod common;

use common::bin;
use common::scan_data::{finding, gen, human, scan};
use devassert_core::Report;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// (file, index, value) of every location.
fn at(f: &Value) -> Vec<(String, u64, i64)> {
    f["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["file"].as_str().unwrap().to_string(),
                l["index"].as_u64().unwrap(),
                l["value"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// (row, offset) of every location (offset -1 when absent).
fn rows(f: &Value) -> Vec<(u64, i64)> {
    f["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["row"].as_u64().unwrap(),
                l["offset"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn positions(f: &Value) -> Vec<Vec<u64>> {
    f["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            l["position"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_u64().unwrap())
                .collect()
        })
        .collect()
}

fn cause_ids(f: &Value) -> Vec<String> {
    f["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn s(v: &str) -> String {
    v.to_string()
}

#[test]
fn raw_u16_edges_and_dtype_max() {
    let d = gen(&["raw"]);
    let r = scan(d.path(), &["tokens.bin", "--vocab", "50"]);
    assert_eq!(r.code, 1);
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(
        at(f),
        vec![(s("tokens.bin"), 2, 50), (s("tokens.bin"), 500, 65535)]
    );
    assert_eq!(f["count"], 2);
    assert_eq!(f["bound"], serde_json::json!({"low": 0, "high": 50}));
    let file = &r.report["files"][0];
    assert_eq!(
        (
            file["format"].as_str(),
            file["dtype"].as_str(),
            file["values"].as_u64()
        ),
        (Some("raw"), Some("u16"), Some(1000))
    );
    assert_eq!(
        (file["min"].as_i64(), file["max"].as_i64()),
        (Some(0), Some(65535))
    );

    let r = scan(
        d.path(),
        &["tokens.bin", "--vocab", "50", "--ignore", "65535"],
    );
    assert_eq!(
        at(finding(&r.report, "DA101", "range")),
        vec![(s("tokens.bin"), 2, 50)]
    );
    assert_eq!(
        r.report["files"][0]["max"], 50,
        "ignored values are not in min/max"
    );

    let r = scan(d.path(), &["tokens.bin", "--vocab", "65536"]);
    assert_eq!(
        (r.code, r.report["findings"].as_array().unwrap().len()),
        (0, 0)
    );
}

#[test]
fn raw_i32_negative_and_max() {
    let d = gen(&["raw"]);
    let r = scan(
        d.path(),
        &["tokens_i32.tok", "--dtype", "i32", "--vocab", "10"],
    );
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(
        at(f),
        vec![
            (s("tokens_i32.tok"), 3, -1),
            (s("tokens_i32.tok"), 4, 2147483647),
            (s("tokens_i32.tok"), 9, -100)
        ]
    );
    assert!(cause_ids(f).contains(&s("negative_index")));
}

#[test]
fn llmc_headers_and_u16_wrap() {
    let d = gen(&["llmc"]);
    let r = scan(d.path(), &["llmc_v1.bin", "--vocab", "50257"]);
    assert_eq!(
        at(finding(&r.report, "DA101", "range")),
        vec![(s("llmc_v1.bin"), 5, 50257)]
    );
    assert_eq!(r.report["files"][0]["format"], "llm.c");
    assert_eq!(
        cause_ids(finding(&r.report, "DA101", "range"))[0],
        "added_tokens_no_resize"
    );

    let r = scan(d.path(), &["llmc_v2.bin", "--vocab", "100000"]);
    assert_eq!(
        at(finding(&r.report, "DA101", "range")),
        vec![(s("llmc_v2.bin"), 6, 100000)]
    );
    assert_eq!(r.report["files"][0]["dtype"], "u32 (llm.c v2)");

    // A Llama 3 vocabulary in uint16 tokens: wrapped ids, whatever the range check says.
    let r = scan(
        d.path(),
        &["llmc_v1.bin", "llmc_v2.bin", "--vocab", "128256"],
    );
    assert_eq!(r.code, 1);
    let f = finding(&r.report, "DA101", "dtype_overflow");
    assert_eq!(cause_ids(f), vec![s("index_overflow")]);
    assert_eq!(f["locations"].as_array().unwrap().len(), 1);
    assert_eq!(f["locations"][0]["file"], "llmc_v1.bin");
}

#[test]
fn npy_c_fortran_big_endian_nd() {
    let d = gen(&["npy"]);
    let r = scan(d.path(), &["c_order.npy", "--vocab", "10"]);
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(
        at(f),
        vec![(s("c_order.npy"), 6, -1), (s("c_order.npy"), 11, 10)]
    );
    assert_eq!(positions(f), vec![vec![1, 2], vec![2, 3]]);
    assert_eq!(r.report["files"][0]["shape"], serde_json::json!([3, 4]));

    // Fortran order: found in storage (column-major) order, reported as numpy indices.
    let r = scan(d.path(), &["fortran.npy", "--vocab", "10"]);
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(positions(f), vec![vec![2, 1], vec![0, 3]]);
    assert_eq!(
        at(f),
        vec![(s("fortran.npy"), 9, 10), (s("fortran.npy"), 3, 32767)]
    );

    let r = scan(d.path(), &["big_endian.npy", "--vocab", "10"]);
    assert_eq!(
        at(finding(&r.report, "DA101", "range")),
        vec![(s("big_endian.npy"), 2, 11)]
    );
    assert_eq!(r.report["files"][0]["dtype"], ">u2");

    let r = scan(d.path(), &["cube.npy", "--classes", "10"]);
    let f = finding(&r.report, "DA201", "range");
    assert_eq!(positions(f), vec![vec![1, 2, 3]]);
    assert_eq!(at(f)[0].1, 23);
    assert_eq!(cause_ids(f)[0], "ignore_label_not_ignored");
    assert_eq!(
        scan(
            d.path(),
            &["cube.npy", "--classes", "10", "--ignore", "255"]
        )
        .code,
        0
    );
}

#[test]
fn npz_members_stored_and_deflated() {
    let d = gen(&["npz"]);
    let r = scan(d.path(), &["stored.npz", "--vocab", "10"]);
    assert_eq!(
        r.report["files"].as_array().unwrap().len(),
        1,
        "the float member is skipped"
    );
    assert_eq!(r.report["files"][0]["part"], "ids");
    assert_eq!(
        positions(finding(&r.report, "DA101", "range")),
        vec![vec![2]]
    );
    let r = scan(d.path(), &["deflated.npz", "--classes", "10"]);
    let f = finding(&r.report, "DA201", "range");
    assert_eq!((positions(f), at(f)[0].2), (vec![vec![1, 0]], 12));
    let r = scan(
        d.path(),
        &["stored.npz", "--vocab", "10", "--tensor", "weights"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("stored.npz") && r.stderr.contains("not an integer dtype"),
        "{}",
        r.stderr
    );
}

#[test]
fn safetensors_integer_tensors() {
    let d = gen(&["safetensors"]);
    let r = scan(d.path(), &["batch.safetensors", "--vocab", "10"]);
    let parts: Vec<&str> = r.report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["part"].as_str().unwrap())
        .collect();
    assert_eq!(parts, vec!["input_ids", "mask"]);
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(positions(f), vec![vec![2, 2], vec![2, 3], vec![2]]);
    assert_eq!(
        at(f).iter().map(|l| l.2).collect::<Vec<_>>(),
        vec![10, 11, -1]
    );
    let r = scan(
        d.path(),
        &[
            "batch.safetensors",
            "--vocab",
            "10",
            "--tensor",
            "input_ids",
        ],
    );
    assert_eq!(r.report["files"].as_array().unwrap().len(), 1);
    let r = scan(
        d.path(),
        &["batch.safetensors", "--vocab", "10", "--tensor", "nope"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no tensor \"nope\""), "{}", r.stderr);
}

#[test]
fn arrow_file_and_hf_stream_cache() {
    let d = gen(&["arrow"]);
    for file in ["table.arrow", "hf_cache"] {
        let r = scan(d.path(), &[file, "--vocab", "10"]);
        assert_eq!(r.code, 1, "{file}");
        assert_eq!(
            r.report["files"].as_array().unwrap().len(),
            1,
            "{file}: state.json is not data"
        );
        let f = finding(&r.report, "DA101", "range");
        assert_eq!(rows(f), vec![(1, 1), (3, 0)], "{file}");
        assert_eq!(
            at(f).iter().map(|l| (l.1, l.2)).collect::<Vec<_>>(),
            vec![(4, 10), (5, -1)],
            "{file}"
        );
    }
    let usage = bin()
        .current_dir(d.path())
        .args(["scan", "hf_cache"])
        .output()
        .unwrap();
    assert_eq!(
        usage.status.code(),
        Some(2),
        "no bound given is a usage error"
    );
    assert!(String::from_utf8_lossy(&usage.stderr).contains("--vocab N"));
    let r = scan(
        d.path(),
        &["table.arrow", "--column", "label", "--classes", "3"],
    );
    assert_eq!(rows(finding(&r.report, "DA201", "range")), vec![(1, -1)]);
}

#[test]
fn parquet_list_and_int_columns_and_lengths() {
    let d = gen(&["parquet"]);
    let r = scan(
        d.path(),
        &["table.parquet", "--vocab", "10", "--max-len", "3"],
    );
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(rows(f), vec![(1, 1), (3, 3)]);
    assert_eq!(
        at(f).iter().map(|l| (l.1, l.2)).collect::<Vec<_>>(),
        vec![(3, 10), (8, 11)]
    );
    let len = finding(&r.report, "DA101", "max_len");
    assert_eq!(cause_ids(len), vec![s("seq_len_gt_max_positions")]);
    assert_eq!(rows(len), vec![(3, -1)]);
    assert_eq!(len["locations"][0]["value"], 4);
    assert_eq!(r.report["files"][0]["max_len"], 4);
    let r = scan(
        d.path(),
        &["table.parquet", "--column", "label", "--classes", "3"],
    );
    let f = finding(&r.report, "DA201", "range");
    assert_eq!(rows(f), vec![(2, -1)]);
    assert_eq!(r.report["files"][0]["dtype"], "int16");
    let r = scan(
        d.path(),
        &["table.parquet", "--column", "label_nulls", "--classes", "3"],
    );
    let f = finding(&r.report, "DA201", "range");
    assert_eq!(rows(f), vec![(3, 0)], "row 3, after two nulls");
    assert_eq!(at(f)[0].1, 1, "index counts values, not nulls");
    assert_eq!(r.report["files"][0]["values"], 2);
    let r = scan(
        d.path(),
        &["table.parquet", "--column", "ids_nulls", "--vocab", "10"],
    );
    let f = finding(&r.report, "DA101", "range");
    let rows_values: Vec<(u64, i64)> = at(f).iter().zip(rows(f)).map(|(a, r)| (r.0, a.2)).collect();
    assert_eq!(rows_values, vec![(0, 12), (3, 13)]);
    assert_eq!(r.report["files"][0]["values"], 3);
    assert_eq!(
        (
            r.report["files"][0]["min"].as_i64(),
            r.report["files"][0]["max"].as_i64()
        ),
        (Some(1), Some(13))
    );
}

#[test]
fn jsonl_field_paths_and_lengths() {
    let d = gen(&["jsonl"]);
    let r = scan(
        d.path(),
        &[
            "rows.jsonl",
            "--vocab",
            "10",
            "--max-len",
            "4",
            "--min-len",
            "1",
        ],
    );
    assert_eq!(
        rows(finding(&r.report, "DA101", "range")),
        vec![(1, 1), (3, 0)]
    );
    assert_eq!(rows(finding(&r.report, "DA101", "max_len")), vec![(3, -1)]);
    let short = finding(&r.report, "DA101", "min_len");
    assert_eq!(
        (rows(short), short["severity"].as_str()),
        (vec![(2, -1)], Some("warning"))
    );
    // Labels: -100 is cross_entropy's default ignore_index.
    let r = scan(
        d.path(),
        &["rows.jsonl", "--column", "meta.label", "--classes", "5"],
    );
    let f = finding(&r.report, "DA201", "range");
    assert_eq!(at(f).iter().map(|l| l.2).collect::<Vec<_>>(), vec![5]);
    assert_eq!(rows(f), vec![(1, -1)]);
}

#[test]
fn csv_and_tsv_columns() {
    let d = gen(&["csv"]);
    let r = scan(
        d.path(),
        &["labels.csv", "--column", "label", "--classes", "3"],
    );
    let f = finding(&r.report, "DA201", "range");
    assert_eq!(rows(f), vec![(1, -1), (2, -1)]);
    assert_eq!(at(f).iter().map(|l| l.2).collect::<Vec<_>>(), vec![3, -1]);
    assert!(
        cause_ids(f).contains(&s("negative_label"))
            && cause_ids(f).contains(&s("label_ge_num_classes"))
    );
    let r = scan(d.path(), &["labels.tsv", "--column", "0", "--classes", "3"]);
    let f = finding(&r.report, "DA201", "range");
    assert_eq!(
        (rows(f), cause_ids(f)[0].as_str()),
        (vec![(1, -1)], "ignore_label_not_ignored")
    );
    assert_eq!(
        scan(
            d.path(),
            &[
                "labels.tsv",
                "--column",
                "label",
                "--classes",
                "3",
                "--ignore",
                "255"
            ]
        )
        .code,
        0
    );
}

#[test]
fn png_masks_gray_16bit_palette() {
    let d = gen(&["png"]);
    let r = scan(d.path(), &["mask_gray.png", "--classes", "21"]);
    let f = finding(&r.report, "DA202", "range");
    assert_eq!(f["count"], 7);
    assert_eq!(f["values"], serde_json::json!([21, 255]));
    assert_eq!(f["value_counts"], serde_json::json!([1, 6]));
    assert_eq!(cause_ids(f)[0], "ignore_label_not_ignored");
    let r = scan(
        d.path(),
        &["mask_gray.png", "--classes", "21", "--ignore", "255"],
    );
    let f = finding(&r.report, "DA202", "range");
    assert_eq!((positions(f), at(f)[0].1), (vec![vec![2, 3]], 15));
    assert_eq!(r.report["files"][0]["max"], 21);

    let r = scan(d.path(), &["mask_16.png", "--classes", "256"]);
    assert_eq!(
        positions(finding(&r.report, "DA202", "range")),
        vec![vec![1, 4]]
    );
    assert_eq!(r.report["files"][0]["dtype"], "gray 16-bit");
    let r = scan(d.path(), &["mask_palette.png", "--classes", "21"]);
    let f = finding(&r.report, "DA202", "range");
    assert_eq!(positions(f), vec![vec![1, 0], vec![1, 1]]);
    assert_eq!(at(f).iter().map(|l| l.2).collect::<Vec<_>>(), vec![22, 255]);

    let r = scan(d.path(), &["photo.png", "mask_16.png", "--classes", "256"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("photo.png") && r.stderr.contains("not a class-id mask"),
        "{}",
        r.stderr
    );
    assert_eq!(r.report["files"].as_array().unwrap().len(), 1);
}

/// Write a corrupt copy of `file` (made by `mutate`) next to a good file,
/// scan both: exit 2, the error names the file and what is wrong, the good
/// file is still scanned and reported.
fn corrupt(kind: &str, file: &str, mutate: fn(&mut Vec<u8>), args: &[&str], expect: &str) {
    let d = gen(&[kind, "raw"]);
    let p: PathBuf = d.path().join(file);
    let mut bytes = std::fs::read(&p).unwrap();
    mutate(&mut bytes);
    let name = Path::new(file).file_name().unwrap().to_string_lossy();
    let bad = format!("bad-{name}");
    std::fs::write(d.path().join(&bad), bytes).unwrap();
    let mut all = vec!["tokens.bin", bad.as_str(), "--vocab", "50"];
    all.extend_from_slice(args);
    let r = scan(d.path(), &all);
    assert_eq!(r.code, 2, "{file}: {:#}", r.report);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains(&bad))
        .unwrap_or_else(|| panic!("{file}: stderr names no file: {}", r.stderr));
    assert!(
        line.contains(expect),
        "{file}: expected {expect:?} in {line:?}"
    );
    assert_eq!(r.report["errors"][0]["file"], bad.as_str());
    assert!(
        r.report["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == "tokens.bin"),
        "{file}: the good file is still reported"
    );
    assert_eq!(
        finding(&r.report, "DA101", "range")["count"],
        2,
        "{file}: the good file's findings are kept"
    );
}

fn halve(b: &mut Vec<u8>) {
    b.truncate(b.len() / 2);
}

#[test]
fn corrupt_raw() {
    corrupt(
        "raw",
        "tokens.bin",
        |b| b.truncate(b.len() - 1),
        &[],
        "not a whole number of u16 values",
    );
}
#[test]
fn corrupt_llmc() {
    corrupt(
        "llmc",
        "llmc_v2.bin",
        |b| b.truncate(b.len() - 8),
        &[],
        "truncated: llm.c header says 20 u32 tokens",
    );
}
#[test]
fn corrupt_npy() {
    corrupt(
        "npy",
        "c_order.npy",
        |b| b.truncate(b.len() - 8),
        &[],
        "truncated: header says shape [3, 4]",
    );
}
#[test]
fn corrupt_npz() {
    corrupt("npz", "deflated.npz", halve, &[], "not a readable zip");
}
#[test]
fn corrupt_safetensors() {
    corrupt(
        "safetensors",
        "batch.safetensors",
        |b| b.truncate(b.len() - 4),
        &[],
        "truncated: tensor",
    );
}
#[test]
fn corrupt_arrow_file() {
    corrupt("arrow", "table.arrow", halve, &[], "Arrow");
}
#[test]
fn corrupt_arrow_stream() {
    corrupt(
        "arrow",
        "hf_cache/train/data-00000-of-00001.arrow",
        |b| b.truncate(b.len() - 100),
        &[],
        "bytes of metadata, but only 276 remain in the file",
    );
}
/// A garbage length prefix once made arrow allocate 2 GiB (found by fuzzing).
#[test]
fn arrow_stream_length_past_the_end() {
    corrupt(
        "arrow",
        "hf_cache/train/data-00000-of-00001.arrow",
        |b| b[4..8].copy_from_slice(&0x7a83_8333u32.to_le_bytes()),
        &[],
        "Arrow IPC message 0 states 2055439155 bytes of metadata",
    );
}
#[test]
fn arrow_file_footer_past_the_start() {
    corrupt(
        "arrow",
        "table.arrow",
        |b| {
            let n = b.len();
            b[n - 10..n - 6].copy_from_slice(&0x7fff_0000u32.to_le_bytes())
        },
        &[],
        "the footer states 2147418112 bytes",
    );
}
#[test]
fn corrupt_parquet() {
    corrupt(
        "parquet",
        "table.parquet",
        halve,
        &[],
        "not a readable Parquet file",
    );
}
#[test]
fn corrupt_jsonl() {
    corrupt(
        "jsonl",
        "rows.jsonl",
        |b| b.extend_from_slice(b"{\"input_ids\": [1, 2\n"),
        &[],
        "line 5: not valid JSON",
    );
}
#[test]
fn corrupt_csv() {
    corrupt(
        "csv",
        "labels.csv",
        |b| b.extend_from_slice(b"4,x\n"),
        &["--column", "label"],
        "row 4, column label: \"x\" is not an integer",
    );
}
#[test]
fn corrupt_png() {
    corrupt(
        "png",
        "mask_gray.png",
        |b| b.truncate(b.len() - 20),
        &[],
        "PNG",
    );
}
/// A header stating 100000x100000 pixels once made the reader allocate them
/// (found by fuzzing, where the png crate skips CRCs; here the CRC is right).
#[test]
fn png_dimensions_past_what_the_file_holds() {
    corrupt(
        "png",
        "mask_gray.png",
        |b| {
            // IHDR: length(4) "IHDR"(4) width(4) height(4) … at byte 8.
            b[16..20].copy_from_slice(&100_000u32.to_be_bytes());
            b[20..24].copy_from_slice(&100_000u32.to_be_bytes());
            let crc = crc32(&b[12..29]);
            b[29..33].copy_from_slice(&crc.to_be_bytes());
        },
        &[],
        "the header states a 100000x100000 image",
    );
}

/// PNG's chunk CRC (CRC-32/ISO-HDLC).
fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| {
        (0..8).fold(c ^ u32::from(b), |c, _| {
            if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            }
        })
    })
}

#[test]
fn shards_merge_into_the_full_report() {
    let d = gen(&["shards"]);
    let full = scan(d.path(), &["shards", "--vocab", "50257"]);
    let mut reports = Vec::new();
    for k in 0..2 {
        let shard = format!("{k}/2");
        let r = scan(d.path(), &["shards", "--vocab", "50257", "--shard", &shard]);
        assert_eq!(r.code, 1);
        let name = format!("shard-{k}.json");
        std::fs::write(d.path().join(&name), serde_json::to_vec(&r.report).unwrap()).unwrap();
        reports.push(name);
    }
    let files = |r: &Value| {
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let r0 =
        serde_json::from_slice::<Value>(&std::fs::read(d.path().join("shard-0.json")).unwrap())
            .unwrap();
    assert_eq!(
        files(&r0),
        vec![
            "shards/part-000.bin",
            "shards/part-002.bin",
            "shards/part-004.bin"
        ]
    );

    let mut args = vec!["--merge"];
    args.extend(reports.iter().map(String::as_str));
    let merged = scan(d.path(), &args);
    assert_eq!(merged.code, 1);
    let (a, b) = (
        finding(&full.report, "DA101", "range"),
        finding(&merged.report, "DA101", "range"),
    );
    assert_eq!(
        (a["count"].as_u64(), b["count"].as_u64()),
        (Some(5), Some(5))
    );
    assert_eq!(a["values"], b["values"]);
    assert_eq!(a["value_counts"], b["value_counts"]);
    assert_eq!(cause_ids(a), cause_ids(b));
    let mut la = at(a);
    let mut lb = at(b);
    la.sort();
    lb.sort();
    assert_eq!(la, lb);
    let mut fm = files(&merged.report);
    fm.sort();
    assert_eq!(fm, files(&full.report));
}

#[test]
fn json_is_the_contract() {
    let d = gen(&["raw"]);
    let out = bin()
        .current_dir(d.path())
        .args(["scan", "tokens.bin", "--vocab", "50", "--format", "json"])
        .output()
        .unwrap();
    let report: Report = serde_json::from_slice(&out.stdout).expect("a devassert/1 report");
    assert_eq!(
        (
            report.schema.as_str(),
            report.command.as_str(),
            report.exit_code
        ),
        ("devassert/1", "scan", 1)
    );
    let f = &report.findings[0];
    assert_eq!(
        (f.rule.as_str(), f.name.as_str(), f.op_family.as_str()),
        ("DA101", "embedding-index-out-of-range", "index_select")
    );
    assert_eq!(f.values.len(), f.value_counts.len());
    assert!(f
        .causes
        .iter()
        .all(|c| devassert_core::CAUSE_IDS.contains(&c.id.as_str())));
    let scan = report.scan.expect("the scan section");
    assert_eq!((scan.files.len(), scan.errors.len()), (1, 0));
}

#[test]
fn human_output_tokens() {
    let d = gen(&["llmc", "raw"]);
    insta::assert_snapshot!(human(
        d.path(),
        &["llmc_v1.bin", "tokens.bin", "--vocab", "50257"]
    ));
}

#[test]
fn human_output_masks() {
    let d = gen(&["png"]);
    insta::assert_snapshot!(human(
        d.path(),
        &["mask_gray.png", "mask_palette.png", "--classes", "21"]
    ));
}

#[test]
fn decompression_bombs_are_refused_and_the_other_files_still_scanned() {
    // 0.9 MB of PNG that inflates to 900 MB of pixels, 0.4 MB of 1-bit PNG
    // that unpacks to 3.6 GB, an npz member that inflates to 1 GiB, and one
    // real mask beside them.
    let dir = gen(&["bombs"]);
    let r = scan(dir.path(), &[".", "--classes", "21"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let errors = r.report["errors"].as_array().unwrap();
    for bomb in ["bomb_8bit.png", "bomb_1bit.png", "bomb.npz"] {
        let e = errors
            .iter()
            .find(|e| e["file"].as_str().unwrap().ends_with(bomb))
            .unwrap_or_else(|| panic!("no error for {bomb}: {errors:?}"));
        let text = e["error"].as_str().unwrap();
        assert!(text.contains("over the decode budget of 256 MiB"), "{text}");
        assert!(text.contains("--max-decoded"), "{text}");
    }
    let f = finding(&r.report, "DA202", "range");
    assert_eq!(at(f), vec![("real_mask.png".to_string(), 6, 30)]);
    // Every child of this test so far (gen.py, the scan) stayed far below
    // what the bombs would have taken.
    assert!(
        common::children_peak_rss() < 512 << 20,
        "{}",
        common::children_peak_rss()
    );
}

#[test]
fn columnar_bombs_are_refused_within_the_budget_and_the_other_files_still_scanned() {
    // A 130 kB Parquet file holding one 32 MB LZ4 page of zeros, 4 million
    // empty lists in 10 kB (32 MB of row offsets), an LZ4 Arrow stream of
    // 32 MB; scanned with a 16 MiB budget beside a real table.
    let dir = gen(&["columnar_bombs"]);
    let r = scan(
        dir.path(),
        &[
            ".",
            "--vocab",
            "50",
            "--max-decoded",
            "16M",
            "--threads",
            "2",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let errors = r.report["errors"].as_array().unwrap();
    let error = |file: &str| {
        errors
            .iter()
            .find(|e| e["file"].as_str().unwrap().ends_with(file))
            .and_then(|e| e["error"].as_str())
            .unwrap_or_else(|| panic!("no error for {file}: {errors:?}"))
            .to_string()
    };
    for bomb in ["bomb_page.parquet", "bomb_rows.parquet"] {
        let text = error(bomb);
        assert!(text.contains("over the decode budget of 16 MiB"), "{text}");
        assert!(text.contains("--max-decoded"), "{text}");
    }
    assert!(error("bomb_page.parquet").contains("page 0 of the column"));
    assert!(error("bomb_rows.parquet").contains("row index of"));
    // A compressed IPC stream is read, its inflated buffers held to the budget.
    let text = error("bomb_lz4.arrow");
    assert!(text.contains("over the decode budget of 16 MiB"), "{text}");
    let f = finding(&r.report, "DA101", "range");
    assert_eq!(at(f), vec![("real.parquet".to_string(), 3, 70)]);
    // With the budget raised past what they need, they are read.
    let r = scan(
        dir.path(),
        &[
            "bomb_page.parquet",
            "bomb_rows.parquet",
            "--vocab",
            "50",
            "--max-decoded",
            "64M",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn the_decode_budget_is_the_users_to_raise() {
    let dir = gen(&["png"]);
    let r = scan(
        dir.path(),
        &["mask_gray.png", "--classes", "21", "--max-decoded", "16"],
    );
    assert_eq!(r.code, 2);
    assert!(r.report["errors"][0]["error"]
        .as_str()
        .unwrap()
        .contains("over the decode budget"));
    let r = scan(
        dir.path(),
        &["mask_gray.png", "--classes", "21", "--max-decoded", "1KiB"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
fn help_lists_the_dtype_values() {
    let out = bin().args(["scan", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let start = help.find("--dtype").expect("--dtype in help");
    let block: String = help[start..]
        .lines()
        .take_while(|l| !l.trim_start().starts_with("--input-format"))
        .collect::<Vec<_>>()
        .join(" ");
    let listed = block
        .split("possible values:")
        .nth(1)
        .unwrap_or_else(|| panic!("no possible values for --dtype: {block}"));
    for d in devassert_scan::dtype::DTYPES {
        assert!(listed.contains(d.name), "{} missing: {block}", d.name);
    }
}

#[test]
fn human_output_names_a_ruled_out_cause_with_its_fact() {
    // Ids 1..=50257 on GPT-2's 50257 rows: no 0 and the largest equal to the
    // table looks counted from 1, but 50257 is a base vocabulary's size.
    let dir = tempfile::tempdir().expect("temp dir");
    let ids: [u16; 6] = [1, 7, 300, 50256, 50257, 50257];
    let bytes: Vec<u8> = ids.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.path().join("tokens.bin"), bytes).expect("write tokens");
    let text = human(dir.path(), &["tokens.bin", "--vocab", "50257"]);
    assert!(
        text.contains("ruled out: off_by_one — 50257 is a common base vocabulary's size"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}
