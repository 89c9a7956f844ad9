//! CSV and TSV: one integer column, chosen by `--column` (a header name or
//! a 0-based index); rows are data rows after the header, counted from 0.
//!
//! Read field by field with `csv-core` into fixed buffers, so no cell is
//! ever held whole (a 1 GiB cell took 4.2 GB as a record): a cell of the
//! column longer than any integer is an error quoting its start, other
//! columns' cells are skipped as they are read, and the values are scanned
//! a batch at a time.

use super::column_builder::ColumnBuilder;
use super::reader::{Input, Reader};
use crate::dtype::Dtype;
use crate::error::{bad, excerpt, Result};
use crate::format::InputFormat;
use crate::mapped::{Bytes, DropBehind};
use crate::options::{ScanOptions, Target};
use crate::values::Part;
use csv_core::ReadFieldResult;

pub struct Csv {
    pub delimiter: u8,
}

/// Bytes of a cell kept: an integer with any padding fits; a longer cell
/// is quoted by its start.
const CELL: usize = 256;

/// Bytes of header names kept in all (for choosing the column and naming
/// the columns in a message).
const HEADER_BYTES: usize = 1 << 20;

/// Values scanned at a time.
const BATCH: usize = 1 << 16;

/// One field as read: its first [`CELL`] bytes, and whether it was longer.
struct Cell {
    buf: [u8; CELL],
    len: usize,
    long: bool,
}

impl Cell {
    fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.buf[..self.len])
    }
}

/// The fields of `data`, one at a time.
struct Fields<'a> {
    reader: csv_core::Reader,
    data: &'a [u8],
    at: usize,
    cell: Cell,
    /// The map's pages read past, dropped as the fields are read.
    behind: DropBehind<'a>,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a Bytes, delimiter: u8) -> Self {
        let data = bytes.as_slice();
        // The csv crate drops a UTF-8 byte order mark before the header.
        let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
        Fields {
            reader: csv_core::ReaderBuilder::new().delimiter(delimiter).build(),
            behind: DropBehind::new(bytes, data),
            data,
            at: 0,
            cell: Cell {
                buf: [0; CELL],
                len: 0,
                long: false,
            },
        }
    }

    /// The next field into `self.cell`, and whether it ends its record;
    /// `None` at the end of the data.
    fn next(&mut self) -> Option<bool> {
        self.cell.len = 0;
        self.cell.long = false;
        loop {
            let (res, nin, nout) = self
                .reader
                .read_field(&self.data[self.at..], &mut self.cell.buf[self.cell.len..]);
            self.at += nin;
            self.behind.reached(self.at);
            self.cell.len += nout;
            match res {
                ReadFieldResult::InputEmpty => {}
                ReadFieldResult::OutputFull => {
                    // Keep the start, skip the rest of the cell.
                    self.cell.long = true;
                    let (res, nin) = self.skip_rest();
                    self.at += nin;
                    return match res {
                        ReadFieldResult::Field { record_end } => Some(record_end),
                        _ => None,
                    };
                }
                ReadFieldResult::Field { record_end } => return Some(record_end),
                ReadFieldResult::End => return None,
            }
        }
    }

    /// Read on to the end of an overlong field through a scratch buffer.
    fn skip_rest(&mut self) -> (ReadFieldResult, usize) {
        let mut scratch = [0u8; 4096];
        let mut read = 0;
        loop {
            let (res, nin, _) = self
                .reader
                .read_field(&self.data[self.at + read..], &mut scratch);
            read += nin;
            self.behind.reached(self.at + read);
            match res {
                ReadFieldResult::OutputFull | ReadFieldResult::InputEmpty => {}
                other => return (other, read),
            }
        }
    }
}

impl Reader for Csv {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let mut fields = Fields::new(&input.bytes, self.delimiter);
        let mut names: Vec<String> = Vec::new();
        let (mut columns, mut kept) = (0usize, 0usize);
        while let Some(end) = fields.next() {
            columns += 1;
            if kept < HEADER_BYTES {
                let name = fields.cell.text().into_owned();
                kept += name.len();
                names.push(name);
            }
            if end {
                break;
            }
        }
        if columns == 0 {
            return Err(bad("cannot read the header row: the file is empty"));
        }
        let listed = || excerpt(&names.join(", ")).into_owned();
        let col = match &opts.column {
            Some(c) => names
                .iter()
                .position(|h| h == c)
                .or_else(|| c.parse::<usize>().ok().filter(|&i| i < columns)),
            None => {
                let usual: &[&str] = match opts.target {
                    Target::Tokens => &["input_ids", "token_id", "token", "id"],
                    Target::Labels => &[
                        "label",
                        "labels",
                        "class",
                        "class_id",
                        "target",
                        "species_id",
                    ],
                };
                usual.iter().find_map(|u| names.iter().position(|h| h == u))
            }
        };
        let col = col.ok_or_else(|| match &opts.column {
            Some(c) => bad(format!("no column {c:?} (columns: {})", listed())),
            None => bad(format!(
                "pass --column to choose a column (columns: {})",
                listed()
            )),
        })?;
        let name = names.get(col).cloned().unwrap_or_else(|| col.to_string());
        let mut builder = ColumnBuilder::new(false, opts);
        let mut batch: Vec<i64> = Vec::with_capacity(BATCH);
        let (mut row, mut field) = (0u64, 0usize);
        let mut value = None;
        while let Some(end) = fields.next() {
            if field == col {
                let cell = &fields.cell;
                let text = cell.text();
                let v = text.trim().parse::<i64>().ok().filter(|_| !cell.long);
                let v = v.ok_or_else(|| {
                    let more = if cell.long { "…" } else { "" };
                    bad(format!(
                        "row {row}, column {}: \"{}{more}\" is not an integer",
                        excerpt(&name),
                        excerpt(text.trim())
                    ))
                })?;
                value = Some(v);
            }
            field += 1;
            if !end {
                continue;
            }
            if field != columns {
                return Err(bad(format!(
                    "row {row}: found a record with {field} fields, but the header has {columns}"
                )));
            }
            batch.extend(value.take());
            if batch.len() == BATCH {
                builder.push_decoded(bytemuck::cast_slice(&batch), Dtype::I64, Dtype::I64, None)?;
                batch.clear();
            }
            (row, field) = (row + 1, 0);
        }
        builder.push_decoded(bytemuck::cast_slice(&batch), Dtype::I64, Dtype::I64, None)?;
        let format = if self.delimiter == b'\t' {
            InputFormat::Tsv
        } else {
            InputFormat::Csv
        };
        Ok(vec![builder.finish(name, "int".into(), format)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::{Data, Layout};
    use std::path::Path;
    use std::sync::Arc;

    fn read(text: &[u8], column: Option<&str>) -> Result<Part> {
        let input = Input {
            path: Path::new("t.csv"),
            bytes: Arc::new(Bytes::Heap(text.to_vec())),
        };
        let opts = ScanOptions {
            bounds: crate::Bounds::new(0, 10),
            column: column.map(str::to_string),
            target: Target::Labels,
            ..ScanOptions::default()
        };
        Csv { delimiter: b',' }
            .read(&input, &opts)
            .map(|mut p| p.remove(0))
    }

    #[test]
    fn quoted_cells_long_cells_elsewhere_and_batches() {
        let mut text = b"\xEF\xBB\xBFtext,label\n\"a, \"\"b\"\"\",3\n".to_vec();
        text.extend(b"\"");
        text.extend(vec![b'x'; 100_000]);
        text.extend(b"\", 12 \r\n\n");
        for i in 0..BATCH + 3 {
            text.extend(format!("t,{}\n", i % 10).bytes());
        }
        let p = read(&text, None).expect("read");
        assert_eq!(p.name.as_deref(), Some("label"));
        assert_eq!(p.layout, Layout::Scalars);
        let Data::Scanned { result, .. } = &p.data else {
            panic!("scanned")
        };
        assert_eq!(result.scanned, BATCH as u64 + 5);
        assert_eq!(result.first, vec![(1, 12)]);
    }

    #[test]
    fn a_huge_cell_of_the_column_is_quoted_by_its_start() {
        let mut text = b"label\n1\n".to_vec();
        text.extend(vec![b'9'; 1 << 20]);
        text.push(b'\n');
        let e = read(&text, None).err().expect("not an integer").to_string();
        assert!(e.starts_with("row 1, column label: \"999"), "{e}");
        assert!(e.len() < 400, "{e}");
    }

    #[test]
    fn ragged_rows_and_missing_columns_are_named() {
        let e = read(b"a,label\n1,2\n3\n", None).err().expect("ragged");
        assert_eq!(
            e.to_string(),
            "row 1: found a record with 1 fields, but the header has 2"
        );
        let e = read(b"a,b\n1,2\n", Some("c")).err().expect("no column");
        assert_eq!(e.to_string(), "no column \"c\" (columns: a, b)");
        assert_eq!(
            read(b"a,b\n1,2\n", Some("1"))
                .expect("index")
                .name
                .as_deref(),
            Some("b")
        );
    }
}
