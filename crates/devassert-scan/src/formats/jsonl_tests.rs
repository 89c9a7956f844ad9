//! The JSONL reader: rows across batches, dotted paths, and its messages.

use super::jsonl::{read_lines, Jsonl};
use super::jsonl_path::BATCH;
use super::reader::{Input, Reader};
use crate::error::Result;
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::Part;
use crate::values::{Data, Layout};
use std::path::Path;
use std::sync::Arc;

fn read(text: &str, opts: &ScanOptions) -> Result<Part> {
    let input = Input {
        path: Path::new("t.jsonl"),
        bytes: Arc::new(Bytes::Heap(text.as_bytes().to_vec())),
    };
    Jsonl.read(&input, opts).map(|mut p| p.remove(0))
}

fn opts() -> ScanOptions {
    ScanOptions {
        bounds: crate::Bounds::new(0, 10),
        ..ScanOptions::default()
    }
}

#[test]
fn arrays_keep_their_rows_across_batches() {
    // A row longer than a batch, then short ones.
    let long: Vec<String> = (0..BATCH as u64 + 5)
        .map(|i| (i % 10).to_string())
        .collect();
    let text = format!(
        "{{\"meta\":{{\"x\":[1,2]}},\"input_ids\":[{}]}}\n{{\"input_ids\":[3,11]}}\n\n{{\"input_ids\":null}}\n",
        long.join(",")
    );
    let p = read(&text, &opts()).expect("read");
    assert_eq!(p.name.as_deref(), Some("input_ids"));
    assert_eq!(p.dtype_label, "array<int>");
    let Layout::Rows { offsets } = &p.layout else {
        panic!("rows: {:?}", p.layout)
    };
    let n = BATCH as u64 + 5;
    assert_eq!(offsets, &vec![0, n, n + 2, n + 2]);
    let Data::Scanned { result, .. } = &p.data else {
        panic!("scanned")
    };
    assert_eq!((result.scanned, result.bad), (n + 2, 1));
    assert_eq!(result.first, vec![(n + 1, 11)]);
}

#[test]
fn scalars_and_dotted_paths() {
    let o = ScanOptions {
        column: Some("a.1.b".into()),
        ..opts()
    };
    let p = read("{\"a\":[0,{\"b\":4}]}\n{\"a\":[{},{\"b\":12}]}\n", &o).expect("read");
    assert_eq!(p.layout, Layout::Scalars);
    let Data::Scanned { result, .. } = &p.data else {
        panic!("scanned")
    };
    assert_eq!(result.first, vec![(1, 12)]);
}

#[test]
fn messages_name_the_line_and_the_value() {
    let e = |t: &str| read(t, &opts()).err().expect("an error").to_string();
    assert_eq!(
        e("{\"ids\":[1,\"x\"]}"),
        "line 1: ids[1] is \"x\", not an integer"
    );
    assert_eq!(
        e("{\"ids\":1}\n{\"ids\":2.5}"),
        "line 2: ids is 2.5, not an integer"
    );
    assert_eq!(e("{\"ids\":1}\n{\"x\":1}"), "line 2: no field \"ids\"");
    assert!(e("{\"ids\":[1,").starts_with("line 1: not valid JSON"));
    assert_eq!(
        e("{\"text\":\"hi\",\"n\":1}"),
        "line 1: pass --column to choose a field (fields: text, n)"
    );
}

#[test]
fn long_lines_read_as_they_are_parsed_give_what_parsed_in_place_gives() {
    let ids: Vec<String> = (0..BATCH as u64 * 2 + 3)
        .map(|i| (i % 12).to_string())
        .collect();
    let text = format!(
        "{{\"text\":\"\u{e9}t\u{e9}\",\"input_ids\":[{}]}}\r\n\n  {{\"input_ids\":[3,11]}}  \n{{\"input_ids\":[]}}",
        ids.join(",")
    );
    for column in [None, Some("input_ids".to_string())] {
        let o = ScanOptions { column, ..opts() };
        let input = Input {
            path: Path::new("t.jsonl"),
            bytes: Arc::new(Bytes::Heap(text.as_bytes().to_vec())),
        };
        let in_place = read_lines(&input, &o, usize::MAX).expect("in place");
        let streamed = read_lines(&input, &o, 0).expect("streamed");
        assert_eq!(in_place[0].name, streamed[0].name);
        assert_eq!(in_place[0].layout, streamed[0].layout);
        match (&in_place[0].data, &streamed[0].data) {
            (Data::Scanned { result: a, .. }, Data::Scanned { result: b, .. }) => {
                assert_eq!(a, b);
                assert!(a.bad > 0);
            }
            _ => panic!("scanned as read"),
        }
    }
    // Broken JSON in a long line is named by its line, both ways.
    let input = Input {
        path: Path::new("t.jsonl"),
        bytes: Arc::new(Bytes::Heap(
            b"{\"input_ids\":[1]}\n{\"input_ids\":[1,".to_vec(),
        )),
    };
    for long in [0, usize::MAX] {
        let Err(e) = read_lines(&input, &opts(), long) else {
            panic!("broken JSON read");
        };
        let e = e.to_string();
        assert!(e.contains("line 2: not valid JSON"), "{e}");
    }
}
