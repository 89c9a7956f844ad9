//! Any input, any size: nothing blocks (a FIFO, socket or device where a
//! file should be is skipped and said, at once), and inputs far larger than
//! any real one are read within the memory budget, the other inputs of the
//! command still read. Its own test binary without Python, so that the
//! peak memory of this process's children is devassert's alone.

mod common;

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A hang fails the test instead of stalling the suite.
const PATIENCE: Duration = Duration::from_secs(60);

/// devassert's budget: peak RSS at the default settings.
const BUDGET: u64 = 256 << 20;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

struct Out {
    code: i32,
    json: Value,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let out = common::bin()
        .current_dir(dir)
        .args(args)
        .args(["--format", "json"])
        .timeout(PATIENCE)
        .output()
        .expect("run devassert");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}; a hang?): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    Out {
        code: out.status.code().unwrap_or(-1),
        json,
        stderr,
    }
}

/// The scan's error for `file` (a path ending so).
fn scan_error<'a>(r: &'a Value, file: &str) -> &'a str {
    r["errors"]
        .as_array()
        .and_then(|es| {
            es.iter()
                .find(|e| e["file"].as_str().is_some_and(|f| f.ends_with(file)))
        })
        .and_then(|e| e["error"].as_str())
        .unwrap_or_else(|| panic!("no error for {file} in {r:#}"))
}

fn tokens(path: &Path, ids: &[u16]) {
    let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn a_fifo_where_a_megatron_index_should_be_never_hangs() {
    let d = tempfile::tempdir().expect("tempdir");
    tokens(&d.path().join("corpus.bin"), &[1, 2, 3]);
    mkfifo(&d.path().join("corpus.idx"));
    tokens(&d.path().join("good.bin"), &[1, 2, 70]);
    // Named by its .bin, and by its folder.
    for args in [
        &["scan", "corpus.bin", "good.bin", "--vocab", "50"][..],
        &["scan", ".", "--vocab", "50"][..],
    ] {
        let r = run(d.path(), args);
        assert_eq!(r.code, 2, "{:#}", r.json);
        let e = scan_error(&r.json, "corpus.bin");
        assert!(
            e.contains("corpus.idx") && e.contains("a FIFO (named pipe)"),
            "{e}"
        );
        // The good file beside it is still read (its 70 is out of range).
        assert_eq!(
            r.json["findings"].as_array().map(Vec::len),
            Some(1),
            "{:#}",
            r.json
        );
    }
}

#[test]
fn fifos_and_sockets_in_a_folder_or_named_are_skipped_and_said() {
    let d = tempfile::tempdir().expect("tempdir");
    tokens(&d.path().join("good.bin"), &[1, 2, 3]);
    mkfifo(&d.path().join("pipe.bin"));
    let _sock = std::os::unix::net::UnixListener::bind(d.path().join("sock.npy")).expect("bind");
    let r = run(d.path(), &["scan", ".", "--vocab", "50"]);
    assert_eq!(r.code, 2, "{:#}", r.json);
    assert!(scan_error(&r.json, "pipe.bin").starts_with("a FIFO (named pipe), not a regular file"));
    assert!(scan_error(&r.json, "sock.npy").starts_with("a socket, not a regular file"));
    assert_eq!(r.json["scan"]["files"], 1, "{:#}", r.json);
    // Named on the command line, and as --merge reports.
    let r = run(d.path(), &["scan", "pipe.bin", "good.bin", "--vocab", "50"]);
    assert_eq!(r.code, 2);
    assert!(scan_error(&r.json, "pipe.bin").contains("a FIFO (named pipe)"));
    let out = common::bin()
        .current_dir(d.path())
        .args(["scan", "--merge", "pipe.bin"])
        .timeout(PATIENCE)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a FIFO"));
}

/// The `skipped[]` entry of a report for a path ending in `file`.
fn skipped_why<'a>(r: &'a Value, file: &str) -> &'a str {
    r["skipped"]
        .as_array()
        .and_then(|es| {
            es.iter()
                .find(|e| e["path"].as_str().is_some_and(|f| f.ends_with(file)))
        })
        .and_then(|e| e["why"].as_str())
        .unwrap_or_else(|| panic!("no skipped entry for {file} in {r:#}"))
}

#[test]
fn check_skips_a_fifo_in_the_model_folder_and_checks_the_rest() {
    let d = tempfile::tempdir().expect("tempdir");
    let model = d.path().join("model");
    std::fs::create_dir(&model).expect("mkdir");
    mkfifo(&model.join("config.json"));
    mkfifo(&model.join("tokenizer.json"));
    std::fs::write(model.join("vocab.txt"), "a\nb\n").expect("write");
    let r = run(d.path(), &["check", "model"]);
    assert_eq!(r.code, 2, "{:#}\n{}", r.json, r.stderr);
    for f in ["config.json", "tokenizer.json"] {
        let why = skipped_why(&r.json, f);
        assert!(
            why.starts_with("a FIFO (named pipe), not a regular file"),
            "{why}"
        );
        assert!(
            r.stderr.contains(&format!("{f}: a FIFO")),
            "said on stderr: {}",
            r.stderr
        );
    }
    // The rest of the folder is checked: the tokenizer comes from vocab.txt.
    assert_eq!(
        r.json["model"]["tokenizer"]["files"],
        serde_json::json!(["vocab.txt"]),
        "{:#}",
        r.json
    );
    assert_eq!(r.json["model"]["tokenizer"]["size"], 2);
    // Text: the same warning, and the model's summary.
    let out = common::bin()
        .args(["check"])
        .arg(&model)
        .timeout(PATIENCE)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config.json: a FIFO (named pipe)"),
        "{stderr}"
    );
    // Nothing left to read: an error naming what was left out.
    std::fs::remove_file(model.join("vocab.txt")).expect("rm");
    let out = common::bin()
        .args(["check"])
        .arg(&model)
        .timeout(PATIENCE)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nothing could be read") && stderr.contains("a FIFO"),
        "{stderr}"
    );
}

#[test]
fn explain_skips_fifos() {
    let d = tempfile::tempdir().expect("tempdir");
    // explain: --data naming a FIFO, and a FIFO in --inductor-dir.
    let log = d.path().join("crash.log");
    std::fs::write(
        &log,
        "../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n",
    )
    .expect("write");
    mkfifo(&d.path().join("ids.bin"));
    let inductor = d.path().join("inductor");
    std::fs::create_dir(&inductor).expect("mkdir");
    mkfifo(&inductor.join("output_code.py"));
    let r = run(
        d.path(),
        &[
            "explain",
            "crash.log",
            "--data",
            "ids.bin",
            "--vocab",
            "10",
            "--inductor-dir",
            "inductor",
        ],
    );
    assert_ne!(r.code, -1, "{}", r.stderr);
    let text = format!("{:#}{}", r.json, r.stderr);
    assert!(text.contains("a FIFO (named pipe)"), "{text}");
}

/// Peak RSS of the children run so far; every case must stay in budget.
fn assert_in_budget(case: &str) {
    let peak = common::children_peak_rss();
    eprintln!("{case}: peak RSS so far {} MiB", peak >> 20);
    assert!(peak <= BUDGET, "{case}: peak {} MiB", peak >> 20);
}

/// Values of the huge inputs: ~5M ids (~40 MB of text) each, where the
/// readers before took 10-20 times the file.
const IDS: u64 = 5_000_000;

#[test]
fn huge_jsonl_lines_and_csv_cells_are_read_in_budget() {
    let d = tempfile::tempdir().expect("tempdir");
    // One line holding a 5M-id array, with a bad id at its end.
    let mut w = std::io::BufWriter::new(std::fs::File::create(d.path().join("a.jsonl")).unwrap());
    write!(w, "{{\"text\":\"x\",\"input_ids\":[").unwrap();
    for i in 0..IDS {
        write!(w, "{},", i % 50_000).unwrap();
    }
    writeln!(w, "60000]}}").unwrap();
    writeln!(w, "{{\"input_ids\":[1,2]}}").unwrap();
    w.flush().unwrap();
    drop(w);
    // A CSV whose text cell is 320 MiB, then a bad label: more than the
    // budget, so its mapped pages must be dropped behind the reader too.
    let mut w = std::io::BufWriter::new(std::fs::File::create(d.path().join("b.csv")).unwrap());
    write!(w, "text,label\n\"").unwrap();
    let chunk = vec![b'y'; 1 << 20];
    for _ in 0..320 {
        w.write_all(&chunk).unwrap();
    }
    writeln!(w, "\",3\nshort,12").unwrap();
    w.flush().unwrap();
    drop(w);
    let r = run(d.path(), &["scan", "a.jsonl", "--vocab", "50000"]);
    assert_eq!(r.code, 1, "{:#}", r.json);
    assert_eq!(r.json["findings"][0]["values"], serde_json::json!([60000]));
    assert_in_budget("a 5M-id JSONL line");
    let r = run(d.path(), &["scan", "b.csv", "--classes", "10"]);
    assert_eq!(r.code, 1, "{:#}", r.json);
    assert_eq!(r.json["findings"][0]["values"], serde_json::json!([12]));
    assert_in_budget("a 320 MiB CSV cell");
}

#[test]
fn a_raw_token_file_past_the_budget_is_scanned_in_budget() {
    // 288 MiB of u16 tokens, the last one bad: its pages are mapped, and
    // dropped behind the scan, so the RSS stays under the budget.
    let d = tempfile::tempdir().expect("tempdir");
    let mut w = std::io::BufWriter::new(std::fs::File::create(d.path().join("t.bin")).unwrap());
    let chunk: Vec<u8> = std::iter::repeat_n([5u8, 0], 1 << 19).flatten().collect();
    for _ in 0..288 {
        w.write_all(&chunk).unwrap();
    }
    w.write_all(&60_000u16.to_le_bytes()).unwrap();
    w.flush().unwrap();
    drop(w);
    let r = run(d.path(), &["scan", "t.bin", "--vocab", "50000"]);
    assert_eq!(r.code, 1, "{:#}", r.json);
    assert_eq!(r.json["findings"][0]["values"], serde_json::json!([60000]));
    assert_in_budget("288 MiB of raw tokens");
}

#[test]
fn huge_model_json_files_are_read_or_refused_in_budget() {
    let d = tempfile::tempdir().expect("tempdir");
    // A config whose 2M-class id2label is ~40 MB: only counted.
    let mut w =
        std::io::BufWriter::new(std::fs::File::create(d.path().join("config.json")).unwrap());
    write!(
        w,
        "{{\"model_type\":\"bert\",\"vocab_size\":10,\"id2label\":{{"
    )
    .unwrap();
    for i in 0..2_000_000u64 {
        let sep = if i == 0 { "" } else { "," };
        write!(w, "{sep}\"{i}\":\"LABEL_{i}\"").unwrap();
    }
    write!(w, "}}}}").unwrap();
    w.flush().unwrap();
    drop(w);
    // A tokenizer_config.json with 40 MB of one kept key: refused, named.
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(d.path().join("tokenizer_config.json")).unwrap(),
    );
    write!(w, "{{\"model_max_length\":512,\"added_tokens_decoder\":{{").unwrap();
    for i in 0..1_000_000u64 {
        let sep = if i == 0 { "" } else { "," };
        write!(
            w,
            "{sep}\"{i}\":{{\"content\":\"<t{i}>\",\"special\":true}}"
        )
        .unwrap();
    }
    write!(w, "}}}}").unwrap();
    w.flush().unwrap();
    drop(w);
    let out = common::bin()
        .args(["check"])
        .arg(d.path())
        .timeout(PATIENCE)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tokenizer_config.json") && stderr.contains("memory budget"),
        "{stderr}"
    );
    assert_in_budget("a 40 MB tokenizer_config.json");
    std::fs::remove_file(d.path().join("tokenizer_config.json")).unwrap();
    let r = run(d.path(), &["check", "."]);
    assert_ne!(r.code, 2, "{:#}\n{}", r.json, r.stderr);
    assert_in_budget("a 40 MB config.json");
}

/// A JSON file of `name` whose one kept key holds `mib` MiB of small integers.
fn kept_json(dir: &Path, name: &str, mib: usize) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join(name)).unwrap());
    write!(w, "{{\"model_max_length\":512,\"junk\":[").unwrap();
    for _ in 0..(mib << 20) / 5 {
        write!(w, "1234,").unwrap();
    }
    write!(w, "0]}}").unwrap();
    w.flush().unwrap();
}

#[test]
fn check_reads_all_the_model_files_within_one_budget() {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        d.path().join("config.json"),
        r#"{"model_type":"bert","vocab_size":10}"#,
    )
    .unwrap();
    // Each fits the budget alone; the two together do not.
    kept_json(d.path(), "tokenizer_config.json", 6);
    kept_json(d.path(), "special_tokens_map.json", 6);
    let r = run(d.path(), &["check", "."]);
    assert_eq!(r.code, 2, "{:#}\n{}", r.json, r.stderr);
    let why = skipped_why(&r.json, "special_tokens_map.json");
    assert!(why.contains("memory budget"), "{why}");
    assert!(r
        .stderr
        .contains("special_tokens_map.json: needs more than"));
    // The others are read.
    assert_eq!(r.json["model"]["config_vocab_size"], 10, "{:#}", r.json);
    assert_eq!(
        r.json["model"]["tokenizer"]["files"],
        serde_json::json!(["tokenizer_config.json"])
    );
    assert_in_budget("two 6 MiB kept JSON files");
    // Alone, the second one is read.
    std::fs::remove_file(d.path().join("tokenizer_config.json")).unwrap();
    let r = run(d.path(), &["check", "."]);
    assert_ne!(r.code, 2, "{:#}\n{}", r.json, r.stderr);
    assert!(r.json.get("skipped").is_none(), "{:#}", r.json);
}

#[test]
fn a_budget_past_the_machine_is_refused_before_reading() {
    let d = tempfile::tempdir().expect("tempdir");
    tokens(&d.path().join("good.bin"), &[1, 2, 3]);
    let out = common::bin()
        .current_dir(d.path())
        .args([
            "scan",
            "good.bin",
            "--vocab",
            "50",
            "--max-decoded",
            "4000000G",
        ])
        .timeout(PATIENCE)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("more than this machine can give"),
        "{stderr}"
    );
}

#[test]
fn a_torch_save_zip_is_named_for_what_it_is() {
    let d = tempfile::tempdir().expect("tempdir");
    let f = std::fs::File::create(d.path().join("ids.pt")).unwrap();
    let mut z = zip::ZipWriter::new(f);
    let o =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("archive/data.pkl", o).unwrap();
    z.write_all(b"\x80\x02}q\x00.").unwrap();
    z.start_file("archive/data/0", o).unwrap();
    z.write_all(&[0u8; 16]).unwrap();
    z.finish().unwrap();
    let r = run(d.path(), &["scan", "ids.pt", "--vocab", "50"]);
    assert_eq!(r.code, 2);
    let e = scan_error(&r.json, "ids.pt");
    assert!(
        e.contains("a PyTorch file") && !e.contains("not a .npy"),
        "{e}"
    );
}
