//! CSV and TSV: one integer column, chosen by `--column` (a header name or
//! a 0-based index); rows are data rows after the header, counted from 0.

use super::reader::{Input, Reader};
use crate::error::{bad, excerpt, Result};
use crate::format::InputFormat;
use crate::options::{ScanOptions, Target};
use crate::values::{Layout, Part, Values};

pub struct Csv {
    pub delimiter: u8,
}

impl Reader for Csv {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let mut r = csv::ReaderBuilder::new()
            .delimiter(self.delimiter)
            .flexible(false)
            .from_reader(input.data());
        let headers = r
            .headers()
            .map_err(|e| bad(format!("cannot read the header row: {e}")))?
            .clone();
        let names: Vec<&str> = headers.iter().collect();
        let col = match &opts.column {
            Some(c) => names
                .iter()
                .position(|h| h == c)
                .or_else(|| c.parse::<usize>().ok().filter(|&i| i < names.len())),
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
            Some(c) => bad(format!(
                "no column {c:?} (columns: {})",
                excerpt(&names.join(", "))
            )),
            None => bad(format!(
                "pass --column to choose a column (columns: {})",
                excerpt(&names.join(", "))
            )),
        })?;
        let name = names[col].to_string();
        let mut values = Vec::new();
        for (row, rec) in r.records().enumerate() {
            let rec = rec.map_err(|e| bad(format!("row {row}: {e}")))?;
            let cell = rec.get(col).unwrap_or("").trim();
            let v = cell.parse::<i64>().map_err(|_| {
                bad(format!(
                    "row {row}, column {}: \"{}\" is not an integer",
                    excerpt(&name),
                    excerpt(cell)
                ))
            })?;
            values.push(v);
        }
        let format = if self.delimiter == b'\t' {
            InputFormat::Tsv
        } else {
            InputFormat::Csv
        };
        Ok(vec![Part {
            name: Some(name),
            format,
            dtype_label: "int".into(),
            data: Values::from_i64(values).into(),
            layout: Layout::Scalars,
            shape: None,
        }])
    }
}
