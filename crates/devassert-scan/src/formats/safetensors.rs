//! safetensors: an 8-byte little-endian header length, a JSON header
//! (`name → {dtype, shape, data_offsets}`), then the tensors. Integer
//! tensors are scanned; `--tensor NAME` picks one.

use super::reader::{element_count, Input, Reader};
use crate::dtype::Dtype;
use crate::error::{bad, excerpt, Result, ScanError};
use crate::format::InputFormat;
use crate::options::ScanOptions;
use crate::safetensors_header::{header_len, parse_header, HeaderError};
use crate::values::{Layout, Part, Values};

pub struct Safetensors;

/// The shared parser's error in the words scan has always used.
fn scan_error(e: HeaderError, file_len: usize) -> ScanError {
    match e {
        HeaderError::TooShort { .. } => bad("truncated: safetensors needs an 8-byte header length"),
        HeaderError::LengthPastEnd { len, .. } | HeaderError::LengthOverLimit { len } => bad(format!(
            "safetensors header length {len} exceeds the file ({file_len} bytes): truncated or not safetensors"
        )),
        HeaderError::NotJson(e) => bad(format!("safetensors header is not valid JSON: {e}")),
        HeaderError::OffsetsPastData {
            name,
            begin,
            end,
            data_len,
        } => bad(format!(
            "truncated: tensor {name} spans bytes {begin}..{end}, the data holds {data_len}"
        )),
        HeaderError::SizeMismatch {
            name,
            dtype,
            shape,
            want: Some(want),
            span,
        } => bad(format!(
            "tensor {name}: shape {shape:?} of {dtype} needs {want} bytes, offsets give {span}"
        )),
        HeaderError::SizeMismatch {
            name,
            shape,
            want: None,
            ..
        } => bad(format!("tensor {name}: shape {shape:?} overflows")),
        other => bad(other.to_string()),
    }
}

impl Reader for Safetensors {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let data = input.data();
        let n = header_len(data, data.len() as u64).map_err(|e| scan_error(e, data.len()))?;
        let body_start = 8 + n as usize;
        let body_len = (data.len() - body_start) as u64;
        let header =
            parse_header(&data[8..body_start], body_len).map_err(|e| scan_error(e, data.len()))?;
        let mut parts = Vec::new();
        let mut seen = Vec::new();
        for info in header {
            let name = info.name;
            seen.push(format!("{name} ({})", info.dtype));
            if opts.tensor.as_deref().is_some_and(|t| t != name) {
                continue;
            }
            let dtype = match info.dtype.as_str() {
                "U8" => Dtype::U8,
                "I8" => Dtype::I8,
                "U16" => Dtype::U16,
                "I16" => Dtype::I16,
                "U32" => Dtype::U32,
                "I32" => Dtype::I32,
                "U64" => Dtype::U64,
                "I64" => Dtype::I64,
                other if opts.tensor.is_some() => {
                    return Err(bad(format!(
                        "tensor {name} is {other}, not an integer tensor"
                    )))
                }
                _ => continue,
            };
            // The parser checked the offsets against the shape and the data.
            let a = info.begin;
            let count = element_count(&info.shape)?;
            let values = Values {
                bytes: input.bytes.clone(),
                start: body_start + a as usize,
                len: count as usize,
                dtype,
                big_endian: false,
            };
            parts.push(Part {
                name: Some(name),
                format: InputFormat::Safetensors,
                dtype_label: info.dtype,
                data: values.into(),
                layout: Layout::Shape {
                    dims: info.shape.clone(),
                    fortran: false,
                },
                shape: Some(info.shape),
            });
        }
        if parts.is_empty() {
            return Err(match &opts.tensor {
                Some(t) => bad(format!(
                    "no tensor {t:?} (tensors: {})",
                    excerpt(&seen.join(", "))
                )),
                None => bad(format!("no integer tensors (tensors: {})", seen.join(", "))),
            });
        }
        Ok(parts)
    }
}
