//! One row group's chunk of the chosen column: its pages checked against
//! the decode budget from their headers, then its values drained from
//! parquet's column reader batch by batch, rows told apart by the
//! repetition and definition levels.

use super::super::column_builder::ColumnBuilder;
use super::super::column_type::{dtype_of, is_list, type_name};
use super::pages;
use crate::dtype::Dtype;
use crate::error::{bad, within_budget, Result};
use crate::options::ScanOptions;
use arrow_schema::DataType;
use parquet::basic::Type as Physical;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::RowGroupReader;
use parquet::file::serialized_reader::SerializedRowGroupReader;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

fn corrupt(e: parquet::errors::ParquetError) -> crate::error::ScanError {
    bad(format!("truncated or corrupt Parquet data: {e}"))
}

/// Values per batch: enough to amortise a batch, few enough that a batch
/// and its levels stay in cache whatever the row length (a batch of 64 Ki
/// rows of 512-token lists held 128 MiB; 16 Ki to 256 Ki values measured
/// alike, 1 Mi slower).
const BATCH_VALUES: u64 = 64 * 1024;

/// Rows per batch for row group `rg`, from how many values its rows hold on
/// average (the metadata's word: only a size hint, never zero).
fn batch_rows(rg: &RowGroupMetaData, leaf: usize) -> usize {
    let rows = rg.num_rows().max(1) as u64;
    let values = match rg.columns().get(leaf) {
        Some(c) => c.num_values().max(0) as u64,
        None => rows,
    };
    let per_row = (values / rows).max(1);
    (BATCH_VALUES / per_row).max(1) as usize
}

/// The one leaf column that holds the chosen column's integers, and how to
/// read it.
pub(super) struct Column {
    leaf: usize,
    pub(super) list: bool,
    /// The type the column declares, and the stored one its values are
    /// scanned as (an `int16` column is stored as INT32, a `uint32` one as
    /// INT32 bit patterns).
    dtype: Dtype,
    scan_as: Dtype,
    max_def: i16,
    max_rep: i16,
}

impl Column {
    pub(super) fn new(
        meta: &ParquetMetaData,
        root: usize,
        t: &DataType,
    ) -> std::result::Result<Self, String> {
        let schema = meta.file_metadata().schema_descr();
        let leaves: Vec<usize> = (0..schema.num_columns())
            .filter(|&i| schema.get_column_root_idx(i) == root)
            .collect();
        let list = is_list(t);
        let inner = match t {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                f.data_type()
            }
            t => t,
        };
        // A dictionary-typed column (pyarrow's `dictionary_encode()`) is
        // stored as its values: Parquet's own dictionary pages.
        let inner = match inner {
            DataType::Dictionary(_, v) => v.as_ref(),
            t => t,
        };
        let unsupported = || {
            format!(
                "it holds {}; only integers and lists of integers are scanned",
                type_name(t)
            )
        };
        let dtype = dtype_of(inner).ok_or_else(unsupported)?;
        let [leaf] = leaves[..] else {
            return Err(format!("it is stored as {} columns, not one", leaves.len()));
        };
        let desc = schema.column(leaf);
        if desc.max_rep_level() != i16::from(list) {
            return Err(unsupported());
        }
        let scan_as = match (desc.physical_type(), dtype) {
            (Physical::INT32, Dtype::U32) => Dtype::U32,
            (Physical::INT32, d) if d.size() <= 4 => Dtype::I32,
            (Physical::INT64, Dtype::U64) => Dtype::U64,
            (Physical::INT64, _) => Dtype::I64,
            (p, _) => return Err(format!("its {dtype} values are stored as {p}")),
        };
        Ok(Column {
            leaf,
            list,
            dtype,
            scan_as,
            max_def: desc.max_def_level(),
            max_rep: desc.max_rep_level(),
        })
    }

    pub(super) fn read_group<'o>(
        &self,
        file: &Arc<bytes::Bytes>,
        meta: &ParquetMetaData,
        g: usize,
        opts: &'o ScanOptions,
        kept: &'o AtomicU64,
    ) -> Result<ColumnBuilder<'o>> {
        let rg = meta.row_group(g);
        self.check_pages(&file[..], rg, opts.decode_budget)?;
        let props = Arc::new(ReaderProperties::builder().build());
        let reader =
            SerializedRowGroupReader::new(Arc::clone(file), rg, None, props).map_err(corrupt)?;
        let batch = batch_rows(rg, self.leaf);
        let mut b = ColumnBuilder::new(self.list, opts)
            .for_input(file.len() as u64)
            .sharing(kept);
        match reader.get_column_reader(self.leaf).map_err(corrupt)? {
            ColumnReader::Int32ColumnReader(r) => self.drain(r, batch, &mut b)?,
            ColumnReader::Int64ColumnReader(r) => self.drain(r, batch, &mut b)?,
            _ => return Err(bad("the column's pages are not integers")),
        }
        Ok(b)
    }

    /// Every page of the chunk, beside its dictionary, fits the decode
    /// budget: checked from the page headers before parquet allocates any
    /// (see `pages`).
    fn check_pages(&self, data: &[u8], rg: &RowGroupMetaData, budget: u64) -> Result<()> {
        let chunk = rg
            .columns()
            .get(self.leaf)
            .ok_or_else(|| bad("the row group has no chunk for the column"))?;
        let start = chunk
            .dictionary_page_offset()
            .unwrap_or(chunk.data_page_offset());
        let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(chunk.compressed_size()))
        else {
            return Err(bad("the column chunk states a negative offset or size"));
        };
        let pages = pages::pages(data, start, len)
            .map_err(|e| bad(format!("truncated or corrupt Parquet data: {e}")))?;
        let dictionary: u64 = pages
            .iter()
            .filter(|p| p.dictionary)
            .map(|p| p.uncompressed)
            .sum();
        for (i, p) in pages.iter().enumerate() {
            let held = if p.dictionary { 0 } else { dictionary };
            within_budget(
                &format!("page {i} of the column (decompressed, with its dictionary)"),
                held.saturating_add(p.uncompressed),
                budget,
            )?;
        }
        Ok(())
    }

    /// Read the column chunk batch by batch into `b`.
    fn drain<T>(
        &self,
        mut r: ColumnReaderImpl<T>,
        batch: usize,
        b: &mut ColumnBuilder,
    ) -> Result<()>
    where
        T: parquet::data_type::DataType,
        T::T: bytemuck::Pod,
    {
        let (mut def, mut rep, mut values, mut ends) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        loop {
            def.clear();
            rep.clear();
            values.clear();
            let defs = (self.max_def > 0).then_some(&mut def);
            let reps = (self.max_rep > 0).then_some(&mut rep);
            let (records, _, levels) = r
                .read_records(batch, defs, reps, &mut values)
                .map_err(corrupt)?;
            if records == 0 && levels == 0 {
                return Ok(());
            }
            let row_ends = self.row_ends(&def, &rep, values.len(), &mut ends)?;
            b.push_decoded(
                bytemuck::cast_slice(&values),
                self.scan_as,
                self.dtype,
                row_ends,
            )?;
        }
    }

    /// Where each row of a batch ends, counted in values: a value is a level
    /// at the maximum definition level (lower: a null, an empty or a null
    /// list); a row starts at repetition level 0. `None` when every row is
    /// one value.
    fn row_ends<'e>(
        &self,
        def: &[i16],
        rep: &[i16],
        values: usize,
        ends: &'e mut Vec<u64>,
    ) -> Result<Option<&'e [u64]>> {
        ends.clear();
        if self.max_def == 0 || (self.max_rep == 0 && def.len() == values) {
            return Ok(None);
        }
        let mut at = 0u64;
        if self.max_rep == 0 {
            for &d in def {
                at += u64::from(d == self.max_def);
                ends.push(at);
            }
        } else {
            for (i, (&r, &d)) in rep.iter().zip(def).enumerate() {
                if r == 0 && i > 0 {
                    ends.push(at);
                }
                at += u64::from(d == self.max_def);
            }
            if !rep.is_empty() {
                ends.push(at);
            }
        }
        if at != values as u64 || (self.max_rep > 0 && rep.len() != def.len()) {
            return Err(bad(format!(
                "the levels promise {at} values, the pages hold {values}"
            )));
        }
        Ok(Some(ends))
    }
}
