//! Parquet: the chosen column (integers or lists of integers) decoded
//! through arrow, only that column read, row groups decoded in parallel.

use super::arrow::{choose_column, is_list, type_name, ColumnBuilder};
use super::{Input, Reader};
use crate::error::{bad, Result};
use crate::options::{InputFormat, ScanOptions};
use crate::values::Part;
use devassert_core::contain::contain;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use rayon::prelude::*;

pub struct Parquet;

fn panicked(message: String) -> crate::error::ScanError {
    bad(format!(
        "corrupt Parquet data (parquet could not decode it: {message})"
    ))
}

impl Reader for Parquet {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let open = || std::fs::File::open(input.path);
        // parquet (and the arrow-ipc schema it embeds) can panic on corrupt
        // metadata and pages; see devassert_core::contain.
        let file = open()?;
        let meta = contain(|| ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()))
            .map_err(panicked)?
            .map_err(|e| bad(format!("not a readable Parquet file: {e}")))?;
        let schema = meta.schema().clone();
        let col = choose_column(&schema, opts)?;
        let field = schema.field(col).clone();
        let list = is_list(field.data_type());
        let groups = meta.metadata().num_row_groups();
        let pieces: Vec<Result<ColumnBuilder>> = (0..groups)
            .into_par_iter()
            .map(|g| {
                contain(|| -> Result<ColumnBuilder> {
                    let builder =
                        ParquetRecordBatchReaderBuilder::new_with_metadata(open()?, meta.clone());
                    let mask = ProjectionMask::roots(builder.parquet_schema(), [col]);
                    let reader = builder
                        .with_projection(mask)
                        .with_row_groups(vec![g])
                        .with_batch_size(64 * 1024)
                        .build()
                        .map_err(|e| {
                            bad(format!("cannot read Parquet column {}: {e}", field.name()))
                        })?;
                    let mut b = ColumnBuilder::new(list);
                    for batch in reader {
                        let batch = batch.map_err(|e| {
                            bad(format!(
                                "row group {g}: truncated or corrupt Parquet data: {e}"
                            ))
                        })?;
                        b.push(batch.column(0))?;
                    }
                    Ok(b)
                })
                .map_err(panicked)?
            })
            .collect();
        let pieces = pieces.into_iter().collect::<Result<Vec<_>>>()?;
        let all = ColumnBuilder::concat_all(list, pieces)?;
        Ok(vec![all.finish(
            field.name().clone(),
            type_name(field.data_type()),
            InputFormat::Parquet,
        )])
    }
}
