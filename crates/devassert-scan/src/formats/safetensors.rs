//! safetensors: an 8-byte little-endian header length, a JSON header
//! (`name → {dtype, shape, data_offsets}`), then the tensors. Integer
//! tensors are scanned; `--tensor NAME` picks one.

use super::{element_count, Input, Reader};
use crate::error::{bad, Result};
use crate::options::{Dtype, InputFormat, ScanOptions};
use crate::values::{Layout, Part, Values};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A header larger than this is not a safetensors header (the format caps it at 100 MB).
const MAX_HEADER: u64 = 100 << 20;

pub struct Safetensors;

#[derive(Deserialize)]
struct TensorInfo {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: [u64; 2],
}

impl Reader for Safetensors {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let data = input.data();
        if data.len() < 8 {
            return Err(bad("truncated: safetensors needs an 8-byte header length"));
        }
        let mut n8 = [0u8; 8];
        n8.copy_from_slice(&data[..8]);
        let n = u64::from_le_bytes(n8);
        if n > MAX_HEADER || n > (data.len() - 8) as u64 {
            return Err(bad(format!("safetensors header length {n} exceeds the file ({} bytes): truncated or not safetensors", data.len())));
        }
        let body_start = 8 + n as usize;
        let header: BTreeMap<String, serde_json::Value> =
            serde_json::from_slice(&data[8..body_start])
                .map_err(|e| bad(format!("safetensors header is not valid JSON: {e}")))?;
        let body_len = (data.len() - body_start) as u64;
        let mut parts = Vec::new();
        let mut seen = Vec::new();
        for (name, value) in header {
            if name == "__metadata__" {
                continue;
            }
            let info: TensorInfo =
                serde_json::from_value(value).map_err(|e| bad(format!("tensor {name}: {e}")))?;
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
            let [a, b] = info.data_offsets;
            let count = element_count(&info.shape)?;
            if b < a || b > body_len {
                return Err(bad(format!(
                    "truncated: tensor {name} spans bytes {a}..{b}, the data holds {body_len}"
                )));
            }
            let need = count
                .checked_mul(dtype.size() as u64)
                .ok_or_else(|| bad(format!("tensor {name}: shape {:?} overflows", info.shape)))?;
            if b - a != need {
                return Err(bad(format!(
                    "tensor {name}: shape {:?} of {} needs {} bytes, offsets give {}",
                    info.shape,
                    info.dtype,
                    need,
                    b - a
                )));
            }
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
                Some(t) => bad(format!("no tensor {t:?} (tensors: {})", seen.join(", "))),
                None => bad(format!("no integer tensors (tensors: {})", seen.join(", "))),
            });
        }
        Ok(parts)
    }
}
