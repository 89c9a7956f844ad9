//! `devassert scan`'s progress bar, run on a real terminal (a pty made by
//! util-linux `script`): it moves by bytes inside one large file, with rate
//! and ETA, for a person reading human output, and never appears beside
//! JSON or GitHub output.

use std::path::Path;
use std::process::Command;

/// Everything the terminal showed while `devassert scan ARGS` ran in `dir`.
fn on_a_terminal(dir: &Path, args: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("devassert");
    let line = format!("{} scan {args} --color never", bin.display());
    let out = Command::new("script")
        .current_dir(dir)
        .args(["-qfec", &line, "/dev/null"])
        .output()
        .expect("util-linux `script` runs the scan on a pty");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_bar_moves_inside_one_large_file_and_only_for_human_output() {
    let d = tempfile::tempdir().unwrap();
    // 128 MiB of u16 tokens in one file: seconds of work for a debug build
    // on one thread, far past the bar's 300 ms delay.
    let tokens: Vec<u8> = (0..64u32 << 20)
        .flat_map(|i| ((i % 50000) as u16).to_le_bytes())
        .collect();
    std::fs::write(d.path().join("big.bin"), tokens).unwrap();
    let args = "big.bin --vocab 50257 --threads 1";

    let shown = on_a_terminal(d.path(), args);
    let frames: Vec<&str> = shown
        .split(['\r', '\n'])
        .filter(|l| l.contains("ETA") && l.contains("/128.00 MiB"))
        .collect();
    assert!(
        frames.len() >= 2,
        "no moving bar on the terminal: {shown:?}"
    );
    assert!(
        frames.iter().any(|f| f.contains("MiB/s")),
        "no rate: {frames:?}"
    );
    assert!(
        frames.iter().any(|f| !f.contains(" 128.00 MiB/128.00 MiB")),
        "the bar only moved when the file was done: {frames:?}"
    );
    assert!(shown.contains("1 array scanned"), "{shown:?}");

    for format in ["json", "github"] {
        let shown = on_a_terminal(d.path(), &format!("{args} --format {format}"));
        assert!(
            !shown.contains("ETA") && !shown.contains("MiB/s"),
            "a bar beside --format {format}: {shown:?}"
        );
    }
}
