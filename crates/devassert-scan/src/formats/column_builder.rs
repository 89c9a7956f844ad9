//! Scanning a chosen column as it is decoded, a batch at a time, from
//! Arrow arrays (IPC) or decoded values (Parquet, CSV, JSONL): the range
//! result and, for lists or columns with nulls, the row offsets.

use super::column_type::{dtype_of, type_name};
use crate::dtype::Dtype;
use crate::error::{bad, within_budget, Result};
use crate::format::InputFormat;
use crate::kernel;
use crate::options::ScanOptions;
use crate::range::RangeResult;
use crate::values::{Data, Layout, Part};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use std::sync::atomic::{AtomicU64, Ordering};

/// A dictionary-typed column (`pa.array(ids).dictionary_encode()`) as the
/// values its keys stand for, a batch at a time; any other column as it is.
fn plain(col: &ArrayRef) -> Result<ArrayRef> {
    let Some(d) = col.as_any_dictionary_opt() else {
        return Ok(col.clone());
    };
    let options = arrow_select::take::TakeOptions { check_bounds: true };
    arrow_select::take::take(d.values().as_ref(), d.keys(), Some(options))
        .map_err(|e| bad(format!("corrupt dictionary column: {e}")))
}

macro_rules! dispatch {
    ($a:expr, $prim:ident) => {
        match $a.data_type() {
            DataType::Int8 => $prim!(Int8Type),
            DataType::Int16 => $prim!(Int16Type),
            DataType::Int32 => $prim!(Int32Type),
            DataType::Int64 => $prim!(Int64Type),
            DataType::UInt8 => $prim!(UInt8Type),
            DataType::UInt16 => $prim!(UInt16Type),
            DataType::UInt32 => $prim!(UInt32Type),
            DataType::UInt64 => $prim!(UInt64Type),
            _ => None,
        }
    };
}

/// Append the valid elements `range` of the integer array `a` to `out` as
/// little-endian bytes; returns how many. `None` when `a` holds no integers.
fn append(a: &dyn Array, range: std::ops::Range<usize>, out: &mut Vec<u8>) -> Option<usize> {
    macro_rules! prim {
        ($t:ty) => {{
            let p = a.as_primitive_opt::<$t>()?;
            let vals = &p.values()[range.clone()];
            let before = out.len();
            for (i, v) in range.clone().zip(vals) {
                if p.is_valid(i) {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            Some((out.len() - before) / std::mem::size_of::<<$t as ArrowPrimitiveType>::Native>())
        }};
    }
    dispatch!(a, prim)
}

/// Elements `range` of the integer array `a`, which has no nulls, as bytes:
/// its own buffer, not a copy.
fn dense_bytes(a: &dyn Array, range: std::ops::Range<usize>) -> Option<&[u8]> {
    macro_rules! prim {
        ($t:ty) => {{
            let p = a.as_primitive_opt::<$t>()?;
            Some(bytemuck::cast_slice(&p.values()[range.clone()]))
        }};
    }
    dispatch!(a, prim)
}

fn not_int(t: &DataType) -> crate::error::ScanError {
    bad(format!("column holds {}, not integers", type_name(t)))
}

/// Scans a column record batch by record batch as it is decoded, keeping
/// only the result and, for lists or columns with nulls, the row offsets:
/// the column itself is never copied out whole.
pub struct ColumnBuilder<'o> {
    opts: &'o ScanOptions,
    result: RangeResult,
    scratch: Vec<u8>,
    dtype: Option<Dtype>,
    count: u64,
    rows: u64,
    /// Start of each row and the end; kept only once a row is not exactly one value.
    offsets: Option<Vec<u64>>,
    list: bool,
    /// Bytes the row offsets may take: the decode budget, or twice the
    /// file where the file is bigger (its own offsets or validity bits
    /// justify that much). Rows cost nothing to store in a Parquet file
    /// (a run of empty lists or nulls is a few bytes), so a tiny file may
    /// state a billion rows.
    row_bytes: u64,
    /// Rows kept by all the builders of one file (Parquet's row groups are
    /// read in parallel, each into its own builder).
    kept: Option<&'o AtomicU64>,
}

impl<'o> ColumnBuilder<'o> {
    pub fn new(list: bool, opts: &'o ScanOptions) -> Self {
        ColumnBuilder {
            opts,
            result: RangeResult::default(),
            scratch: Vec::new(),
            dtype: None,
            count: 0,
            rows: 0,
            offsets: if list { Some(vec![0]) } else { None },
            list,
            row_bytes: opts.decode_budget,
            kept: None,
        }
    }

    /// Count the rows kept against `kept`, shared with the file's other builders.
    pub fn sharing(mut self, kept: &'o AtomicU64) -> Self {
        self.kept = Some(kept);
        self
    }

    /// Allow the row offsets of an input of `len` bytes (see `row_bytes`).
    pub fn for_input(mut self, len: u64) -> Self {
        self.row_bytes = self.row_bytes.max(len.saturating_mul(2));
        self
    }

    /// Refuse `rows` more rows when their offsets would pass `row_bytes`:
    /// `keeps` when their offsets will be kept, `scratch` offsets held
    /// besides for one batch.
    fn room_for_rows(&self, rows: u64, keeps: bool, scratch: u64) -> Result<()> {
        let keeps = keeps || self.offsets.is_some() || self.list;
        let kept = match (keeps, self.kept) {
            (false, _) => 0,
            (true, None) => self.rows.saturating_add(rows),
            (true, Some(all)) => {
                // The rows read before offsets were needed are kept from now on too.
                let new = rows.saturating_add(if self.offsets.is_none() { self.rows } else { 0 });
                all.fetch_add(new, Ordering::Relaxed).saturating_add(new)
            }
        };
        let needed = kept.saturating_add(scratch).saturating_mul(8);
        if needed <= self.row_bytes {
            return Ok(());
        }
        within_budget(
            &format!("a row index of {kept} rows"),
            needed,
            self.row_bytes,
        )
    }

    fn offsets(&mut self) -> &mut Vec<u64> {
        let rows = self.rows;
        self.offsets.get_or_insert_with(|| (0..=rows).collect())
    }

    fn set_dtype(&mut self, t: &DataType) -> Result<Dtype> {
        let d = dtype_of(t).ok_or_else(|| not_int(t))?;
        self.check_dtype(d)?;
        Ok(d)
    }

    fn check_dtype(&mut self, d: Dtype) -> Result<()> {
        match self.dtype {
            Some(old) if old != d => Err(bad(format!(
                "column changes type from {old} to {d} between batches"
            ))),
            _ => {
                self.dtype = Some(d);
                Ok(())
            }
        }
    }

    /// A batch decoded elsewhere (Parquet's column reader): its valid values
    /// as elements of `scan_as` (the stored type: `int32` holds an `int16`
    /// column), and where each row ends, counted in values from the batch's
    /// start (`None`: one value per row).
    pub fn push_decoded(
        &mut self,
        raw: &[u8],
        scan_as: Dtype,
        dtype: Dtype,
        row_ends: Option<&[u64]>,
    ) -> Result<()> {
        self.check_dtype(dtype)?;
        let rows = row_ends.map_or((raw.len() / scan_as.size()) as u64, |e| e.len() as u64);
        self.room_for_rows(rows, row_ends.is_some(), 0)?;
        self.add(raw, scan_as, row_ends);
        Ok(())
    }

    /// Scan `raw` as the values after those seen so far, and record its rows.
    fn add(&mut self, raw: &[u8], scan_as: Dtype, row_ends: Option<&[u64]>) {
        let o = self.opts;
        let r = kernel::scan_raw(raw, scan_as, false, o.bounds, &o.ignore, o.limit);
        let (base, n) = (self.count, r.scanned);
        self.result.absorb(r, base, o.limit);
        self.count += n;
        match row_ends {
            Some(ends) => {
                self.offsets().extend(ends.iter().map(|e| base + e));
                self.rows += ends.len() as u64;
            }
            None => {
                if let Some(o) = self.offsets.as_mut() {
                    o.extend((1..=n).map(|k| base + k));
                }
                self.rows += n;
            }
        }
    }

    /// One record batch's column: its values are scanned in place when it
    /// has no nulls, else its valid values are gathered first (a null row
    /// holds nothing, null elements are skipped).
    pub fn push(&mut self, col: &ArrayRef) -> Result<()> {
        let col = &plain(col)?;
        // A batch states its length; the rows it adds, and the starts and
        // ends held for it, are checked before any is built.
        let n = col.len() as u64;
        let keeps = self.list || col.null_count() > 0;
        self.room_for_rows(n, keeps, if keeps { 2 * n } else { 0 })?;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        if !self.list {
            let dtype = self.set_dtype(col.data_type())?;
            if col.null_count() == 0 {
                let raw = dense_bytes(col.as_ref(), 0..col.len());
                self.add(raw.ok_or_else(|| not_int(col.data_type()))?, dtype, None);
            } else {
                append(col.as_ref(), 0..col.len(), &mut buf)
                    .ok_or_else(|| not_int(col.data_type()))?;
                let mut at = 0;
                let ends: Vec<u64> = (0..col.len())
                    .map(|i| {
                        at += u64::from(col.is_valid(i));
                        at
                    })
                    .collect();
                self.add(&buf, dtype, Some(&ends));
            }
            self.scratch = buf;
            return Ok(());
        }
        let (child, starts): (ArrayRef, Vec<usize>) = match col.data_type() {
            DataType::List(_) => {
                let l = col.as_list::<i32>();
                (
                    l.values().clone(),
                    l.value_offsets().iter().map(|&o| o as usize).collect(),
                )
            }
            DataType::LargeList(_) => {
                let l = col.as_list::<i64>();
                (
                    l.values().clone(),
                    l.value_offsets().iter().map(|&o| o as usize).collect(),
                )
            }
            DataType::FixedSizeList(_, n) => {
                let l = col.as_fixed_size_list();
                let n = *n as usize;
                let base = l.offset() * n;
                (
                    l.values().clone(),
                    (0..=l.len()).map(|i| base + i * n).collect(),
                )
            }
            t => return Err(not_int(t)),
        };
        let dtype = self.set_dtype(child.data_type())?;
        let (first, last) = (
            starts.first().copied().unwrap_or(0),
            starts.last().copied().unwrap_or(0),
        );
        if last > child.len() || starts.windows(2).any(|w| w[1] < w[0]) {
            return Err(bad("corrupt list offsets"));
        }
        if col.null_count() == 0 && child.null_count() == 0 {
            let ends: Vec<u64> = starts[1..].iter().map(|&o| (o - first) as u64).collect();
            let raw = dense_bytes(child.as_ref(), first..last);
            self.add(
                raw.ok_or_else(|| not_int(child.data_type()))?,
                dtype,
                Some(&ends),
            );
        } else {
            let mut ends = Vec::with_capacity(starts.len() - 1);
            for (row, w) in starts.windows(2).enumerate() {
                if col.is_valid(row) {
                    append(child.as_ref(), w[0]..w[1], &mut buf)
                        .ok_or_else(|| not_int(child.data_type()))?;
                }
                ends.push((buf.len() / dtype.size()) as u64);
            }
            self.add(&buf, dtype, Some(&ends));
        }
        self.scratch = buf;
        Ok(())
    }

    /// The pieces' rows one after another (Parquet's row groups, scanned in parallel).
    pub fn concat_all(
        list: bool,
        opts: &'o ScanOptions,
        input_len: u64,
        pieces: Vec<ColumnBuilder<'o>>,
    ) -> Result<ColumnBuilder<'o>> {
        let mut all = ColumnBuilder::new(list, opts).for_input(input_len);
        for p in pieces {
            all.concat(p)?;
        }
        Ok(all)
    }

    /// Append another builder's rows after this one's.
    fn concat(&mut self, other: ColumnBuilder) -> Result<()> {
        if let Some(d) = other.dtype {
            self.check_dtype(d)?;
        }
        let base = self.count;
        if self.offsets.is_some() || other.offsets.is_some() {
            self.room_for_rows(other.rows, true, 0)?;
            let theirs: Vec<u64> = match other.offsets {
                Some(o) => o[1..].iter().map(|x| base + x).collect(),
                None => (1..=other.rows).map(|k| base + k).collect(),
            };
            self.offsets().extend(theirs);
        }
        self.result.absorb(other.result, base, self.opts.limit);
        self.count += other.count;
        self.rows += other.rows;
        Ok(())
    }

    pub fn finish(self, name: String, dtype_label: String, format: InputFormat) -> Part {
        let layout = match self.offsets {
            Some(offsets) => Layout::Rows { offsets },
            None => Layout::Scalars,
        };
        Part {
            name: Some(name),
            format,
            dtype_label,
            data: Data::Scanned {
                dtype: self.dtype.unwrap_or(Dtype::I64),
                result: self.result,
            },
            layout,
            shape: None,
        }
    }
}
