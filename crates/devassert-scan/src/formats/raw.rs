//! Raw token files: a flat run of little-endian integers (`--dtype`, u16 by
//! default), and llm.c's `.bin` with its 256 × int32 header.

use super::reader::{Input, Reader};
use crate::dtype::Dtype;
use crate::error::{bad, Result};
use crate::format::InputFormat;
use crate::options::ScanOptions;
use crate::values::{Layout, Part, Values};

pub const LLMC_MAGIC: i32 = 20240520;
const LLMC_HEADER_BYTES: usize = 256 * 4;

pub struct Raw;

impl Reader for Raw {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let dtype = opts.dtype.unwrap_or(Dtype::U16);
        let len = input.data().len();
        if len % dtype.size() != 0 {
            return Err(bad(format!(
                "{len} bytes is not a whole number of {dtype} values ({} bytes each): truncated, or a different --dtype?",
                dtype.size()
            )));
        }
        let values = Values {
            bytes: input.bytes.clone(),
            start: 0,
            len: len / dtype.size(),
            dtype,
            big_endian: false,
        };
        Ok(vec![Part {
            name: None,
            format: InputFormat::Raw,
            dtype_label: dtype.name().into(),
            data: values.into(),
            layout: Layout::Flat,
            shape: None,
        }])
    }
}

pub struct LlmC;

impl Reader for LlmC {
    fn read(&self, input: &Input<'_>, _opts: &ScanOptions) -> Result<Vec<Part>> {
        let data = input.data();
        if data.len() < LLMC_HEADER_BYTES {
            return Err(bad(format!(
                "llm.c header is 1024 bytes, file holds {}",
                data.len()
            )));
        }
        let word = |i: usize| {
            i32::from_le_bytes([
                data[4 * i],
                data[4 * i + 1],
                data[4 * i + 2],
                data[4 * i + 3],
            ])
        };
        let (magic, version, count) = (word(0), word(1), word(2));
        if magic != LLMC_MAGIC {
            return Err(bad(format!(
                "llm.c magic is {magic}, expected {LLMC_MAGIC}"
            )));
        }
        let dtype = match version {
            1 => Dtype::U16,
            2 => Dtype::U32,
            v => {
                return Err(bad(format!(
                    "llm.c version {v} is unknown (1 = uint16 tokens, 2 = uint32)"
                )))
            }
        };
        if count < 0 {
            return Err(bad(format!(
                "llm.c header token count is negative ({count})"
            )));
        }
        let body = (data.len() - LLMC_HEADER_BYTES) as u64;
        let want = count as u64 * dtype.size() as u64;
        if body != want {
            let what = if body < want {
                "truncated"
            } else {
                "longer than its header says"
            };
            return Err(bad(format!(
                "{what}: llm.c header says {count} {dtype} tokens ({want} bytes after the header), file holds {body} bytes"
            )));
        }
        let values = Values {
            bytes: input.bytes.clone(),
            start: LLMC_HEADER_BYTES,
            len: count as usize,
            dtype,
            big_endian: false,
        };
        Ok(vec![Part {
            name: None,
            format: InputFormat::LlmC,
            dtype_label: format!("{dtype} (llm.c v{version})"),
            data: values.into(),
            layout: Layout::Flat,
            shape: None,
        }])
    }
}
