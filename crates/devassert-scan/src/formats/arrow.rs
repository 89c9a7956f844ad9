//! Arrow IPC, file (`ARROW1`) and stream (the Hugging Face `datasets`
//! cache, `data-*.arrow`); and the column extraction Parquet shares.
//! Integer columns and list<integer> columns, chosen by `--column`.

use super::{ipc, Input, Reader};
use crate::error::{bad, Result};
use crate::options::Dtype;
use crate::options::{InputFormat, ScanOptions, Target};
use crate::values::{Bytes, Layout, Part, Values};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema};
use std::sync::Arc;

pub struct Arrow;

impl Reader for Arrow {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let (format, (schema, batches)) = if input.data().starts_with(b"ARROW1") {
            (InputFormat::ArrowFile, ipc::file(&input.bytes)?)
        } else {
            (InputFormat::ArrowStream, ipc::stream(&input.bytes)?)
        };
        let col = choose_column(&schema, opts)?;
        Ok(vec![collect(&schema, col, batches, format)?])
    }
}

fn is_int(t: &DataType) -> bool {
    t.is_integer()
}

fn int_or_list(t: &DataType) -> bool {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            int_or_list(f.data_type())
        }
        t => is_int(t),
    }
}

/// The column to scan: `--column`, else the usual names for the target,
/// else the only integer column.
pub fn choose_column(schema: &Schema, opts: &ScanOptions) -> Result<usize> {
    let names: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{} ({})", f.name(), type_name(f.data_type())))
        .collect();
    if let Some(c) = &opts.column {
        let idx = schema.index_of(c).ok().or_else(|| {
            c.parse::<usize>()
                .ok()
                .filter(|&i| i < schema.fields().len())
        });
        let idx =
            idx.ok_or_else(|| bad(format!("no column {c:?} (columns: {})", names.join(", "))))?;
        if !int_or_list(schema.field(idx).data_type()) {
            return Err(bad(format!(
                "column {c:?} is {}, not integers or lists of integers",
                type_name(schema.field(idx).data_type())
            )));
        }
        return Ok(idx);
    }
    let usual: &[&str] = match opts.target {
        Target::Tokens => &["input_ids", "tokens", "token_ids", "ids"],
        Target::Labels => &["labels", "label", "target", "targets", "class", "class_id"],
    };
    for u in usual {
        if let Ok(i) = schema.index_of(u) {
            if int_or_list(schema.field(i).data_type()) {
                return Ok(i);
            }
        }
    }
    let ints: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| int_or_list(schema.field(i).data_type()))
        .collect();
    match ints.as_slice() {
        [only] => Ok(*only),
        _ => Err(bad(format!(
            "pass --column to choose a column (columns: {})",
            names.join(", ")
        ))),
    }
}

pub fn type_name(t: &DataType) -> String {
    match t {
        DataType::List(f) | DataType::LargeList(f) => format!("list<{}>", type_name(f.data_type())),
        DataType::FixedSizeList(f, n) => format!("list<{}, {n}>", type_name(f.data_type())),
        t => t.to_string().to_ascii_lowercase(),
    }
}

fn dtype_of(t: &DataType) -> Option<Dtype> {
    Some(match t {
        DataType::Int8 => Dtype::I8,
        DataType::Int16 => Dtype::I16,
        DataType::Int32 => Dtype::I32,
        DataType::Int64 => Dtype::I64,
        DataType::UInt8 => Dtype::U8,
        DataType::UInt16 => Dtype::U16,
        DataType::UInt32 => Dtype::U32,
        DataType::UInt64 => Dtype::U64,
        _ => return None,
    })
}

/// Append elements `range` of the integer array `a` as little-endian bytes,
/// the valid ones only; returns how many were appended.
fn append(a: &dyn Array, range: std::ops::Range<usize>, out: &mut Vec<u8>) -> Option<usize> {
    macro_rules! prim {
        ($t:ty) => {{
            let p = a.as_primitive_opt::<$t>()?;
            let vals = &p.values()[range.clone()];
            if p.null_count() == 0 {
                out.extend_from_slice(bytemuck::cast_slice(vals));
                Some(vals.len())
            } else {
                let mut n = 0;
                for (i, v) in range.clone().zip(vals) {
                    if p.is_valid(i) {
                        out.extend_from_slice(&v.to_le_bytes());
                        n += 1;
                    }
                }
                Some(n)
            }
        }};
    }
    match a.data_type() {
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        _ => None,
    }
}

/// Gathers a column over record batches into native-typed values and, for
/// lists or columns with nulls, row offsets.
pub struct ColumnBuilder {
    bytes: Vec<u8>,
    dtype: Option<Dtype>,
    count: u64,
    rows: u64,
    /// Start of each row and the end; kept only once a row is not exactly one value.
    offsets: Option<Vec<u64>>,
    list: bool,
}

impl ColumnBuilder {
    pub fn new(list: bool) -> Self {
        ColumnBuilder {
            bytes: Vec::new(),
            dtype: None,
            count: 0,
            rows: 0,
            offsets: if list { Some(vec![0]) } else { None },
            list,
        }
    }

    fn offsets(&mut self) -> &mut Vec<u64> {
        let rows = self.rows;
        self.offsets.get_or_insert_with(|| (0..=rows).collect())
    }

    fn set_dtype(&mut self, t: &DataType) -> Result<()> {
        let d = dtype_of(t)
            .ok_or_else(|| bad(format!("column holds {}, not integers", type_name(t))))?;
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

    pub fn push(&mut self, col: &ArrayRef) -> Result<()> {
        let not_int = || {
            bad(format!(
                "column holds {}, not integers",
                type_name(col.data_type())
            ))
        };
        if !self.list {
            self.set_dtype(col.data_type())?;
            let n = append(col.as_ref(), 0..col.len(), &mut self.bytes).ok_or_else(not_int)? as u64;
            if col.null_count() > 0 {
                let mut at = self.count;
                for i in 0..col.len() {
                    at += col.is_valid(i) as u64;
                    self.offsets().push(at);
                }
            } else if let Some(o) = self.offsets.as_mut() {
                o.extend((1..=n).map(|k| self.count + k));
            }
            self.count += n;
            self.rows += col.len() as u64;
            return Ok(());
        }
        // Lists: each row's slice of the child values, null rows empty.
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
            _ => return Err(not_int()),
        };
        self.set_dtype(child.data_type())?;
        let (first, last) = (
            starts.first().copied().unwrap_or(0),
            starts.last().copied().unwrap_or(0),
        );
        if last > child.len() || starts.windows(2).any(|w| w[1] < w[0]) {
            return Err(bad("corrupt list offsets"));
        }
        if col.null_count() == 0 && child.null_count() == 0 {
            append(child.as_ref(), first..last, &mut self.bytes).ok_or_else(not_int)?;
            let base = self.count;
            self.offsets()
                .extend(starts[1..].iter().map(|&o| base + (o - first) as u64));
            self.count += (last - first) as u64;
        } else {
            for row in 0..starts.len() - 1 {
                if col.is_valid(row) {
                    self.count += append(
                        child.as_ref(),
                        starts[row]..starts[row + 1],
                        &mut self.bytes,
                    )
                    .ok_or_else(not_int)? as u64;
                }
                let at = self.count;
                self.offsets().push(at);
            }
        }
        self.rows += (starts.len() - 1) as u64;
        Ok(())
    }

    /// The pieces' rows one after another, copied once into one buffer of
    /// the final size (growing it piece by piece copied the column again).
    pub fn concat_all(list: bool, pieces: Vec<ColumnBuilder>) -> Result<ColumnBuilder> {
        let mut all = ColumnBuilder::new(list);
        all.bytes
            .reserve_exact(pieces.iter().map(|p| p.bytes.len()).sum());
        for p in pieces {
            all.concat(p)?;
        }
        Ok(all)
    }

    /// Append another builder's rows after this one's.
    fn concat(&mut self, other: ColumnBuilder) -> Result<()> {
        if let Some(d) = other.dtype {
            match self.dtype {
                Some(old) if old != d => {
                    return Err(bad(format!(
                        "column changes type from {old} to {d} between row groups"
                    )))
                }
                _ => self.dtype = Some(d),
            }
        }
        if self.offsets.is_some() || other.offsets.is_some() {
            let base = self.count;
            let theirs: Vec<u64> = match other.offsets {
                Some(o) => o[1..].iter().map(|x| base + x).collect(),
                None => (1..=other.rows).map(|k| base + k).collect(),
            };
            self.offsets().extend(theirs);
        }
        self.bytes.extend_from_slice(&other.bytes);
        self.count += other.count;
        self.rows += other.rows;
        Ok(())
    }

    pub fn finish(self, name: String, dtype_label: String, format: InputFormat) -> Part {
        let dtype = self.dtype.unwrap_or(Dtype::I64);
        let layout = match self.offsets {
            Some(offsets) => Layout::Rows { offsets },
            None => Layout::Scalars,
        };
        let values = Values {
            bytes: Arc::new(Bytes::Heap(self.bytes)),
            start: 0,
            len: self.count as usize,
            dtype,
            big_endian: false,
        };
        Part {
            name: Some(name),
            format,
            dtype_label,
            values,
            layout,
            shape: None,
        }
    }
}

pub fn is_list(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _)
    )
}

fn collect(
    schema: &Schema,
    col: usize,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    format: InputFormat,
) -> Result<Part> {
    let field = schema.field(col);
    let mut b = ColumnBuilder::new(is_list(field.data_type()));
    for batch in batches {
        b.push(batch?.column(col))?;
    }
    Ok(b.finish(field.name().clone(), type_name(field.data_type()), format))
}
