//! Parquet: the chosen column (integers or lists of integers), only that
//! column read, row groups in parallel. Values come straight from parquet's
//! column reader and are scanned batch by batch; rows are told apart by the
//! repetition and definition levels. (The arrow reader spent most of its
//! time building validity bitmaps and list arrays that a range check does
//! not need: list columns read twice as fast this way.) This module chooses
//! the column and reads the row groups in parallel; `column` reads one row
//! group's chunk, `footer` and `pages` check sizes before parquet decodes.

mod column;
mod footer;
mod pages;

use super::column_builder::ColumnBuilder;
use super::column_type::{choose_column, type_name};
use super::reader::{Input, Reader};
use crate::error::{bad, within_budget, Result};
use crate::format::InputFormat;
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::Part;
use column::Column;
use devassert_core::contain::contain;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use rayon::prelude::*;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub struct Parquet;

fn panicked(message: String) -> crate::error::ScanError {
    bad(format!(
        "corrupt Parquet data (parquet could not decode it: {message})"
    ))
}

/// The mapped file as parquet's input: pages are sliced out of the map
/// instead of read into buffers again.
struct Mapped(Arc<Bytes>);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl Reader for Parquet {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        footer::within_budget(input.data(), opts.decode_budget)?;
        let file = bytes::Bytes::from_owner(Mapped(input.bytes.clone()));
        // parquet (and the arrow-ipc schema it embeds) can panic on corrupt
        // metadata and pages; see devassert_core::contain.
        let meta = contain(|| match footer::split_decode(input.data()) {
            Ok(Some(split)) => {
                ArrowReaderMetadata::try_new(Arc::new(split), ArrowReaderOptions::new())
                    .map_err(|e| e.to_string())
            }
            Ok(None) => ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        })
        .map_err(panicked)?
        .map_err(|e| bad(format!("not a readable Parquet file: {e}")))?;
        let schema = meta.schema().clone();
        let col = choose_column(&schema, opts)?;
        let field = schema.field(col);
        let column = Column::new(meta.metadata(), col, field.data_type()).map_err(|why| {
            bad(format!(
                "cannot read Parquet column {}: {why}",
                field.name()
            ))
        })?;
        let file = Arc::new(file);
        let groups = meta.metadata().num_row_groups();
        let len = input.data().len() as u64;
        if column.list {
            // A list column keeps every row's offset: the rows the row groups
            // state are checked before any is read (empty lists cost no bytes).
            let rows: u64 = meta
                .metadata()
                .row_groups()
                .iter()
                .map(|rg| rg.num_rows().max(0) as u64)
                .fold(0, u64::saturating_add);
            within_budget(
                &format!("a row index of {rows} rows"),
                rows.saturating_add(1).saturating_mul(8),
                opts.decode_budget.max(len.saturating_mul(2)),
            )?;
        }
        let kept = AtomicU64::new(0);
        let pieces: Vec<Result<ColumnBuilder>> = (0..groups)
            .into_par_iter()
            .map(|g| {
                contain(|| column.read_group(&file, meta.metadata(), g, opts, &kept))
                    .map_err(panicked)?
                    .map_err(|e| crate::error::within(e, &format!("row group {g}")))
            })
            .collect();
        let pieces = pieces.into_iter().collect::<Result<Vec<_>>>()?;
        let all = ColumnBuilder::concat_all(column.list, opts, len, pieces)?;
        Ok(vec![all.finish(
            field.name().clone(),
            type_name(field.data_type()),
            InputFormat::Parquet,
        )])
    }
}

#[cfg(test)]
mod tests {
    use super::super::column_type::is_list;
    use super::*;
    use crate::dtype::Dtype;
    use crate::options::Bounds;
    use crate::range::RangeResult;
    use crate::values::{Data, Layout};
    use arrow_array::types::{Int16Type, Int32Type, Int64Type, UInt32Type};
    use arrow_array::{ArrayRef, ListArray, PrimitiveArray, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use proptest::prelude::*;
    use std::path::Path;

    type Rows = Vec<Option<Vec<Option<i64>>>>;

    fn column(rows: &Rows, list: bool, ty: u8) -> ArrayRef {
        macro_rules! build {
            ($t:ty) => {{
                let cast = |v: i64| v as <$t as arrow_array::ArrowPrimitiveType>::Native;
                if list {
                    let it = rows.iter().map(|r| {
                        r.as_ref()
                            .map(|r| r.iter().map(|v| v.map(cast)).collect::<Vec<_>>())
                    });
                    Arc::new(ListArray::from_iter_primitive::<$t, _, _>(it)) as ArrayRef
                } else {
                    // One value per row: a row's first element, a null row or an empty one null.
                    let it = rows.iter().map(|r| {
                        r.as_ref()
                            .and_then(|r| r.first().copied().flatten())
                            .map(cast)
                    });
                    Arc::new(it.collect::<PrimitiveArray<$t>>()) as ArrayRef
                }
            }};
        }
        match ty % 4 {
            0 => build!(Int16Type),
            1 => build!(Int32Type),
            2 => build!(UInt32Type),
            _ => build!(Int64Type),
        }
    }

    fn scanned(p: Part) -> (Dtype, RangeResult, Layout) {
        match p.data {
            Data::Scanned { dtype, result } => (dtype, result, p.layout),
            Data::Values(_) => panic!("parts of columns are scanned as they are read"),
        }
    }

    fn opts() -> ScanOptions {
        ScanOptions {
            bounds: Bounds::new(0, 20),
            ignore: vec![7],
            limit: 5,
            ..ScanOptions::default()
        }
    }

    /// What the Arrow path makes of the column, batch by batch.
    fn via_arrow(col: &ArrayRef, batch: usize, opts: &ScanOptions) -> (Dtype, RangeResult, Layout) {
        let list = is_list(col.data_type());
        let mut b = ColumnBuilder::new(list, opts);
        let mut at = 0;
        while at < col.len() {
            let n = batch.min(col.len() - at);
            b.push(&col.slice(at, n)).expect("arrow batch");
            at += n;
        }
        scanned(b.finish("c".into(), String::new(), InputFormat::ArrowFile))
    }

    fn via_parquet(
        col: &ArrayRef,
        group: usize,
        dict: bool,
        dir: &Path,
        opts: &ScanOptions,
    ) -> (Dtype, RangeResult, Layout) {
        let batch = RecordBatch::try_from_iter([("c", col.clone())]).expect("batch");
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(group))
            .set_dictionary_enabled(dict)
            .set_data_page_row_count_limit(2)
            .set_write_batch_size(2)
            .build();
        let path = dir.join("c.parquet");
        let file = std::fs::File::create(&path).expect("create");
        let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).expect("writer");
        w.write(&batch).expect("write");
        w.close().expect("close");
        let bytes = Arc::new(Bytes::Heap(std::fs::read(&path).expect("read")));
        let input = Input { path: &path, bytes };
        let mut parts = Parquet.read(&input, opts).expect("parquet reads");
        assert_eq!(parts.len(), 1);
        scanned(parts.remove(0))
    }

    /// The values each row holds as the model says: nulls skipped, a
    /// scalar column's row its first element; `uint32` wraps negatives.
    fn model(rows: &Rows, list: bool, ty: u8) -> Vec<Vec<i64>> {
        let wrap = |v: i64| if ty % 4 == 2 { i64::from(v as u32) } else { v };
        rows.iter()
            .map(|r| {
                let r = r.as_deref().unwrap_or(&[]);
                let r = if list { r } else { &r[..r.len().min(1)] };
                r.iter().flatten().map(|&v| wrap(v)).collect()
            })
            .collect()
    }

    fn rows() -> impl Strategy<Value = Rows> {
        let value = prop::option::weighted(0.9, -3i64..25);
        let row = prop::option::weighted(0.85, prop::collection::vec(value, 0..6));
        prop::collection::vec(row, 0..40)
    }

    #[test]
    fn more_row_groups_than_an_i16_counts_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let col: ArrayRef = Arc::new(PrimitiveArray::<Int64Type>::from(vec![1, 2, 99]));
        let batch = RecordBatch::try_from_iter([("c", col)]).expect("batch");
        let path = dir.path().join("c.parquet");
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&path).expect("create"),
            batch.schema(),
            None,
        )
        .expect("writer");
        w.write(&batch).expect("write");
        w.close().expect("close");
        const GROUPS: usize = 40_000;
        let bytes = footer::tests::repeat_groups(&std::fs::read(&path).expect("read"), GROUPS);
        let input = Input {
            path: &path,
            bytes: Arc::new(Bytes::Heap(bytes)),
        };
        let o = ScanOptions {
            bounds: Bounds::new(0, 50),
            ..ScanOptions::default()
        };
        let mut parts = Parquet.read(&input, &o).expect("40,000 row groups read");
        let (_, result, _) = scanned(parts.remove(0));
        assert_eq!(result.scanned, 3 * GROUPS as u64);
        assert_eq!(result.bad, GROUPS as u64);
        assert_eq!(result.bad_values.get(&99), Some(&(GROUPS as u64)));
        // The first bad value: the first row group's third.
        assert_eq!(result.first[0], (2, 99));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Levels turned into rows, nulls skipped, row groups and pages joined:
        /// the same result and the same places as the Arrow batches give.
        #[test]
        fn parquet_reads_as_the_arrow_batches_do(
            rows in rows(),
            list in any::<bool>(),
            ty in any::<u8>(),
            group in 1usize..9,
            dict in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().expect("tempdir");
            let col = column(&rows, list, ty);
            let o = opts();
            let parquet = via_parquet(&col, group, dict, dir.path(), &o);
            prop_assert_eq!(&parquet, &via_arrow(&col, 3, &o));
            let (_, result, layout) = parquet;
            // And both as the model says.
            let rows = model(&rows, list, ty);
            let flat: Vec<i64> = rows.iter().flatten().copied().collect();
            let kept: Vec<i64> = flat.iter().copied().filter(|v| !o.ignore.contains(v)).collect();
            let bad: Vec<(u64, i64)> = flat.iter().enumerate()
                .filter(|(_, v)| !o.ignore.contains(v) && !o.bounds.contains(**v))
                .map(|(i, &v)| (i as u64, v))
                .collect();
            prop_assert_eq!(result.scanned, flat.len() as u64);
            prop_assert_eq!((result.min, result.max), (kept.iter().min().copied(), kept.iter().max().copied()));
            prop_assert_eq!(result.bad, bad.len() as u64);
            prop_assert_eq!(&result.first[..], &bad[..bad.len().min(o.limit)]);
            if let Layout::Rows { offsets } = &layout {
                let mut ends = vec![0u64];
                ends.extend(rows.iter().scan(0u64, |at, r| { *at += r.len() as u64; Some(*at) }));
                prop_assert_eq!(offsets, &ends);
            } else {
                prop_assert!(rows.iter().all(|r| r.len() == 1), "one value per row without offsets");
            }
        }
    }
}
