//! Arrow IPC, file (`ARROW1`) and stream (the Hugging Face `datasets`
//! cache, `data-*.arrow`). Integer columns and list<integer> columns, chosen
//! by `--column` (`column_type`), scanned batch by batch as IPC decodes them
//! (`column_builder`, which Parquet, CSV and JSONL share).

use super::column_builder::ColumnBuilder;
use super::column_type::{choose_column, is_list, type_name};
use super::ipc;
use super::reader::{Input, Reader};
use crate::error::Result;
use crate::format::InputFormat;
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::Part;
use arrow_array::RecordBatch;
use arrow_schema::Schema;

pub struct Arrow;

impl Reader for Arrow {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let (format, (schema, batches)) = if input.data().starts_with(b"ARROW1") {
            (
                InputFormat::ArrowFile,
                ipc::file(&input.bytes, opts.decode_budget)?,
            )
        } else {
            (
                InputFormat::ArrowStream,
                ipc::stream(&input.bytes, opts.decode_budget)?,
            )
        };
        let col = choose_column(&schema, opts)?;
        let part = collect(&schema, col, batches, format, opts, &input.bytes)?;
        Ok(vec![part])
    }
}

fn collect(
    schema: &Schema,
    col: usize,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    format: InputFormat,
    opts: &ScanOptions,
    input: &Bytes,
) -> Result<Part> {
    let field = schema.field(col);
    let len = input.as_slice().len() as u64;
    let mut b = ColumnBuilder::new(is_list(field.data_type()), opts).for_input(len);
    for batch in batches {
        let batch = batch?;
        b.push(batch.column(col))?;
        // The batch's buffers are slices of the map (IPC reads them in
        // place): read, their pages are handed back.
        for c in batch.columns() {
            drop_pages_of(input, &c.to_data());
        }
    }
    Ok(b.finish(field.name().clone(), type_name(field.data_type()), format))
}

/// Drop the mapped pages an array's buffers (and its children's) lie in.
fn drop_pages_of(input: &Bytes, data: &arrow_data::ArrayData) {
    for buf in data.buffers() {
        input.drop_pages(buf.as_slice());
    }
    if let Some(nulls) = data.nulls() {
        input.drop_pages(nulls.buffer().as_slice());
    }
    for child in data.child_data() {
        drop_pages_of(input, child);
    }
}
