//! `check` on a model whose `tokenizer.json` is far larger than any real one
//! (a hostile or broken file): read in bounded memory, with the same finding
//! a small file gives. Its own test binary, so that the peak memory of this
//! process's children is the check's alone.

mod common;

use std::io::Write;

#[test]
fn a_100_mb_tokenizer_json_is_checked_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let n: u64 = 4_000_000;
    // The model's table has exactly the vocabulary's rows; two tokens were
    // added past it without resize_token_embeddings.
    std::fs::write(
        dir.path().join("config.json"),
        format!(r#"{{"model_type": "gpt2", "vocab_size": {n}, "n_positions": 1024}}"#),
    )
    .unwrap();
    let file = std::fs::File::create(dir.path().join("tokenizer.json")).unwrap();
    let mut w = std::io::BufWriter::new(file);
    write!(
        w,
        r#"{{"version":"1.0","added_tokens":[
            {{"id":{n},"content":"<new-a>","special":true}},{{"id":{},"content":"<new-b>","special":false}}],
          "post_processor":null,"model":{{"type":"BPE","vocab":{{"#,
        n + 1
    )
    .unwrap();
    for i in 0..n {
        let sep = if i == 0 { "" } else { "," };
        write!(w, r#"{sep}"token-{i:010}":{i}"#).unwrap();
    }
    // Merges the bounded pass skips unread.
    write!(w, r#"}},"merges":["#).unwrap();
    for i in 0..1_000_000u64 {
        let sep = if i == 0 { "" } else { "," };
        write!(w, r#"{sep}"token-{i:010} token-{:010}""#, i + 1).unwrap();
    }
    write!(w, "]}}}}").unwrap();
    w.flush().unwrap();
    drop(w);
    let size = std::fs::metadata(dir.path().join("tokenizer.json"))
        .unwrap()
        .len();
    assert!(size > 100_000_000, "{size}");

    let out = common::bin()
        .args(["check", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "DA101")
        .unwrap_or_else(|| panic!("no DA101 in {report:#}"));
    assert_eq!(f["causes"][0]["id"], "added_tokens_no_resize", "{f:#}");
    eprintln!(
        "tokenizer.json {} MB: check's peak RSS {} MiB",
        size / 1_000_000,
        common::children_peak_rss() >> 20
    );
    assert!(
        common::children_peak_rss() < 512 << 20,
        "peak {} MiB",
        common::children_peak_rss() >> 20
    );
}
