//! Which column of an Arrow schema is scanned (`--column`, else the usual
//! names for the target, else the only integer column) and how its type is
//! named and stored; shared by the Arrow and Parquet readers.

use crate::dtype::Dtype;
use crate::error::{bad, excerpt, Result};
use crate::options::{ScanOptions, Target};
use arrow_schema::{DataType, Schema};

fn is_int(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, v) => v.is_integer(),
        t => t.is_integer(),
    }
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
        let idx = idx.ok_or_else(|| {
            bad(format!(
                "no column {c:?} (columns: {})",
                excerpt(&names.join(", "))
            ))
        })?;
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

pub fn dtype_of(t: &DataType) -> Option<Dtype> {
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

pub fn is_list(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _)
    )
}
