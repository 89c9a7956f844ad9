//! Arrow IPC, file (`ARROW1`) and stream (the Hugging Face `datasets`
//! cache, `data-*.arrow`); and the column extraction Parquet shares.
//! Integer columns and list<integer> columns, chosen by `--column`.

use super::{Input, Reader};
use crate::error::{bad, Result};
use crate::options::{InputFormat, ScanOptions, Target};
use crate::values::{Layout, Part, Values};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Schema};

pub struct Arrow;

impl Reader for Arrow {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let data = input.data();
        let err = |e: ArrowError| bad(format!("not a readable Arrow IPC file: {e}"));
        if data.starts_with(b"ARROW1") {
            let r = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(data), None)
                .map_err(err)?;
            let schema = r.schema();
            let col = choose_column(&schema, opts)?;
            let part = collect(
                &schema,
                col,
                r.map(|b| b.map_err(|e| bad(format!("truncated or corrupt record batch: {e}")))),
                InputFormat::ArrowFile,
            )?;
            Ok(vec![part])
        } else {
            let r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(data), None)
                .map_err(err)?;
            let schema = r.schema();
            let col = choose_column(&schema, opts)?;
            let part = collect(
                &schema,
                col,
                r.map(|b| b.map_err(|e| bad(format!("truncated or corrupt record batch: {e}")))),
                InputFormat::ArrowStream,
            )?;
            Ok(vec![part])
        }
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

/// Integer values of a primitive array as i64, with validity.
fn ints(a: &dyn Array) -> Option<Vec<i64>> {
    macro_rules! prim {
        ($t:ty) => {
            a.as_primitive_opt::<$t>().map(|p| {
                p.values()
                    .iter()
                    .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
                    .collect()
            })
        };
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

/// Gathers a column over record batches into values and row offsets.
pub struct ColumnBuilder {
    values: Vec<i64>,
    offsets: Vec<u64>,
    list: bool,
    nulls: bool,
}

impl ColumnBuilder {
    pub fn new(list: bool) -> Self {
        ColumnBuilder {
            values: Vec::new(),
            offsets: vec![0],
            list,
            nulls: false,
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
            let v = ints(col.as_ref()).ok_or_else(not_int)?;
            for (i, x) in v.into_iter().enumerate() {
                if col.is_valid(i) {
                    self.values.push(x);
                } else {
                    self.nulls = true;
                }
                self.offsets.push(self.values.len() as u64);
            }
            return Ok(());
        }
        // Lists: each row's slice of the child values, nulls skipped.
        let (child, ranges): (ArrayRef, Vec<(usize, usize)>) = match col.data_type() {
            DataType::List(_) => {
                let l = col.as_list::<i32>();
                let o = l.value_offsets();
                (
                    l.values().clone(),
                    (0..l.len())
                        .map(|i| (o[i] as usize, o[i + 1] as usize))
                        .collect(),
                )
            }
            DataType::LargeList(_) => {
                let l = col.as_list::<i64>();
                let o = l.value_offsets();
                (
                    l.values().clone(),
                    (0..l.len())
                        .map(|i| (o[i] as usize, o[i + 1] as usize))
                        .collect(),
                )
            }
            DataType::FixedSizeList(_, n) => {
                let l = col.as_fixed_size_list();
                let n = *n as usize;
                let base = l.offset() * n;
                (
                    l.values().clone(),
                    (0..l.len())
                        .map(|i| (base + i * n, base + (i + 1) * n))
                        .collect(),
                )
            }
            _ => return Err(not_int()),
        };
        let v = ints(child.as_ref()).ok_or_else(not_int)?;
        for (row, (a, b)) in ranges.into_iter().enumerate() {
            if col.is_valid(row) {
                for j in a..b.min(v.len()) {
                    if child.is_valid(j) {
                        self.values.push(v[j]);
                    }
                }
            }
            self.offsets.push(self.values.len() as u64);
        }
        Ok(())
    }

    pub fn finish(self, name: String, dtype_label: String, format: InputFormat) -> Part {
        let layout = if self.list || self.nulls {
            Layout::Rows {
                offsets: self.offsets,
            }
        } else {
            Layout::Scalars
        };
        Part {
            name: Some(name),
            format,
            dtype_label,
            values: Values::from_i64(self.values),
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
