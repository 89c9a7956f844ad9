//! Parquet: the chosen column (integers or lists of integers) decoded
//! through arrow, only that column read.

use super::arrow::{choose_column, is_list, type_name, ColumnBuilder};
use super::{Input, Reader};
use crate::error::{bad, Result};
use crate::options::{InputFormat, ScanOptions};
use crate::values::Part;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

pub struct Parquet;

impl Reader for Parquet {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let file = std::fs::File::open(input.path)?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| bad(format!("not a readable Parquet file: {e}")))?;
        let schema = builder.schema().clone();
        let col = choose_column(&schema, opts)?;
        let field = schema.field(col).clone();
        let mask = ProjectionMask::roots(builder.parquet_schema(), [col]);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(64 * 1024)
            .build()
            .map_err(|e| bad(format!("cannot read Parquet column {}: {e}", field.name())))?;
        let mut b = ColumnBuilder::new(is_list(field.data_type()));
        for batch in reader {
            let batch =
                batch.map_err(|e| bad(format!("truncated or corrupt Parquet data: {e}")))?;
            b.push(batch.column(0))?;
        }
        Ok(vec![b.finish(
            field.name().clone(),
            type_name(field.data_type()),
            InputFormat::Parquet,
        )])
    }
}
