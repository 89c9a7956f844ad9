//! `devassert scan` on data it did not write: the VOC masks of labelme's
//! example (palette PNGs with 255 borders, and the same masks as int32 .npy
//! with -1), plotly's iris CSV (1-based species_id), and a folder saved by
//! the real Hugging Face `datasets`. tests/support/third_party.py fetches
//! the first two once into a cache outside the repository.

mod common;

use common::{bin, python};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

struct Data {
    voc: PathBuf,
    iris: PathBuf,
    hf: PathBuf,
    _tmp: tempfile::TempDir,
}

fn data() -> &'static Data {
    static D: OnceLock<Data> = OnceLock::new();
    D.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("temp dir");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/third_party.py");
        let out = std::process::Command::new(python())
            .arg(&script)
            .arg(tmp.path())
            .output()
            .expect("run third_party.py");
        assert!(
            out.status.success(),
            "third_party.py failed (it fetches from the package index): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("third_party.py prints JSON");
        let path = |k: &str| PathBuf::from(v[k].as_str().unwrap_or_default());
        Data {
            voc: path("voc"),
            iris: path("iris"),
            hf: path("hf"),
            _tmp: tmp,
        }
    })
}

fn scan(args: &[&str]) -> (i32, Value) {
    let out = bin()
        .arg("scan")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run devassert");
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap_or(-1), report)
}

fn one_finding(r: &Value) -> &Value {
    let fs = r["findings"].as_array().expect("findings");
    assert_eq!(fs.len(), 1, "{r:#}");
    &fs[0]
}

/// (file name, position) of each location.
fn places(f: &Value) -> Vec<(String, Vec<u64>)> {
    f["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| {
            let file = Path::new(l["file"].as_str().unwrap_or_default());
            let name = file
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let pos = l["position"]
                .as_array()
                .map_or(vec![], |p| p.iter().filter_map(Value::as_u64).collect());
            (name, pos)
        })
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn voc_palette_masks_have_255_borders() {
    let dir = data().voc.join("SegmentationClass");
    let (code, r) = scan(&[s(&dir), "--classes", "21", "--limit", "3"]);
    assert_eq!(code, 1, "{r:#}");
    let f = one_finding(&r);
    assert_eq!(f["rule"], "DA202");
    assert_eq!(f["values"], serde_json::json!([255]));
    // 9460 border pixels in 2011_000003, 909 in 2011_000006, none in 2011_000025.
    assert_eq!(f["count"], 10369);
    assert_eq!(
        places(f),
        [[266, 338], [267, 330], [267, 331]].map(|p| ("2011_000003.png".to_string(), p.to_vec()))
    );
    assert_eq!(f["causes"][0]["id"], "ignore_label_not_ignored", "{f:#}");
    let files = r["files"].as_array().expect("files");
    assert!(
        files.iter().all(|f| f["dtype"] == "palette 8-bit"),
        "{files:#?}"
    );
    // With the border ignored the masks are clean; their classes reach 18 (train).
    let (code, r) = scan(&[s(&dir), "--classes", "21", "--ignore", "255"]);
    assert_eq!(code, 0, "{r:#}");
    let max = r["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["max"].as_i64())
        .max();
    assert_eq!(max, Some(18));
}

#[test]
fn voc_npy_masks_mark_the_same_borders_with_minus_one() {
    let dir = data().voc.join("SegmentationClassNpy");
    let (code, r) = scan(&[s(&dir), "--classes", "21", "--limit", "3"]);
    assert_eq!(code, 1, "{r:#}");
    let f = one_finding(&r);
    assert_eq!(f["values"], serde_json::json!([-1]));
    assert_eq!(f["count"], 10369);
    // The same pixels as the PNG's 255s, as N-d indices of the int32 arrays.
    assert_eq!(
        places(f),
        [[266, 338], [267, 330], [267, 331]].map(|p| ("2011_000003.npy".to_string(), p.to_vec()))
    );
    let files = r["files"].as_array().expect("files");
    assert!(files.iter().all(|f| f["dtype"] == "<i4"), "{files:#?}");
    let (code, r) = scan(&[s(&dir), "--classes", "21", "--ignore", "-1"]);
    assert_eq!(code, 0, "{r:#}");
}

#[test]
fn iris_species_id_is_one_based() {
    let csv = &data().iris;
    let (code, r) = scan(&[
        s(csv),
        "--column",
        "species_id",
        "--classes",
        "3",
        "--limit",
        "2",
    ]);
    assert_eq!(code, 1, "{r:#}");
    let f = one_finding(&r);
    assert_eq!(f["rule"], "DA201");
    assert_eq!(f["values"], serde_json::json!([3]));
    // virginica, the last 50 of 150 rows.
    assert_eq!(f["count"], 50);
    let rows: Vec<u64> = f["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .filter_map(|l| l["row"].as_u64())
        .collect();
    assert_eq!(rows, [100, 101]);
    // species_id runs 1..3: counted from 1, not a model with too few classes.
    assert_eq!(f["causes"][0]["id"], "off_by_one", "{f:#}");
    assert!(f["fixes"][0]
        .as_str()
        .is_some_and(|x| x.starts_with("subtract 1")));
    let human = bin()
        .args(["scan", s(csv), "--column", "species_id", "--classes", "3"])
        .output()
        .expect("run devassert");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("the labels run 1..3"), "{text}");
}

#[test]
fn hugging_face_save_to_disk_folder() {
    // data-00000-of-00001.arrow beside dataset_info.json and state.json.
    let dir = &data().hf;
    let (code, r) = scan(&[s(dir), "--vocab", "32000", "--column", "input_ids"]);
    assert_eq!(code, 1, "{r:#}");
    let files = r["files"].as_array().expect("files");
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(files[0]["format"], "arrow-stream");
    assert_eq!(files[0]["values"], 9);
    let f = one_finding(&r);
    assert_eq!(f["rule"], "DA101");
    assert_eq!(f["values"], serde_json::json!([32000]));
    let l = &f["locations"][0];
    assert_eq!(
        (l["row"].as_u64(), l["offset"].as_u64(), l["index"].as_u64()),
        (Some(1), Some(1), Some(4))
    );
    assert_eq!(f["causes"][0]["id"], "added_tokens_no_resize", "{f:#}");
}
