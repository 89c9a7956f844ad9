//! The Arrow reader on IPC streams that arrow-ipc writes: compressed ones
//! (zstd, lz4, as pyarrow and polars write them) and dictionary-typed ids.

use super::arrow::Arrow;
use super::reader::{Input, Reader};
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::Data;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_array::{DictionaryArray, Int64Array};
use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_ipc::CompressionType;
use std::path::Path;
use std::sync::Arc;

fn stream(batch: &RecordBatch, compression: Option<CompressionType>) -> Vec<u8> {
    let options = IpcWriteOptions::default()
        .try_with_compression(compression)
        .expect("options");
    let mut out = Vec::new();
    let mut w =
        StreamWriter::try_new_with_options(&mut out, &batch.schema(), options).expect("writer");
    w.write(batch).expect("write");
    w.finish().expect("finish");
    drop(w);
    out
}

fn bad_values(bytes: Vec<u8>) -> Vec<(u64, i64)> {
    let input = Input {
        path: Path::new("data.arrow"),
        bytes: Arc::new(Bytes::Heap(bytes)),
    };
    let opts = ScanOptions {
        bounds: crate::Bounds::new(0, 50_000),
        ..ScanOptions::default()
    };
    let mut parts = Arrow.read(&input, &opts).expect("read");
    match parts.remove(0).data {
        Data::Scanned { result, .. } => result.first,
        Data::Values(_) => panic!("scanned as decoded"),
    }
}

#[test]
fn compressed_streams_are_read() {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 70_000, 4]));
    let batch = RecordBatch::try_from_iter([("input_ids", ids)]).expect("batch");
    for c in [
        None,
        Some(CompressionType::ZSTD),
        Some(CompressionType::LZ4_FRAME),
    ] {
        assert_eq!(bad_values(stream(&batch, c)), vec![(2, 70_000)], "{c:?}");
    }
}

#[test]
fn dictionary_typed_ids_are_their_values() {
    let d: DictionaryArray<arrow_array::types::Int32Type> = DictionaryArray::new(
        vec![0, 1, 1, 2].into(),
        Arc::new(Int64Array::from(vec![7, 60_000, 9])),
    );
    let batch = RecordBatch::try_from_iter([("labels", Arc::new(d) as ArrayRef)]).expect("batch");
    let found = bad_values(stream(&batch, None));
    assert_eq!(found, vec![(1, 60_000), (2, 60_000)]);
}
